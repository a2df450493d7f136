"""Storage ports: the relational side of memory, grouped by kind of data.

As python-telegram-bot's persistence has get/update/drop methods per kind of data, each port
here covers one kind: identities; conversations and turns; platform deliveries; facts;
episodes and rounds; the work queue; privacy (deletion, purge, export, import); usage and
``/why`` records. A :class:`Store` opens, closes and maintains them. Backends live in
``memory/stores/`` (SQLite; an in-memory store), and every one of them passes the same
contract suite (``tests/contract``).

Only data crosses these ports: no query language, connection or engine limit (a method takes
any number of ids). What must happen together is one method taking data and done in one
transaction (a turn with :class:`~memory.records.TurnWrites`, a consolidation job with its
:class:`~memory.records.WorkOutcome`). Every method may raise
:class:`~memory.errors.StoreError`, whose ``reason`` says why in words (full, read-only,
damaged, failing).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from memory.records import (
    NO_WRITES,
    EditCascade,
    EpisodeDraft,
    ForgetResult,
    PendingQuestion,
    PromptRecord,
    PurgeRow,
    SessionRow,
    ThreadRow,
    TurnWrites,
    UsageEntry,
    UsageRow,
    UserRow,
    WorkOutcome,
    WorkResult,
    WorkRow,
)
from memory.types import (
    ChatKind,
    Episode,
    Fact,
    FactStatus,
    IncomingMessage,
    Role,
    Round,
    Scope,
    ThreadKey,
    Turn,
)

__all__ = ["ConversationStore", "DeliveryStore", "EpisodeStore", "FactStore", "IdentityStore",
           "PrivacyStore", "QuestionStore", "RecordStore", "Store", "WorkQueue"]


class IdentityStore(Protocol):
    """Users, their platform accounts, threads, and the memory switches of users and chats."""

    async def user_for_account(self, platform: str, platform_user_id: str, display_name: str,
                               now: datetime) -> UserRow:
        """The user behind a platform account, both created on first sight."""
        ...

    async def find_user(self, platform: str, platform_user_id: str) -> UserRow | None:
        """The user behind a platform account, or None."""
        ...

    async def get_user(self, user_id: int) -> UserRow | None:
        """A user by id, or None."""
        ...

    async def set_memory_enabled(self, user_id: int, enabled: bool) -> None:
        """Persist ``/memory_on`` / ``/memory_off``."""
        ...

    async def set_timezone(self, user_id: int, tz: str | None) -> None:
        """Persist the user's IANA time zone; None returns to the default."""
        ...

    async def set_language(self, user_id: int, language: str | None) -> None:
        """Persist the language the user chose for replies (``en``, ``zh``); None returns to
        choosing by each message."""
        ...

    async def mark_consent_noted(self, user_id: int, now: datetime) -> bool:
        """Record that the user was told facts are kept; True only the first time."""
        ...

    async def thread_for_key(self, key: ThreadKey, chat_kind: ChatKind, title: str | None,
                             now: datetime) -> ThreadRow:
        """The thread of ``key``, created on first sight."""
        ...

    async def get_thread(self, thread_id: int) -> ThreadRow | None:
        """A thread by id, or None."""
        ...

    async def set_chat_memory(self, platform: str, chat_id: str, enabled: bool,
                              now: datetime) -> None:
        """Persist ``/memory_off chat`` / ``/memory_on chat`` for a whole group chat."""
        ...

    async def chat_memory_enabled(self, platform: str, chat_id: str) -> bool:
        """False when a group chat's admins switched memory off for the whole chat."""
        ...


class ConversationStore(Protocol):
    """Sessions and turns: what was said in each thread (working memory's source)."""

    async def add_turn(self, *, thread_id: int, role: Role, text: str, at: datetime,
                       user_id: int | None = None, speaker: str | None = None,
                       platform_message_id: str | None = None, generated_by: str | None = None,
                       memory_off: bool = False, tokens: int = 0,
                       fold_after: tuple[int, int, int] | None = None,
                       writes: TurnWrites = NO_WRITES) -> tuple[Turn, bool]:
        """Store a turn in the thread's open session (opening one if none is open), with
        ``writes`` in the same transaction.

        ``fold_after = (turns, tokens, min_turns)``: a ``fold`` job is recorded with the turn
        when none is pending and the session's unfolded turns number more than ``turns``, or
        hold more than ``tokens`` tokens while numbering more than ``min_turns``.

        Returns:
            ``(turn, created)``; ``created`` is False when the thread already holds a turn with
            this platform message id (a redelivery), which is returned instead and nothing is
            written.
        """
        ...

    async def open_session(self, thread_id: int) -> SessionRow | None:
        """The thread's open session, or None."""
        ...

    async def get_session(self, session_id: int) -> SessionRow | None:
        """A session by id, or None."""
        ...

    async def open_sessions(self) -> list[SessionRow]:
        """Every open session, oldest last turn first."""
        ...

    async def session_turns(self, session_id: int, *, limit: int | None = None) -> list[Turn]:
        """A session's turns, oldest first; with ``limit``, only the newest ``limit``."""
        ...

    async def get_turns(self, turn_ids: Iterable[int]) -> list[Turn]:
        """The turns with these ids (any number; missing ids skipped), oldest first."""
        ...

    async def working_turns(self, thread_id: int, limit: int
                            ) -> tuple[SessionRow | None, list[Turn]]:
        """The thread's open session and its newest ``limit`` turns, oldest first (``(None,
        [])`` when none is open): the reply path's read, cached by backends that can."""
        ...

    async def close_session(self, session_id: int, at: datetime, reason: str) -> bool:
        """Close a session and record its ``close`` job, together; False when it was already
        closed."""
        ...

    async def close_session_if_idle(self, session_id: int, *, last_turn_before: datetime,
                                    at: datetime, reason: str = "idle") -> bool:
        """Close a session (and record its job) only if it is open and its last turn is at or
        before ``last_turn_before``; True when this call closed it."""
        ...

    async def edit_user_turn(self, thread_id: int, platform_message_id: str, text: str,
                             now: datetime) -> tuple[Turn, Turn] | None:
        """Replace the text of the user turn with this platform message id (an edit) and
        consume the open fact candidates drawn from it, together; ``(before, after)``, or None
        when no such user turn is stored."""
        ...


class QuestionStore(Protocol):
    """Destructive commands' questions waiting for their author's answer
    (:class:`memory.records.PendingQuestion`), one per thread and user, until taken or expired;
    every process on the store sees them. Times are aware UTC. A user's questions go with
    ``PrivacyStore.forget_all`` (they may quote facts)."""

    async def ask(self, question: PendingQuestion) -> None:
        """Keep ``question``, replacing the one its thread and user had."""
        ...

    async def peek(self, thread_id: int, user_id: int, now: datetime
                   ) -> PendingQuestion | None:
        """The question waiting for ``user_id`` in ``thread_id`` unexpired at ``now`` (it stays)."""
        ...

    async def take(self, thread_id: int, user_id: int, now: datetime, *,
                   asked_at: datetime | None = None) -> PendingQuestion | None:
        """Remove and return the question waiting for ``user_id`` in ``thread_id`` (with
        ``asked_at``: only the one asked then); None when there is none, it is another or it
        expired by ``now`` (then removed). Of concurrent takers (any processes) one gets it."""
        ...


class DeliveryStore(Protocol):
    """What chat platforms delivered: updates kept until handled, replies due until delivered,
    accounts that blocked the bot."""

    async def receive_updates(self, platform: str, updates: Sequence[tuple[str, str]],
                              now: datetime) -> None:
        """Keep received updates ``(update key, payload JSON)`` until handled, together;
        updates already known are left as they are."""
        ...

    async def update_state(self, platform: str, update_key: str) -> str | None:
        """``handled``, ``received`` (kept, not yet handled) or None (never seen)."""
        ...

    async def received_updates(self, platform: str, prefix: str = "") -> list[tuple[str, str]]:
        """Updates received and never handled, ``(key, payload)``, in the order received;
        ``prefix`` narrows the keys."""
        ...

    async def mark_update_handled(self, platform: str, update_key: str, now: datetime) -> None:
        """Mark an update handled (its payload dropped)."""
        ...

    async def mark_update_seen(self, platform: str, update_id: str, now: datetime) -> bool:
        """Record an update as handled; False when it was seen before (a redelivery)."""
        ...

    async def prune_seen_updates(self, before: datetime) -> int:
        """Forget update records older than ``before``; returns how many."""
        ...

    async def reply_delivered(self, key: ThreadKey, platform_message_id: str) -> None:
        """The answer to the user turn with this platform message id was delivered."""
        ...

    async def due_messages(self, platform: str) -> list[IncomingMessage]:
        """The user turns of ``platform`` whose answer is still due, oldest first, rebuilt as
        the messages that carried them."""
        ...

    async def due_turn(self, thread_id: int, platform_message_id: str | None
                       ) -> tuple[Turn | None, str | None]:
        """The due user turn with this platform message id and the text of its stored answer
        (the turn stored under ``memory.records.answer_key`` of that id, or, for an answer
        stored without one, the assistant turn right after it in its session; None when none
        was); ``(None, None)`` when no such turn is due."""
        ...

    async def set_account_blocked(self, platform: str, platform_user_id: str,
                                  at: datetime | None) -> None:
        """Mark an account as having blocked the bot (``at``) or clear the mark (None)."""
        ...

    async def blocked_accounts(self, platform: str) -> set[str]:
        """Platform user ids of the accounts marked as having blocked the bot."""
        ...


class FactStore(Protocol):
    """Semantic memory: facts with their history, and the candidates that may become facts."""

    async def add_fact(self, *, user_id: int, kind: str, text: str, topic: str | None,
                       origin: ThreadRow, source_turn_ids: Sequence[int], lang: str,
                       scope: Scope, now: datetime, valid_from: datetime | None = None,
                       value: str | None = None, mode: str = "explicit",
                       supersedes: Sequence[int] = ()) -> Fact:
        """Store a new active fact; the user's active facts in ``supersedes`` become
        ``superseded`` with ``valid_to = valid_from``, together.

        Raises:
            StoreError: the text is empty or longer than ``memory.facts.MAX_FACT_CHARS``.
        """
        ...

    async def end_fact(self, fact_id: int, user_id: int, at: datetime) -> bool:
        """An active fact is no longer true: ``superseded`` with ``valid_to = at``, kept as
        history. False when nothing changed."""
        ...

    async def confirm_fact(self, fact_id: int, turn_id: int, now: datetime) -> None:
        """A restatement: ``last_confirmed_at`` and ``confirmations`` move, ``turn_id`` joins
        the sources."""
        ...

    async def get_facts(self, ids: Iterable[int]) -> dict[int, Fact]:
        """Facts by id (any number; missing ids absent)."""
        ...

    async def active_facts(self, user_id: int, scope: Scope, *, topic: str | None = None
                           ) -> list[Fact]:
        """A user's active facts in a scope (optionally of one topic key), oldest first."""
        ...

    async def facts_in_scope(self, user_id: int, scope: Scope) -> list[Fact]:
        """A user's facts in a scope, every status, oldest first."""
        ...

    async def facts_of_thread(self, thread_id: int) -> list[Fact]:
        """Every fact learned in a thread (any owner, any status), oldest first."""
        ...

    async def profile_candidates(self, user_id: int, scope: Scope, *, kinds: Collection[str],
                                 topic_roots: Collection[str], modes: Collection[str],
                                 limit: int) -> list[Fact]:
        """A user's active facts in a scope that may enter the profile block, oldest first:
        those of one of ``kinds``, or whose topic key's root (the key before its first ``:``,
        ``"opinion"`` of ``"opinion:sushi"``) is one of ``topic_roots``, or written in one of
        ``modes``; at most ``limit`` of them (the oldest). The choice among them stays with the
        core (``memory.profile``)."""
        ...

    async def topics_written_before(self, user_id: int, scope: Scope, topics: Collection[str],
                                    before: datetime) -> set[str]:
        """Which of ``topics`` (whole topic keys) a fact of the user in the scope, any status,
        created before ``before`` has."""
        ...

    async def list_facts(self, user_id: int, statuses: Sequence[FactStatus]) -> list[Fact]:
        """A user's facts with these statuses, oldest first."""
        ...

    async def touch_facts(self, fact_ids: Sequence[int], now: datetime) -> None:
        """Recalled facts: ``last_recalled_at = now``."""
        ...

    async def add_candidate(self, *, user_id: int, scope: Scope, topic: str | None,
                            value: str | None, text: str, norm: str, lang: str,
                            vector: bytes | None, session_id: int, turn_id: int,
                            now: datetime) -> int:
        """Record a statement that becomes a fact when repeated in another session; its id."""
        ...

    async def open_candidates(self, user_id: int, scope: Scope, *, limit: int = 500
                              ) -> list[dict]:
        """The user's unconsumed candidates in a scope, newest first, as dicts with ``id``,
        ``topic``, ``value``, ``text``, ``norm``, ``lang``, ``vector``, ``session_id``,
        ``turn_id``."""
        ...

    async def consume_candidates(self, ids: Sequence[int], now: datetime) -> None:
        """Mark candidates as used by a fact."""
        ...

    async def candidate_turn_ids(self, turn_ids: Iterable[int]) -> set[int]:
        """Which of ``turn_ids`` hold a candidate (consumed or not)."""
        ...

    async def turn_has_memory(self, turn_id: int) -> bool:
        """Whether a fact or a candidate was drawn from this turn."""
        ...

    async def stale_facts(self, cutoff: datetime) -> list[Fact]:
        """Active facts neither confirmed nor recalled after ``cutoff``, oldest first."""
        ...

    async def archive_facts(self, fact_ids: Sequence[int], *, cutoff: datetime,
                            now: datetime) -> list[tuple[Fact, Scope]]:
        """Archive these facts if still active and unused since ``cutoff`` (``valid_to``
        stays unset), with one audit entry per user; the archived facts with their scopes."""
        ...

    async def facts_with_scope(self, ids: Iterable[int]) -> list[tuple[Fact, Scope]]:
        """Facts by id with their scopes, in id order (missing ids left out)."""
        ...

    async def all_facts(self) -> list[tuple[Fact, Scope]]:
        """Every fact with its scope, in id order (reindexing, backups)."""
        ...


class EpisodeStore(Protocol):
    """Episodic memory: one episode per session, and the rounds (a user turn with its
    replies) recalled on their own."""

    async def session_episode(self, session_id: int) -> Episode | None:
        """The episode of a session (running or closed), or None."""
        ...

    async def last_episode(self, thread_id: int) -> Episode | None:
        """The newest closed episode of a thread, or None."""
        ...

    async def get_episodes(self, ids: Iterable[int]) -> dict[int, Episode]:
        """Episodes by id (any number; missing ids absent)."""
        ...

    async def get_rounds(self, ids: Iterable[int]) -> dict[int, Round]:
        """Rounds by id (any number; missing ids absent)."""
        ...

    async def episodes_in_scope(self, scope: Scope) -> list[Episode]:
        """The episodes of a scope, newest first."""
        ...

    async def write_episode(self, session_id: int, scope: Scope, draft: EpisodeDraft, *,
                            started_at: datetime, ended_at: datetime, now: datetime) -> Episode:
        """Store a closed session's episode again (summarised after a deletion took the one
        it had); the session must have none."""
        ...

    async def all_episodes(self) -> list[Episode]:
        """Every episode, in id order."""
        ...

    async def all_rounds(self) -> list[Round]:
        """Every round, in id order."""
        ...


class WorkQueue(Protocol):
    """Pending consolidation: one ``close`` job per closed session, ``fold`` jobs while one is
    open. A job is done in the transaction that writes its result (exactly once)."""

    async def pending_work(self, *, thread_id: int | None = None,
                           due_at: datetime | None = None) -> list[WorkRow]:
        """Jobs not done, oldest first (optionally of one thread; with ``due_at``, only those
        never failed or whose ``retry_after`` is at or before it)."""
        ...

    async def work_done(self, work_id: int) -> bool:
        """True when a job is done (or gone with its session)."""
        ...

    async def fail_work(self, work_id: int, error: str, *,
                        retry_after: datetime | None = None) -> None:
        """Count a failed attempt (the job stays pending), not to run before ``retry_after``."""
        ...

    async def complete_work(self, work_id: int, outcome: WorkOutcome) -> WorkResult:
        """Write a job's outcome and mark it done, all in one transaction: the episode, the
        rounds, the fold mark, the dropped turns and the fact decisions (``add`` and
        ``supersede`` only while the target is still the user's active fact; ``supersede``
        sets the old fact's ``valid_to``). A job already done writes nothing
        (``done`` False)."""
        ...


class PrivacyStore(Protocol):
    """Deletion with everything derived from what is deleted, the durable purge records,
    retention, and a user's export and import."""

    async def fact_with_history(self, user_id: int, fact_id: int) -> list[Fact]:
        """The facts :meth:`delete_fact` deletes: the fact, then the earlier values of its
        topic it replaced, oldest first; empty when the fact is not the user's."""
        ...

    async def fact_deletion_messages(self, user_id: int, fact_id: int) -> list[str]:
        """The texts of the user's own messages :meth:`delete_fact` would delete now."""
        ...

    async def delete_fact(self, user_id: int, fact_id: int, now: datetime) -> ForgetResult:
        """Delete a fact, its history, their source turns and what was derived from those
        (rounds, replies, episodes citing them, ``/why`` records showing them; to a fixed
        point), with a purge record, in one transaction."""
        ...

    async def forget_all_preview(self, user_id: int) -> ForgetResult:
        """The counts :meth:`forget_all` would delete now; deletes nothing."""
        ...

    async def forget_all(self, user_id: int, now: datetime) -> ForgetResult:
        """Delete everything of one user (facts; their private threads whole; their turns in
        groups with the rounds, episodes and replies derived from them), with a purge record,
        in one transaction; other users' data untouched."""
        ...

    async def drop_derived_from_edit(self, user_id: int, turn_id: int, old_terms: set[str],
                                     now: datetime, *, fact_ids: Sequence[int] = (),
                                     round_text: Callable[[list[Turn]], str]) -> EditCascade:
        """After an edit of ``turn_id``: delete what was derived from its old text (replies
        quoting one of ``old_terms``, episodes citing the turn, the facts ``fact_ids``,
        ``/why`` records showing those items) and rewrite its rounds from the turns they
        still hold (``round_text``, a pure function, renders them), with a purge record, in
        one transaction."""
        ...

    async def delete_consolidated_turns(self, cutoff: datetime, now: datetime) -> ForgetResult:
        """Retention: delete turns before ``cutoff`` of closed, consolidated sessions, with the
        rounds holding them, in one transaction (episodes stay)."""
        ...

    async def pending_purges(self) -> list[PurgeRow]:
        """Deletions whose purge did not finish, oldest first."""
        ...

    async def purge_done(self, purge_id: int) -> None:
        """Remove a purge record once its purge is done."""
        ...

    async def user_rows(self, user_id: int) -> dict[str, list[dict]]:
        """Every stored row about one user, as column dicts per table (the export)."""
        ...

    async def load_user_rows(self, rows: dict[str, list[dict]], now: datetime) -> int:
        """Insert :meth:`user_rows` of another store as a new user with fresh ids, in one
        transaction; the new user's id.

        Raises:
            StoreError: an account already has a user here, or a private chat of the document
                is another user's chat here (nothing is written).
        """
        ...

    async def delete_user(self, user_id: int, now: datetime) -> None:
        """Remove a user and their accounts (after :meth:`forget_all`)."""
        ...


class RecordStore(Protocol):
    """Model usage per user, day and model (``/stats``), and the ``/why`` record of each
    user's last reply per thread."""

    async def add_model_usage(self, entry: UsageEntry) -> None:
        """Add one call to its user's totals for its day and model."""
        ...

    async def model_usage(self, user_id: int, *, since_day: str | None = None
                          ) -> list[UsageRow]:
        """A user's usage per day and model, newest day first (from ``since_day`` on)."""
        ...

    async def save_prompt_record(self, record: PromptRecord) -> None:
        """Keep (replace) the ``/why`` record of a user in a thread."""
        ...

    async def record_reply(self, *, usage: UsageEntry | None,
                           prompt_record: PromptRecord | None) -> None:
        """Both of a reply that stored no turn, in one transaction."""
        ...

    async def load_prompt_record(self, thread_id: int, user_id: int) -> dict | None:
        """The ``/why`` payload of a user in a thread, or None."""
        ...

    async def prompt_records_of(self, user_id: int) -> list[dict]:
        """Every ``/why`` record of one user, newest first: dicts with ``thread_id``,
        ``created_at`` (ISO text) and ``payload``."""
        ...


@runtime_checkable
class Store(Protocol):
    """The relational store: its ports, and what opens, closes and maintains them.

    Attributes:
        identities, conversations, deliveries, facts, episodes, work, privacy, records,
            questions: the ports (one object each, sharing the backend's connection).
        path: where the data lives (``":memory:"`` when nowhere on disk): export files are
            kept beside it.
    """

    identities: IdentityStore
    conversations: ConversationStore
    deliveries: DeliveryStore
    facts: FactStore
    episodes: EpisodeStore
    work: WorkQueue
    privacy: PrivacyStore
    records: RecordStore
    questions: QuestionStore
    path: str

    async def close(self) -> None:
        """Release the store (after pending writes)."""
        ...

    async def indexed_ids(self) -> dict[str, list[int]]:
        """The ids of every fact, episode and round, ascending, keyed ``fact`` / ``episode``
        / ``round`` (the index key prefixes): start-up reconcile compares them with the
        index's keys."""
        ...

    async def count_rows(self, kind: str) -> int:
        """How many ``users``, ``threads``, ``sessions``, ``turns``, ``episodes``,
        ``rounds``, ``facts``, ``work`` or ``audit_log`` entries are stored.

        Raises:
            StoreError: an unknown kind.
        """
        ...

    async def purge_free_space(self) -> None:
        """Make deletions physical (nothing of deleted rows left in the files)."""
        ...

    async def optimize(self) -> None:
        """Routine upkeep (statistics for the query planner), outside other writes."""
        ...

    async def claim_maintenance(self, day: str, now: datetime, *,
                                stale_before: datetime) -> bool:
        """Claim the daily maintenance of ``day`` (``YYYY-MM-DD``, UTC): True when nobody has (an
        unfinished claim made before ``stale_before`` is abandoned: taken over), False when
        another claim holds it or it was done. Of processes claiming one day, one gets it."""
        ...

    async def finish_maintenance(self, day: str, now: datetime, *, done: bool) -> None:
        """End the caller's claim of ``day``: done (kept as done) or not (another may claim it)."""
        ...
