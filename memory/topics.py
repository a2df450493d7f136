"""The topic table: stable attributes of a user, recognised in English and Chinese.

A topic gives a statement a key for conflicts: the same key with a new value supersedes the old
fact; the same value confirms it. Single-valued topics (where you live, your employer, ...) are
keyed by the topic alone; multi-valued ones (allergies, opinions about a thing, foods avoided)
are keyed by topic and object (``allergy:peanuts``), so a new allergy adds a fact instead of
replacing the old one. Patterns only match first-person statements ("I ...", "我..."): what is
said about other people never lands on the user's own topics.

Each topic renders a short canonical fact in the statement's language (about 15 English words or
20 CJK characters), e.g. ``residence`` -> "The user lives in Graz" / "用户住在格拉茨".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.text import has_cjk, normalise

_V = r"(?P<v>[^,.;!?，。；！？\n]{1,60}?)"  # a value: up to the end of the clause
_END = r"\s*(?:$|[,.;!?，。；！？\n])"
_ZV = r"(?P<v>[^,.;!?，。；！？\s]{1,20}?)"  # a Chinese value
_ZEND = r"(?:了|啦|呢|啊|吧)?\s*(?:$|[,.;!?，。；！？\n])"
#: Time words between 我 and a verb ("我上个月搬到上海了", "我去年刚搬到广州").
_ZH_WHEN = r"(?:上个?月|上周|上个?星期|前几天|昨天|前天|今天|最近|去年|今年|刚刚|已经|刚|早就)*"
#: Drinks, for "I switched to black coffee" (a morning drink without saying "in the morning").
_DRINK = (r"(?:coffee|tea|espresso|latte|cappuccino|americano|matcha|chai|cocoa|hot chocolate"
          r"|juice|water|milk|oat milk|smoothies?|kombucha|decaf)")

_OCCUPATIONS = (
    "developer|engineer|programmer|nurse|doctor|physician|teacher|professor|student|designer|"
    "manager|lawyer|accountant|researcher|scientist|writer|artist|chef|cook|analyst|consultant|"
    "quant|trader|architect|pharmacist|dentist|firefighter|counsel+or|photographer|journalist|"
    "electrician|plumber|mechanic|pilot|driver|farmer|librarian|therapist|psychologist|"
    "entrepreneur|founder|data scientist|product manager|sales(?:man|woman|person)?|marketer|"
    "translator|musician|actor|editor|paramedic|veterinarian|vet|secretary|cashier|waiter|"
    "waitress|barista|police officer|officer|soldier|intern"
)
_ZH_OCCUPATIONS = (
    "工程师|医生|护士|老师|教师|教授|学生|设计师|经理|律师|会计|研究员|科学家|作家|厨师|分析师|顾问|"
    "程序员|码农|交易员|建筑师|药剂师|牙医|消防员|摄影师|记者|电工|司机|农民|产品经理|销售|翻译|"
    "演员|编辑|秘书|服务员|警察|军人|实习生|宝妈|公务员|会计师|架构师|研究生|博士生|本科生"
)
_PROG_LANGS = (
    r"python|go|golang|rust|java|javascript|typescript|c\+\+|c#|c|kotlin|swift|ruby|php|scala|"
    r"r|julia|haskell|elixir|lua|dart|matlab|perl|zig|ocaml|clojure|f#|sql"
)
_HUMAN_LANGS = (
    "english|chinese|mandarin|german|french|spanish|japanese|korean|italian|portuguese|russian|"
    "dutch|arabic|cantonese"
)
_ZH_HUMAN_LANGS = "中文|英文|英语|汉语|普通话|德语|法语|西班牙语|日语|韩语|粤语|俄语"


@dataclass(frozen=True)
class Topic:
    """One row of the topic table.

    Attributes:
        key: normalised topic key (``residence``).
        kind: ``profile``, ``preference`` or ``prohibition``.
        en, zh: first-person patterns with a named group ``v`` (the value).
        en_text, zh_text: canonical fact templates with ``{v}``.
        multi: the value is part of the key (several facts may be active at once).
    """

    key: str
    kind: str
    en: tuple[str, ...]
    zh: tuple[str, ...]
    en_text: str
    zh_text: str
    multi: bool = False


def _t(key, kind, en, zh, en_text, zh_text, multi=False) -> Topic:
    return Topic(key, kind, tuple(en), tuple(zh), en_text, zh_text, multi)


I = r"(?:^|\b)I(?:'m| am)?"  # noqa: E741

TOPICS: tuple[Topic, ...] = (
    _t("residence", "profile",
       [rf"\bI (?:now |currently )?(?:live|am living|'m living) in {_V}{_END}",
        rf"\bI(?:'ve| have)? (?:just )?moved to {_V}{_END}", rf"\bI'?m based in {_V}{_END}",
        rf"\bI am based in {_V}{_END}"],
       [rf"我(?:现在|目前)?住在{_ZV}{_ZEND}", rf"我{_ZH_WHEN}搬(?:家)?到了?{_ZV}(?:住)?{_ZEND}",
        rf"我(?:现在)?(?:在|于){_ZV}生活{_ZEND}"],
       "The user lives in {v}", "用户住在{v}"),
    _t("hometown", "profile",
       [rf"\bI'?m (?:originally )?from {_V}{_END}", rf"\bI am (?:originally )?from {_V}{_END}",
        rf"\bI grew up in {_V}{_END}", rf"\bI was born in (?P<v>[A-Z][^,.;!?\d]{{1,40}}?){_END}"],
       [rf"我(?:来自|老家是|老家在){_ZV}{_ZEND}", rf"我是{_ZV}人{_ZEND}"],
       "The user is from {v}", "用户来自{v}"),
    _t("employer", "profile",
       [rf"\bI (?:now )?work (?:at|for) {_V}{_END}", rf"\bI'?m (?:working|employed) (?:at|for) {_V}{_END}",
        rf"\bI (?:just )?joined {_V}{_END}", rf"\bI work as an? [^,.;!?\n]{{1,40}}? (?:at|for) {_V}{_END}"],
       [rf"我(?:现在)?在{_ZV}(?:工作|上班|任职){_ZEND}", rf"我(?:刚)?入职了?{_ZV}{_ZEND}",
        # the subject said once for several clauses: "我是一名软件工程师，在百度工作"
        rf"^\s*我[^，。,.!！?？]{{1,20}}[，,]\s*(?:现在)?在{_ZV}(?:工作|上班|任职){_ZEND}",
        rf"换(?:了)?(?:工作|公司)了?[，,]\s*(?:我)?现在在{_ZV}(?:工作|上班)?{_ZEND}"],
       "The user works at {v}", "用户在{v}工作"),
    _t("job", "profile",
       [rf"\bI work as an? (?P<v>[^,.;!?\n]{{1,40}}?)(?: at | for | in |{_END})", rf"\bmy job is {_V}{_END}",
        rf"\bI(?:'m| am) an? (?P<v>(?:[\w-]+ ){{0,2}}(?:{_OCCUPATIONS})){_END}",
        rf"\bI(?:'m| am) an? (?P<v>(?:[\w-]+ ){{0,2}}(?:{_OCCUPATIONS}))\b"],
       [rf"我(?:是一名|是一个|是|当)(?P<v>[^，。,.\s]{{0,8}}(?:{_ZH_OCCUPATIONS})){_ZEND}",
        rf"我(?:是)?做{_ZV}的{_ZEND}", rf"我的工作是{_ZV}{_ZEND}",
        rf"我在[^，。,.\s]{{1,10}}(?:做|当)(?P<v>{_ZH_OCCUPATIONS}){_ZEND}"],
       "The user's job is {v}", "用户的职业是{v}"),
    _t("diet", "profile",
       [rf"\bI(?:'m| am) (?:a )?(?P<v>vegetarian|vegan|pescatarian|keto|halal|kosher|gluten-free){_END}",
        rf"\bI(?:'m| am) on a (?P<v>[\w-]+) diet{_END}"],
       [r"我(?P<v>吃素|是素食主义者|吃全素|是纯素食者)" + _ZEND, rf"我(?:在)?吃(?P<v>生酮|清真){_ZEND}"],
       "The user's diet: {v}", "用户的饮食：{v}"),
    _t("allergy", "prohibition",
       [rf"\bI(?:'m| am) allergic to {_V}{_END}", rf"\bI have an? {_V} allergy{_END}"],
       # "我对花生不过敏" is not an allergy to "花生不" (not_allergic_to ends it); "不对，我是对虾
       # 过敏" and "我对花生不过敏，是对虾过敏" name the allergy after 是
       [rf"我(?:是)?对{_ZV}(?<!不)过敏{_ZEND}", rf"[，,]\s*(?:而|但)?是对{_ZV}(?<!不)过敏{_ZEND}"],
       "The user is allergic to {v}", "用户对{v}过敏", multi=True),
    _t("avoid_food", "prohibition",
       [rf"\bI (?:don't|do not|can't|cannot|never) eat {_V}{_END}"],
       [rf"我(?:不|从不|不能)吃{_ZV}{_ZEND}"],
       "The user doesn't eat {v}", "用户不吃{v}", multi=True),
    _t("primary_language", "profile",
       [rf"\bI (?:mainly|mostly|primarily|usually) (?:use|code in|program in|write) (?P<v>{_PROG_LANGS})\b",
        rf"\bmy (?:main|primary) (?:programming )?language is (?P<v>{_PROG_LANGS})\b",
        rf"\bI (?:now )?(?:switched|moved|changed) (?:from \S+ )?to (?P<v>{_PROG_LANGS}){_END}",
        rf"\bI (?:now )?(?:code|program) in (?P<v>{_PROG_LANGS})\b"],
       [rf"(?:^|我|[，,。；;]\s*)(?:现在)?(?:主要|平时|一般)(?:用|写)\s*(?P<v>{_PROG_LANGS})",
        rf"我(?:现在)?改用\s*(?P<v>{_PROG_LANGS})"],
       "The user mainly programs in {v}", "用户主要用{v}编程"),
    _t("reply_language", "preference",
       [rf"\b(?:please )?(?:always )?(?:answer|reply|respond|talk to me|write to me|speak) (?:to me )?in (?P<v>{_HUMAN_LANGS})\b"],
       [rf"(?:都|请|要)?用(?P<v>{_ZH_HUMAN_LANGS})(?:回答|回复|跟我说|和我说|交流|聊)"],
       "Reply to the user in {v}", "用{v}回复用户"),
    _t("wife_name", "profile",
       [rf"\bmy wife(?:'s name is| is called| is named) (?P<v>[A-Z][\w-]{{0,20}}(?: [A-Z][\w-]{{0,20}})?)\b"],
       [rf"我(?:的)?(?:老婆|妻子|太太|媳妇|爱人)(?:的名字)?叫{_ZV}{_ZEND}"],
       "The user's wife is called {v}", "用户的妻子叫{v}"),
    _t("husband_name", "profile",
       [rf"\bmy husband(?:'s name is| is called| is named) (?P<v>[A-Z][\w-]{{0,20}}(?: [A-Z][\w-]{{0,20}})?)\b"],
       [rf"我(?:的)?(?:老公|丈夫|先生)(?:的名字)?叫{_ZV}{_ZEND}"],
       "The user's husband is called {v}", "用户的丈夫叫{v}"),
    _t("name", "profile",
       [r"\bcall me (?P<v>[A-Z][\w-]{0,20})", r"\bmy name is (?P<v>[A-Z][\w-]{0,20}(?: [A-Z][\w-]{0,20})?)",
        r"\bI'?m called (?P<v>[A-Z][\w-]{0,20})"],
       [r"叫我(?P<v>[^\s，。,.!！?？]{1,10}?)(?:就好|就行|吧)?" + _ZEND,
        r"我(?:叫|的名字是)(?P<v>[^\s，。,.!！?？]{1,10}?)" + _ZEND],
       "Call the user {v}", "称呼用户为{v}"),
    _t("timezone", "profile",
       [r"\bmy time ?zone is (?P<v>[\w/+:-]{2,40})", r"\bI'?m in (?P<v>UTC[+-]\d{1,2}|GMT[+-]\d{1,2}|[A-Z]{2,4}T) (?:time ?zone)?"],
       [r"我的时区是(?P<v>[\w/+:-]{2,40})"],
       "The user's time zone is {v}", "用户的时区是{v}"),
    _t("birthday", "profile",
       [rf"\bmy birthday is {_V}{_END}", rf"\bI was born on {_V}{_END}"],
       [rf"我的生日是{_ZV}{_ZEND}", r"我(?:是)?(?P<v>\d{4}年\d{1,2}月\d{1,2}[日号])出生"],
       "The user's birthday is {v}", "用户的生日是{v}"),
    _t("age", "profile",
       [r"\bI(?:'m| am) (?:now )?(?P<v>\d{1,3}) (?:years old|yo|years of age)\b",
        r"\bI(?:'m| am) (?:now )?(?P<v>\d{1,3})(?= now\b| this year\b|\s*(?:$|[;!]|\.(?!\d)))",
        r"(?<!when )(?<!after )(?<!since )(?<!before )(?<!until )(?<!once )(?<!if )"
        r"\bI(?: have| 've|'ve)? (?:just |recently )?turned (?P<v>\d{1,3})"
        r"(?= years old\b| last\b| this\b| on\b| in\b| today\b| yesterday\b|\s*(?:$|[,.;!?]))"],
       [r"我今年(?P<v>\d{1,3})岁", rf"我{_ZH_WHEN}(?:满|过了)(?P<v>\d{{1,3}})(?:周)?岁"],
       "The user is {v} years old", "用户{v}岁"),
    _t("relationship", "profile",
       [r"\bI(?:'m| am) (?:now )?(?P<v>married|single|engaged|divorced|widowed)\b",
        r"\bI (?P<v>got married|got divorced|got engaged)\b"],
       [r"我(?P<v>结婚了|单身|离婚了|订婚了|已婚)"],
       "The user is {v}", "用户{v}"),
    _t("editor", "preference",
       [r"\bI (?:mainly |mostly )?use (?P<v>vim|neovim|emacs|vs ?code|visual studio code|pycharm|intellij|sublime(?: text)?|cursor|zed|helix)\b",
        r"\bmy editor is (?P<v>[\w .-]{2,30}?)" + _END],
       [r"我(?:主要)?用(?P<v>Vim|vim|Neovim|Emacs|VS ?Code|VSCode|PyCharm|Cursor)(?:写代码|编辑)?"],
       "The user's editor is {v}", "用户的编辑器是{v}"),
    _t("operating_system", "profile",
       [r"\bI (?:mainly |mostly )?(?:use|run) (?P<v>linux|macos|mac os|windows(?: \d+)?|ubuntu|debian|fedora|arch(?: linux)?|a mac)\b",
        r"\bI(?:'m| am) on (?P<v>linux|macos|mac os|windows(?: \d+)?|ubuntu|debian|fedora|arch(?: linux)?|a mac)\b"],
       [r"我(?:主要)?用(?P<v>Linux|Windows|macOS|Mac|Ubuntu|苹果电脑)(?:系统|电脑)?"],
       "The user uses {v}", "用户用{v}"),
    _t("morning_drink", "preference",
       [rf"\bI (?:usually )?drink {_V} (?:every|each|in the) morning{_END}",
        rf"\bI (?:now )?(?:switched|changed) to {_V} in the mornings?{_END}",
        # without "in the morning" only a drink: "I switched to Go" is not a morning drink
        rf"\bI (?:now )?(?:switched|changed) to (?P<v>(?:[\w-]+ ){{0,2}}?{_DRINK}s?){_END}",
        rf"\bmy morning drink is {_V}{_END}"],
       [rf"我(?:每天)?早上(?:都)?喝{_ZV}{_ZEND}", rf"我(?:现在)?改喝{_ZV}{_ZEND}"],
       "The user drinks {v} in the morning", "用户早上喝{v}"),
    _t("answer_length", "preference",
       [r"\bI prefer (?P<v>short|brief|long|detailed|concise|shorter|longer) (?:answers|replies|responses)\b",
        r"\bkeep (?:your |the )?(?:answers|replies|responses) (?P<v>short|brief|concise)\b",
        # an instruction only ("Keep it short"): "I'll keep it concise" is about the user's text
        r"(?:^\s*|[.!?]\s+)(?:please\s+)?keep (?:it|them|things) (?P<v>short|brief|concise)\b",
        r"\b(?:give|write|send)(?: me)? (?P<v>short|shorter|brief|long|longer|detailed|more detailed|"
        r"concise) (?:answers|replies|responses)\b",
        # "answer briefly": the adverb is mapped to its adjective (_ANSWER_LENGTH)
        r"\b(?:answer|reply|respond)(?: me)? (?:more )?(?P<v>briefly|concisely|in (?:more )?detail"
        r"|at length)\b"],
       [r"(?:回答|回复)(?:要|请|尽量)?(?P<v>简短|详细|简洁)"],
       "The user prefers {v} answers", "用户喜欢{v}的回答"),
    _t("units", "preference",
       [r"\b(?:use|prefer|in) (?P<v>metric|imperial) units?\b", r"\balways answer in (?P<v>metric|imperial)\b"],
       [r"用(?P<v>公制|英制)(?:单位)?"],
       "Use {v} units with the user", "对用户使用{v}单位"),
    _t("school", "profile",
       [rf"\bI(?:'m| am) studying {_V}{_END}", rf"\bI study {_V}{_END}", rf"\bI major in {_V}{_END}"],
       [rf"我(?:在)?学的是{_ZV}{_ZEND}", rf"我(?:的)?专业是{_ZV}{_ZEND}", rf"我在读{_ZV}{_ZEND}"],
       "The user studies {v}", "用户学的是{v}"),
    _t("car", "profile",
       [rf"\bI drive an? {_V}{_END}", rf"\bmy car is an? {_V}{_END}"],
       [rf"我开(?:的是)?{_ZV}(?:车)?{_ZEND}"],
       "The user drives {v}", "用户开{v}"),
    _t("phone", "profile",
       [rf"\bmy phone is an? {_V}{_END}", r"\bI use an? (?P<v>iphone[\w ]{0,12}|pixel[\w ]{0,10}|samsung[\w ]{0,14}|android phone)\b"],
       [r"我(?:用|的手机是)(?P<v>iPhone[A-Za-z0-9 ]*?|华为[A-Za-z0-9 ]*?|小米[A-Za-z0-9 ]*?|苹果)(?:手机)?"],
       "The user's phone is {v}", "用户的手机是{v}"),
    _t("opinion", "preference",
       [rf"\bI (?:really |absolutely |still )?(?P<pos>love|like|enjoy|adore) {_V}{_END}",
        rf"\bI (?:really |absolutely |now )?(?P<neg>hate|dislike|can't stand|cannot stand|don't like|do not like|detest) {_V}{_END}",
        rf"\bI'?ve gone off {_V}(?: completely)?{_END}"],
       [rf"我(?:[^，。,.\s不没]{{0,4}}?)(?:很|最|特别|非常|超)?(?P<pos>喜欢|爱)(?:吃|喝|看|玩)?{_ZV}{_ZEND}",
        rf"我(?:[^，。,.\s]{{0,4}}?)(?:很|特别|非常|现在)?(?P<neg>讨厌|不喜欢|受不了|不爱)(?:吃|喝|看|玩)?{_ZV}{_ZEND}"],
       "The user likes {v}", "用户喜欢{v}", multi=True),
)
TOPIC_KEYS = tuple(t.key for t in TOPICS)

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


def topic_terms(topic: str | None) -> str:
    """Expanded lexical keys for a fact's topic key (``"allergy:peanuts"`` -> the ``allergy``
    words of :data:`TOPIC_TERMS`); empty for a fact without a known topic."""
    if not topic:
        return ""
    return TOPIC_TERMS.get(topic.split(":", 1)[0], "")
_NEG_TEXT = ("The user dislikes {v}", "用户不喜欢{v}")
_TRAILING = re.compile(
    r"(?:\s+(?:now|these days|nowadays|at the moment|currently|anymore|any more|too|as well|"
    r"completely|very much|a lot|so much|though|actually|again|for now))+$|^(?:the|a|an)\s+",
    re.IGNORECASE)
_ZH_TRAILING = re.compile(r"(?:了|啦|呢|啊|吧|现在|也)+$")
_COMPILED = [
    (t, [re.compile(p, re.IGNORECASE) for p in t.en], [re.compile(p, re.IGNORECASE) for p in t.zh])
    for t in TOPICS
]


@dataclass(frozen=True, slots=True)
class TopicMatch:
    """A first-person statement recognised as a topic.

    Attributes:
        topic: the table row.
        key: conflict key (``residence``, ``allergy:peanuts``, ``opinion:sushi``).
        value: the normalised value ("graz"; for opinions ``like`` or ``dislike``).
        text: the canonical fact, in the statement's language.
    """

    topic: Topic
    key: str
    value: str
    text: str


def _clean_value(value: str, zh: bool) -> str:
    value = value.strip(" \"'“”‘’")
    if zh:
        return _ZH_TRAILING.sub("", value).strip()
    previous = None
    while previous != value:
        previous = value
        value = _TRAILING.sub("", value).strip()
    return value


_QUESTION = re.compile(r"[?？]|^\s*(?:do|does|did|am|is|are|can|could|would|should|what|where|"
                       r"when|who|which|how|why)\b|吗\s*$", re.IGNORECASE)
_PRONOUNS = frozenset("it that this them these those him her one 它 这 那 这个 那个 它们".split())
_ABBREVIATIONS = re.compile(r"\b(St|Dr|Mt|Mr|Mrs|Ms|Jr|Sr|Co|Inc|Ltd)\.")


def match_topics(text: str, lang: str) -> list[TopicMatch]:
    """Return every topic statement in ``text`` (one per topic key, first wins). Questions
    ("Do I live in Graz?") state nothing; values that are only a pronoun ("I can't stand it")
    are skipped: the thing is named elsewhere."""
    found: dict[str, TopicMatch] = {}
    text = _ABBREVIATIONS.sub(r"\1", text)
    text = " ".join(piece for piece in re.split(r"(?<=[!?。！？])|(?<=\.)\s+", text)
                    if piece and not _QUESTION.search(piece))
    zh = lang == "zh"
    for topic, en_patterns, zh_patterns in _COMPILED:
        for pattern in zh_patterns + en_patterns if zh else en_patterns + zh_patterns:
            for m in pattern.finditer(text):
                value = _clean_value(m.group("v"), zh=bool(re.search(r"[\u4e00-\u9fff]", m.group("v"))))
                if not value or len(value) > 60 or value.lower() in _PRONOUNS:
                    continue
                match = _build(topic, m, value, lang)
                found.setdefault(match.key, match)
    return list(found.values())


#: "Answer briefly" states the same preference as "I prefer brief answers".
_ANSWER_LENGTH = {"briefly": "brief", "concisely": "concise", "in detail": "detailed",
                  "in more detail": "detailed", "more detailed": "detailed", "at length": "long"}


def _build(topic: Topic, m: re.Match, value: str, lang: str) -> TopicMatch:
    template = topic.zh_text if lang == "zh" else topic.en_text
    norm = normalise(value)
    if topic.key == "opinion":
        groups = m.groupdict()
        negative = bool(groups.get("neg")) or "gone off" in m.group(0).lower()
        if negative:
            template = _NEG_TEXT[1] if lang == "zh" else _NEG_TEXT[0]
        return TopicMatch(topic, f"opinion:{norm}", "dislike" if negative else "like",
                          template.format(v=value))
    if topic.key == "answer_length":
        value = norm = _ANSWER_LENGTH.get(norm, value)
    key = f"{topic.key}:{norm}" if topic.multi else topic.key
    return TopicMatch(topic, key, norm, template.format(v=value))


_NOT_ALLERGIC = (
    re.compile(rf"\bI(?:'m| am) (?:not|no longer) allergic to {_V}{_END}", re.IGNORECASE),
    re.compile(rf"\bI (?:don't|do not|no longer) have an? {_V} allergy{_END}", re.IGNORECASE),
    re.compile(rf"我(?:已经)?(?:不再)?对{_ZV}(?:不|不再)过敏(?:了)?{_ZEND}"),
    re.compile(rf"我(?:已经)?不再对{_ZV}过敏(?:了)?{_ZEND}"),
)


def not_allergic_to(text: str) -> list[str]:
    """Allergy topic keys the user says they do not (or no longer) have: "I'm not allergic to
    peanuts" / "我对花生不过敏" -> ["allergy:peanuts"] / ["allergy:花生"]. Only an allergy named
    this way ends an allergy fact (an ended habit such as "I don't eat peanuts anymore" never
    does: ``memory.semantic``)."""
    keys = []
    for pattern in _NOT_ALLERGIC:
        for m in pattern.finditer(text):
            value = _clean_value(m.group("v"), zh=has_cjk(m.group("v")))
            if value and value.lower() not in _PRONOUNS:
                keys.append(f"allergy:{normalise(value)}")
    return list(dict.fromkeys(keys))
