"""Platform deliveries in PostgreSQL (:class:`memory.ports.DeliveryStore`): updates kept from
receipt until handled (the handled mark is written in the transaction of the turn an update
carried), replies due from their user turn's transaction until delivered, and the accounts
that blocked the bot. An update's key is the primary key with its platform, so a redelivery
to a second process on the same database is known there too."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone

from memory.records import HandledUpdate, answer_key
from memory.stores.postgres.database import Database, Statement
from memory.stores.postgres.rows import dt, turn_of
from memory.types import ChatKind, IncomingMessage, Role, ThreadKey, Turn


def handled_sql(update: HandledUpdate) -> Statement:
    """Mark a platform update handled (its payload dropped)."""
    return ("INSERT INTO seen_updates (platform, update_id, seen_at) VALUES ($1, $2, $3) "
            "ON CONFLICT (platform, update_id) DO UPDATE SET payload = NULL",
            (update.platform, update.key, update.at or datetime.now(timezone.utc)))


class PgDeliveries:
    """:class:`memory.ports.DeliveryStore` on the store's pool."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def receive_updates(self, platform: str, updates: Sequence[tuple[str, str]],
                              now: datetime) -> None:
        """Keep received platform updates, ``(update key, payload JSON)``, until they are
        handled, in one transaction; updates already known (received or handled) are left as
        they are."""
        if not updates:
            return
        async with self.db.tx() as tx:
            await tx.executemany(
                "INSERT INTO seen_updates (platform, update_id, seen_at, payload) "
                "VALUES ($1, $2, $3, $4) ON CONFLICT (platform, update_id) DO NOTHING",
                [(platform, key, now, payload) for key, payload in updates])

    async def update_state(self, platform: str, update_key: str) -> str | None:
        """``handled``, ``received`` (kept, not yet handled) or None (never seen)."""
        row = await self.db.one("SELECT payload IS NULL AS done FROM seen_updates "
                                "WHERE platform = $1 AND update_id = $2", (platform, update_key))
        if row is None:
            return None
        return "handled" if row["done"] else "received"

    async def received_updates(self, platform: str, prefix: str = "") -> list[tuple[str, str]]:
        """Updates received but never handled, ``(update key, payload JSON)``, in the order
        they were received; ``prefix`` narrows the keys (one bot's updates)."""
        rows = await self.db.all(
            "SELECT update_id, payload FROM seen_updates WHERE platform = $1 AND payload IS NOT "
            "NULL AND starts_with(update_id, $2) ORDER BY received", (platform, prefix))
        return [(r["update_id"], r["payload"]) for r in rows]

    async def mark_update_handled(self, platform: str, update_key: str, now: datetime) -> None:
        """Mark an update handled (its payload dropped)."""
        await self.db.run_statements([handled_sql(HandledUpdate(platform, update_key, now))])

    async def mark_update_seen(self, platform: str, update_id: str, now: datetime) -> bool:
        """Record a platform update as handled. Returns False when it was seen before (a
        redelivery, also to another process or across a restart), True the first time."""
        cur = await self.db.execute(
            "INSERT INTO seen_updates (platform, update_id, seen_at) VALUES ($1, $2, $3) "
            "ON CONFLICT (platform, update_id) DO NOTHING", (platform, update_id, now))
        return cur.rowcount == 1

    async def prune_seen_updates(self, before: datetime) -> int:
        """Forget handled-update records older than ``before``. Returns the rows removed."""
        cur = await self.db.execute("DELETE FROM seen_updates WHERE seen_at < $1", (before,))
        return cur.rowcount

    async def reply_delivered(self, key: ThreadKey, platform_message_id: str) -> None:
        """The answer to the user turn with this platform message id was delivered."""
        await self.db.execute(
            "DELETE FROM replies_due WHERE turn_id IN (SELECT t.id FROM turns t JOIN threads th "
            "ON th.id = t.thread_id WHERE th.platform = $1 AND th.chat_id = $2 AND "
            "th.topic_id = $3 AND t.platform_message_id = $4 AND t.role = 'user')",
            (key.platform, key.chat_id, key.thread_id or "", platform_message_id))

    async def due_messages(self, platform: str) -> list[IncomingMessage]:
        """The user turns of ``platform`` whose answer is still due, oldest first, as the
        messages that carried them."""
        rows = await self.db.all(
            "SELECT t.text, t.created_at, t.platform_message_id, t.speaker, th.platform, "
            "th.chat_id, th.topic_id, th.chat_kind, th.title, a.platform_user_id "
            "FROM replies_due d JOIN turns t ON t.id = d.turn_id "
            "JOIN threads th ON th.id = t.thread_id "
            "JOIN accounts a ON a.user_id = t.user_id AND a.platform = th.platform "
            "WHERE th.platform = $1 ORDER BY t.id", (platform,))
        return [IncomingMessage(
            thread=ThreadKey(r["platform"], r["chat_id"], r["topic_id"] or None),
            chat_kind=ChatKind(r["chat_kind"]), platform_user_id=r["platform_user_id"],
            display_name=r["speaker"] or r["platform_user_id"], text=r["text"],
            sent_at=dt(r["created_at"]), platform_message_id=r["platform_message_id"],
            chat_title=r["title"]) for r in rows]

    async def due_turn(self, thread_id: int, platform_message_id: str | None
                       ) -> tuple[Turn | None, str | None]:
        """The due user turn with this platform message id in the thread, and the text of
        its stored answer (:meth:`memory.ports.DeliveryStore.due_turn`); ``(None, None)`` when
        no such turn is due."""
        row = await self.db.one(
            "SELECT t.* FROM replies_due d JOIN turns t ON t.id = d.turn_id "
            "WHERE d.thread_id = $1 AND t.platform_message_id = $2",
            (thread_id, platform_message_id))
        if row is None:
            return None, None
        turn = turn_of(row)
        keyed = await self.db.one(
            "SELECT text FROM turns WHERE thread_id = $1 AND platform_message_id = $2",
            (thread_id, answer_key(platform_message_id)))
        if keyed is not None:
            return turn, keyed["text"]
        after = await self.db.one(
            "SELECT role, text, platform_message_id FROM turns WHERE session_id = $1 AND id > $2"
            " ORDER BY id LIMIT 1", (turn.session_id, turn.id))
        answered = (after is not None and after["role"] == Role.ASSISTANT.value
                    and after["platform_message_id"] is None)  # an answer stored without key
        return turn, after["text"] if answered else None

    async def set_account_blocked(self, platform: str, platform_user_id: str,
                                  at: datetime | None) -> None:
        """Mark a platform account as having blocked the bot (``at``), or clear the mark
        (None). Unknown accounts are ignored."""
        await self.db.execute(
            "UPDATE accounts SET blocked_at = $1 WHERE platform = $2 AND platform_user_id = $3",
            (at, platform, platform_user_id))

    async def blocked_accounts(self, platform: str) -> set[str]:
        """Platform user ids of the accounts currently marked as having blocked the bot."""
        rows = await self.db.all(
            "SELECT platform_user_id FROM accounts WHERE platform = $1 AND blocked_at IS NOT NULL",
            (platform,))
        return {r["platform_user_id"] for r in rows}
