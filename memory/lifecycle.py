"""Memory life-cycle policy: when a session is idle, which facts fade, which turns expire.

Pure functions of data and ``now`` (aware UTC datetimes), no I/O and no scheduler: the bot's
scheduler decides *when* to ask, these functions decide *what* is due, and the stores mirror
the same comparisons in their conditional writes (SQLite in SQL: timestamps are stored as UTC
ISO-8601 text with microseconds, so string order is time order). The rules: a session is
closed by the idle timeout and a fact unused for ``MEMORY_EXPIRE_DAYS`` is archived; the
settings ``IDLE_TIMEOUT_SECONDS``, ``MEMORY_EXPIRE_DAYS`` and ``RAW_TURN_RETENTION_DAYS`` (README,
"Configuration") set the limits.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory.types import Fact, FactStatus


def idle_deadline(last_turn_at: datetime, timeout_seconds: float) -> datetime:
    """When a session whose last turn was at ``last_turn_at`` becomes idle.

    Args:
        last_turn_at: time of the session's newest turn (aware UTC).
        timeout_seconds: ``IDLE_TIMEOUT_SECONDS`` (> 0).

    Returns:
        ``last_turn_at + timeout_seconds`` (aware UTC).
    """
    if timeout_seconds <= 0:
        raise ValueError("the idle timeout must be positive (seconds)")
    return last_turn_at + timedelta(seconds=timeout_seconds)


def is_idle(last_turn_at: datetime, timeout_seconds: float, now: datetime) -> bool:
    """True when the session is idle at ``now``: its deadline has been reached (``now >=
    idle_deadline``). A turn exactly at the deadline therefore comes too late to save it."""
    return now >= idle_deadline(last_turn_at, timeout_seconds)


def idle_cutoff(now: datetime, timeout_seconds: float) -> datetime:
    """Sessions whose last turn is at or before this moment are idle at ``now`` (the same rule
    as :func:`is_idle`, in the form a SQL predicate needs): ``now - timeout_seconds``."""
    if timeout_seconds <= 0:
        raise ValueError("the idle timeout must be positive (seconds)")
    return now - timedelta(seconds=timeout_seconds)


def expiry_cutoff(now: datetime, expire_days: int) -> datetime | None:
    """Facts last used at or before this moment are archived; None when expiry is off.

    Args:
        now: the current time (aware UTC).
        expire_days: ``MEMORY_EXPIRE_DAYS`` (days; 0 = never).
    """
    if expire_days <= 0:
        return None
    return now - timedelta(days=expire_days)


def last_used_at(fact: Fact) -> datetime:
    """The last time a fact was used: the later of its last confirmation (set when it was
    written, bumped when restated) and its last recall."""
    if fact.last_recalled_at is None:
        return fact.last_confirmed_at
    return max(fact.last_confirmed_at, fact.last_recalled_at)


def facts_to_archive(facts: Iterable[Fact], *, now: datetime, expire_days: int) -> list[Fact]:
    """The active facts neither recalled nor confirmed for ``expire_days`` days.

    A fact is archived when ``last_used_at(fact) <= now - expire_days``: unused for 31 days
    with a 30-day expiry is archived, recalled yesterday is not. Superseded and archived facts
    are never returned.

    Args:
        facts: candidate facts (any status).
        now: the current time (aware UTC).
        expire_days: ``MEMORY_EXPIRE_DAYS`` (days; 0 = never, returns ``[]``).
    """
    cutoff = expiry_cutoff(now, expire_days)
    if cutoff is None:
        return []
    return [f for f in facts if f.status is FactStatus.ACTIVE and last_used_at(f) <= cutoff]


def retention_cutoff(now: datetime, retention_days: int) -> datetime | None:
    """Consolidated turns created before this moment are deleted; None when they are kept.

    Args:
        now: the current time (aware UTC).
        retention_days: ``RAW_TURN_RETENTION_DAYS`` (days; 0 = keep forever).
    """
    if retention_days <= 0:
        return None
    return now - timedelta(days=retention_days)


@dataclass(frozen=True, slots=True)
class IdleCheck:
    """What an idle check found for one thread.

    Attributes:
        closed: this check closed the thread's session.
        deadline: the open session's new idle deadline (aware UTC) when it is not idle yet;
            None when no session is open (or it was just closed).
    """

    closed: bool
    deadline: datetime | None = None


@dataclass(frozen=True, slots=True)
class MaintenanceReport:
    """Counts of one maintenance run (logged at INFO).

    Attributes:
        consolidated: pending consolidation jobs caught up (left by earlier failures).
        archived_facts: facts moved to status ``archived``.
        deleted_turns: consolidated turns removed by the retention rule.
        deleted_rounds: rounds (and their index rows) removed with those turns.
        elapsed_s: wall time of the run (seconds).
    """

    consolidated: int = 0
    archived_facts: int = 0
    deleted_turns: int = 0
    deleted_rounds: int = 0
    elapsed_s: float = 0.0
