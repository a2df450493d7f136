"""Lexical terms and BM25 for the PostgreSQL search index, made as LanceDB's full-text index
makes them, so that both backends give the recall core the same ``bm25`` for the same rows.

Text arrives segmented by :func:`memory.text.search_text` (English words lowercased, Chinese
cut into words by jieba), white-space separated. PostgreSQL's own parsers would not segment
Chinese and its ``english`` configuration stems differently, so the index stores the terms made
here (one posting per row and term, with its count) and matches them as they are, with no
text-search configuration involved. Each token, in the order of LanceDB's analyser for
``FTS(base_tokenizer="whitespace", language="English", stem=True, remove_stop_words=True,
lower_case=True, ascii_folding=True)`` (``memory/stores/lancedb.py``), its scores checked
against LanceDB 0.40's on the same rows (tests/integration/test_postgres_index.py):

1. dropped when it is :data:`MAX_TOKEN_BYTES` UTF-8 bytes or longer (tantivy's
   ``RemoveLongFilter`` at LanceDB's default ``max_token_length=40``);
2. lowercased, then stemmed by the Snowball English stemmer (PyStemmer);
3. dropped when the stem is in :data:`STOP_STEMS` (the stop filter runs after the stemmer, so
   "having" goes, as "have", while "very", stemmed to "veri", stays);
4. folded to ASCII (accents removed, "ß" -> "ss"): "naïve" -> "naïv" -> "naiv".

Score: Okapi BM25 (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25
and Beyond"), as Lance computes it (``lance-index`` ``scalar/inverted/scorer.rs``)::

    idf(t)      = ln(1 + (N - n(t) + 0.5) / (n(t) + 0.5))
    score(q, d) = sum over query terms t (repeats counted) of
                  idf(t) * (K1 + 1) * f(t, d) / (f(t, d) + K1 * (1 - B + B * |d| / avgdl))

with ``K1 = 1.2``, ``B = 0.75``, ``N`` the rows of the whole table that have at least one term
(a row of stop words only is not in LanceDB's index), ``n(t)`` the rows holding ``t``,
``f(t, d)`` the count of ``t`` in row ``d``, ``|d|`` the row's terms and ``avgdl`` the terms of
all rows over ``N``. Whole-table statistics, as LanceDB's index keeps them (not per scope).
"""

from __future__ import annotations

import re
import unicodedata

from memory.text import stem_english

K1 = 1.2
"""BM25 term-frequency saturation (Lance's ``K1``; Robertson & Zaragoza 2009 suggest 1.2-2)."""
B = 0.75
"""BM25 length normalisation (Lance's ``B``, the usual value)."""
MAX_TOKEN_BYTES = 40
"""Tokens this long in UTF-8 bytes or longer are dropped (LanceDB's ``max_token_length``)."""

#: Stems the stop filter drops: those of the English stop words that LanceDB 0.40 drops,
#: measured by indexing each candidate word (Snowball's and NLTK's English lists) and searching
#: for it. Words of those lists whose stem is not here stay searchable ("very", "only", "any",
#: "why", "because", "before", "during", "does", "could", "would", "cannot").
STOP_STEMS = frozenset("""
a about after again against ain all am an and are aren as at be been below between both but by
can couldn d did didn do doesn don down each few for from further had hadn has hasn have haven
he her here hers herself him himself his how i if in into is isn it its itself just ll m ma me
mightn more most mustn my myself needn no nor not now o of off on or other our ours out
over own re s same shan she should shouldn so some such t than that the their theirs them then
there these they this those through to too under until up ve was wasn we were weren what when
where which while who whom will with won wouldn y you your yours yourself
""".split())

_FOLD = str.maketrans({"ß": "ss", "æ": "ae", "Æ": "ae", "ø": "o", "Ø": "o", "œ": "oe",
                       "Œ": "oe", "đ": "d", "Đ": "d", "ł": "l", "Ł": "l", "þ": "th", "ð": "d",
                       "ı": "i", "ŀ": "l", "ŉ": "n", "ŋ": "n", "ŧ": "t", "ħ": "h"})
_LATIN = re.compile("[\u00c0-\u024f]")


def fold(term: str) -> str:
    """``term`` with Latin letters folded to ASCII ("café" -> "cafe", "straße" -> "strasse");
    other scripts (Chinese) unchanged."""
    if not _LATIN.search(term):
        return term
    decomposed = unicodedata.normalize("NFKD", term.translate(_FOLD))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def index_terms(search_text: str) -> list[str]:
    """The terms of a row's or a query's ``search_text`` in order, repeats kept (steps 1-4 of
    the module docstring). Returns a possibly empty list."""
    tokens = [t.lower() for t in search_text.split() if len(t.encode()) < MAX_TOKEN_BYTES]
    return [fold(stem) for stem in stem_english(tokens) if stem not in STOP_STEMS]
