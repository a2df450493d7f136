"""Privacy in the in-memory store (:class:`memory.ports.PrivacyStore`): deletion with what was
derived from what is deleted (the same rules as the SQLite store, held to them by the contract
suite), purge records, retention, and a user's export and import."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime

from memory.errors import StoreError
from memory.records import EditCascade, ForgetResult, PurgeRow
from memory.stores.columns import episode_of, fact_of, id_list, ts, turn_of
from memory.stores.memory_store.tables import Tables
from memory.types import Episode, Fact, Scope, Turn


class MemoryPrivacy:
    """:class:`memory.ports.PrivacyStore` on the store's tables."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables

    # ----------------------------------------------------------------- what derives from what

    def _threads_of(self, user_id: int) -> set[int]:
        return {r["thread_id"] for r in self.t.turns.values() if r["user_id"] == user_id}

    def _replies_quoting(self, user_id: int, texts: Sequence[str]) -> list[int]:
        threads = self._threads_of(user_id)
        return sorted(r["id"] for r in self.t.turns.values()
                      if r["role"] == "assistant" and r["thread_id"] in threads
                      and any(text in r["text"] for text in texts))

    def _replies_recalling(self, user_id: int, keys: Iterable[str]) -> list[int]:
        wanted, threads = set(keys), self._threads_of(user_id)
        if not wanted:
            return []
        return sorted(r["id"] for r in self.t.turns.values()
                      if r["role"] == "assistant" and r["thread_id"] in threads and r["recalled"]
                      and wanted & set(r["recalled"].split()))

    def _rounds_with_turns(self, turn_ids: Iterable[int]) -> list[int]:
        wanted = set(turn_ids)
        sessions = {self.t.turns[i]["session_id"] for i in wanted if i in self.t.turns}
        return [r["id"] for r in self.t.where(self.t.rounds, lambda r: r["session_id"] in sessions)
                if wanted & set(id_list(r["turn_ids"]))]

    def _episodes_citing(self, turn_ids: Iterable[int]) -> list[Episode]:
        wanted = set(turn_ids)
        sessions = {self.t.turns[i]["session_id"] for i in wanted if i in self.t.turns}
        return [episode_of(e) for e in self.t.where(self.t.episodes,
                                                    lambda e: e["session_id"] in sessions)
                if wanted & set(id_list(e["turn_ids"]))]

    def _drop_records_showing(self, keys: Iterable[str]) -> None:
        wanted = set(keys)
        if not wanted:
            return
        for key, r in list(self.t.prompt_records.items()):
            if wanted & {i.get("key") for i in json.loads(r["payload"]).get("items", [])}:
                del self.t.prompt_records[key]

    def _record_purge(self, user_id: int, keys: Sequence[str], resummarise: Sequence[int],
                      now: datetime) -> int:
        return self.t.insert("purges", {"user_id": user_id, "index_keys": json.dumps(list(keys)),
                                        "resummarise": json.dumps(list(resummarise)),
                                        "created_at": ts(now)})

    def _audit(self, now: datetime, user_id: int | None, action: str, count: int) -> None:
        self.t.audit.append({"at": ts(now), "user_id": user_id, "action": action,
                             "count": count})

    # ----------------------------------------------------------------- one fact

    async def fact_with_history(self, user_id: int, fact_id: int) -> list[Fact]:
        """The fact, then the earlier values of its topic it replaced, oldest first."""
        row = self.t.facts.get(fact_id)
        if row is None or row["user_id"] != user_id:
            return []
        if not row["topic"]:
            return [fact_of(row)]
        earlier = sorted((r for r in self.t.facts.values()
                          if r["user_id"] == user_id and r["topic"] == row["topic"]
                          and r["status"] == "superseded" and r["id"] != fact_id
                          and r["valid_from"] <= row["valid_from"]),
                         key=lambda r: (r["valid_from"], r["id"]))
        return [fact_of(row)] + [fact_of(r) for r in earlier]

    def _fact_deletion(self, facts: list[Fact], user_id: int):
        ids = [f.id for f in facts]
        turn_ids = sorted({t for f in facts for t in f.source_turn_ids})
        echo_ids = set(self._replies_quoting(user_id, [f.text for f in facts]))
        known: set[str] = set()
        while True:
            round_keys = sorted(set(self._rounds_with_turns(turn_ids))
                                | set(self._rounds_with_turns(echo_ids)))
            reply_ids = sorted(({t for i in round_keys if i in self.t.rounds
                                 for t in id_list(self.t.rounds[i]["turn_ids"])} | echo_ids)
                               - set(turn_ids))
            citing = self._episodes_citing(set(turn_ids) | set(reply_ids))
            doomed = ({f"fact:{i}" for i in ids} | {f"round:{i}" for i in round_keys}
                      | {f"episode:{e.id}" for e in citing})
            if doomed == known:
                return turn_ids, round_keys, reply_ids, citing, doomed
            known = doomed
            echo_ids |= set(self._replies_recalling(user_id, doomed))

    async def fact_deletion_messages(self, user_id: int, fact_id: int) -> list[str]:
        """The texts of the user's own messages :meth:`delete_fact` would delete now."""
        facts = await self.fact_with_history(user_id, fact_id)
        if not facts:
            return []
        turn_ids, _, reply_ids, _, _ = self._fact_deletion(facts, user_id)
        rows = [self.t.turns[i] for i in sorted(set(turn_ids) | set(reply_ids))
                if i in self.t.turns]
        return [r["text"] for r in rows if r["role"] == "user" and r["user_id"] == user_id]

    async def delete_fact(self, user_id: int, fact_id: int, now: datetime) -> ForgetResult:
        """Delete a fact, its history, their source turns and what derives from them."""
        facts = await self.fact_with_history(user_id, fact_id)
        if not facts:
            return ForgetResult(0, 0, 0, 0, ())
        t = self.t
        with t.transaction():
            turn_ids, round_keys, reply_ids, citing, doomed = self._fact_deletion(facts, user_id)
            ids = [f.id for f in facts]
            episode_ids = [e.id for e in citing]
            t.delete_rows("facts", ids)
            t.delete_rows("rounds", round_keys)
            t.delete_turns([i for i in turn_ids if i in t.turns and t.turns[i]["role"] == "user"])
            t.delete_turns(reply_ids)
            t.delete_rows("episodes", episode_ids)
            t.prompt_records = {k: r for k, r in t.prompt_records.items()
                                if r["user_id"] != user_id}
            self._drop_records_showing(doomed)
            self._audit(now, user_id, "forget_fact", len(ids))
            keys = (tuple(f"fact:{i}" for i in ids) + tuple(f"round:{i}" for i in round_keys)
                    + tuple(f"episode:{i}" for i in episode_ids))
            resummarise = tuple(e.session_id for e in citing if e.status == "closed")
            purge_id = self._record_purge(user_id, keys, resummarise, now)
        return ForgetResult(len(ids), len(episode_ids), len(round_keys), len(turn_ids), keys,
                            resummarise, purge_id, tuple(f.text for f in facts))

    # ----------------------------------------------------------------- everything of a user

    def _forget_targets(self, user_id: int):
        t, scope = self.t, str(Scope.private(user_id))
        fact_ids = sorted(i for i, r in t.facts.items() if r["user_id"] == user_id)
        kind = {i: th["chat_kind"] for i, th in t.threads.items()}
        private = sorted({r["thread_id"] for r in t.turns.values()
                          if r["user_id"] == user_id and kind[r["thread_id"]] == "private"})
        episode_ids = sorted(i for i, e in t.episodes.items() if e["scope"] == scope)
        round_ids = sorted(i for i, r in t.rounds.items() if r["scope"] == scope)
        group = {i for i, r in t.turns.items()
                 if r["user_id"] == user_id and kind[r["thread_id"]] == "group"}
        echoes = self._replies_quoting(user_id, [t.facts[i]["text"] for i in fact_ids])
        own = ({f"fact:{i}" for i in fact_ids} | {f"episode:{i}" for i in episode_ids}
               | {f"round:{i}" for i in round_ids})
        derived = self._replies_recalling(user_id, own)
        group |= {i for i in (*echoes, *derived) if kind[t.turns[i]["thread_id"]] == "group"}
        group_turns = sorted(group)
        group_rounds = self._rounds_with_turns(group_turns)
        group_episodes = [i for i, e in t.episodes.items() if kind[e["thread_id"]] == "group"
                          and group & set(id_list(e["turn_ids"]))]
        turn_count = len(group_turns) + sum(1 for r in t.turns.values()
                                            if r["thread_id"] in set(private))
        return (fact_ids, private, group_turns, sorted(set(round_ids) | set(group_rounds)),
                sorted(set(episode_ids) | set(group_episodes)), turn_count)

    async def forget_all_preview(self, user_id: int) -> ForgetResult:
        """The counts :meth:`forget_all` would delete now; deletes nothing."""
        facts, _, _, rounds, episodes, turns = self._forget_targets(user_id)
        return ForgetResult(len(facts), len(episodes), len(rounds), turns, ())

    async def forget_all(self, user_id: int, now: datetime) -> ForgetResult:
        """Delete everything of one user, with a purge record, together."""
        t = self.t
        with t.transaction():
            facts, private, group_turns, rounds, episodes, turns = self._forget_targets(user_id)
            t.delete_rows("facts", facts)
            t.delete_rows("rounds", rounds)
            t.delete_rows("episodes", episodes)
            t.delete_turns(group_turns)
            t.delete_turns([i for i, r in t.turns.items() if r["thread_id"] in private])
            for name in ("episodes", "rounds"):
                t.delete_rows(name, [i for i, r in getattr(t, name).items()
                                     if r["thread_id"] in private])
            t.prompt_records = {k: r for k, r in t.prompt_records.items()
                                if r["user_id"] != user_id}
            self._drop_records_showing({f"fact:{i}" for i in facts}
                                       | {f"episode:{i}" for i in episodes}
                                       | {f"round:{i}" for i in rounds})
            t.candidates = {k: r for k, r in t.candidates.items() if r["user_id"] != user_id}
            t.questions = {k: r for k, r in t.questions.items() if r["user_id"] != user_id}
            self._audit(now, user_id, "forget_all", len(facts) + len(episodes) + len(rounds))
            keys = (tuple(f"fact:{i}" for i in facts) + tuple(f"episode:{i}" for i in episodes)
                    + tuple(f"round:{i}" for i in rounds))
            purge_id = self._record_purge(user_id, keys, (), now)
        return ForgetResult(len(facts), len(episodes), len(rounds), turns, keys,
                            purge_id=purge_id)

    # ----------------------------------------------------------------- an edited turn

    async def drop_derived_from_edit(self, user_id: int, turn_id: int, old_terms: set[str],
                                     now: datetime, *, fact_ids: Sequence[int] = (),
                                     round_text: Callable[[list[Turn]], str]) -> EditCascade:
        """Delete what derived from an edited turn's old text and rewrite its rounds."""
        t = self.t
        with t.transaction():
            round_ids = self._rounds_with_turns([turn_id])
            citing = self._episodes_citing([turn_id])
            keys = {f"round:{i}" for i in round_ids} | {f"episode:{e.id}" for e in citing}
            answers = []  # the replies to the turn, also before a round holds them
            if turn_id in t.turns:
                session = t.turns[turn_id]["session_id"]
                for r in t.where(t.turns, lambda r: r["session_id"] == session
                                 and r["id"] > turn_id):
                    if r["role"] != "assistant":
                        break
                    answers.append(r["id"])
            candidates = ({i for r in round_ids for i in id_list(t.rounds[r]["turn_ids"])}
                          - {turn_id}) | set(answers) | set(self._replies_recalling(user_id, keys))
            quoting = [i for i in sorted(candidates) if i in t.turns
                       and t.turns[i]["role"] == "assistant"
                       and any(term in t.turns[i]["text"].lower() for term in old_terms)]
            if quoting:
                round_ids = sorted(set(round_ids) | set(self._rounds_with_turns(quoting)))
                citing = self._episodes_citing([turn_id, *quoting])
            t.delete_turns(quoting)
            rebuild = {i: tuple(x for x in id_list(t.rounds[i]["turn_ids"]) if x not in quoting)
                       for i in round_ids if i in t.rounds}
            t.delete_rows("rounds", [i for i, kept in rebuild.items() if not kept])
            t.delete_rows("facts", list(fact_ids))
            for round_id, kept in rebuild.items():
                if kept:
                    turns = [turn_of(t.turns[i]) for i in sorted(kept) if i in t.turns]
                    t.update(t.rounds, round_id, turn_ids=json.dumps(list(kept)),
                             text=round_text(turns))
            t.delete_rows("episodes", [e.id for e in citing])
            for e in citing:
                if e.status != "closed":  # the running episode is folded again from scratch
                    t.update(t.sessions, e.session_id, folded_through=0)
            self._drop_records_showing({f"round:{i}" for i in round_ids}
                                       | {f"episode:{e.id}" for e in citing})
            gone = (tuple(f"round:{i}" for i in round_ids)
                    + tuple(f"episode:{e.id}" for e in citing)
                    + tuple(f"fact:{i}" for i in fact_ids))
            resummarise = tuple(e.session_id for e in citing if e.status == "closed")
            purge_id = self._record_purge(user_id, gone, resummarise, now)
        kept = [i for i, turns in rebuild.items() if turns]
        return EditCascade(tuple(kept), gone, resummarise, purge_id, len(quoting))

    # ----------------------------------------------------------------- retention and purges

    async def delete_consolidated_turns(self, cutoff: datetime, now: datetime) -> ForgetResult:
        """Retention: turns before ``cutoff`` of closed, consolidated sessions, with their
        rounds (episodes stay)."""
        t, cut = self.t, ts(cutoff)
        done = {w["session_id"] for w in t.work.values()
                if w["kind"] == "close" and w["done_at"] is not None}
        closed = {i for i, s in t.sessions.items() if s["closed_at"] is not None} & done
        turn_ids = {i for i, r in t.turns.items()
                    if r["session_id"] in closed and r["created_at"] < cut}
        if not turn_ids:
            return ForgetResult(0, 0, 0, 0, ())
        sessions = {t.turns[i]["session_id"] for i in turn_ids}
        round_ids = sorted(i for i, r in t.rounds.items() if r["session_id"] in sessions
                           and turn_ids & set(id_list(r["turn_ids"])))
        with t.transaction():
            t.delete_rows("rounds", round_ids)
            t.delete_turns(turn_ids)
            self._audit(now, None, "retention", len(turn_ids))
        return ForgetResult(0, 0, len(round_ids), len(turn_ids),
                            tuple(f"round:{i}" for i in round_ids))

    async def pending_purges(self) -> list[PurgeRow]:
        """Deletions whose purge did not finish, oldest first."""
        return [PurgeRow(i, r["user_id"], tuple(json.loads(r["index_keys"])),
                         tuple(json.loads(r["resummarise"])))
                for i, r in sorted(self.t.purges.items())]

    async def purge_done(self, purge_id: int) -> None:
        """Remove a purge record once its purge is done."""
        self.t.purges.pop(purge_id, None)

    # ----------------------------------------------------------------- export / import

    async def user_rows(self, user_id: int) -> dict[str, list[dict]]:
        """Every stored row about one user, as column dicts per table (the export)."""
        t, scope = self.t, str(Scope.private(user_id))
        out: dict[str, list[dict]] = {"users": [dict(t.users[user_id])]}
        out["accounts"] = sorted(({"platform": a["platform"],
                                   "platform_user_id": a["platform_user_id"]}
                                  for a in t.accounts.values() if a["user_id"] == user_id),
                                 key=lambda a: a["platform"])
        out["facts"] = [dict(r) for r in t.where(t.facts, lambda r: r["user_id"] == user_id)]
        private = {r["thread_id"] for r in t.turns.values() if r["user_id"] == user_id
                   and t.threads[r["thread_id"]]["chat_kind"] == "private"}
        private |= {e["thread_id"] for e in t.episodes.values() if e["scope"] == scope}
        out["turns"] = [dict(r) for r in t.where(
            t.turns, lambda r: r["thread_id"] in private or r["user_id"] == user_id)]
        for name in ("episodes", "rounds"):
            out[name] = [dict(r) for r in t.where(getattr(t, name),
                                                  lambda r: r["scope"] == scope)]
        session_ids = {r["session_id"] for k in ("turns", "episodes", "rounds") for r in out[k]}
        out["sessions"] = [dict(t.sessions[i]) for i in sorted(session_ids) if i in t.sessions]
        thread_ids = (private | {r["thread_id"] for r in out["turns"]}
                      | {r["origin_thread_id"] for r in out["facts"]})
        out["threads"] = [dict(t.threads[i]) for i in sorted(thread_ids)]
        return out

    async def load_user_rows(self, rows: dict[str, list[dict]], now: datetime) -> int:
        """Insert another store's :meth:`user_rows` as a new user with fresh ids, together.

        Raises:
            StoreError: an account already has a user here, or a private chat of the document
                is another user's chat here (nothing is written).
        """
        t = self.t
        for acc in rows["accounts"]:
            if (acc["platform"], acc["platform_user_id"]) in t.accounts:
                raise StoreError(f"account {acc['platform']}:{acc['platform_user_id']} exists")
        with t.transaction():
            return _load(t, rows, now)

    async def delete_user(self, user_id: int, now: datetime) -> None:
        """Remove a user and their accounts (after :meth:`forget_all`)."""
        self.t.delete_user_rows(user_id)
        self._audit(now, user_id, "delete_user", 1)


#: The columns each table keeps (as the SQLite schema's): an import keeps these only.
COLUMNS = {
    "users": ("display_name", "created_at", "memory_enabled", "timezone", "consent_noted_at",
              "language"),
    "threads": ("platform", "chat_id", "topic_id", "chat_kind", "title", "created_at"),
    "sessions": ("thread_id", "started_at", "last_turn_at", "closed_at", "close_reason",
                 "folded_through"),
    "turns": ("thread_id", "session_id", "user_id", "role", "speaker", "text", "created_at",
              "platform_message_id", "generated_by", "memory_off", "tokens", "recalled"),
    "episodes": ("thread_id", "session_id", "scope", "summary", "key_data", "turn_ids",
                 "started_at", "ended_at", "created_at", "goal", "decisions", "open_tasks",
                 "state", "participants", "status", "folds", "source"),
    "rounds": ("thread_id", "session_id", "scope", "turn_ids", "text", "created_at"),
    "facts": ("user_id", "kind", "text", "topic", "status", "created_at", "valid_from",
              "valid_to", "last_confirmed_at", "last_recalled_at", "confirmations",
              "origin_thread_id", "origin_kind", "origin_title", "source_turn_ids", "lang",
              "scope", "value", "mode"),
}
#: Column defaults of the SQLite schema, for rows of an older export that lack them.
DEFAULTS = {"memory_enabled": 1, "topic_id": "", "folded_through": 0, "memory_off": 0,
            "tokens": 0, "decisions": "[]", "open_tasks": "[]", "participants": "[]",
            "status": "closed", "folds": 0, "source": "rules", "confirmations": 1,
            "mode": "explicit"}


def _load(t: Tables, rows: dict[str, list[dict]], now: datetime) -> int:
    def insert(table: str, row: dict) -> int:
        return t.insert(table, {c: row.get(c, DEFAULTS.get(c)) for c in COLUMNS[table]})

    def remap(value: str, mapping: dict[int, int]) -> str:
        return json.dumps([mapping[i] for i in json.loads(value) if i in mapping])

    (old_user,) = rows["users"]
    uid = insert("users", old_user)
    for acc in rows["accounts"]:
        t.accounts[(acc["platform"], acc["platform_user_id"])] = {
            "platform": acc["platform"], "platform_user_id": acc["platform_user_id"],
            "user_id": uid, "blocked_at": None}
    threads: dict[int, int] = {}
    for th in rows["threads"]:
        key = (th["platform"], th["chat_id"], th["topic_id"])
        here = next((i for i, r in t.threads.items()
                     if (r["platform"], r["chat_id"], r["topic_id"]) == key), None)
        threads[th["id"]] = here if here is not None else insert("threads", th)
        if th["chat_kind"] == "private" and any(  # a private chat here is someone else's
                r["thread_id"] == threads[th["id"]] and r["user_id"] is not None
                for r in t.turns.values()):
            raise StoreError(f"the private chat {th['platform']}:{th['chat_id']} belongs to "
                             "another user here")

    def scope(value: str) -> str:
        return Scope.imported(value, old_user_id=old_user["id"], new_user_id=uid,
                              threads=threads)

    sessions: dict[int, int] = {}
    for s in rows["sessions"]:
        s = {**s, "thread_id": threads[s["thread_id"]]}
        if s.get("closed_at") is None:
            s.update(closed_at=ts(now), close_reason="import")
        sessions[s["id"]] = insert("sessions", s)
    turns: dict[int, int] = {}
    for r in rows["turns"]:
        turns[r["id"]] = insert("turns", {
            **r, "thread_id": threads[r["thread_id"]], "session_id": sessions[r["session_id"]],
            "user_id": uid if r.get("user_id") == old_user["id"] else None})
    for table in ("episodes", "rounds"):
        for r in rows[table]:
            insert(table, {**r, "thread_id": threads[r["thread_id"]],
                           "session_id": sessions[r["session_id"]], "scope": scope(r["scope"]),
                           "turn_ids": remap(r["turn_ids"], turns)})
    for f in rows["facts"]:
        insert("facts", {**f, "user_id": uid, "origin_thread_id": threads[f["origin_thread_id"]],
                         "scope": scope(f["scope"]),
                         "source_turn_ids": remap(f["source_turn_ids"], turns)})
    t.audit.append({"at": ts(now), "user_id": uid, "action": "import",
                    "count": len(rows["facts"]) + len(rows["episodes"])})
    return uid
