"""The profile block: the few facts about a user that are in every prompt, whatever the query.

The seed's prompt carries the user's profile (用户画像) between the persona and the episodes, as
ChatGPT's memory summary, Claude's memory synthesis and hermes-agent's ``USER.md`` keep a short
profile in every prompt: what a reply must never get wrong (an allergy, "don't message me on
weekends") and who the user is (name, city, work) help with questions that share no word with
them ("What framework should I learn?" needs "quant developer, mainly Python").

Which facts (pure functions of the stored facts, no model, no query):

* only active facts of the scope being recalled (so a group's profile holds only what was
  learned in that group, and a private chat's only private facts: the recall scope rules);
* only facts that are about the user: a fact keyed by a topic of the user's own statements, or
  whose wording has the user as its subject ("The user ..." / "用户..."); a fact about someone
  else ("The user's colleague Anika has a PhD", "孙志宏是用户的同事") is left to query recall;
* ranked in tiers (:func:`profile_tier`): constraints (kind ``prohibition``, and diets), then
  identity (name, home, work, languages, ...), then how the user wants to be answered, then
  what the user asked to keep (explicit requests and corrections), then likes and dislikes
  the user asked to keep; tasks, other attributes and notes from mere statements never;
* within a tier, explicit requests and corrections before repeated statements, then oldest
  first; facts are added in that order while they fit :data:`PROFILE_TOKENS` (an upper bound,
  not a reservation: a user with two facts gets a two-line block).

Stable within a session (so the prompt's cached prefix holds): the block is chosen from the
facts as they were when the session started (:func:`as_of_session_start`): a fact written later
in the session joins the block at the next session (query recall shows it meanwhile), unless it
replaces a fact of the block (same topic key), which changes the block at once; a fact that is
forgotten or archived leaves it at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memory.ports import TokenCounter
from memory.types import Fact, FactStatus

#: Most tokens of the profile, with the header of the semantic block it opens (about 120, the
#: size the seed gives the profile; an upper bound: unused tokens stay with query recall).
PROFILE_TOKENS = 120

#: Fact kinds that are constraints (the seed's 禁止项 and 常用约束).
CONSTRAINT_KINDS = frozenset({"prohibition", "constraint"})
#: Topic keys that are constraints although their facts are of kind ``profile`` (a diet limits
#: every food suggestion as an allergy does).
CONSTRAINT_TOPICS = frozenset({"diet"})
#: Topic keys (before ``:``) of likes and dislikes of one thing ("opinion:sushi").
TASTE_TOPICS = frozenset({"opinion"})
#: Topic keys of who the user is (``memory.topics``): name, home, origin, work, studies,
#: languages, time zone, age, birthday, relationship. Other attributes (phone, car, editor,
#: dentist, ...) matter for some questions only: query recall brings them there.
IDENTITY_TOPICS = frozenset({"name", "residence", "hometown", "employer", "job", "school",
                             "primary_language", "timezone", "age", "birthday",
                             "relationship"})
#: Topic keys of how the user wants to be answered.
STYLE_TOPICS = frozenset({"answer_length", "reply_language", "units"})

#: What a fact needs to enter the profile at all, as a store can filter it
#: (``FactStore.profile_candidates``): a kind of :data:`PROFILE_KINDS`, a topic root of
#: :data:`PROFILE_TOPIC_ROOTS` or a write mode of :data:`PROFILE_MODES`. Every fact that
#: :func:`profile_tier` places meets one of them (tiers 0-2 by kind or topic, 3-4 by mode);
#: the store's filter leaves out the rest of a long history (MemDaily's shared split as one
#: user: ~800 facts a scope, a dozen of them candidates).
PROFILE_KINDS = CONSTRAINT_KINDS
PROFILE_TOPIC_ROOTS = CONSTRAINT_TOPICS | IDENTITY_TOPICS | STYLE_TOPICS
PROFILE_MODES = frozenset({"explicit", "correction"})
#: Most candidate facts read for one profile; a scope with more is read whole (the choice is
#: then the same as with every fact, only slower). A block of :data:`PROFILE_TOKENS` holds
#: ~10 lines, so 500 candidates are far more than any choice among them needs.
PROFILE_CANDIDATES = 500

#: The order of write modes within a tier (what the user asked for first).
_MODE_RANK = {"explicit": 0, "correction": 0, "repetition": 1, "statement": 2}

#: People (and pets) in the user's life, as the head of a fact's subject ("The user's colleague
#: Anika ...", "用户同事是医生", "用户的妈妈在深圳上班"): such a fact is about them, not the user.
OTHERS_EN = frozenset(
    "colleague colleagues coworker co-worker friend friends wife husband partner spouse son "
    "daughter child children kid kids baby mother mom mum father dad parent parents sister "
    "brother sibling grandmother grandma grandfather grandpa grandparents aunt uncle cousin "
    "niece nephew boss manager neighbour neighbor roommate flatmate classmate teacher student "
    "client customer girlfriend boyfriend fiance fiancee family relatives dog cat pet".split())
OTHERS_ZH = (
    "同事 朋友 好友 闺蜜 爸爸 妈妈 爸 妈 父亲 母亲 父母 老婆 老公 妻子 丈夫 爱人 太太 先生 儿子 女儿 孩子 "
    "宝宝 哥哥 姐姐 弟弟 妹妹 爷爷 奶奶 外公 外婆 姥姥 姥爷 叔叔 阿姨 舅舅 姑姑 表哥 表姐 表弟 表妹 堂哥 "
    "堂姐 堂弟 堂妹 老板 领导 上司 经理 同学 室友 舍友 邻居 男朋友 女朋友 对象 家人 亲戚 客户 导师 老师 "
    "下属 狗 猫").split()
_EN_USER = "the user"
_ZH_USER = "用户"


def _names_another_person(text: str) -> bool:
    """The text's "the user's X" / "用户(的)X" names a person of :data:`OTHERS_EN` /
    :data:`OTHERS_ZH` (anywhere: "孙志宏是用户的同事")."""
    lower = text.lower()
    at = lower.find(_EN_USER + "'s ")
    while at >= 0:
        following = lower[at + len(_EN_USER) + 3:].split(" ", 1)[0].strip(",.;")
        if following in OTHERS_EN:
            return True
        at = lower.find(_EN_USER + "'s ", at + 1)
    at = text.find(_ZH_USER)
    while at >= 0:
        rest = text[at + len(_ZH_USER):]
        rest = rest[1:] if rest.startswith("的") else rest
        if any(rest.startswith(word) for word in OTHERS_ZH):
            return True
        at = text.find(_ZH_USER, at + 1)
    return False


def _topic_root(topic: str | None) -> str | None:
    return topic.split(":", 1)[0] if topic else None


def about_the_user(fact: Fact) -> bool:
    """True when ``fact`` is about the user themselves rather than someone in their life.

    It must name the user ("the user", "用户") and no person of theirs as its subject ("The
    user's colleague Anika ...", "用户妈妈在深圳上班", "孙志宏是用户的同事"). A fact without a topic
    key must also start with the user as its subject ("The user ...", "用户..."): a keyed fact
    comes from the user's own first-person statement of that attribute, whatever its wording
    ("Call the user Sam", "用中文回复用户")."""
    text = fact.text.strip()
    lower = text.lower()
    if (_EN_USER not in lower and _ZH_USER not in text) or _names_another_person(text):
        return False
    return bool(fact.topic) or lower.startswith(_EN_USER + " ") or text.startswith(_ZH_USER)


def profile_tier(fact: Fact) -> int | None:
    """The profile tier of an active fact (lower = more important), None when it stays out.

    0 constraints (kind ``prohibition`` / ``constraint``, or a diet); 1 identity
    (:data:`IDENTITY_TOPICS`); 2 how the user wants to be answered (:data:`STYLE_TOPICS`);
    3 other facts the user asked to keep (explicit requests, corrections); 4 likes and
    dislikes of one thing the user asked to keep. Tasks, facts about other people, other
    attributes and likes or dislikes only stated or repeated stay out: they matter for some
    questions, and query recall brings them to those (measured on MemDaily, one user's long
    history: with repeated likes in the block, 61 of its 63 candidates, evidence recall at
    1,000 tokens fell from 0.543 to 0.529; docs/evaluation.md)."""
    if fact.status is not FactStatus.ACTIVE or fact.kind == "task" or not about_the_user(fact):
        return None
    root = _topic_root(fact.topic)
    explicit = fact.mode in ("explicit", "correction")
    if fact.kind in CONSTRAINT_KINDS or root in CONSTRAINT_TOPICS:
        return 0
    if root in IDENTITY_TOPICS:
        return 1
    if root in STYLE_TOPICS:
        return 2
    if root in TASTE_TOPICS:
        return 4 if explicit else None
    return 3 if explicit else None


def as_of_session_start(facts: Sequence[Fact], started_at: datetime | None) -> list[Fact]:
    """The active facts a session's profile is chosen from (see the module docstring).

    Args:
        facts: the user's facts of one scope, any status (``facts_in_scope``).
        started_at: when the current session started (aware UTC); None = no session yet, every
            active fact counts.

    Returns:
        Active facts written before ``started_at``, and active facts written since that share a
        topic key with a fact written before it (they replace a value of the block).
    """
    active = [f for f in facts if f.status is FactStatus.ACTIVE]
    if started_at is None:
        return active
    earlier_topics = {f.topic for f in facts if f.topic and f.created_at < started_at}
    return [f for f in active if f.created_at < started_at or f.topic in earlier_topics]


def profile_line(fact: Fact) -> str:
    """A fact as a line of the profile: its text without dates (the profile says who the user
    is now; a date costs 9 of a line's ~18 tokens; recall shows dated lines and history)."""
    return f"- {fact.text}"


def select_profile(facts: Sequence[Fact], *, budget_tokens: int, counter: TokenCounter,
                   header: str, render=profile_line) -> list[Fact]:
    """Choose the profile facts, in block order.

    Args:
        facts: candidate facts (``as_of_session_start``).
        budget_tokens: most tokens of the profile, ``header`` included (``PROFILE_TOKENS``, or
            less when the whole memory budget is smaller); 0 = no profile.
        counter: the product's token counter.
        header: the header of the block the profile opens (``memory.recall.SEMANTIC_HEADER``).
        render: ``Fact -> str``, the line of a fact (its tokens are what counts).

    Returns:
        Facts by tier, then write mode (explicit first), then age (oldest first), each added
        while the block stays within ``budget_tokens`` (a fact that does not fit is skipped, a
        shorter later one may still fit).
    """
    if budget_tokens <= 0:
        return []
    ranked = sorted(((tier, f) for f in facts if (tier := profile_tier(f)) is not None),
                    key=lambda tf: (tf[0], _MODE_RANK.get(tf[1].mode, 3), tf[1].created_at,
                                    tf[1].id))
    used = counter.count(header)
    chosen: list[Fact] = []
    for _, fact in ranked:
        cost = counter.count(render(fact))
        if used + cost <= budget_tokens:
            chosen.append(fact)
            used += cost
    return chosen
