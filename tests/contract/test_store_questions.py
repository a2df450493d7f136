"""A destructive command's question waiting for its author's answer: one per thread and user
(a newer one replaces it), seen until it expires, taken by one taker only (the one asked at a
given time, when a button names it), and gone with ``forget_all`` of its user (it may quote
their facts); and a user turn keeps one stored answer, the one stored first under its key
(``memory.records.answer_key``)."""

from __future__ import annotations

import asyncio

from memory.records import PendingQuestion, answer_key
from memory.types import Role

from tests.contract.support import store  # noqa: F401 (every backend in turn)
from tests.contract.support import Chat, at


def question(chat: Chat, *, action: str = "forget_all", target: int | None = None,
             minute: float = 1, description: str = "Delete everything?") -> PendingQuestion:
    return PendingQuestion(chat.thread.id, chat.user.id, action, target, description, "en",
                           at(minute), at(minute + 10))


async def test_a_question_waits_until_taken_once(store):
    ada = await Chat.open(store)
    asked = question(ada, action="forget_fact", target=7)
    await store.questions.ask(asked)
    assert await store.questions.peek(ada.thread.id, ada.user.id, at(2)) == asked
    assert await store.questions.peek(ada.thread.id, ada.user.id, at(2)) == asked  # stays
    assert await store.questions.take(ada.thread.id, ada.user.id, at(3)) == asked
    assert await store.questions.take(ada.thread.id, ada.user.id, at(3)) is None
    assert await store.questions.peek(ada.thread.id, ada.user.id, at(3)) is None


async def test_a_question_is_per_thread_and_user_and_a_newer_one_replaces_it(store):
    ada, bob = await Chat.open(store), await Chat.open(store, "bob")
    group = await Chat.open(store, chat="garden")
    await store.questions.ask(question(ada))
    newer = question(ada, action="forget_fact", target=3, minute=2, description="Fact 3?")
    await store.questions.ask(newer)
    await store.questions.ask(question(bob))
    assert await store.questions.peek(ada.thread.id, ada.user.id, at(3)) == newer
    assert await store.questions.peek(group.thread.id, ada.user.id, at(3)) is None
    assert await store.questions.peek(ada.thread.id, bob.user.id, at(3)) is None
    assert (await store.questions.take(bob.thread.id, bob.user.id, at(3))).user_id == bob.user.id
    assert await store.questions.take(ada.thread.id, ada.user.id, at(3)) == newer


async def test_an_expired_question_is_neither_seen_nor_taken(store):
    ada = await Chat.open(store)
    await store.questions.ask(question(ada))  # expires at minute 11
    assert await store.questions.peek(ada.thread.id, ada.user.id, at(11)) is None
    assert await store.questions.take(ada.thread.id, ada.user.id, at(12)) is None
    await store.questions.ask(question(ada, minute=20))
    assert await store.questions.take(ada.thread.id, ada.user.id, at(21)) is not None


async def test_a_button_takes_only_the_question_it_showed(store):
    ada = await Chat.open(store)
    await store.questions.ask(question(ada, minute=1))
    await store.questions.ask(question(ada, minute=2))  # asked again: the old button is stale
    assert await store.questions.take(ada.thread.id, ada.user.id, at(3), asked_at=at(1)) is None
    taken = await store.questions.take(ada.thread.id, ada.user.id, at(3), asked_at=at(2))
    assert taken is not None and taken.asked_at == at(2)


async def test_of_concurrent_takers_one_gets_the_question(store):
    ada = await Chat.open(store)
    await store.questions.ask(question(ada))
    taken = await asyncio.gather(*(store.questions.take(ada.thread.id, ada.user.id, at(2),
                                                        asked_at=at(1)) for _ in range(4)))
    assert sum(t is not None for t in taken) == 1


async def test_forget_all_takes_the_users_questions_along(store):
    ada, bob = await Chat.open(store), await Chat.open(store, "bob")
    turn = await ada.say("I live at 12 Quillvane Road")
    await ada.fact("Lives at 12 Quillvane Road", turn=turn)
    await store.questions.ask(question(ada, action="forget_fact", target=1,
                                       description="Forget: lives at 12 Quillvane Road?"))
    await store.questions.ask(question(bob))
    await store.privacy.forget_all(ada.user.id, at(5))
    assert await store.questions.peek(ada.thread.id, ada.user.id, at(6)) is None
    assert await store.questions.peek(bob.thread.id, bob.user.id, at(6)) is not None


async def test_a_user_turn_keeps_one_answer_stored_under_its_key(store):
    ada = await Chat.open(store)
    await ada.say("what do I keep?", pmid="41")
    first = await ada.reply("Bees.", platform_message_id=answer_key("41"))
    again, created = await store.conversations.add_turn(
        thread_id=ada.thread.id, role=Role.ASSISTANT, text="Bees, twice.", at=at(30),
        speaker="Assistant", generated_by="model", platform_message_id=answer_key("41"))
    assert not created and again.id == first.id and again.text == "Bees."
    turns = await store.conversations.session_turns(first.session_id)
    assert [t.role for t in turns] == [Role.USER, Role.ASSISTANT]
