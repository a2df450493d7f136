from datetime import datetime, timezone

from memory.tokens import HeuristicTokenCounter
from memory.types import Role, Turn
from memory.working import select_window

T = datetime(2026, 1, 1, tzinfo=timezone.utc)


def turn(i, role=Role.USER, text="hello there"):
    return Turn(id=i, thread_id=1, session_id=1, role=role, text=text, created_at=T)


def test_keeps_everything_within_bounds():
    turns = [turn(i) for i in range(5)]
    assert select_window(turns, max_turns=10, max_tokens=1000,
                         counter=HeuristicTokenCounter()) == turns


def test_oldest_ordinary_turns_leave_first_by_count():
    turns = [turn(i) for i in range(10)]
    kept = select_window(turns, max_turns=4, max_tokens=1000, counter=HeuristicTokenCounter())
    assert [t.id for t in kept] == [6, 7, 8, 9]


def test_system_notes_and_tool_results_stay():
    turns = [turn(0, Role.SYSTEM, "memory was switched off"), turn(1, Role.TOOL, "result")]
    turns += [turn(i) for i in range(2, 12)]
    kept = select_window(turns, max_turns=6, max_tokens=1000, counter=HeuristicTokenCounter())
    assert [t.id for t in kept] == [0, 1, 8, 9, 10, 11]


def test_token_bound_evicts_older_turns_first_and_never_the_last_one():
    long = "word " * 400  # ~400 tokens
    turns = [turn(i, text=long) for i in range(6)]
    kept = select_window(turns, max_turns=30, max_tokens=900, counter=HeuristicTokenCounter(),
                         keep_last=2)
    assert [t.id for t in kept] == [4, 5]  # the newest two fit: they stay
    kept = select_window(turns, max_turns=30, max_tokens=500, counter=HeuristicTokenCounter(),
                         keep_last=2)
    assert [t.id for t in kept] == [5]  # too long together: only the current message stays
    kept = select_window(turns, max_turns=30, max_tokens=100, counter=HeuristicTokenCounter(),
                         keep_last=2)
    assert [t.id for t in kept] == [5]  # over the bound alone, it still reaches the model


def test_a_pasted_document_leaves_the_window_on_the_next_turns():
    counter = HeuristicTokenCounter()
    turns = [turn(0, text="hello"), turn(1, text="word " * 16000),  # a pasted 16k-token text
             turn(2, Role.ASSISTANT, "Here is a summary."), turn(3, text="thanks, and now?")]
    kept = select_window(turns, max_turns=20, max_tokens=4000, counter=counter, keep_last=4)
    assert [t.id for t in kept] == [2, 3]  # oldest first, until the rest fits
    assert sum(counter.count(t.text) for t in kept) <= 4000


def test_eviction_never_touches_the_input_list():
    turns = [turn(i) for i in range(10)]
    select_window(turns, max_turns=2, max_tokens=1000, counter=HeuristicTokenCounter())
    assert len(turns) == 10
