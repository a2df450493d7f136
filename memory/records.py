"""Records the memory core and its stores exchange: stored rows (users, threads, sessions,
pending work, purges, usage) and drafts written in one go (episodes, rounds, a consolidation's
fact decisions, what a reply's transaction also records).

They are plain frozen values: no store type, connection or query language appears in them, so
every backend (``memory/stores/``) reads and writes the same shapes. Datetimes are aware UTC;
ids are the stores' integer row ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memory.types import ChatKind, KeyDatum, Scope, ThreadKey


@dataclass(frozen=True, slots=True)
class ThreadRow:
    """A thread as stored: its row id, key, privacy class and title."""

    id: int
    key: ThreadKey
    chat_kind: ChatKind
    title: str | None


@dataclass(frozen=True, slots=True)
class SessionRow:
    """A session as stored; ``closed_at`` is None while it is open."""

    id: int
    thread_id: int
    started_at: datetime
    last_turn_at: datetime
    closed_at: datetime | None
    folded_through: int = 0  # id of the last turn folded into the running episode


@dataclass(frozen=True, slots=True)
class UserRow:
    """A user as stored."""

    id: int
    display_name: str
    memory_enabled: bool
    timezone: str | None
    language: str | None = None  # chosen with /language (ISO 639-1); None = not chosen


@dataclass(frozen=True, slots=True)
class WorkRow:
    """A pending consolidation job for one session: ``close`` (once) or ``fold`` (``seq`` 1, 2,
    ...)."""

    id: int
    kind: str
    session_id: int
    attempts: int
    seq: int = 0
    retry_after: datetime | None = None  # a failed job is not tried again before this (UTC)


@dataclass(frozen=True, slots=True)
class EpisodeDraft:
    """An episode computed from a session's turns (and, when folding, the previous draft),
    before it is stored.

    Attributes:
        summary: extractive summary, at most the requested tokens.
        key_data: lines kept verbatim (numbers, dates, amounts, versions, addresses), every one
            of earlier folds included.
        turn_ids: the turns covered, oldest first.
        goal: what the user set out to do (first goal-like sentence), or None.
        decisions: sentences that settle something ("let's use LanceDB").
        open_tasks: things still to do ("we still need to book the hotel"), minus those a later
            turn reports done.
        state: an objective note of how the user said they were ("said they were stressed").
        participants: speakers of the user turns (several in a group).
    """

    summary: str
    key_data: tuple[KeyDatum, ...]
    turn_ids: tuple[int, ...]
    goal: str | None = None
    decisions: tuple[str, ...] = ()
    open_tasks: tuple[str, ...] = ()
    state: str | None = None
    participants: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RoundDraft:
    """A round before it is stored: its turns and its indexed text."""

    turn_ids: tuple[int, ...]
    text: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ForgetResult:
    """What a deletion removed: counts per kind and the index keys to delete."""

    facts: int
    episodes: int
    rounds: int
    turns: int
    index_keys: tuple[str, ...]
    resummarise: tuple[int, ...] = ()  # closed sessions whose episode was deleted
    purge_id: int | None = None  # the durable purge record (``PurgeRow``)
    fact_texts: tuple[str, ...] = ()  # the deleted facts (``delete_fact``), the named one first


@dataclass(frozen=True, slots=True)
class EditCascade:
    """What deleting the items derived from an edited turn's old text removed, and what is
    left to rebuild."""

    rebuilt: tuple[int, ...]  # rounds rewritten from the turns they still hold
    index_keys: tuple[str, ...]  # deleted items and rewritten rounds
    resummarise: tuple[int, ...]  # closed sessions whose episode was deleted
    purge_id: int
    replies: int  # replies deleted (they quoted the old text)


@dataclass(frozen=True, slots=True)
class PurgeRow:
    """A deletion whose purge from disk is not finished yet (written in the deletion's own
    transaction, removed once every step of the purge is done)."""

    id: int
    user_id: int
    index_keys: tuple[str, ...]
    resummarise: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class FactOp:
    """One validated fact decision of the consolidation model, applied with the job that
    completes it (:class:`WorkOutcome`).

    Attributes:
        action: ``add``, ``confirm`` or ``supersede``.
        user_id: the fact's owner (the speaker of the source turn).
        scope: where the fact belongs, as for the rules' facts.
        origin: the thread it was said in.
        source_turn_id: the candidate turn.
        kind, text, lang, topic: the new fact (``add`` / ``supersede``); text at most
            ``memory.facts.MAX_FACT_CHARS`` characters.
        valid_from: when it became true (the turn's time).
        target_id: the fact confirmed or superseded.
    """

    action: str
    user_id: int
    scope: Scope
    origin: ThreadRow
    source_turn_id: int
    kind: str = "note"
    text: str = ""
    lang: str = "en"
    topic: str | None = None
    valid_from: datetime | None = None
    target_id: int | None = None


@dataclass(frozen=True, slots=True)
class UsageRow:
    """One user's model usage on one UTC day with one model; ``cost_usd`` None = no price."""

    day: str
    model: str
    calls: int
    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    cost_usd: float | None
