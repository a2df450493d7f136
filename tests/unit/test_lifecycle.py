"""Life-cycle policy (``memory.lifecycle``): pure functions driven by a hand-driven clock."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from memory.lifecycle import (
    expiry_cutoff,
    facts_to_archive,
    idle_cutoff,
    idle_deadline,
    is_idle,
    last_used_at,
    retention_cutoff,
)
from memory.types import ChatKind, Fact, FactStatus
from tests.conftest import T0


def _fact(fid: int, *, confirmed, recalled=None, status=FactStatus.ACTIVE) -> Fact:
    return Fact(id=fid, user_id=1, kind="note", text=f"fact {fid}", topic=None, status=status,
                created_at=confirmed, valid_from=confirmed, valid_to=None,
                last_confirmed_at=confirmed, last_recalled_at=recalled, confirmations=1,
                origin_thread_id=1, origin_kind=ChatKind.PRIVATE, origin_title=None,
                source_turn_ids=(1,), lang="en")


def test_idle_deadline_and_boundary(clock):
    last = clock.now()
    assert idle_deadline(last, 1800) == last + timedelta(seconds=1800)
    clock.advance(1799.999)
    assert not is_idle(last, 1800, clock.now())
    clock.advance(0.001)
    assert is_idle(last, 1800, clock.now())  # the deadline itself is idle
    assert idle_cutoff(clock.now(), 1800) == last
    with pytest.raises(ValueError):
        idle_deadline(last, 0)


def test_a_later_turn_moves_the_deadline(clock):
    first = clock.now()
    clock.advance(1000)
    second = clock.now()
    clock.advance(1000)  # past the first deadline, not the second
    assert is_idle(first, 1800, clock.now())
    assert not is_idle(second, 1800, clock.now())


def test_unused_for_31_days_is_archived_recalled_yesterday_stays(clock):
    written = clock.now()
    clock.advance(31 * 86400)
    now = clock.now()
    unused = _fact(1, confirmed=written)
    recalled = _fact(2, confirmed=written, recalled=now - timedelta(days=1))
    confirmed = _fact(3, confirmed=now - timedelta(days=1))
    superseded = _fact(4, confirmed=written, status=FactStatus.SUPERSEDED)
    facts = [unused, recalled, confirmed, superseded]
    assert [f.id for f in facts_to_archive(facts, now=now, expire_days=30)] == [1]
    assert facts_to_archive(facts, now=now, expire_days=0) == []
    assert last_used_at(recalled) == now - timedelta(days=1)


def test_expiry_boundary_is_inclusive():
    fact = _fact(1, confirmed=T0)
    at_30 = T0 + timedelta(days=30)
    assert facts_to_archive([fact], now=at_30, expire_days=30) == [fact]
    assert facts_to_archive([fact], now=at_30 - timedelta(seconds=1), expire_days=30) == []
    newer = replace(fact, last_recalled_at=T0 + timedelta(days=1))
    assert facts_to_archive([newer], now=at_30, expire_days=30) == []


def test_cutoffs_are_off_at_zero():
    assert expiry_cutoff(T0, 0) is None
    assert retention_cutoff(T0, 0) is None
    assert expiry_cutoff(T0, 30) == T0 - timedelta(days=30)
    assert retention_cutoff(T0, 7) == T0 - timedelta(days=7)
