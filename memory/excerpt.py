"""Query-focused excerpts of long rounds, so that more memories fit the prompt budget.

A round is a user turn and the replies that follow it. In a dialogue with an assistant a round
is often 300-900 tokens (LongMemEval: a question and a long answer), so two rounds fill a
1,000-token memory budget and the packing stops at the first one that does not fit. Recall
therefore shows a long round as an excerpt: its turn that shares the most words with the
question (a user's turn counted ``USER_TURN_BONUS`` words higher), cut to the window of
sentences around its best-matching sentence that fits ``limit`` tokens. The item then carries only the turn it shows (the evaluation credits an item
for the source turns it carries, nothing else). Short rounds are shown whole.

Word matching: the question's and the turn's search tokens (``memory.text.search_tokens``:
English words, jieba words for Chinese) reduced by the Snowball English stemmer (PyStemmer),
minus English stop words, each distinct question word counting once. Pure functions; no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import lru_cache

from memory.text import search_tokens, sentences, stem_english

#: A few very frequent English words that carry no topic (the full-text index drops these too).
_STOP = frozenset(
    "a an and are as at be but by can could did do does for from had has have how i i'm in is it "
    "its me my of on or our so that the their them then there these they this to was we were "
    "what when where which who why will with would you your about just also".split()
)


#: Question words a user turn is credited with, on top of those it shares, when the excerpt's
#: turn is chosen: an assistant's long answer repeats the question's words, while the
#: user's own statement ("I spent $800 on a designer handbag") is what questions about the user
#: ask for; rounds of one turn are unaffected. See docs/evaluation.md, "Recall constants".
USER_TURN_BONUS = 2


@lru_cache(maxsize=2048)
def terms(text: str) -> frozenset[str]:
    """Distinct stemmed, lower-cased content words of ``text`` (see module docstring); cached,
    as the same long turns are excerpted again for every question about them."""
    words = [w for w in search_tokens(text) if w not in _STOP]
    return frozenset(stem_english(words))


def overlap(query_terms: AbstractSet[str], text: str) -> int:
    """How many distinct words of ``query_terms`` occur in ``text`` (>= 0)."""
    return len(query_terms & terms(text)) if query_terms else 0


@dataclass(frozen=True, slots=True)
class TurnLine:
    """One turn of a round as shown in memory: its id, speaker label and text."""

    turn_id: int
    speaker: str
    text: str
    role: str = ""  # "user" / "assistant" ("" when unknown)


def clip_sentences(text: str, query_terms: AbstractSet[str], fits: Callable[[str], bool]) -> str:
    """The window of consecutive sentences of ``text`` around its best-matching sentence that
    ``fits`` (a predicate on the rendered excerpt), with "…" where text was cut.

    The best sentence (most query words; the first on ties) is taken, then neighbours are
    added, the better-matching side first (the following sentence on ties), while the excerpt
    still fits. A single sentence that does not fit is cut at a word boundary.
    """
    parts = sentences(text)
    if not parts:
        return text
    scores = [overlap(query_terms, p) for p in parts]
    best = max(range(len(parts)), key=lambda i: (scores[i], -i))
    low = high = best

    def render(lo: int, hi: int) -> str:
        body = " ".join(parts[lo:hi + 1])
        return ("… " if lo > 0 else "") + body + (" …" if hi < len(parts) - 1 else "")

    if not fits(render(low, high)):
        words = parts[best].split(" ")
        while len(words) > 1 and not fits(("… " if best > 0 else "") + " ".join(words) + " …"):
            words = words[: max(1, len(words) * 3 // 4)]
        return ("… " if best > 0 else "") + " ".join(words) + " …"
    while True:
        options = []
        if low > 0:
            options.append((scores[low - 1], 0, low - 1, high))
        if high < len(parts) - 1:  # on ties the next sentence: it tends to hold the answer
            options.append((scores[high + 1], 1, low, high + 1))
        grown = False
        for _, _, lo, hi in sorted(options, reverse=True):
            if fits(render(lo, hi)):
                low, high, grown = lo, hi, True
                break
        if not grown:
            return render(low, high)


def excerpt(
    turns: Sequence[TurnLine], query: str, *, prefix: str, limit: int, count: Callable[[str], int],
    query_terms: AbstractSet[str] | None = None,
) -> tuple[str, tuple[int, ...]]:
    """Render a round for the memory block, whole when it fits ``limit`` tokens, else as an
    excerpt of its best-matching turn (module docstring).

    Args:
        turns: the round's turns in order (at least one).
        query: the question (used when ``query_terms`` is None).
        prefix: the line's start, e.g. ``"- (2023-05-08) "``.
        limit: most tokens of the rendered line (by ``count``) when it is cut.
        count: the product's token counter.
        query_terms: precomputed :func:`terms` of the query.

    Returns:
        ``(line, turn ids it carries)``.

    Raises:
        ValueError: ``turns`` is empty.
    """
    if not turns:
        raise ValueError("a round has at least one turn")
    whole = prefix + " / ".join(f"{t.speaker}: {t.text}" for t in turns)
    if count(whole) <= limit:
        return whole, tuple(t.turn_id for t in turns)
    q = terms(query) if query_terms is None else query_terms
    best = 0 if len(turns) == 1 else max(range(len(turns)), key=lambda i: (
        overlap(q, turns[i].text) + (USER_TURN_BONUS if turns[i].role == "user" else 0), -i))
    turn = turns[best]  # a round of one turn: that turn, without reading its words
    head = f"{prefix}{turn.speaker}: "
    line = head + turn.text
    if count(line) > limit:
        line = head + clip_sentences(turn.text, q, lambda s: count(head + s) <= limit)
    return line, (turn.turn_id,)
