"""English text as tokens, text as sentences, and quoted spans set aside.

English text is read as tokens (:func:`tokens`: lowercase words, contractions expanded,
possessive ``'s`` apart, punctuation as tokens, each with its span in the original text);
Chinese text as characters, with the lexicons' words found by position.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memory.lexicon import en as EN

#: One English token: a word with inner apostrophes or hyphens, or one other character.
_TOKEN_RE = re.compile(r"[A-Za-z0-9\u00c0-\u024f]+(?:['’][A-Za-z]+|[-+#][A-Za-z0-9+#]*)*|\S")
#: Quoted spans (straight, curly and CJK quotes): someone's words, not the user's statement.
_QUOTED_RE = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|「[^」\n]*」|『[^』\n]*』")
#: Sentence ends: . ! ? followed by white space, 。！？ anywhere, line breaks.
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")


@dataclass(frozen=True, slots=True)
class Token:
    """An English token: ``norm`` (lowercase, apostrophes folded) and its span in the text."""

    norm: str
    start: int
    end: int


def tokens(text: str) -> list[Token]:
    """``text`` as English tokens (see the module docstring): "I'm" -> ``i``, ``am``;
    "partner's" -> ``partner``, ``'s``; both parts keep the span of the whole word."""
    out: list[Token] = []
    for m in _TOKEN_RE.finditer(text):
        word = m.group().replace("’", "'").lower()
        if word in EN.CONTRACTIONS:
            out.extend(Token(part, m.start(), m.end()) for part in EN.CONTRACTIONS[word])
        elif word.endswith("'s") and len(word) > 2:
            out.append(Token(word[:-2], m.start(), m.end() - 2))
            out.append(Token("'s", m.end() - 2, m.end()))
        else:
            out.append(Token(word, m.start(), m.end()))
    return out


def norms(toks: Sequence[Token]) -> list[str]:
    """The ``norm`` of each token."""
    return [t.norm for t in toks]


def starts_with(words: Sequence[str], phrase: Sequence[str], at: int = 0) -> bool:
    """True when ``words[at:]`` begins with ``phrase``."""
    return tuple(words[at:at + len(phrase)]) == tuple(phrase)


def find_phrase(words: Sequence[str], phrases: Sequence[Sequence[str]],
                start: int = 0) -> tuple[int, int] | None:
    """The first (position, length) at or after ``start`` where one of ``phrases`` stands in
    ``words`` (the longest phrase wins at a position), or None."""
    for i in range(start, len(words)):
        best = max((len(p) for p in phrases if starts_with(words, p, i)), default=0)
        if best:
            return i, best
    return None


def split_sentences(text: str) -> list[str]:
    """``text`` split into sentences (. ! ? 。！？ and line breaks), stripped; a full stop after
    an abbreviation ("Dr. Okafor", ``ABBREVIATIONS``) or between digits ends none."""
    out: list[str] = []
    for piece in _SENTENCE_END_RE.split(text):
        piece = piece.strip()
        if not piece:
            continue
        if out and _ends_in_abbreviation(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def _ends_in_abbreviation(sentence: str) -> bool:
    if not sentence.endswith("."):
        return False
    words = sentence[:-1].split()
    return bool(words) and words[-1].lower().strip("(\"'") in EN.ABBREVIATIONS


def without_abbreviation_dots(text: str) -> str:
    """``text`` with the full stop after an abbreviation dropped ("Dr. Okafor" -> "Dr Okafor",
    "St. Elena" -> "St Elena"), so it ends no sentence or value."""
    out, last = [], 0
    for t in tokens(text):
        if t.norm in EN.ABBREVIATIONS and text[t.end:t.end + 1] == "." and \
                text[t.end + 1:t.end + 2] == " ":
            out.append(text[last:t.end])
            last = t.end + 1
    return "".join(out) + text[last:]


def without_quotes(text: str) -> str:
    """``text`` with quoted spans replaced by "…": what someone else said, or words to
    translate, are not the user's statements."""
    return _QUOTED_RE.sub("…", text)
