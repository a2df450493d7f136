"""The topic table: one English and one Chinese statement per topic, and first-person only."""

import pytest

from memory.topic_statements import match_topics
from memory.topics import TOPIC_KEYS, TOPICS

CASES = [
    ("residence", "I live in Graz", "en", "graz", "I moved to Linz", "linz"),
    ("residence", "我住在成都", "zh", "成都", "我搬到了上海", "上海"),
    ("hometown", "I'm from Lisbon", "en", "lisbon", "I grew up in Porto", "porto"),
    ("hometown", "我老家是湖南", "zh", "湖南", "我来自四川", "四川"),
    ("employer", "I work at Siemens", "en", "siemens", "I joined Bosch", "bosch"),
    ("employer", "我在腾讯工作", "zh", "腾讯", "我入职了阿里", "阿里"),
    ("job", "I'm a nurse", "en", "nurse", "I work as a teacher", "teacher"),
    ("job", "我是一名护士", "zh", "护士", "我是做量化策略的", "量化策略"),
    ("job", "我是量化开发", "zh", "量化开发", "我现在是一名飞行员", "飞行员"),
    ("job", "我是做销售的", "zh", "销售", "我是当老师的", "老师"),
    ("hometown", "我是广东潮汕人", "zh", "广东潮汕", "我是东北人", "东北"),
    ("diet", "I'm vegetarian", "en", "vegetarian", "I'm vegan", "vegan"),
    ("diet", "我吃素", "zh", "吃素", "我是素食主义者", "是素食主义者"),
    ("allergy:peanuts", "I'm allergic to peanuts", "en", "peanuts", None, None),
    ("allergy:花生", "我对花生过敏", "zh", "花生", None, None),
    ("avoid_food:pork", "I don't eat pork", "en", "pork", None, None),
    ("avoid_food:辣", "我不吃辣", "zh", "辣", None, None),
    ("primary_language", "I mainly use Python", "en", "python", "I switched to Go", "go"),
    ("primary_language", "我主要用 Python", "zh", "python", "我现在改用Rust", "rust"),
    ("reply_language", "please answer in English", "en", "english", "reply in German", "german"),
    ("reply_language", "以后都用中文回答我", "zh", "中文", "请用英文回复", "英文"),
    ("name", "call me Sam", "en", "sam", "my name is Alex", "alex"),
    ("name", "叫我小王就好", "zh", "小王", "我叫李明", "李明"),
    ("timezone", "my timezone is Europe/Vienna", "en", "europe/vienna", "my time zone is UTC+8", "utc+8"),
    ("timezone", "我的时区是Asia/Shanghai", "zh", "asia/shanghai", None, None),
    ("birthday", "my birthday is 3 May", "en", "3 may", None, None),
    ("birthday", "我的生日是5月3日", "zh", "5月3日", None, None),
    ("age", "I'm 34 years old", "en", "34", "I am 35 years old", "35"),
    ("age", "我今年34岁", "zh", "34", None, None),
    ("age", "By the way, I just turned 32 last month", "en", "32", "I turned 33 today!", "33"),
    ("age", "我刚满30岁", "zh", "30", "我上个月刚满31岁", "31"),
    ("age", "Actually I'm 33 now", "en", "33", "I am 40 this year", "40"),
    ("relationship", "I'm married", "en", "married", "I'm divorced", "divorced"),
    ("relationship", "我结婚了", "zh", "结婚", None, None),
    ("editor", "I use neovim", "en", "neovim", "my editor is Emacs", "emacs"),
    ("editor", "我用VSCode写代码", "zh", "vscode", None, None),
    ("operating_system", "I use Linux", "en", "linux", "I'm on Windows", "windows"),
    ("operating_system", "我用Mac", "zh", "mac", None, None),
    ("morning_drink", "I drink green tea every morning", "en", "green tea",
     "I switched to black coffee", "black coffee"),
    ("morning_drink", "我每天早上喝绿茶", "zh", "绿茶", "我现在改喝咖啡了", "咖啡"),
    ("answer_length", "I prefer short answers", "en", "short", "I prefer detailed answers", "detailed"),
    ("answer_length", "回答要简短", "zh", "简短", "回答详细一些", "详细"),
    ("units", "always use metric units", "en", "metric", "use imperial units", "imperial"),
    ("units", "用公制单位", "zh", "公制", None, None),
    ("school", "I'm studying physics", "en", "physics", "I study law", "law"),
    ("school", "我的专业是计算机", "zh", "计算机", None, None),
    ("car", "I drive a Tesla", "en", "tesla", "my car is a Volvo", "volvo"),
    ("car", "我开特斯拉", "zh", "特斯拉", None, None),
    ("phone", "my phone is a Pixel 8", "en", "pixel 8", "I use an iPhone 15", "iphone 15"),
    ("phone", "我用华为手机", "zh", "华为", None, None),
    ("wife_name", "My wife is called Maria", "en", "maria", "my wife's name is Anna", "anna"),
    ("wife_name", "我老婆叫王芳", "zh", "王芳", "我妻子叫王芳芳", "王芳芳"),
    ("husband_name", "my husband is called Tom", "en", "tom", None, None),
    ("husband_name", "我老公叫李强", "zh", "李强", None, None),
    ("residence", "我住在北京", "zh", "北京", "其实我上个月搬到上海了", "上海"),
    ("employer", "我在百度工作", "zh", "百度", "我换工作了，现在在腾讯", "腾讯"),
    ("opinion:sushi", "I love sushi", "en", "like", "I can't stand sushi", "dislike"),
    ("opinion:夜宵", "我周末喜欢吃夜宵", "zh", "like", "我不喜欢夜宵", "dislike"),
]


@pytest.mark.parametrize("key, text, lang, value, text2, value2", CASES)
def test_every_topic_in_both_languages(key, text, lang, value, text2, value2):
    matches = {m.key: m for m in match_topics(text, lang)}
    assert key in matches, matches
    assert matches[key].value == value
    if text2 is not None:
        again = {m.key: m for m in match_topics(text2, lang)}
        assert again[key].value == value2


def test_the_table_has_at_least_twenty_topics_all_tested():
    assert len(TOPICS) >= 20
    tested = {c[0].split(":")[0] for c in CASES}
    assert tested == set(TOPIC_KEYS)


@pytest.mark.parametrize("text, lang", [
    ("My friend Jonas hates football", "en"),
    ("my wife is vegan", "en"),
    ("Do you live in Graz?", "en"),
    ("Do I live in Graz?", "en"),
    ("我住在哪里？", "zh"),
    ("nice weather today", "en"),
    ("我朋友住在北京", "zh"),
    ("I can't stand it", "en"),
    ("I turned 32 pages of the report into slides", "en"),
    ("After I turned 18, everything changed", "en"),
    ("I'm 5 minutes away", "en"),
    ("I'm 3, 4 or 5 on the list", "en"),
    ("我女儿刚满5岁", "zh"),
    ("我是个好人", "zh"),
    ("我是一个很内向的人", "zh"),
    ("我是这个项目的负责人", "zh"),
])
def test_statements_about_others_or_nothing_match_no_user_topic(text, lang):
    assert match_topics(text, lang) == []


def test_canonical_text_is_short_and_in_the_statement_language():
    en = match_topics("I'm allergic to peanuts", "en")[0]
    zh = match_topics("我对花生过敏", "zh")[0]
    assert en.text == "The user is allergic to peanuts"
    assert zh.text == "用户对花生过敏"
    assert match_topics("I can't stand sushi", "en")[0].text == "The user dislikes sushi"


def test_every_topic_has_question_words_for_its_facts_keys():
    from memory.topics import TOPIC_KEYS, TOPIC_TERMS, topic_terms

    assert set(TOPIC_TERMS) == set(TOPIC_KEYS)
    assert "avoid" in topic_terms("allergy:peanuts").split()
    assert "城市" in topic_terms("residence")
    assert topic_terms(None) == "" and topic_terms("no_such_topic") == ""


async def test_a_topic_fact_is_found_by_a_question_in_other_words(tmp_path, clock):
    """The question shares no word with "The user is allergic to peanuts": only the topic's
    expanded keys give the fact a lexical match."""
    from conftest import make_harness
    from memory.ports import ScopeFilter
    from memory.text import search_text

    h = await make_harness(tmp_path, clock, lance=True)
    try:
        await h.say("remember that I'm allergic to peanuts")
        question = "Is there any food I should avoid?"
        ctx = await h.memory.context(h.message(question))
        hits = await h.index.search(
            vector=await h.memory.embedder.embed_query(question), text=search_text(question),
            where=ScopeFilter(scope=str(ctx.scope), owner=str(ctx.user.id)), limit=20)
        facts = [hit for hit in hits if hit.kind.value == "fact"]
        assert facts and (facts[0].bm25 or 0) > 0, facts
    finally:
        await h.index.close()
        await h.store.close()


def test_the_topic_terms_chinese_words_are_cut_as_the_segmenter_cuts_them():
    from memory.segmenter import segmenter
    from memory.text import has_cjk
    from memory.topics import TOPIC_TERM_CUTS, TOPIC_TERMS

    words = {w for terms in TOPIC_TERMS.values() for w in terms.split() if has_cjk(w)}
    assert set(TOPIC_TERM_CUTS) == words
    for word, cut in TOPIC_TERM_CUTS.items():
        assert cut == " ".join(segmenter().cut_for_search(word)), word


def test_the_topic_terms_search_keys_need_no_segmenter_and_are_unchanged(monkeypatch):
    import memory.text
    from memory.text import search_text
    from memory.topics import TOPIC_TERM_CUTS, TOPIC_TERMS

    segmented = {topic: search_text(terms) for topic, terms in TOPIC_TERMS.items()}
    assert "哪里 人" in segmented["hometown"] and "编辑 编辑器" in segmented["editor"]

    def no_segmenter(run):
        raise AssertionError(f"segmented {run!r}")

    monkeypatch.setattr(memory.text, "_segment_cjk", no_segmenter)
    for topic, terms in TOPIC_TERMS.items():
        assert search_text(f"The user lives in Graz {terms}", TOPIC_TERM_CUTS) == \
            f"the user lives in graz {segmented[topic]}"
    with pytest.raises(AssertionError, match="segmented"):  # other Chinese text still is
        search_text("我住在哪里", TOPIC_TERM_CUTS)
