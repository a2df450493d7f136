"""The excerpt of a long round prefers the user's own turn: an assistant's long answer
repeats the question's words, while the user's statement is what questions about the user ask
for."""

from __future__ import annotations

from memory import excerpt as excerpt_module
from memory.excerpt import USER_TURN_BONUS, TurnLine, excerpt
from memory.policy import ROUND_PROMPT_TOKENS
from memory.service import MemoryConfig
from memory.tokens import HeuristicTokenCounter
from memory.types import ItemKind, ModelReply

COUNT = HeuristicTokenCounter().count
FILLER = " ".join(f"Sentence {i} is about budgeting in general." for i in range(40))
QUESTION = "How much did I spend on a designer handbag?"
USER = "Last month I got a designer handbag for $800."  # shares: designer, handbag
# shares: much, spend, designer, handbag (two more than the user's turn)
ASSISTANT = FILLER + " Tracking how much you spend on a designer handbag helps. " + FILLER


def test_the_bonus_is_two_question_words():
    assert USER_TURN_BONUS == 2


def test_the_users_turn_is_shown_unless_the_answer_matches_clearly_better(monkeypatch):
    turns = [TurnLine(1, "User", USER, "user"), TurnLine(2, "Assistant", ASSISTANT, "assistant")]
    line, ids = excerpt(turns, QUESTION, prefix="- ", limit=60, count=COUNT)
    assert ids == (1,) and "$800" in line
    monkeypatch.setattr(excerpt_module, "USER_TURN_BONUS", 1)  # two more words now win
    line, ids = excerpt(turns, QUESTION, prefix="- ", limit=60, count=COUNT)
    assert ids == (2,) and "designer handbag" in line


def test_turns_without_a_role_get_no_bonus():
    turns = [TurnLine(1, "User", USER), TurnLine(2, "Assistant", ASSISTANT)]
    _, ids = excerpt(turns, QUESTION, prefix="- ", limit=60, count=COUNT)
    assert ids == (2,)


class Repeating:
    """A scripted model whose long answer repeats the question's words."""

    name = "repeating"

    async def complete(self, **kw):
        return ModelReply(ASSISTANT, self.name)


async def test_recall_shows_the_users_statement_from_a_long_round(tmp_path, clock):
    from tests.conftest import make_harness

    # the hashing test embedder gives a long text a weak cosine: no threshold here
    h = await make_harness(tmp_path, clock, model=Repeating(), config=MemoryConfig(threshold=0.0))
    try:
        await h.say(USER)
        await h.say("/new")
        ctx = await h.memory.context(h.message("x"))
        result = await h.memory.recall(ctx, QUESTION, touch=False)
        item = next(i for i in result.ranked if i.kind is ItemKind.ROUND)
        assert "$800" in item.text and item.tokens <= ROUND_PROMPT_TOKENS
        turns = await h.store.conversations.get_turns(set(item.source_turn_ids))
        assert [t.role.value for t in turns] == ["user"]
    finally:
        await h.store.close()
