"""The topic table: stable attributes of a user, recognised in English and Chinese.

A topic gives a statement a key for conflicts: the same key with a new value supersedes the old
fact; the same value confirms it. Single-valued topics (where you live, your employer, ...) are
keyed by the topic alone; multi-valued ones (allergies, opinions about a thing, foods avoided)
are keyed by topic and object (``allergy:peanuts``), so a new allergy adds a fact instead of
replacing the old one.

The table holds what a topic is (its key, kind, canonical texts, whether it is multi-valued);
the words that state it are lexicon data (``TOPIC_PHRASES`` and ``ATTRIBUTE_ALIASES`` of
``memory.lexicon.en`` / ``.zh``: synonyms map onto one key, "I live in" / "I'm based in" / 住在
-> ``residence``, "my job" / 我的工作 -> ``job``), read by ``memory.statements``. Any attribute
outside the table still gets a key of its own there (open vocabulary); the table is not the
only way a fact gets a key.

Each topic renders a short canonical fact in the statement's language (about 15 English words or
20 CJK characters), e.g. ``residence`` -> "The user lives in Graz" / "用户住在格拉茨".
"""

from __future__ import annotations

from dataclasses import dataclass

from memory.text import has_cjk


@dataclass(frozen=True)
class Topic:
    """One row of the topic table.

    Attributes:
        key: normalised topic key (``residence``).
        kind: ``profile``, ``preference`` or ``prohibition``.
        en_text, zh_text: canonical fact templates with ``{v}``.
        multi: the value is part of the key (several facts may be active at once).
    """

    key: str
    kind: str
    en_text: str
    zh_text: str
    multi: bool = False


TOPICS: tuple[Topic, ...] = (
    Topic("residence", "profile", "The user lives in {v}", "用户住在{v}"),
    Topic("hometown", "profile", "The user is from {v}", "用户来自{v}"),
    Topic("employer", "profile", "The user works at {v}", "用户在{v}工作"),
    Topic("job", "profile", "The user's job is {v}", "用户的职业是{v}"),
    Topic("diet", "profile", "The user's diet: {v}", "用户的饮食：{v}"),
    Topic("allergy", "prohibition", "The user is allergic to {v}", "用户对{v}过敏", multi=True),
    Topic("avoid_food", "prohibition", "The user doesn't eat {v}", "用户不吃{v}", multi=True),
    Topic("primary_language", "profile", "The user mainly programs in {v}", "用户主要用{v}编程"),
    Topic("reply_language", "preference", "Reply to the user in {v}", "用{v}回复用户"),
    Topic("wife_name", "profile", "The user's wife is called {v}", "用户的妻子叫{v}"),
    Topic("husband_name", "profile", "The user's husband is called {v}", "用户的丈夫叫{v}"),
    Topic("name", "profile", "Call the user {v}", "称呼用户为{v}"),
    Topic("timezone", "profile", "The user's time zone is {v}", "用户的时区是{v}"),
    Topic("birthday", "profile", "The user's birthday is {v}", "用户的生日是{v}"),
    Topic("age", "profile", "The user is {v} years old", "用户{v}岁"),
    Topic("relationship", "profile", "The user is {v}", "用户{v}"),
    Topic("editor", "preference", "The user's editor is {v}", "用户的编辑器是{v}"),
    Topic("operating_system", "profile", "The user uses {v}", "用户用{v}"),
    Topic("morning_drink", "preference", "The user drinks {v} in the morning", "用户早上喝{v}"),
    Topic("answer_length", "preference", "The user prefers {v} answers", "用户喜欢{v}的回答"),
    Topic("units", "preference", "Use {v} units with the user", "对用户使用{v}单位"),
    Topic("school", "profile", "The user studies {v}", "用户学的是{v}"),
    Topic("car", "profile", "The user drives {v}", "用户开{v}"),
    Topic("phone", "profile", "The user's phone is {v}", "用户的手机是{v}"),
    Topic("opinion", "preference", "The user likes {v}", "用户喜欢{v}", multi=True),
)
TOPIC_KEYS = tuple(t.key for t in TOPICS)
TOPIC_BY_KEY = {t.key: t for t in TOPICS}
#: Topics whose statements are constraints, written at their first mention.
CONSTRAINT_TOPICS = frozenset({"allergy", "avoid_food", "diet"})

#: Words a question about a topic tends to use when it does not repeat the fact's own words
#: ("Which city am I in?" for "The user lives in Graz"), English and Chinese, each with the
#: other language's words for the fact itself (我住在哪里？ finds "The user lives in Linz", "where
#: do I live?" finds 用户住在上海: the default embedder's cross-language cosine is too low). Added to a
#: topic fact's lexical keys only (expanded keys: Wu et al. 2025, LongMemEval, found
#: fact-expanded keys +9.4% recall), never to its text or its vector.
TOPIC_TERMS: dict[str, str] = {
    "residence": "city town home address live lives 城市 哪里 家 住",
    "hometown": "born grew origin 老家 家乡 出生 哪里人 来自",
    "employer": "job employer company office work works 上班 公司 单位 工作 哪里",
    "job": "occupation profession career job work 职业 做什么 工作 做",
    "diet": "eat food meals 饮食 吃 食物",
    "allergy": "allergies allergy avoid eat food 不能吃 忌口 食物 过敏",
    "avoid_food": "avoid eat food 不能吃 忌口 食物",
    "primary_language": "language speak native program code 语言 母语 编程",
    "reply_language": "language reply answer 语言 回答",
    "name": "name call called 名字 称呼 叫",
    "timezone": "time local 时区 时间",
    "birthday": "born birth date birthday 出生 哪天 生日",
    "age": "age old born 年龄 多大 几岁",
    "wife_name": "wife name called 老婆 妻子 叫 名字",
    "husband_name": "husband name called 老公 丈夫 叫 名字",
    "relationship": "partner married spouse wife husband 结婚 对象 伴侣 老婆 老公 妻子 丈夫",
    "editor": "editor code tool 编辑器 写代码",
    "operating_system": "computer laptop system 电脑 系统",
    "morning_drink": "drink breakfast 喝 早上 饮料",
    "answer_length": "answer reply style 回答 回复",
    "units": "units measure 单位",
    "school": "study university college 学校 大学 专业",
    "car": "car drive vehicle 开车 汽车 车 开",
    "phone": "mobile smartphone 手机 电话",
    "opinion": "favourite favorite prefer 喜欢 讨厌",
}


#: The Chinese words of :data:`TOPIC_TERMS` as jieba's search mode cuts them (word -> its words,
#: space separated; ``memory.text.search_tokens``' ``cuts``): indexing a topic fact then needs no
#: segmenter, so a process that only sees English never loads its dictionary (~1.5 s of CPU,
#: ~26 MiB). Words not listed in ``_MULTI_WORD_CUTS`` are cut as themselves; a unit test cuts
#: every word with the segmenter again and compares, so this table cannot drift from it.
_MULTI_WORD_CUTS = {
    "哪里人": "哪里 人", "做什么": "做 什么", "不能吃": "不能 吃", "时区": "时 区", "哪天": "哪 天",
    "编辑器": "编辑 编辑器", "写代码": "写 代码",
}
TOPIC_TERM_CUTS: dict[str, str] = {
    word: _MULTI_WORD_CUTS.get(word, word)
    for terms in TOPIC_TERMS.values()
    for word in terms.split() if has_cjk(word)
}


def topic_terms(topic: str | None) -> str:
    """Expanded lexical keys for a fact's topic key (``"allergy:peanuts"`` -> the ``allergy``
    words of :data:`TOPIC_TERMS`); empty for a fact without a known topic."""
    if not topic:
        return ""
    return TOPIC_TERMS.get(topic.split(":", 1)[0], "")


_NEG_TEXT = ("The user dislikes {v}", "用户不喜欢{v}")


@dataclass(frozen=True, slots=True)
class TopicMatch:
    """A first-person statement recognised as a topic.

    Attributes:
        topic: the table row.
        key: conflict key (``residence``, ``allergy:peanuts``, ``opinion:sushi``).
        value: the normalised value ("graz"; for opinions ``like`` or ``dislike``).
        text: the canonical fact, in the statement's language.
        shown: the value as said ("Graz", "寿司").
    """

    topic: Topic
    key: str
    value: str
    text: str
    shown: str = ""


def topic_text(topic: Topic, shown: str, lang: str, *, negative: bool = False) -> str:
    """The canonical fact of ``topic`` with the value as said, in ``lang``."""
    if topic.key == "opinion" and negative:
        template = _NEG_TEXT[1] if lang == "zh" else _NEG_TEXT[0]
    else:
        template = topic.zh_text if lang == "zh" else topic.en_text
    return template.format(v=shown)
