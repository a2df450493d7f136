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

from memory.types import ChatKind, Episode, KeyDatum, Round, Scope, ThreadKey


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


@dataclass(frozen=True, slots=True)
class UsageEntry:
    """One model call's reported usage, added to its user's totals for one UTC day and model.

    Token counts are as the provider reported them (0 when unknown); ``cost_usd`` is None when
    the model has no known price (a day's cost is the sum over the calls whose price was known).
    """

    user_id: int
    day: str  # YYYY-MM-DD, UTC
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float | None = None


@dataclass(frozen=True, slots=True)
class PromptRecord:
    """What the model saw for a user's last reply in a thread (``/why``): one per user and
    thread, replaced by the next. ``payload`` is a JSON-serialisable dict (the recalled items
    with their scores and tokens, the memory and working-memory totals, the model)."""

    thread_id: int
    user_id: int
    payload: dict
    at: datetime


@dataclass(frozen=True, slots=True)
class HandledUpdate:
    """A platform delivery marked handled (its kept payload dropped) in the transaction that
    stores what it carried; ``at`` None = the wall clock at the write."""

    platform: str
    key: str
    at: datetime | None = None


@dataclass(frozen=True, slots=True)
class TurnWrites:
    """What a turn's own transaction records besides the turn, all or nothing with it (one
    write instead of several). None of it runs for a redelivered turn (one already stored).

    Attributes:
        handled_update: the platform delivery that carried the user turn, now handled.
        reply_due: the user turn waits for its answer to be delivered (until
            ``reply_delivered``; a crash in between leaves it due, answered at start-up).
        usage: the model call that produced the assistant turn.
        prompt_record: the ``/why`` record of the reply.
        recalled: the memory keys the reply's prompt was shown (what the reply was derived
            from: forgetting one of them deletes the reply); None: not recorded.
    """

    handled_update: HandledUpdate | None = None
    reply_due: bool = False
    usage: UsageEntry | None = None
    prompt_record: PromptRecord | None = None
    recalled: tuple[str, ...] | None = None


NO_WRITES = TurnWrites()
"""A turn stored on its own."""


@dataclass(frozen=True, slots=True)
class PendingQuestion:
    """A destructive command's question waiting for its author's answer in one thread
    (``/forget all``, ``/forget N`` of several facts): kept in the store, so the ``yes`` may
    reach any process on it. At most one per thread and author; a newer one replaces it.

    Attributes:
        thread_id: the thread it was asked in.
        user_id: the user who must answer it.
        action: what ``yes`` runs (a name the asking code knows: ``forget_all``,
            ``forget_fact``).
        target: the action's argument (``forget_fact``: the fact id); None for none.
        description: what will happen, as it was asked, in ``language``.
        language: the language of the question (and so of its answer).
        asked_at: when it was asked (aware UTC).
        expires_at: after this (aware UTC) it is gone, answered or not.
    """

    thread_id: int
    user_id: int
    action: str
    target: int | None
    description: str
    language: str
    asked_at: datetime
    expires_at: datetime


ANSWER_PREFIX = "answer:"
"""What starts the platform message id an answer is stored under (:func:`answer_key`)."""


def answer_key(platform_message_id: str | None) -> str | None:
    """The platform message id the assistant's answer to the user turn of message
    ``platform_message_id`` is stored under (``"answer:<id>"``), or None for a turn without one
    (console lines, recorded conversations: one process answers them, once).

    Every store keeps at most one turn per thread and platform message id (a unique index, and
    ``ConversationStore.add_turn``'s duplicate check in the turn's own transaction), so a user
    turn gets at most one stored answer however many processes answer it: the second
    ``add_turn`` returns the first answer with ``created`` False. The answer is found by this
    key, not by its place after the user turn (a late answer follows later turns)."""
    return None if platform_message_id is None else ANSWER_PREFIX + platform_message_id


@dataclass(frozen=True, slots=True)
class WorkOutcome:
    """What one consolidation job writes, in the one transaction that marks it done.

    Attributes:
        session_id: the job's session.
        scope: where the episode and rounds belong (None: nothing to keep, e.g. a private
            thread without a user turn).
        episode: the session's episode, inserted or updated in place (one per session: a fold
            updates the running episode, the close finishes it); None keeps what is stored.
        rounds: new rounds of the turns consolidated.
        started_at, ended_at: the episode's span (aware UTC).
        now: when the job completes.
        drop_turn_ids: turns to delete (said with memory off).
        folded_through: a fold's new fold mark (the last turn folded); None for a close.
        fact_ops: the consolidation model's validated fact decisions.
        episode_source: who wrote the episode (``llm``, ``rules-fallback``) when a
            consolidation model was asked; None when none was.
    """

    session_id: int
    scope: Scope | None
    episode: EpisodeDraft | None
    rounds: tuple[RoundDraft, ...]
    started_at: datetime
    ended_at: datetime
    now: datetime
    drop_turn_ids: tuple[int, ...] = ()
    folded_through: int | None = None
    fact_ops: tuple[FactOp, ...] = ()
    episode_source: str | None = None


@dataclass(frozen=True, slots=True)
class WorkResult:
    """What completing a job stored: the episode (None when none was written), the rounds and
    the facts whose index rows must be rewritten (added and superseded by ``fact_ops``).
    ``done`` is False when the job was already done (nothing was written: exactly once)."""

    done: bool
    episode: Episode | None = None
    rounds: tuple[Round, ...] = ()
    changed_facts: tuple[int, ...] = ()
