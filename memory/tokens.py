"""The product's offline token counter.

Claude's tokenizer is not published and tiktoken fetches its tables at run time, so budgets use
a deterministic estimate that needs nothing from the network:

* each CJK character (Han, kana, hangul) counts 1 token: Claude-family BPEs spend about one
  token per Chinese character (Anthropic's docs; measured 0.9-1.3 per character on tiktoken's
  cl100k, which is a close cousin);
* each run of Latin letters/digits counts ``ceil(len / 4)`` tokens, at least 1: the usual
  "about 4 characters per token" rule for English BPE vocabularies;
* every other non-space character (punctuation, symbols, emoji) counts 1 token.

It over-counts slightly on plain English (common words are one token) which keeps budgets on the
safe side. The language-model issue calibrates it against reported usage.
"""

from __future__ import annotations

import functools
import re

_TOKEN_RE = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"  # one CJK char
    r"|[A-Za-z0-9\u00c0-\u024f]+"  # a Latin word or number
    r"|[^\s]"  # any other visible character
)


class HeuristicTokenCounter:
    """Offline token estimate (see module docstring for the rule and its sources).

    Attributes:
        name: ``"heuristic-v1"``, written into eval reports.
    """

    name = "heuristic-v1"

    def count(self, text: str) -> int:
        """Return the estimated number of tokens in ``text`` (0 for empty text).

        Texts up to ``_MEMO_MAX_CHARS`` characters are remembered (least recently used,
        ``_MEMO_SIZE`` of them): a turn of the working window is counted several times a turn
        (stored, windowed, assembled), and the count is a pure function of the text.
        """
        if len(text) <= _MEMO_MAX_CHARS:
            return _count_memo(text)
        return _count(text)


_MEMO_SIZE = 4096  # texts (recall renders ~200-600 candidates and their excerpts per question)
_MEMO_MAX_CHARS = 4000  # a long reply is counted when stored, windowed and assembled

_LATIN_RUN_RE = re.compile(r"[A-Za-z0-9\u00c0-\u024f]+")
_SPACE_RE = re.compile(r"\s")


def _count(text: str) -> int:
    """The rule of the module docstring, computed in bulk: every visible character counts 1
    (CJK characters and other symbols alike) except those in Latin runs, which count
    ``ceil(len / 4)`` per run; the same numbers as matching ``_TOKEN_RE`` token by token, without
    a Python step per CJK character (recall counts thousands of texts per question)."""
    runs = _LATIN_RUN_RE.findall(text)
    latin = sum(map(len, runs))
    visible = len(text) - len(_SPACE_RE.findall(text))
    return visible - latin + sum((n + 3) // 4 for n in map(len, runs))


_count_memo = functools.lru_cache(maxsize=_MEMO_SIZE)(_count)


def _count_by_tokens(text: str) -> int:
    """The rule applied token by token (``_TOKEN_RE``); :func:`_count` gives the same numbers
    (tests/unit/test_tokens.py compares them)."""
    total = 0
    for match in _TOKEN_RE.finditer(text):
        piece = match.group()
        if len(piece) > 1 or piece.isalnum() and piece.isascii():
            total += max(1, -(-len(piece) // 4))
        else:
            total += 1
    return total
