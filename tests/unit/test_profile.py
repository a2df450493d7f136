"""The profile block: which facts, in what order, within what bound; the same in every prompt
of a session unless one of its facts changes or is forgotten; scope rules; its place in the
prompt, in ``/why`` and in the offline reply. Rules on made facts, the rest through the engine
on real SQLite."""

from __future__ import annotations

from datetime import timedelta

from i18n import say
from memory.profile import (
    PROFILE_CANDIDATES,
    PROFILE_KINDS,
    PROFILE_MODES,
    PROFILE_TOKENS,
    PROFILE_TOPIC_ROOTS,
    about_the_user,
    as_of_session_start,
    profile_line,
    profile_tier,
    select_profile,
)
from memory.recall import SEMANTIC_HEADER
from memory.service import MemoryConfig
from memory.tokens import HeuristicTokenCounter
from memory.types import ChatKind, Fact, FactStatus, ModelReply
from tests.conftest import T0, make_harness

DISCLAIMER = say("en", "offline.disclaimer")
FACTS_HEADING = say("en", "offline.facts_heading")
NOTHING_RELATED = say("en", "offline.nothing_related")

COUNTER = HeuristicTokenCounter()


def fact(fid: int, text: str, *, kind: str = "note", topic: str | None = None,
         mode: str = "explicit", status: FactStatus = FactStatus.ACTIVE, minutes: int = 0) -> Fact:
    at = T0 + timedelta(minutes=minutes)
    return Fact(id=fid, user_id=1, kind=kind, text=text, topic=topic, status=status,
                created_at=at, valid_from=at, valid_to=None, last_confirmed_at=at,
                last_recalled_at=None, confirmations=1, origin_thread_id=1,
                origin_kind=ChatKind.PRIVATE, origin_title=None, source_turn_ids=(fid,),
                lang="zh" if "用户" in text else "en", mode=mode)


def choose(facts, budget=PROFILE_TOKENS):
    return select_profile(facts, budget_tokens=budget, counter=COUNTER, header=SEMANTIC_HEADER)


# ----------------------------------------------------------------- which facts, in what order

def test_constraints_come_first_then_identity_then_preferences():
    facts = [
        fact(1, "The user prefers brief answers", kind="preference", topic="answer_length"),
        fact(2, "The user lives in Graz", kind="profile", topic="residence"),
        fact(3, "The user is allergic to peanuts", kind="prohibition", topic="allergy:peanuts"),
        fact(4, "The user is a quant developer and mainly uses Python"),
        fact(5, "The user's diet: vegetarian", kind="profile", topic="diet"),
    ]
    assert [f.id for f in choose(facts)] == [3, 5, 2, 1, 4]


def test_facts_about_other_people_tasks_and_single_statements_stay_out():
    assert profile_tier(fact(1, "The user's colleague Anika has a PhD", kind="profile")) is None
    assert profile_tier(fact(2, "孙志宏是用户的同事，其年龄是39岁", mode="repetition")) is None
    assert profile_tier(fact(3, "用户同事是副主任医师", mode="repetition")) is None
    assert profile_tier(fact(4, "用户妈妈在深圳上班呢", mode="repetition")) is None
    assert profile_tier(fact(5, "The user needs to call the bank", kind="task")) is None
    assert profile_tier(fact(6, "The user saw a film yesterday", mode="statement")) is None
    # likes and dislikes of one thing: only once repeated or asked to keep
    assert profile_tier(fact(7, "用户喜欢跑步", kind="preference", topic="opinion:跑步",
                             mode="statement")) is None
    assert profile_tier(fact(8, "用户喜欢跑步", kind="preference", topic="opinion:跑步",
                             mode="repetition")) is None
    assert profile_tier(fact(10, "用户喜欢跑步", kind="preference", topic="opinion:跑步",
                             mode="explicit")) == 4
    assert profile_tier(fact(9, "The user is vegetarian", status=FactStatus.SUPERSEDED)) is None
    # an attribute that is not who the user is: only when asked to keep it
    assert profile_tier(fact(11, "用户的手机是小米", kind="profile", topic="phone",
                             mode="statement")) is None
    assert profile_tier(fact(12, "The user's phone is a Pixel 8", kind="profile", topic="phone",
                             mode="explicit")) == 3
    assert profile_tier(fact(13, "用户住在世纪花园这个小区", kind="profile", topic="residence",
                             mode="statement")) == 1


def test_the_user_as_subject_in_both_languages():
    assert about_the_user(fact(1, "The user works at Siemens"))
    assert about_the_user(fact(2, "用户住的那个小区叫世纪花园"))
    assert about_the_user(fact(3, "Call the user Sam", kind="profile", topic="name"))
    assert not about_the_user(fact(4, "The user's sister Mia lives in Oslo"))
    assert not about_the_user(fact(5, "用户的同事是个程序员"))
    assert not about_the_user(fact(6, "Jonas likes chess"))
    # a keyed attribute of the user, whatever its wording; of a person of theirs, never
    assert about_the_user(fact(7, "The user's dentist is Dr. Kaya", topic="dentist"))
    assert about_the_user(fact(8, "用中文回复用户", kind="preference", topic="reply_language"))
    assert not about_the_user(fact(9, "用户的同事的手机号是15504351297", topic="同事手机号"))
    assert not about_the_user(fact(10, "The user's wife is called Anna", topic="wife_name"))
    assert not about_the_user(fact(11, "孙志宏是用户的同事", topic="colleague"))


def test_the_bound_is_an_upper_bound_and_a_fact_that_does_not_fit_is_skipped():
    long = fact(1, "The user is allergic to " + ", ".join(["peanuts"] * 60), kind="prohibition")
    short = fact(2, "The user lives in Graz", kind="profile", topic="residence")
    assert choose([long, short]) == [short]  # the long constraint does not fit, the short fact
    assert choose([short], budget=0) == []  # still does
    many = [fact(i, f"The user speaks language number {i}", kind="profile") for i in range(40)]
    chosen = choose(many)
    used = COUNTER.count(SEMANTIC_HEADER) + sum(COUNTER.count(profile_line(f)) for f in chosen)
    assert 0 < len(chosen) < 40 and used <= PROFILE_TOKENS


def test_a_session_keeps_the_facts_it_started_with_unless_one_is_replaced():
    start = T0 + timedelta(minutes=10)
    graz = fact(1, "The user lives in Graz", kind="profile", topic="residence",
                status=FactStatus.SUPERSEDED)
    linz = fact(2, "The user lives in Linz", kind="profile", topic="residence", minutes=20)
    peanuts = fact(3, "The user is allergic to peanuts", kind="prohibition", minutes=5)
    vienna_job = fact(4, "The user works at Siemens", kind="profile", topic="employer",
                      minutes=30)
    kept = as_of_session_start([graz, linz, peanuts, vienna_job], start)
    assert kept == [linz, peanuts]  # the new employer waits for the next session
    assert as_of_session_start([graz, linz, peanuts, vienna_job], None) == [linz, peanuts,
                                                                             vienna_job]


# ----------------------------------------------------------------- through the engine


class Recording:
    """A scripted language model that keeps every system prompt it was given."""

    name = "recording"

    def __init__(self):
        self.systems: list[str] = []

    async def complete(self, *, system, messages, max_tokens):
        self.systems.append(system)
        return ModelReply("Okay.", self.name)


def _profile_part(system: str) -> str:
    """The semantic block's lines up to the first dated one (recalled facts carry dates)."""
    block = system[system.index(SEMANTIC_HEADER):].split("\n\n", 1)[0].splitlines()
    return "\n".join(line for line in block if "(since " not in line)


async def test_every_prompt_of_a_session_carries_the_same_profile_before_recall(tmp_path, clock):
    model = Recording()
    h = await make_harness(tmp_path, clock, model=model)
    try:
        await h.say("Remember that I'm allergic to peanuts.")
        await h.say("Remember that I live in Graz.")
        await h.say("/new")
        for text in ("What should I cook tonight?", "Any idea for a weekend trip?",
                     "Remember that my sister Mia likes chess.", "How do I fix a flat tyre?"):
            await h.say(text)
        prompts = model.systems[-4:]
        parts = {_profile_part(s) for s in prompts}
        assert len(parts) == 1  # byte-identical across the turns: the cached prefix holds
        part = parts.pop()
        assert part.splitlines()[1].startswith("- The user is allergic to peanuts")
        assert "Graz" in part and "Mia" not in part  # a fact of this session waits
        for system in prompts:  # the semantic block opens with the profile, then recall
            block = system[system.index(SEMANTIC_HEADER):].split("\n\n", 1)[0].splitlines()
            assert block[1].startswith("- The user is allergic to peanuts")
            dated = [n for n, line in enumerate(block) if "(since " in line]
            assert all(n > 2 for n in dated)
        await h.say("Remember that I live in Linz now.")  # a fact of the block changes
        await h.say("What should I cook tonight?")
        changed = _profile_part(model.systems[-1])
        assert "Linz" in changed and "Graz" not in changed
        await h.say("/new")
        await h.say("Hello")
        assert "Mia" not in _profile_part(model.systems[-1])  # about someone else: recall only
    finally:
        await h.store.close()


async def test_the_profile_counts_in_the_memory_budget_and_can_be_switched_off(tmp_path, clock):
    h = await make_harness(tmp_path, clock, config=MemoryConfig(budget_tokens=60))
    try:
        await h.say("Remember that I'm allergic to peanuts.")
        await h.say("Remember that I live in Graz.")
        await h.say("/new")
        ctx = await h.memory.context(h.message("x"))
        result = await h.memory.recall(ctx, "hello there", touch=False)
        assert result.blocks.profile and result.blocks.tokens <= 60
        assert result.blocks.profile_tokens <= result.blocks.tokens
        h.memory.config = MemoryConfig(profile_tokens=0)
        off = await h.memory.recall(ctx, "hello there", touch=False)
        assert off.blocks.profile == "" and not any(i.profile for i in off.blocks.items)
    finally:
        await h.store.close()


async def test_a_recalled_fact_already_in_the_profile_is_not_repeated(harness):
    await harness.say("Remember that I'm allergic to peanuts.")
    await harness.say("/new")
    ctx = await harness.memory.context(harness.message("x"))
    result = await harness.memory.recall(ctx, "am I allergic to peanuts?", touch=False)
    keys = [i.key for i in result.blocks.items]
    assert len(keys) == len(set(keys))
    profile = [i for i in result.blocks.items if i.profile]
    assert len(profile) == 1 and profile[0].score >= harness.memory.config.threshold
    assert result.blocks.semantic.count("allergic to peanuts") == 1


async def test_a_profile_fact_counts_as_recalled_only_when_the_message_matched_it(harness):
    await harness.say("Remember that I'm allergic to peanuts.")
    await harness.say("/new")
    ctx = await harness.memory.context(harness.message("x"))
    (before,) = await harness.store.facts.list_facts(ctx.user.id, [FactStatus.ACTIVE])
    harness.clock.advance(3600)
    await harness.memory.recall(ctx, "how do I fix a flat tyre?")
    (stored,) = await harness.store.facts.list_facts(ctx.user.id, [FactStatus.ACTIVE])
    assert stored.last_recalled_at == before.last_recalled_at  # shown, not recalled: it may
    await harness.memory.recall(ctx, "am I allergic to peanuts?")  # still expire unused
    (stored,) = await harness.store.facts.list_facts(ctx.user.id, [FactStatus.ACTIVE])
    assert stored.last_recalled_at == harness.clock.now()


async def test_a_group_profile_holds_no_private_fact(harness):
    await harness.say("Remember that I'm allergic to peanuts.")  # private chat
    await harness.say("Remember that I play the cello.", chat="band", kind=ChatKind.GROUP)
    await harness.say("/new", chat="band", kind=ChatKind.GROUP)
    group = await harness.memory.context(harness.message("x", chat="band", kind=ChatKind.GROUP))
    blocks = (await harness.memory.recall(group, "what should we eat?", touch=False)).blocks
    assert "cello" in blocks.profile and "peanuts" not in blocks.profile
    private = await harness.memory.context(harness.message("x"))
    blocks = (await harness.memory.recall(private, "what should we eat?", touch=False)).blocks
    assert "peanuts" in blocks.profile and "cello" not in blocks.profile


async def test_why_shows_the_profile_as_its_own_part_first(harness):
    await harness.say("Remember that I'm allergic to peanuts.")
    await harness.say("/new")
    await harness.say("Can I eat satay sauce?")
    why = (await harness.say("/why"))[0].splitlines()
    assert why[1].startswith("Profile (1 fact(s), ") and "in every prompt" in why[1]
    assert "allergic to peanuts" in why[2]


async def test_the_offline_reply_shows_the_profile_on_the_first_reply_of_a_session(harness):
    await harness.say("Remember that I'm a quant developer and I mainly use Python.")
    await harness.say("/new")
    first = (await harness.say("What framework should I learn?"))[-1].splitlines()
    assert first[:2] == [DISCLAIMER, FACTS_HEADING]
    assert "quant developer" in first[2]
    later = (await harness.say("How do I fix a flat tyre?"))[-1]
    assert later == NOTHING_RELATED  # later replies: only what the message relates to


# ----------------------------------------------------------------- what the store reads


def test_every_fact_the_profile_can_place_meets_the_stores_filter():
    topics = [None, "residence", "diet", "diet:vegan", "answer_length", "opinion:sushi",
              "phone", "allergy:peanuts", "employer", "residence_x"]
    placed = 0
    for kind in ("note", "profile", "preference", "prohibition", "constraint", "task"):
        for topic in topics:
            for mode in ("explicit", "correction", "repetition", "statement", None):
                f = fact(1, "The user keeps bees", kind=kind, topic=topic, mode=mode)
                if profile_tier(f) is None:
                    continue
                placed += 1
                root = topic.split(":", 1)[0] if topic else None
                assert (kind in PROFILE_KINDS or root in PROFILE_TOPIC_ROOTS
                        or mode in PROFILE_MODES), (kind, topic, mode)
    assert placed > 50


async def test_the_profile_from_the_stores_candidates_is_the_one_from_every_fact(
        harness, monkeypatch):
    ctx = await harness.memory.context(harness.message("x"))
    store, user, scope = harness.store, ctx.user, ctx.scope
    written = []
    kinds = ("note", "profile", "prohibition", "task")
    topics = (None, "residence", "diet", "phone", "opinion:tea", "employer")
    modes = ("explicit", "statement", "repetition", "correction")
    for n in range(60):
        kind, topic, mode = kinds[n % 4], topics[n % 6], modes[(n // 5) % 4]
        old = [f.id for f in written if f.topic == topic and topic and f.status is FactStatus.ACTIVE]
        written.append(await store.facts.add_fact(
            user_id=user.id, kind=kind, text=f"The user fact number {n} about {topic}",
            topic=topic, origin=ctx.thread, source_turn_ids=[n + 1], lang="en", scope=scope,
            now=T0 + timedelta(minutes=n), mode=mode, supersedes=old[-1:] if n % 7 == 0 else ()))
    every = await store.facts.facts_in_scope(user.id, scope)
    recaller = harness.memory.recaller
    for bound in (PROFILE_CANDIDATES, 3):  # 3: more candidates than the bound, read whole
        monkeypatch.setattr("memory.recaller.PROFILE_CANDIDATES", bound)
        for started in (None, T0 + timedelta(minutes=30), T0 + timedelta(minutes=59)):
            got = await recaller._profile_candidates(ctx, started)
            assert choose(got, budget=400) == choose(as_of_session_start(every, started),
                                                     budget=400), (bound, started)
            assert len(got) < len(every)
