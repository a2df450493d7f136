"""A Discord message kept until handled: what the store holds reads back as the same message
and place to answer; anything else is refused as unreadable."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import pytest

from adapters.discord._normalise import Kept
from memory.types import ChatKind, IncomingMessage, ThreadKey


def _kept(**changes) -> Kept:
    msg = IncomingMessage(
        thread=ThreadKey("discord", "100", "200"), chat_kind=ChatKind.GROUP,
        platform_user_id="7", display_name="Ana \u00e9", text="Remember that I live in Graz 🙂",
        sent_at=datetime(2026, 12, 2, 9, 30, tzinfo=timezone.utc), platform_message_id="300",
        chat_title="#general (Lab)", is_admin=True, update_key="9:300")
    return Kept(msg, channel_id=200, guild_id=50, author_id=7, **changes)


def test_a_kept_message_reads_back_as_it_was() -> None:
    item = _kept()
    assert Kept.from_payload(item.payload()) == item
    dm = Kept(item.msg, channel_id=100, guild_id=None, author_id=7)
    assert Kept.from_payload(dm.payload()).guild_id is None


def test_a_lone_surrogate_is_kept_escaped() -> None:
    item = _kept()
    odd = Kept(replace(item.msg, text="hello \ud800 x"), 200, 50, 7)
    payload = odd.payload()
    payload.encode("utf-8")  # what SQLite is given: no surrogate left to refuse
    assert Kept.from_payload(payload) == odd


@pytest.mark.parametrize("payload", ['{"v": 2}', '{"v": 1}', "[]", '{"v": 1, "thread": 5}',
                                     "not json"])
def test_an_unreadable_payload_is_a_value_error(payload: str) -> None:
    with pytest.raises(ValueError):
        Kept.from_payload(payload)
