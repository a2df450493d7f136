from datetime import datetime, timezone

import pytest

from memory.episodes import is_end_phrase, key_data_of, summarise_session
from memory.tokens import HeuristicTokenCounter
from memory.types import Role, Turn

T = datetime(2026, 1, 1, tzinfo=timezone.utc)


def turn(i, text, role=Role.USER, speaker="Ann"):
    return Turn(id=i, thread_id=1, session_id=1, role=role, text=text, created_at=T,
                speaker=speaker)


@pytest.mark.parametrize("text", ["bye", "Bye!", "that's all for now", "Goodbye.", "先这样",
                                  "结束了", "再见！", "That's all for today"])
def test_end_phrases(text):
    assert is_end_phrase(text)


@pytest.mark.parametrize("text", ["bye the way, what is RAG?", "I said bye to him",
                                  "先这样做，然后呢？", ""])
def test_not_end_phrases(text):
    assert not is_end_phrase(text)


def test_key_data_is_kept_verbatim():
    turns = [turn(1, "The budget is $12,500. Nice weather."),
             turn(2, "We upgrade to v2.3.1 on 2024-06-01.", Role.USER),
             turn(3, "Sure, 42 things.", Role.ASSISTANT),
             turn(4, "地址是中山路88号，预算3000元。")]
    data = key_data_of(turns)
    texts = [d.text for d in data]
    assert "The budget is $12,500." in texts
    assert "We upgrade to v2.3.1 on 2024-06-01." in texts
    assert any("中山路88号" in t for t in texts)
    assert all(d.turn_id != 3 for d in data)  # the assistant's words are not key data


def test_summary_is_deterministic_bounded_and_cites_turns():
    turns = [turn(1, "I'm choosing a vector database for a quant research platform."),
             turn(2, "ok", Role.ASSISTANT, "Assistant"),
             turn(3, "We should start by benchmarking LanceDB against pgvector on our data."),
             turn(4, "thanks")]
    counter = HeuristicTokenCounter()
    a = summarise_session(turns, counter=counter, max_tokens=40)
    b = summarise_session(turns, counter=counter, max_tokens=40)
    assert a == b
    assert counter.count(a.summary) <= 40
    assert "vector database" in a.summary
    assert a.turn_ids == (1, 2, 3, 4)


def test_no_user_text_no_episode():
    assert summarise_session([turn(1, "hi", Role.ASSISTANT)],
                             counter=HeuristicTokenCounter()) is None


@pytest.mark.parametrize("question", [
    "Should I take the train or the plane?", "Do I need to bring my passport?",
    "What do I have to pack for Lisbon?", "我需要带护照吗", "我还要准备什么呢？",
])
def test_a_question_is_not_an_open_task(question):
    episode = summarise_session([turn(1, question), turn(2, "We still need to book the hotel.")],
                                counter=HeuristicTokenCounter(), max_tokens=120)
    assert episode.open_tasks == ("We still need to book the hotel.",)


def test_a_question_asking_for_a_reminder_is_a_task():
    episode = summarise_session([turn(1, "Can you remind me to call Mum on Sunday?")],
                                counter=HeuristicTokenCounter(), max_tokens=120)
    assert episode.open_tasks == ("Can you remind me to call Mum on Sunday?",)


def test_greetings_thanks_and_goodbyes_stay_out_of_the_summary():
    turns = [turn(1, "Hi! I'm planning a trip to Lisbon with my wife."),
             turn(2, "Thank you so much! Let's book the Alfama hotel."),
             turn(3, "Okay great, thanks, bye"),
             turn(4, "好的，谢谢。我们下周去上海。")]
    episode = summarise_session(turns, counter=HeuristicTokenCounter(), max_tokens=200)
    assert episode.summary == ("I'm planning a trip to Lisbon with my wife. Let's book the Alfama "
                               "hotel. 我们下周去上海。")


@pytest.mark.parametrize(("task", "report"), [
    ("Remind me to call Mum on Sunday.", "I called Mum."),  # the task's own verb, past tense
    ("I still need to book the hotel.", "I booked the hotel."),
    ("我还需要订下周去上海的酒店。", "酒店我已经订好了。"),  # 订好 counts as 订
])
def test_a_task_reported_done_is_closed(task, report):
    episode = summarise_session([turn(1, task), turn(2, report)], counter=HeuristicTokenCounter())
    assert episode.open_tasks == ()


@pytest.mark.parametrize(("task", "other"), [
    ("I need to call the bank.", "I called Mum."),  # another thing
    ("I still need to book the hotel.", "Did I book the hotel?"),  # a question reports nothing
])
def test_a_task_stays_open_until_it_is_reported_done(task, other):
    episode = summarise_session([turn(1, task), turn(2, other)], counter=HeuristicTokenCounter())
    assert episode.open_tasks == (task,)


def test_personal_statements_are_key_data_though_the_summary_drops_them():
    """A short statement of who the user is or must avoid loses the summary's word count to
    longer requests; it is kept as key data (verbatim, searchable, in the prompt's episode)."""
    turns = [
        turn(1, "Hi, my name is Lena and I live in Graz. I'm allergic to peanuts."),
        turn(2, "Can you suggest a colourful dinner recipe with lots of roasted vegetables, "
                "fresh herbs, crunchy toppings and a spicy sauce that my whole family enjoys?"),
        turn(3, "Also, what side dishes and drinks go well with a spicy vegetable dinner when "
                "friends come over on a rainy autumn evening?"),
        turn(4, "我叫李明，我对花生过敏。你觉得周末去哪里玩比较好？"),
    ]
    draft = summarise_session(turns, counter=HeuristicTokenCounter(), max_tokens=60)
    assert "allergic" not in draft.summary  # the longer sentences won the summary
    kept = [k.text for k in draft.key_data]
    assert "I'm allergic to peanuts." in kept
    for words in (("my name is Lena", "Graz"), ("我叫李明", "花生过敏")):  # kept by the summary
        assert all(w in draft.summary for w in words) or any(  # or as key data, once
            all(w in k for w in words) for k in kept), (draft.summary, kept)
    assert not any(k in draft.summary for k in kept if "allergic" in k or "过敏" in k)
    assert not any("周末去哪里" in k for k in kept)  # a question states nothing
    assert not any("recipe" in k for k in kept)  # a request is not a personal statement
