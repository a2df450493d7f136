import pytest

from memory.facts import MAX_FACT_CHARS, explicit_fact


@pytest.mark.parametrize("text, fact, kind", [
    ("Remember that I prefer short answers.", "The user prefers short answers", "note"),
    ("please remember my sister Mia is vegan", "The user's sister Mia is vegan", "note"),
    ("From now on, call me Sam", "Call the user Sam", "preference"),
    ("remember I am allergic to peanuts", "The user is allergic to peanuts", "note"),
    ("记住我不吃辣", "用户不吃辣", "note"),
    ("以后都用中文回答我", "以后都用中文回答用户", "preference"),
    ("请记住：我的生日是5月3日", "用户的生日是5月3日", "note"),
])
def test_explicit_requests_become_third_person_facts(text, fact, kind):
    draft = explicit_fact(text)
    assert draft is not None
    assert draft.text == fact
    assert draft.kind == kind


@pytest.mark.parametrize("text", ["nice weather today", "I remember the old days",
                                  "Do you remember me?", "我记得那天下雨", "remember"])
def test_chit_chat_writes_nothing(text):
    assert explicit_fact(text) is None


def test_languages_are_kept():
    assert explicit_fact("记住我在成都做护士").lang == "zh"
    assert explicit_fact("remember I live in Graz").lang == "en"


def test_too_long_is_refused():
    draft = explicit_fact("Remember this: " + "lease clause " * (MAX_FACT_CHARS // 5))
    assert draft.too_long and draft.text == ""
