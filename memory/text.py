"""Language detection, segmentation and sentence splitting for English and Chinese.

Full-text search needs words; Chinese has no spaces, so CJK runs are segmented with jieba
(Sun, J. "jieba", search-engine mode; its dictionary held compactly, ``memory.segmenter``) before the text reaches LanceDB, whose full-text index
then splits on white space, lowercases and stems the English words (Snowball English). Query
text goes through the same function, so both sides agree.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

from memory.segmenter import segmenter

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_RE = re.compile(f"[{_CJK}]")
_CJK_RUN_RE = re.compile(f"[{_CJK}]+")
_WORD_RE = re.compile(rf"[{_CJK}]+|[A-Za-z0-9\u00c0-\u024f]+")
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")

def language_of(text: str) -> str:
    """Return ``"zh"`` when at least 20% of the letters are CJK characters, else ``"en"``."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return "en"
    cjk = sum(1 for c in letters if _CJK_RE.match(c))
    return "zh" if cjk / len(letters) >= 0.2 else "en"


def has_cjk(text: str) -> bool:
    """True when ``text`` contains at least one CJK character."""
    return _CJK_RE.search(text) is not None


#: Chinese function words dropped from search tokens (the full-text index's stop-word list is
#: English only): pronouns, particles, copulas and the most frequent auxiliaries.
ZH_STOP_WORDS = frozenset(
    "的 了 是 我 你 他 她 它 我们 你们 他们 在 和 与 也 就 都 还 吗 呢 吧 啊 呀 哦 嗯 这 那 这个 那个 "
    "有 要 会 能 想 说 很 太 又 个 么 什么 怎么 一下 一个 把 被 给 让 对 从 到 上 下 里 着 过 得 地 "
    "而 或 但 如果 因为 所以 可以 帮 帮我".split()
)


@lru_cache(maxsize=4096)
def _segment_cjk(run: str) -> tuple[str, ...]:
    return tuple(w for w in segmenter().cut_for_search(run) if w.strip() and w not in ZH_STOP_WORDS)


def search_tokens(text: str, cuts: Mapping[str, str] | None = None) -> list[str]:
    """Split ``text`` into lowercase search tokens: English words as they are (LanceDB stems
    them and drops English stop words), CJK runs segmented by jieba in search mode (overlapping
    words, e.g. 向量数据库 -> 向量, 数据, 数据库) without :data:`ZH_STOP_WORDS`.

    Args:
        text: any text.
        cuts: CJK runs cut in advance (run -> jieba's search-mode words, space separated, as
            ``segmenter().cut_for_search`` gives them); a run found there is not segmented
            again, so text made only of such runs and English never loads the segmenter's
            dictionary (~1.5 s of CPU, ~26 MiB). The tokens are the same either way.

    Returns:
        A list of tokens, possibly empty.
    """
    tokens: list[str] = []
    for match in _WORD_RE.finditer(text):
        piece = match.group()
        if _CJK_RE.match(piece):
            cut = cuts.get(piece) if cuts else None
            tokens.extend(_segment_cjk(piece) if cut is None
                          else (w for w in cut.split() if w not in ZH_STOP_WORDS))
        else:
            tokens.append(piece.lower())
    return tokens


@lru_cache(maxsize=1)
def _english_stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def stem_english(words: list[str]) -> list[str]:
    """``words`` reduced by the Snowball English stemmer (PyStemmer): "called" -> "call"."""
    return _english_stemmer().stemWords(words) if words else []


def search_text(text: str, cuts: Mapping[str, str] | None = None) -> str:
    """Return ``text`` as white-space separated search tokens (see :func:`search_tokens`)."""
    return " ".join(search_tokens(text, cuts))


def sentences(text: str) -> list[str]:
    """Split ``text`` into sentences on ``. ! ? 。！？`` and newlines; strips each one."""
    return [piece.strip() for piece in _SENTENCE_SPLIT_RE.split(text) if piece.strip()]


def normalise(text: str) -> str:
    """Lowercase, fold white space and strip surrounding punctuation, for exact comparisons."""
    text = re.sub(r"\s+", " ", text.strip().lower())
    return text.strip(" .,!?;:。，！？；：~～")


_DIRECTION_MARKS_RE = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def without_direction_marks(text: str) -> str:
    """``text`` without Unicode bidirectional controls (LRM, RLM, LRE..RLO, LRI..PDI): invisible
    marks that some clients wrap around a message ("\u202eRemember that I live in Wien\u202c"
    read as no request at all). Joiners and other format characters (emoji sequences) stay."""
    return _DIRECTION_MARKS_RE.sub("", text)


#: Lone UTF-16 surrogates: undecodable input bytes (``surrogateescape``) or a JSON ``\ud800``.
#: Python's JSON reader already joins valid pairs, so any surrogate left in a ``str`` is lone.
_SURROGATES_RE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """``text`` with every code point UTF-8 cannot encode (lone surrogates, which SQLite refuses
    with "surrogates not allowed") replaced by U+FFFD, the Unicode replacement character."""
    return _SURROGATES_RE.sub("\ufffd", text)


#: C0 controls except tab and newline, DEL, and C1 controls: bytes a terminal acts on (ESC
#: starts colour, cursor and title sequences; CR overwrites a line).
_CONTROLS_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` safe to write to an operator's terminal: control characters other than tab and
    newline are shown escaped (``\\x1b``) instead of acting on the terminal; lone surrogates
    become U+FFFD."""
    return _CONTROLS_RE.sub(lambda m: f"\\x{ord(m.group()):02x}", valid_text(text))
