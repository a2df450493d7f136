"""jieba's Chinese word segmentation over a compact copy of its dictionary.

jieba (Sun, J. "jieba" 0.42) keeps its dictionary as one Python ``dict`` from every word and
every word prefix to a frequency: about 590,000 ``str`` keys and ``int`` values, ~70 MiB of
a serving process's ~420 MiB peak (docs/benchmarks.md, 2026-12-02). The segmentation itself
only asks three things of that mapping (``Tokenizer.get_DAG``, ``calc``, ``cut_for_search``):
whether a string is a word or a prefix (``in``), and its frequency (``[]``, ``get``; 0 for a
prefix that is no word). :class:`CompactFreq` answers them from two flat arrays, an
open-addressing hash table of 64-bit string hashes and their frequencies (12 MiB for 2**20
slots), so the segmenter jieba runs is unchanged and cuts every text exactly as before.

Hash collisions: two different strings of one length share a 64-bit ``hash`` with
probability 2**-64 per pair (strings of different lengths are told apart, see :func:`_key`); with ~590,000 keys a lookup of an absent string is mistaken for a key with probability
~3e-14. Python's ``str`` hash is salted per process, so the table is built in the process
that uses it (~1-2 s of CPU, once, at the first Chinese text) from the dictionary file jieba
ships.
"""

from __future__ import annotations

import io
import logging
import math
import threading
from array import array

log = logging.getLogger(__name__)

_EMPTY = 0


_LENGTH_MIX = 0x9E3779B97F4A7C15  # 2**64 / golden ratio (Knuth's multiplicative hashing)


def _signed64(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


#: What a string's length adds to its key, as signed 64-bit integers (the keys are signed like
#: ``hash``, so no key computation leaves 64 bits); longer strings wrap around the list.
_MIXES = tuple(_signed64(n * _LENGTH_MIX) for n in range(256))


def _key(text: str) -> int:
    """The table key of ``text``: its ``hash`` mixed with its length (a signed 64-bit integer,
    never 0: 0 marks an empty slot). The length matters: CPython hashes a string's stored
    bytes, and strings of one, two or four bytes per character can store the same bytes
    (``hash("cm") == hash("浣")``: U+6D63 is stored as the bytes ``c m``)."""
    return (hash(text) ^ _MIXES[len(text) & 255]) or 1


class CompactFreq:
    """A read-mostly ``str -> int`` mapping of fixed capacity, stored as hashes (no ``str``
    object is kept per key): the part of ``dict`` that jieba's segmentation uses.

    Args:
        capacity: number of keys it must hold; the table gets the next power of two at least
            ``capacity / 0.6`` slots (linear probing stays short at a load of 0.6 or less).

    Lookups of strings never added answer absent (up to the collision odds in the module
    docstring). ``len`` counts the keys added.
    """

    def __init__(self, capacity: int) -> None:
        slots = 1
        while slots * 0.6 < capacity:
            slots *= 2
        self._mask = slots - 1
        self._keys = array("q", bytes(8 * slots))
        self._vals = array("I", bytes(4 * slots))
        self._len = 0

    def _slot(self, key: int) -> int:
        mask, keys = self._mask, self._keys
        i = key & mask
        while True:
            k = keys[i]
            if k == key or k == _EMPTY:
                return i
            i = (i + 1) & mask

    def set(self, text: str, value: int, *, keep: bool = False) -> None:
        """Store ``value`` (0 to 2**32 - 1) for ``text``; with ``keep`` only when ``text`` has
        no value yet (as ``dict.setdefault``).

        Raises:
            OverflowError: ``value`` outside the range above.
            RuntimeError: the table is full (more keys than its capacity allows).
        """
        key = _key(text)
        i = self._slot(key)
        if self._keys[i] == _EMPTY:
            if self._len + 1 > self._mask:
                raise RuntimeError("CompactFreq is full")
            self._keys[i] = key
            self._len += 1
        elif keep:
            return
        self._vals[i] = value

    def __contains__(self, text: object) -> bool:
        if not isinstance(text, str):
            return False
        return self._keys[self._slot(_key(text))] != _EMPTY

    def get(self, text: str, default: int | None = None) -> int | None:
        """The value of ``text``, or ``default`` when it was never added."""
        # _slot and _key inlined: jieba asks this for every two- and three-character
        # piece of a long word in search mode
        key = (hash(text) ^ _MIXES[len(text) & 255]) or 1
        keys, mask = self._keys, self._mask
        i = key & mask
        stored = keys[i]
        while stored != key:
            if stored == _EMPTY:
                return default
            i = (i + 1) & mask
            stored = keys[i]
        return self._vals[i]

    def __getitem__(self, text: str) -> int:
        i = self._slot(_key(text))
        if self._keys[i] == _EMPTY:
            raise KeyError(text)
        return self._vals[i]

    def __len__(self) -> int:
        return self._len

    @property
    def nbytes(self) -> int:
        """Bytes held by the two arrays."""
        return self._keys.itemsize * len(self._keys) + self._vals.itemsize * len(self._vals)


def load_dictionary(data: bytes, name: str = "dictionary") -> tuple[CompactFreq, int]:
    """Read a jieba dictionary (the file's bytes: UTF-8 lines ``word freq [tag]``; ``name``
    for errors) as jieba's
    ``Tokenizer.gen_pfdict`` does: every word with its frequency (a later line of the same
    word wins), every prefix of a word with 0 unless it is a word itself, and the total of
    all frequencies read (duplicates included, as jieba counts them).

    Returns:
        ``(mapping, total)``.

    Raises:
        ValueError: a line without an integer frequency (jieba raises the same).
    """
    # jieba's dictionary: 349,046 words, ~590,000 keys with the prefixes
    freq = CompactFreq(int((data.count(b"\n") + 1) * 1.8))
    total = 0
    for lineno, raw in enumerate(io.BytesIO(data), 1):  # line by line: no list of all lines
        line = raw.strip().decode("utf-8")
        if not line:
            continue
        parts = line.split(" ")
        try:
            word, count = parts[0], int(parts[1])
        except (IndexError, ValueError):
            raise ValueError(f"invalid dictionary entry in {name} at line {lineno}: {line}") from None
        freq.set(word, count)
        total += count
        for end in range(1, len(word)):
            freq.set(word[:end], 0, keep=True)
    return freq, total


class _DAG(dict):
    """jieba's DAG (start -> word ends) with the frequencies of those words beside it
    (``freqs``: start -> frequencies in the order of the ends, 0 for a lone character that is
    no word), so the route needs no second lookup."""

    __slots__ = ("freqs",)


def _tokenizer_class():
    import jieba

    class CompactTokenizer(jieba.Tokenizer):
        """``jieba.Tokenizer`` whose DAG walks :class:`CompactFreq`'s arrays directly (one
        probe per fragment instead of jieba's two ``dict`` lookups through method calls)."""

        def get_DAG(self, sentence):  # noqa: N802 (jieba's name)
            freq = self.FREQ
            keys, vals, mask, mixes = freq._keys, freq._vals, freq._mask, _MIXES
            n = len(sentence)
            dag, freqs = _DAG(), {}
            for k in range(n):
                ends, found = [], []
                i, frag = k, sentence[k]
                while i < n:
                    key = (hash(frag) ^ mixes[len(frag) & 255]) or 1
                    j = key & mask
                    stored = keys[j]
                    while stored != key and stored != _EMPTY:
                        j = (j + 1) & mask
                        stored = keys[j]
                    if stored == _EMPTY:  # neither a word nor a prefix of one: stop
                        break
                    if vals[j]:
                        ends.append(i)
                        found.append(vals[j])
                    i += 1
                    frag = sentence[k:i + 1]
                if not ends:
                    ends.append(k)
                    found.append(0)
                dag[k] = ends
                freqs[k] = found
            dag.freqs = freqs
            return dag

        def calc(self, sentence, DAG, route):  # noqa: N803 (jieba's names)
            freqs = getattr(DAG, "freqs", None)
            if freqs is None:
                return super().calc(sentence, DAG, route)
            n = len(sentence)
            route[n] = (0, 0)
            logtotal = math.log(self.total)
            for idx in range(n - 1, -1, -1):  # jieba's formula, term for term
                route[idx] = max((math.log(f or 1) - logtotal + route[x + 1][0], x)
                                 for x, f in zip(DAG[idx], freqs[idx]))

    return CompactTokenizer


_lock = threading.Lock()
_tokenizer = None


def segmenter():
    """jieba's default segmenter (its own dictionary, HMM for unknown words) over a
    :class:`CompactFreq` copy of that dictionary; built once per process (thread-safe), at
    the first call. The result has jieba's ``Tokenizer`` methods (``cut``,
    ``cut_for_search``, ``lcut``...); adding words to it (``add_word``) is not supported.
    """
    global _tokenizer
    with _lock:
        if _tokenizer is None:
            import jieba

            jieba.setLogLevel(logging.WARNING)
            tokenizer = _tokenizer_class()()
            with tokenizer.get_dict_file() as f:
                data = f.read()
            freq, total = load_dictionary(data, getattr(f, "name", "jieba's dictionary"))
            del data
            tokenizer.FREQ, tokenizer.total = freq, total
            tokenizer.initialized = True  # jieba's own load of its dictionary is not wanted
            log.debug("jieba dictionary: %d keys in %d bytes", len(freq), freq.nbytes)
            _tokenizer = tokenizer
    return _tokenizer


__all__ = ["CompactFreq", "load_dictionary", "segmenter"]
