import pytest

from memory.constraints import constraint_text
from memory.facts import (
    FACT_WORDS,
    MAX_FACT_CHARS,
    condense,
    ended_values,
    explicit_request,
    request_clauses,
    fact_text,
    is_correction,
    stable_statement,
)


@pytest.mark.parametrize("text, body, kind", [
    ("Remember that I prefer short answers.", "I prefer short answers", "note"),
    ("please remember my sister Mia is vegan", "my sister Mia is vegan", "note"),
    ("From now on, call me Sam", "call me Sam", "preference"),
    ("记住我不吃辣", "我不吃辣", "note"),
    ("以后都用中文回答我", "以后都用中文回答我", "preference"),
    ("请记住：我的生日是5月3日", "我的生日是5月3日", "note"),
    # the request after the statement
    ("I work at Siemens, remember that", "I work at Siemens", "note"),
    ("My sister is Anna - please remember this.", "My sister is Anna", "note"),
    ("我对花生过敏，请记住。", "我对花生过敏", "note"),
    ("我在西门子工作，记住了", "我在西门子工作", "note"),
    # the request opens a later sentence; questions after it are not part of the body
    ("Great, thanks. Remember that I prefer tea.", "I prefer tea", "note"),
    ("Remember that I prefer tea. Can you suggest a cafe?", "I prefer tea", "note"),
    ("OK. From now on, call me Sam", "call me Sam", "preference"),
    ("谢谢！记住我不吃辣。", "我不吃辣", "note"),
    # words that open the sentence are not part of what to remember
    ("Actually I'm 33 now, remember that", "I'm 33 now", "note"),
    ("OK, remember that I use vim", "I use vim", "note"),
    # a request asked politely as a question
    ("Can you remember that I like jazz?", "I like jazz", "note"),
    ("Could you please note that I'm allergic to nuts?", "I'm allergic to nuts", "note"),
    ("Remember that I'm vegan, okay?", "I'm vegan", "note"),
    ("记住我不吃辣，好吗？", "我不吃辣", "note"),
    ("你能记住我不吃辣吗？", "我不吃辣", "note"),
    ("记得我明天要去看牙医", "我明天要去看牙医", "note"),
])
def test_explicit_requests(text, body, kind):
    request = explicit_request(text)
    assert request is not None and request.body == body and request.kind == kind


@pytest.mark.parametrize("text", ["nice weather today", "I remember the old days",
                                  "Do you remember me?", "我记得那天下雨", "remember",
                                  "I can't remember that", "Do you remember that?",
                                  "What is my job? Remember that.", "我不记得了",
                                  # questions about the past, not requests
                                  "Remember that time we went to Rome?",
                                  "remember when I told you about my cat?",
                                  "Remember that restaurant we talked about? What was it called?",
                                  "记得我上次说的那家餐厅吗？", "Thanks. Remember that.",
                                  # advice or a task, not a fact
                                  "Remember to take breaks when you need to destress.",
                                  "Push through. Don't forget to stay positive!",
                                  "记得明天带伞", "记得给妈妈打电话，好吗？",
                                  # questions asked with "can you remember"
                                  "Can you remember that restaurant we went to?",
                                  "Can you remember what I said about Rome?",
                                  "Can you remember that?", "你还记得我喜欢什么吗？"])
def test_not_requests(text):
    assert explicit_request(text) is None


@pytest.mark.parametrize("body, fact", [
    ("I prefer short answers", "The user prefers short answers"),
    ("my sister Mia is vegan", "The user's sister Mia is vegan"),
    ("I am allergic to peanuts", "The user is allergic to peanuts"),
    ("I now drink coffee", "The user now drinks coffee"),
    ("I mainly use Python and I don't eat meat", "The user mainly uses Python and the user doesn't eat meat"),
    ("I got allergic to cats", "The user got allergic to cats"),
    ("I made a cake", "The user made a cake"),
    ("我的生日是5月3日", "用户的生日是5月3日"),
    # typed in lowercase, without apostrophes; adverbs before the verb; words holding "me"
    ("i work from home on mondays", "The user works from home on mondays"),
    ("i cant eat gluten", "The user cant eat gluten"), ("im vegan", "The user is vegan"),
    ("I really just want tea", "The user really just wants tea"),
    ("I take some me-time on Sundays", "The user takes some me-time on Sundays"),
    ("I’ve got two cats, i.e. a lot of fur", "The user has got two cats, i.e. a lot of fur"),
])
def test_fact_text_is_third_person_and_keeps_other_subjects(body, fact):
    assert fact_text(body) == fact


def test_condense_keeps_key_data_and_the_cap():
    long = ("my lease runs for two more years and the landlord is friendly and the flat is "
            "bright, quiet and close to the river, rent $1,450 from 2027-03-31")
    short = condense(long, "en")
    assert len(short.split()) <= FACT_WORDS + 4 and len(short) <= MAX_FACT_CHARS
    assert "$1,450" in short and "2027-03-31" in short
    zh = condense("我家的房租是每个月四千五百元，押一付三，房东人很好，离地铁站走路五分钟，" * 3, "zh")
    assert len(zh) <= 40


@pytest.mark.parametrize("text, expected", [
    ("No, I live in Linz", True), ("Actually I use Go now", True), ("不对，我住在上海", True),
    ("I live in Linz", False), ("Nobody knows", False),
])
def test_corrections(text, expected):
    assert is_correction(text) is expected


@pytest.mark.parametrize("text, values", [
    ("I quit green tea.", ["green tea"]), ("I no longer drink coffee", ["drink coffee"]),
    ("我戒了咖啡", ["咖啡"]), ("I don't know", []), ("I love tea", []),
])
def test_ended_values(text, values):
    assert ended_values(text) == values


@pytest.mark.parametrize("text, lang, expected", [
    ("I have two cats", "en", "The user has two cats"),
    ("I'm tired today", "en", None), ("what do I like?", "en", None),
    ("nice weather today", "en", None), ("我养了两只猫", "zh", "用户养了两只猫"),
    ("我有两只猫", "zh", "用户有两只猫"),
])
def test_stable_statements(text, lang, expected):
    assert stable_statement(text, lang) == expected


@pytest.mark.parametrize(("body", "clauses"), [
    ("my favourite colour is blue and I like jazz", ["my favourite colour is blue", "I like jazz"]),
    ("我不吃辣，我老婆叫Maria", ["我不吃辣", "我老婆叫Maria"]),
    # one statement: no subject after "and", or a part too short to be a statement
    ("I live in Graz and work at Siemens", ["I live in Graz and work at Siemens"]),
    ("me and my wife are vegan", ["me and my wife are vegan"]),
    ("I like rock and roll", ["I like rock and roll"]),
])
def test_request_clauses(body, clauses):
    assert request_clauses(body) == clauses


@pytest.mark.parametrize("sentence, lang, kept", [
    # the constraint's own clause, cut at the clause boundary
    ("I'm gluten intolerant, so I'll just order the risotto!", "en", "I'm gluten intolerant"),
    ("Yes, since I'm diabetic I've been cooking at home a lot more.", "en", "I'm diabetic"),
    ("We had a parrot for years, but then I got allergic and we gave him away.", "en",
     "I got allergic"),
    ("I can't have anything with sesame, I'm seriously allergic to it.", "en",
     "I can't have anything with sesame, I'm seriously allergic to it"),
    ("I'm on blood thinners, so no ibuprofen for me.", "en",
     "I'm on blood thinners, so no ibuprofen for me"),
    ("Don't ever suggest alcohol to me, I've been sober for two years.", "en",
     "Don't ever suggest alcohol to me"),
    ("因为我麸质不耐受，所以面包我都不碰。", "zh", "我麸质不耐受"),
    ("因为我乳糖不耐受所以早餐只喝豆浆", "zh", "我乳糖不耐受"),
    ("我吃素，不吃任何肉。", "zh", "我吃素，不吃任何肉"),
    ("我有哮喘，所以跑步得慢慢来。", "zh", "我有哮喘"),
    # a wish, a condition, a negation, an attribute of a thing: none
    ("I wish I wasn't allergic to cats!", "en", None),
    ("Maybe I'll get a dog if I find one I'm not allergic to.", "en", None),
    ("I made a vegan lasagne for the party.", "en", None),
    ("我希望我不过敏", "zh", None),
    ("我给朋友做了素食饺子。", "zh", None),
    ("我对花生不过敏", "zh", None),
])
def test_constraint_text(sentence, lang, kept):
    assert constraint_text(sentence, lang) == kept


@pytest.mark.parametrize("text, lang, expected", [
    # the statement, not the pleasantry around it
    ("Thanks, Marta! I have two kids.", "en", "The user has two kids"),
    ("Yep! I love it.", "en", None),
    ("Cheers, Tom! I'm always there for you.", "en", None),
    ("嗯嗯，谢谢！我养了两只猫。", "zh", "用户养了两只猫"),
    ("好的！我也喜欢这样。", "zh", None),
])
def test_stable_statement_of_the_sentence(text, lang, expected):
    assert stable_statement(text, lang) == expected
