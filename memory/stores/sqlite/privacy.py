"""Privacy in SQLite (:class:`memory.ports.PrivacyStore`): deletion with everything derived
from what is deleted, in one transaction with a durable purge record; retention; and a
user's export and import (:mod:`memory.stores.sqlite.transfer`).

Derived items go with their sources: the replies in the rounds holding a deleted turn,
replies that quoted a deleted fact or whose prompt recalled a deleted item, the rounds holding
such replies, the episodes citing any deleted turn, and the ``/why`` records showing any
deleted item, repeated until nothing new is derived.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from memory.records import EditCascade, ForgetResult, PurgeRow
from memory.stores.sqlite import transfer
from memory.stores.sqlite.connection import Database
from memory.stores.sqlite.rows import (
    CHUNK,
    by_ids,
    delete_ids,
    episode_of,
    fact_of,
    id_list,
    round_of,
    ts,
    turns_by_ids,
)
from memory.types import Episode, Fact, Role, Scope, Turn


@dataclass(frozen=True, slots=True)
class _ForgetTargets:
    """Row ids one user's ``forget_all`` deletes (see :meth:`SQLitePrivacy.forget_all`)."""

    fact_ids: list[int]
    private_threads: list[int]
    group_turns: list[int]
    round_ids: list[int]
    episode_ids: list[int]
    turn_count: int


#: Pages in the WAL that start an automatic checkpoint (SQLite's default is 1,000: 4 MB with
#: 4 KiB pages). With :data:`WAL_SIZE_LIMIT_BYTES` this keeps the WAL file near 256 KiB, so the
#: data folder of a young bot stays within a small multiple of its compacted size
#: (docs/benchmarks.md, "Disk growth").
WAL_CHECKPOINT_PAGES = 64
#: Size the WAL file is cut back to after a checkpoint (``PRAGMA journal_size_limit``).
WAL_SIZE_LIMIT_BYTES = 256 << 10


class SQLitePrivacy:
    """:class:`memory.ports.PrivacyStore` on the store's connection."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def fact_with_history(self, user_id: int, fact_id: int) -> list[Fact]:
        """The facts :meth:`delete_fact` deletes for ``fact_id``: the fact first, then the
        earlier values it replaced (superseded facts of its topic valid from no later than
        it, oldest first); a later or current value of the topic is never among them. Empty
        when the fact is not the user's."""
        row = await self.db.one("SELECT * FROM facts WHERE id = ? AND user_id = ?",
                              (fact_id, user_id))
        if row is None:
            return []
        fact = fact_of(row)
        if not row["topic"]:
            return [fact]
        rows = await self.db.all(
            "SELECT * FROM facts WHERE user_id = ? AND topic = ? AND status = 'superseded' "
            "AND id != ? AND valid_from <= ? ORDER BY valid_from, id",
            (user_id, row["topic"], fact_id, row["valid_from"]))
        return [fact] + [fact_of(r) for r in rows]

    async def fact_deletion_messages(self, user_id: int, fact_id: int) -> list[str]:
        """The texts of the user's own messages :meth:`delete_fact` would delete now (the
        facts' source messages and the user's messages in the rounds of replies derived from
        them), oldest first; deletes nothing. Empty when the fact is not the user's."""
        doomed = await self._fact_deletion(user_id, fact_id)
        if doomed is None:
            return []
        _, turn_ids, _, reply_ids, _, _ = doomed
        turns = await turns_by_ids(self.db, sorted(set(turn_ids) | set(reply_ids)))
        return [t.text for t in sorted(turns, key=lambda t: t.id)
                if t.role is Role.USER and t.user_id == user_id]

    async def delete_fact(self, user_id: int, fact_id: int, now: datetime) -> ForgetResult:
        """Delete one of a user's facts, its history (the earlier values it replaced:
        :meth:`fact_with_history`) and the source turns they came from; rounds holding those
        turns go too.

        Returns:
            What was removed, with the deleted facts' texts (zero counts when the fact is not
            the user's).
        """
        async with self.db.tx() as tx:
            doomed = await self._fact_deletion(user_id, fact_id)
            if doomed is None:
                return ForgetResult(0, 0, 0, 0, ())
            facts, turn_ids, round_keys, reply_ids, citing, doomed_keys = doomed
            ids = [f.id for f in facts]
            episode_ids = [e.id for e in citing]
            marks = ",".join("?" * len(ids))
            await tx.execute(f"DELETE FROM facts WHERE id IN ({marks})", ids)
            if round_keys:
                rmarks = ",".join("?" * len(round_keys))
                await tx.execute(f"DELETE FROM rounds WHERE id IN ({rmarks})", round_keys)
            if turn_ids:
                tmarks = ",".join("?" * len(turn_ids))
                await tx.execute(
                    f"DELETE FROM turns WHERE id IN ({tmarks}) AND role = 'user'", turn_ids
                )
            if reply_ids:
                await delete_ids(tx, "turns", reply_ids)
            await delete_ids(tx, "episodes", episode_ids)
            await tx.execute("DELETE FROM prompt_records WHERE user_id = ?", (user_id,))
            await self._drop_prompt_records_showing(tx, doomed_keys)
            await tx.execute(
                "INSERT INTO audit_log (at, user_id, action, count) VALUES (?, ?, 'forget_fact', ?)",
                (ts(now), user_id, len(ids)),
            )
            keys = (tuple(f"fact:{i}" for i in ids) + tuple(f"round:{i}" for i in round_keys)
                    + tuple(f"episode:{i}" for i in episode_ids))
            resummarise = tuple(e.session_id for e in citing if e.status == "closed")
            purge_id = await self._record_purge(tx, user_id, keys, resummarise, now)
        return ForgetResult(len(ids), len(episode_ids), len(round_keys), len(turn_ids), keys,
                            resummarise, purge_id, tuple(f.text for f in facts))

    async def forget_all_preview(self, user_id: int) -> ForgetResult:
        """The counts :meth:`forget_all` would delete now (facts of every status, episodes and
        rounds of private and group chats, messages), deleting nothing; ``index_keys`` empty.
        The ``/forget all`` confirmation names these numbers."""
        t = await self._forget_targets(user_id)
        return ForgetResult(len(t.fact_ids), len(t.episode_ids), len(t.round_ids), t.turn_count, ())

    async def forget_all(self, user_id: int, now: datetime) -> ForgetResult:
        """Delete everything of one user: facts; in their private threads every turn, episode,
        round and prompt record (both sides); in group threads their own turns and the rounds
        and episodes that cite them. Other users' data is untouched (predicate-scoped deletes,
        never a table reset).
        """
        async with self.db.tx() as tx:
            t = await self._forget_targets(user_id)
            await delete_ids(tx, "facts", t.fact_ids)
            await delete_ids(tx, "rounds", t.round_ids)
            await delete_ids(tx, "episodes", t.episode_ids)
            await delete_ids(tx, "turns", t.group_turns)
            for thread_id in t.private_threads:
                await tx.execute("DELETE FROM turns WHERE thread_id = ?", (thread_id,))
                await tx.execute("DELETE FROM episodes WHERE thread_id = ?", (thread_id,))
                await tx.execute("DELETE FROM rounds WHERE thread_id = ?", (thread_id,))
            await tx.execute("DELETE FROM prompt_records WHERE user_id = ?", (user_id,))
            await self._drop_prompt_records_showing(
                tx, {f"fact:{i}" for i in t.fact_ids} | {f"episode:{i}" for i in t.episode_ids}
                | {f"round:{i}" for i in t.round_ids})
            await tx.execute("DELETE FROM fact_candidates WHERE user_id = ?", (user_id,))
            await tx.execute("DELETE FROM questions WHERE user_id = ?", (user_id,))
            await tx.execute(
                "INSERT INTO audit_log (at, user_id, action, count) VALUES (?, ?, 'forget_all', ?)",
                (ts(now), user_id, len(t.fact_ids) + len(t.episode_ids) + len(t.round_ids)),
            )
            keys = (tuple(f"fact:{i}" for i in t.fact_ids)
                    + tuple(f"episode:{i}" for i in t.episode_ids)
                    + tuple(f"round:{i}" for i in t.round_ids))
            purge_id = await self._record_purge(tx, user_id, keys, (), now)
        return ForgetResult(len(t.fact_ids), len(t.episode_ids), len(t.round_ids), t.turn_count,
                            keys, purge_id=purge_id)

    async def drop_derived_from_edit(self, user_id: int, turn_id: int, old_terms: set[str],
                                     now: datetime, *, fact_ids: Sequence[int] = (),
                                     round_text: Callable[[list[Turn]], str]) -> EditCascade:
        """After an edit of turn ``turn_id``: delete what was derived from its old text and
        say what to rebuild, in one transaction with a purge record (:meth:`pending_purges`).

        Deleted: the replies to the turn and in the rounds holding it, and the replies whose prompt
        recalled those rounds or the episodes citing the turn, when they contain one of
        ``old_terms`` (words of the old text the new one lacks: they quoted it); the episodes
        citing the turn or such a reply (a running episode's session is set to be folded again
        from its first turn); the facts ``fact_ids`` (stated only by the old text); ``/why``
        records showing any of these items. The rounds holding the turn are rewritten from
        the turns they still hold (``round_text`` renders them).

        Returns:
            The rewritten rounds, the index keys to delete (deleted items, and the rewritten
            rounds: their rows hold the old text until written again), the closed sessions to
            summarise again, and the purge record's id.
        """
        async with self.db.tx() as tx:
            round_ids = await self._rounds_with_turns([turn_id])
            citing = await self._episodes_citing([turn_id])
            keys = {f"round:{i}" for i in round_ids} | {f"episode:{e.id}" for e in citing}
            rounds = await by_ids(self.db, "rounds", round_ids, round_of)
            answers = []  # the replies to the turn, also before a round holds them
            for r in await self.db.all(
                    "SELECT id, role FROM turns WHERE session_id = (SELECT session_id FROM "
                    "turns WHERE id = ?) AND id > ? ORDER BY id", (turn_id, turn_id)):
                if r["role"] != "assistant":
                    break
                answers.append(r["id"])
            candidates = ({t for r in rounds for t in r.turn_ids} - {turn_id}) | set(
                answers) | set(await self._replies_recalling(user_id, keys))
            quoting = [t.id for t in await turns_by_ids(self.db, sorted(candidates))
                       if t.role is Role.ASSISTANT
                       and any(term in t.text.lower() for term in old_terms)]
            if quoting:
                round_ids = sorted(set(round_ids) | set(await self._rounds_with_turns(quoting)))
                rounds = await by_ids(self.db, "rounds", round_ids, round_of)
                citing = await self._episodes_citing([turn_id, *quoting])
            await delete_ids(tx, "turns", quoting)
            rebuild = {r.id: tuple(t for t in r.turn_ids if t not in quoting) for r in rounds}
            emptied = [i for i, turns in rebuild.items() if not turns]
            await delete_ids(tx, "rounds", emptied)
            await delete_ids(tx, "facts", list(fact_ids))
            for round_id, kept in rebuild.items():
                if kept:
                    await tx.execute("UPDATE rounds SET turn_ids = ?, text = ? WHERE id = ?",
                                     (json.dumps(list(kept)),
                                      round_text(await turns_by_ids(self.db, kept)), round_id))
            await delete_ids(tx, "episodes", [e.id for e in citing])
            for e in citing:
                if e.status != "closed":  # the running episode is folded again from scratch
                    await tx.execute("UPDATE sessions SET folded_through = 0 WHERE id = ?",
                                     (e.session_id,))
            await self._drop_prompt_records_showing(
                tx, {f"round:{i}" for i in round_ids} | {f"episode:{e.id}" for e in citing})
            gone = (tuple(f"round:{i}" for i in round_ids)
                    + tuple(f"episode:{e.id}" for e in citing)
                    + tuple(f"fact:{i}" for i in fact_ids))
            resummarise = tuple(e.session_id for e in citing if e.status == "closed")
            purge_id = await self._record_purge(tx, user_id, gone, resummarise, now)
        kept = [i for i, turns in rebuild.items() if turns]
        return EditCascade(tuple(kept), gone, resummarise, purge_id, len(quoting))

    async def delete_consolidated_turns(self, cutoff: datetime, now: datetime) -> ForgetResult:
        """Retention: delete turns created before ``cutoff`` in closed sessions whose
        consolidation is done, with every round holding one of them, in one transaction.
        Episodes stay (their summaries remain recallable; the deleted rounds do not).

        Returns:
            Counts of rounds and turns removed and the rounds' index keys.
        """
        async with self.db.tx() as tx:
            rows = await self.db.all(
                "SELECT t.id, t.session_id FROM turns t JOIN sessions s ON s.id = t.session_id "
                "JOIN work w ON w.session_id = s.id AND w.kind = 'close' "
                "WHERE s.closed_at IS NOT NULL AND w.done_at IS NOT NULL AND t.created_at < ?",
                (ts(cutoff),),
            )
            if not rows:
                return ForgetResult(0, 0, 0, 0, ())
            turn_ids = {r["id"] for r in rows}
            sessions = sorted({r["session_id"] for r in rows})
            round_ids: list[int] = []
            for start in range(0, len(sessions), CHUNK):
                chunk = sessions[start:start + CHUNK]
                marks = ",".join("?" * len(chunk))
                for r in await self.db.all(
                        f"SELECT id, turn_ids FROM rounds WHERE session_id IN ({marks})", chunk):
                    if turn_ids & set(id_list(r["turn_ids"])):
                        round_ids.append(r["id"])
            await delete_ids(tx, "rounds", sorted(round_ids))
            await delete_ids(tx, "turns", sorted(turn_ids))
            await tx.execute(
                "INSERT INTO audit_log (at, user_id, action, count) "
                "VALUES (?, NULL, 'retention', ?)", (ts(now), len(turn_ids)))
        keys = tuple(f"round:{i}" for i in sorted(round_ids))
        return ForgetResult(0, 0, len(round_ids), len(turn_ids), keys)

    async def pending_purges(self) -> list[PurgeRow]:
        """Deletions whose purge from disk did not finish (the process stopped in between),
        oldest first; start-up finishes them before taking input."""
        rows = await self.db.all("SELECT * FROM purges ORDER BY id")
        return [PurgeRow(r["id"], r["user_id"], tuple(json.loads(r["index_keys"])),
                         tuple(json.loads(r["resummarise"]))) for r in rows]

    async def purge_done(self, purge_id: int) -> None:
        """Remove a purge record once every step of its purge is done."""
        await self.db.run_statements([("DELETE FROM purges WHERE id = ?", (purge_id,))])

    async def _fact_deletion(self, user_id: int, fact_id: int):
        """What :meth:`delete_fact` deletes for ``fact_id`` (read in the caller's transaction
        when there is one): ``(facts, source turn ids, round ids, other turn ids, citing
        episodes, index keys)``, or None when the fact is not the user's.

        What was derived from the facts goes too: the replies in the rounds holding their
        source turns, replies that quoted a fact or whose prompt recalled a doomed item, the
        rounds holding such replies, the episodes citing any doomed turn; repeated until
        nothing new is derived (a reply that recalled a deleted episode, ...)."""
        facts = await self.fact_with_history(user_id, fact_id)
        if not facts:
            return None
        ids = [f.id for f in facts]
        turn_ids = sorted({t for f in facts for t in f.source_turn_ids})
        echo_ids = set(await self._replies_quoting(user_id, [f.text for f in facts]))
        known: set[str] = set()
        while True:
            round_keys = sorted(set(await self._rounds_with_turns(turn_ids))
                                | set(await self._rounds_with_turns(sorted(echo_ids))))
            reply_ids = sorted(({t for r in await by_ids(self.db, "rounds", round_keys,
                                                               round_of)
                                 for t in r.turn_ids} | echo_ids) - set(turn_ids))
            citing = await self._episodes_citing(set(turn_ids) | set(reply_ids))
            doomed_keys = ({f"fact:{i}" for i in ids} | {f"round:{i}" for i in round_keys}
                           | {f"episode:{e.id}" for e in citing})
            if doomed_keys == known:
                return facts, turn_ids, round_keys, reply_ids, citing, doomed_keys
            known = doomed_keys
            echo_ids |= set(await self._replies_recalling(user_id, doomed_keys))

    async def _forget_targets(self, user_id: int) -> _ForgetTargets:
        """What :meth:`forget_all` deletes for ``user_id`` (ids only; read in the caller's
        transaction when there is one)."""
        scope = str(Scope.private(user_id))
        fact_ids = [r["id"] for r in await self.db.all(
            "SELECT id FROM facts WHERE user_id = ?", (user_id,))]
        private_threads = [r["id"] for r in await self.db.all(
            "SELECT DISTINCT t.id FROM threads t JOIN turns u ON u.thread_id = t.id "
            "WHERE t.chat_kind = 'private' AND u.user_id = ?", (user_id,))]
        episode_ids = [r["id"] for r in await self.db.all(
            "SELECT id FROM episodes WHERE scope = ?", (scope,))]
        round_ids = [r["id"] for r in await self.db.all(
            "SELECT id FROM rounds WHERE scope = ?", (scope,))]
        group_turns = [r["id"] for r in await self.db.all(
            "SELECT u.id FROM turns u JOIN threads t ON t.id = u.thread_id "
            "WHERE t.chat_kind = 'group' AND u.user_id = ?", (user_id,))]
        # group replies that quoted one of the user's facts go too
        echoes = await self._replies_quoting(user_id, [r["text"] for r in await self.db.all(
            "SELECT text FROM facts WHERE user_id = ?", (user_id,))])
        if echoes:
            marks = ",".join("?" * len(echoes))
            group_turns += [r["id"] for r in await self.db.all(
                f"SELECT u.id FROM turns u JOIN threads t ON t.id = u.thread_id WHERE "
                f"t.chat_kind = 'group' AND u.id IN ({marks})", echoes)]
        # and group replies whose prompt recalled one of the user's items (their facts, their
        # private conversations: a group never recalls those, but the check is by key)
        own_keys = ({f"fact:{i}" for i in fact_ids} | {f"episode:{i}" for i in episode_ids}
                    | {f"round:{i}" for i in round_ids})
        derived = await self._replies_recalling(user_id, own_keys)
        if derived:
            marks = ",".join("?" * len(derived))
            group_turns += [r["id"] for r in await self.db.all(
                f"SELECT u.id FROM turns u JOIN threads t ON t.id = u.thread_id WHERE "
                f"t.chat_kind = 'group' AND u.id IN ({marks})", derived)]
        group_turns = sorted(set(group_turns))
        group_rounds = await self._rounds_with_turns(group_turns)
        gset = set(group_turns)
        group_episodes = [r["id"] for r in await self.db.all(
            "SELECT e.id, e.turn_ids FROM episodes e JOIN threads t ON t.id = e.thread_id "
            "WHERE t.chat_kind = 'group'") if gset & set(id_list(r["turn_ids"]))]
        turn_count = len(group_turns)
        for thread_id in private_threads:
            row = await self.db.one("SELECT count(*) AS n FROM turns WHERE thread_id = ?",
                                  (thread_id,))
            turn_count += row["n"]
        return _ForgetTargets(fact_ids, private_threads, group_turns,
                              sorted(set(round_ids) | set(group_rounds)),
                              sorted(set(episode_ids) | set(group_episodes)), turn_count)

    async def _rounds_with_turns(self, turn_ids: Sequence[int]) -> list[int]:
        if not turn_ids:
            return []
        wanted = set(turn_ids)
        out = []
        marks = ",".join("?" * len(turn_ids))
        rows = await self.db.all(
            f"SELECT DISTINCT r.id, r.turn_ids FROM rounds r JOIN turns t ON t.session_id = "
            f"r.session_id WHERE t.id IN ({marks})",
            list(turn_ids),
        )
        for r in rows:
            if wanted & set(id_list(r["turn_ids"])):
                out.append(r["id"])
        return out

    async def _replies_quoting(self, user_id: int, texts: Sequence[str]) -> list[int]:
        """Assistant turns, in threads where the user spoke, that quote one of ``texts``
        (a reply that showed a recalled fact)."""
        out: set[int] = set()
        for text in texts:
            rows = await self.db.all(
                "SELECT id FROM turns WHERE role = 'assistant' AND instr(text, ?) > 0 AND "
                "thread_id IN (SELECT DISTINCT thread_id FROM turns WHERE user_id = ?)",
                (text, user_id))
            out |= {r["id"] for r in rows}
        return sorted(out)

    async def _replies_recalling(self, user_id: int, keys: Iterable[str]) -> list[int]:
        """Assistant turns, in threads where the user spoke, whose prompt recalled one of
        ``keys`` (replies derived from those items)."""
        wanted = set(keys)
        if not wanted:
            return []
        rows = await self.db.all(
            "SELECT id, recalled FROM turns WHERE role = 'assistant' AND recalled IS NOT NULL "
            "AND recalled != '' AND thread_id IN (SELECT DISTINCT thread_id FROM turns WHERE "
            "user_id = ?)", (user_id,))
        return sorted(r["id"] for r in rows if wanted & set(r["recalled"].split()))

    async def _episodes_citing(self, turn_ids: Iterable[int]) -> list[Episode]:
        """Episodes (running or closed) whose ``turn_ids`` include any of ``turn_ids``."""
        wanted = set(turn_ids)
        if not wanted:
            return []
        marks = ",".join("?" * len(wanted))
        rows = await self.db.all(
            f"SELECT DISTINCT e.* FROM episodes e JOIN turns t ON t.session_id = e.session_id "
            f"WHERE t.id IN ({marks})", list(wanted))
        return [e for e in (episode_of(r) for r in rows) if wanted & set(e.turn_ids)]

    async def _drop_prompt_records_showing(self, tx, keys: Iterable[str]) -> None:
        """Delete every ``/why`` record (of any user) that shows one of ``keys``: it holds the
        item's text."""
        wanted = set(keys)
        if not wanted:
            return
        for r in await self.db.all("SELECT thread_id, user_id, payload FROM prompt_records"):
            if wanted & {i.get("key") for i in json.loads(r["payload"]).get("items", [])}:
                await tx.execute("DELETE FROM prompt_records WHERE thread_id = ? AND "
                                 "user_id = ?", (r["thread_id"], r["user_id"]))

    @staticmethod
    async def _record_purge(tx: Database, user_id: int, keys: Sequence[str],
                            resummarise: Sequence[int], now: datetime) -> int:
        """Record, in the deletion's transaction, what its purge must still do (ids only)."""
        cur = await tx.execute(
            "INSERT INTO purges (user_id, index_keys, resummarise, created_at) VALUES (?,?,?,?)",
            (user_id, json.dumps(list(keys)), json.dumps(list(resummarise)), ts(now)))
        return cur.lastrowid

    # ----------------------------------------------------------------- export / import

    async def user_rows(self, user_id: int) -> dict[str, list[dict]]:
        """Every stored row about one user (:func:`memory.stores.sqlite.transfer.user_rows`)."""
        return await transfer.user_rows(self.db, user_id)

    async def load_user_rows(self, rows: dict[str, list[dict]], now: datetime) -> int:
        """Insert another store's :meth:`user_rows` as a new user
        (:func:`memory.stores.sqlite.transfer.load_user_rows`)."""
        return await transfer.load_user_rows(self.db, rows, now)

    async def delete_user(self, user_id: int, now: datetime) -> None:
        """Remove a user and their accounts (:func:`memory.stores.sqlite.transfer.delete_user`)."""
        await transfer.delete_user(self.db, user_id, now)
