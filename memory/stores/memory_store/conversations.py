"""Conversations and platform deliveries in the in-memory store
(:class:`memory.ports.ConversationStore`, :class:`memory.ports.DeliveryStore`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone

from memory.errors import StoreError
from memory.records import (NO_WRITES, HandledUpdate, PromptRecord, SessionRow, TurnWrites,
                            UsageEntry, answer_key)
from memory.stores.columns import dt, session_of, ts, turn_of
from memory.stores.memory_store.tables import Tables
from memory.types import ChatKind, IncomingMessage, Role, ThreadKey, Turn


def handled(t: Tables, update: HandledUpdate) -> None:
    """Mark a platform update handled (its kept payload dropped)."""
    key = (update.platform, update.key)
    if key in t.seen_updates:
        t.update(t.seen_updates, key, payload=None)
    else:
        t.seen_updates[key] = {"platform": update.platform, "update_id": update.key,
                               "seen_at": ts(update.at or datetime.now(timezone.utc)),
                               "payload": None}


def add_usage(t: Tables, entry: UsageEntry) -> None:
    """Add one model call to its user's totals for its day and model (a day's cost sums the
    calls whose price was known; None while there was none)."""
    if entry.user_id not in t.users:
        raise StoreError("a database write failed: FOREIGN KEY constraint failed")
    key = (entry.user_id, entry.day, entry.model)
    old = t.usage.get(key)
    if old is None:
        t.usage[key] = {"user_id": entry.user_id, "day": entry.day, "model": entry.model,
                        "calls": 1, "input_tokens": entry.input_tokens,
                        "output_tokens": entry.output_tokens,
                        "cache_creation_input_tokens": entry.cache_creation_input_tokens,
                        "cache_read_input_tokens": entry.cache_read_input_tokens,
                        "cost_usd": entry.cost_usd}
        return
    cost = old["cost_usd"] if entry.cost_usd is None else (
        entry.cost_usd if old["cost_usd"] is None else old["cost_usd"] + entry.cost_usd)
    t.update(t.usage, key, calls=old["calls"] + 1,
             input_tokens=old["input_tokens"] + entry.input_tokens,
             output_tokens=old["output_tokens"] + entry.output_tokens,
             cache_creation_input_tokens=old["cache_creation_input_tokens"]
             + entry.cache_creation_input_tokens,
             cache_read_input_tokens=old["cache_read_input_tokens"]
             + entry.cache_read_input_tokens, cost_usd=cost)


def save_record(t: Tables, record: PromptRecord) -> None:
    """Keep (replace) the ``/why`` record of a user in a thread."""
    if record.user_id not in t.users or record.thread_id not in t.threads:
        raise StoreError("a database write failed: FOREIGN KEY constraint failed")
    t.prompt_records[(record.thread_id, record.user_id)] = {
        "thread_id": record.thread_id, "user_id": record.user_id, "created_at": ts(record.at),
        "payload": json.dumps(record.payload, ensure_ascii=False)}


def open_row(t: Tables, thread_id: int) -> dict | None:
    """The thread's open session row, or None."""
    return next((s for s in t.sessions.values()
                 if s["thread_id"] == thread_id and s["closed_at"] is None), None)


def add_close_job(t: Tables, session_id: int, at: datetime) -> None:
    """Record a session's ``close`` job once (its key is (kind, session, seq 0))."""
    if not any(w["kind"] == "close" and w["session_id"] == session_id and w["seq"] == 0
               for w in t.work.values()):
        t.insert("work", {"kind": "close", "session_id": session_id, "seq": 0,
                          "created_at": ts(at), "done_at": None, "attempts": 0,
                          "last_error": None, "retry_after": None})


class MemoryConversations:
    """:class:`memory.ports.ConversationStore` on the store's tables."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables

    async def add_turn(self, *, thread_id: int, role: Role, text: str, at: datetime,
                       user_id: int | None = None, speaker: str | None = None,
                       platform_message_id: str | None = None, generated_by: str | None = None,
                       memory_off: bool = False, tokens: int = 0,
                       fold_after: tuple[int, int, int] | None = None,
                       writes: TurnWrites = NO_WRITES) -> tuple[Turn, bool]:
        """Store a turn (see :meth:`memory.ports.ConversationStore.add_turn`)."""
        t = self.t
        if platform_message_id is not None:
            for row in t.turns.values():
                if row["thread_id"] == thread_id and row["platform_message_id"] == platform_message_id:
                    return turn_of(row), False
        stamp = ts(at)
        with t.transaction():
            session = open_row(t, thread_id)
            if session is None:
                session_id = t.insert("sessions", {
                    "thread_id": thread_id, "started_at": stamp, "last_turn_at": stamp,
                    "closed_at": None, "close_reason": None, "folded_through": 0})
            else:
                session_id = session["id"]
                t.update(t.sessions, session_id, last_turn_at=max(session["last_turn_at"], stamp))
            turn_id = t.insert("turns", {
                "thread_id": thread_id, "session_id": session_id, "user_id": user_id,
                "role": role.value, "speaker": speaker, "text": text, "created_at": stamp,
                "platform_message_id": platform_message_id, "generated_by": generated_by,
                "memory_off": int(memory_off), "tokens": tokens, "recalled": None})
            if fold_after is not None:
                self._request_fold(session_id, fold_after, stamp)
            if writes.handled_update is not None:
                handled(t, writes.handled_update)
            if writes.reply_due:
                t.replies_due.setdefault(turn_id, {"turn_id": turn_id, "thread_id": thread_id})
            if writes.usage is not None:
                add_usage(t, writes.usage)
            if writes.prompt_record is not None:
                save_record(t, writes.prompt_record)
            if writes.recalled is not None:
                t.update(t.turns, turn_id, recalled=" ".join(writes.recalled))
        return turn_of(t.turns[turn_id]), True

    def _request_fold(self, session_id: int, bounds: tuple[int, int, int], at: str) -> None:
        t = self.t
        mark = t.sessions[session_id]["folded_through"]
        unfolded = [r for r in t.turns.values() if r["session_id"] == session_id and r["id"] > mark]
        n, tokens = len(unfolded), sum(r["tokens"] for r in unfolded)
        if not (n > bounds[0] or (tokens > bounds[1] and n > bounds[2])):
            return
        folds = [w for w in t.work.values() if w["session_id"] == session_id and w["kind"] == "fold"]
        if any(w["done_at"] is None for w in folds):
            return
        t.insert("work", {"kind": "fold", "session_id": session_id,
                          "seq": max((w["seq"] for w in folds), default=0) + 1, "created_at": at,
                          "done_at": None, "attempts": 0, "last_error": None, "retry_after": None})

    async def open_session(self, thread_id: int) -> SessionRow | None:
        """The thread's open session, or None."""
        row = open_row(self.t, thread_id)
        return session_of(row) if row is not None else None

    async def get_session(self, session_id: int) -> SessionRow | None:
        """A session by id, or None."""
        row = self.t.sessions.get(session_id)
        return session_of(row) if row is not None else None

    async def open_sessions(self) -> list[SessionRow]:
        """Every open session, oldest last turn first."""
        rows = [s for s in self.t.sessions.values() if s["closed_at"] is None]
        return [session_of(s) for s in sorted(rows, key=lambda s: (s["last_turn_at"], s["id"]))]

    async def session_turns(self, session_id: int, *, limit: int | None = None) -> list[Turn]:
        """A session's turns, oldest first; with ``limit``, only the newest ``limit``."""
        rows = self.t.where(self.t.turns, lambda r: r["session_id"] == session_id)
        if limit is not None:
            rows = rows[-limit:] if limit > 0 else []
        return [turn_of(r) for r in rows]

    async def get_turns(self, turn_ids: Iterable[int]) -> list[Turn]:
        """The turns with these ids (missing ids skipped), oldest first."""
        return [turn_of(self.t.turns[i]) for i in sorted(set(turn_ids)) if i in self.t.turns]

    async def working_turns(self, thread_id: int, limit: int
                            ) -> tuple[SessionRow | None, list[Turn]]:
        """The thread's open session and its newest ``limit`` turns, oldest first."""
        session = await self.open_session(thread_id)
        if session is None:
            return None, []
        return session, await self.session_turns(session.id, limit=limit)

    async def close_session(self, session_id: int, at: datetime, reason: str) -> bool:
        """Close a session and record its ``close`` job; False when already closed."""
        return self._close(session_id, at, reason, None)

    async def close_session_if_idle(self, session_id: int, *, last_turn_before: datetime,
                                    at: datetime, reason: str = "idle") -> bool:
        """Close a session (and record its job) only if still open and idle."""
        return self._close(session_id, at, reason, ts(last_turn_before))

    def _close(self, session_id: int, at: datetime, reason: str, before: str | None) -> bool:
        t = self.t
        row = t.sessions.get(session_id)
        if row is None or row["closed_at"] is not None or (
                before is not None and row["last_turn_at"] > before):
            return False
        with t.transaction():
            t.update(t.sessions, session_id, closed_at=ts(at), close_reason=reason)
            add_close_job(t, session_id, at)
        return True

    async def edit_user_turn(self, thread_id: int, platform_message_id: str, text: str,
                             now: datetime) -> tuple[Turn, Turn] | None:
        """Replace the text of a user turn (an edit) and consume its open candidates."""
        t = self.t
        row = next((r for r in t.where(t.turns, lambda r: r["thread_id"] == thread_id)
                    if r["platform_message_id"] == platform_message_id
                    and r["role"] == Role.USER.value), None)
        if row is None:
            return None
        after = t.update(t.turns, row["id"], text=text)
        for key, cand in list(t.candidates.items()):
            if cand["turn_id"] == row["id"] and cand["consumed_at"] is None:
                t.update(t.candidates, key, consumed_at=ts(now))
        return turn_of(row), turn_of(after)


class MemoryDeliveries:
    """:class:`memory.ports.DeliveryStore` on the store's tables."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables

    async def receive_updates(self, platform: str, updates: Sequence[tuple[str, str]],
                              now: datetime) -> None:
        """Keep received updates until handled; known ones are left as they are."""
        for key, payload in updates:
            self.t.seen_updates.setdefault((platform, key), {
                "platform": platform, "update_id": key, "seen_at": ts(now), "payload": payload})

    async def update_state(self, platform: str, update_key: str) -> str | None:
        """``handled``, ``received`` or None (never seen)."""
        row = self.t.seen_updates.get((platform, update_key))
        if row is None:
            return None
        return "handled" if row["payload"] is None else "received"

    async def received_updates(self, platform: str, prefix: str = "") -> list[tuple[str, str]]:
        """Updates received and never handled, in the order received."""
        return [(r["update_id"], r["payload"]) for r in self.t.seen_updates.values()
                if r["platform"] == platform and r["payload"] is not None
                and r["update_id"].startswith(prefix)]

    async def mark_update_handled(self, platform: str, update_key: str, now: datetime) -> None:
        """Mark an update handled (its payload dropped)."""
        handled(self.t, HandledUpdate(platform, update_key, now))

    async def mark_update_seen(self, platform: str, update_id: str, now: datetime) -> bool:
        """Record an update as handled; False when it was seen before."""
        if (platform, update_id) in self.t.seen_updates:
            return False
        self.t.seen_updates[(platform, update_id)] = {
            "platform": platform, "update_id": update_id, "seen_at": ts(now), "payload": None}
        return True

    async def prune_seen_updates(self, before: datetime) -> int:
        """Forget update records older than ``before``; returns how many."""
        cut = ts(before)
        old = [k for k, r in self.t.seen_updates.items() if r["seen_at"] < cut]
        for key in old:
            del self.t.seen_updates[key]
        return len(old)

    async def reply_delivered(self, key: ThreadKey, platform_message_id: str) -> None:
        """The answer to the user turn with this platform message id was delivered."""
        t = self.t
        threads = {i for i, th in t.threads.items() if (th["platform"], th["chat_id"],
                   th["topic_id"]) == (key.platform, key.chat_id, key.thread_id or "")}
        for turn_id in list(t.replies_due):
            turn = t.turns.get(turn_id)
            if (turn is not None and turn["thread_id"] in threads and turn["role"] == "user"
                    and turn["platform_message_id"] == platform_message_id):
                del t.replies_due[turn_id]

    async def due_messages(self, platform: str) -> list[IncomingMessage]:
        """The user turns of ``platform`` whose answer is still due, oldest first."""
        t = self.t
        out = []
        for turn_id in sorted(t.replies_due):
            turn = t.turns[turn_id]
            thread = t.threads[turn["thread_id"]]
            account = next((a for a in t.accounts.values() if a["user_id"] == turn["user_id"]
                            and a["platform"] == thread["platform"]), None)
            if thread["platform"] != platform or account is None:
                continue
            out.append(IncomingMessage(
                thread=ThreadKey(thread["platform"], thread["chat_id"], thread["topic_id"] or None),
                chat_kind=ChatKind(thread["chat_kind"]),
                platform_user_id=account["platform_user_id"],
                display_name=turn["speaker"] or account["platform_user_id"], text=turn["text"],
                sent_at=dt(turn["created_at"]), platform_message_id=turn["platform_message_id"],
                chat_title=thread["title"]))
        return out

    async def due_turn(self, thread_id: int, platform_message_id: str | None
                       ) -> tuple[Turn | None, str | None]:
        """The due user turn with this platform message id, and the answer stored after it."""
        t = self.t
        row = next((t.turns[i] for i, d in t.replies_due.items() if d["thread_id"] == thread_id
                    and t.turns[i]["platform_message_id"] == platform_message_id), None)
        if row is None:
            return None, None
        key = answer_key(platform_message_id)
        keyed = next((r for r in t.where(t.turns, lambda r: r["thread_id"] == thread_id)
                      if r["platform_message_id"] == key), None)
        if keyed is not None:
            return turn_of(row), keyed["text"]
        after = next((r for r in t.where(t.turns, lambda r: r["session_id"] == row["session_id"])
                      if r["id"] > row["id"]), None)
        answered = (after is not None and after["role"] == Role.ASSISTANT.value
                    and after["platform_message_id"] is None)  # an answer stored without key
        return turn_of(row), after["text"] if answered else None

    async def set_account_blocked(self, platform: str, platform_user_id: str,
                                  at: datetime | None) -> None:
        """Mark an account as having blocked the bot, or clear the mark (None)."""
        if (platform, platform_user_id) in self.t.accounts:
            self.t.update(self.t.accounts, (platform, platform_user_id),
                          blocked_at=ts(at) if at is not None else None)

    async def blocked_accounts(self, platform: str) -> set[str]:
        """Platform user ids of the accounts marked as having blocked the bot."""
        return {a["platform_user_id"] for a in self.t.accounts.values()
                if a["platform"] == platform and a["blocked_at"] is not None}
