"""``memory-bot inspect USER``: an operator's view of one user, read from SQLite.

It answers "why did it forget?" by following ids: a message is ``turn N``; a fact names the
turns it was written from (``from turns N``) and the facts it replaced (its topic's
history); an episode names the turns it summarises; the last recall of each chat lists what the
model saw as ``fact:N`` / ``episode:N`` / ``round:N`` keys with score and tokens, the same ids
the log lines carry (``fact written id=N``, ``prompt assembled ... keys=fact:N``). Sections:

- the user, their accounts and counts;
- chats (threads): message counts, sessions, consolidation still pending;
- facts, every status, with validity, source turns, origin, confirmations, last recall; then
  the history of each topic that changed (``fact A -> fact B``);
- episodes: id, session, chat, dates, status, turns, the start of the summary;
- recent messages (the last :data:`RECENT_TURNS`) with ids and platform message ids;
- last recalls: per chat, the prompt record of the last reply (what ``/why`` shows), each
  item with the turns it came from (or ``gone since`` when it was deleted after that reply).

Reading needs no lock, so it works while ``memory-bot run`` holds the data folder. Group
episodes belong to the group and are not listed (as in ``/export``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from memory.ports import Store
from memory.text import printable

RECENT_TURNS = 20
"""Most recent messages listed (the full history is in ``/export``)."""
HEAD_CHARS = 80
"""Summaries and messages are cut to this many characters."""


class UnknownUser(LookupError):
    """No user matches the name given to ``inspect``."""


def _head(text: str | None, n: int = HEAD_CHARS) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[:n - 1] + "…"


def _when(ts: str | None) -> str:
    """``2026-11-30T09:00:00.000000+00:00`` -> ``2026-11-30 09:00`` (UTC); ``-`` for none."""
    return ts[:16].replace("T", " ") if ts else "-"


def _ids(value) -> list[int]:
    if isinstance(value, str):
        value = json.loads(value or "[]")
    return [int(v) for v in value or ()]


def _span(ids: list[int]) -> str:
    if not ids:
        return "none"
    if ids == list(range(ids[0], ids[-1] + 1)) and len(ids) > 2:
        return f"{ids[0]}-{ids[-1]}"
    return ",".join(str(i) for i in ids)


async def find_user(store: Store, who: str):
    """The user named by ``platform:id`` (``telegram:ID``, ``discord:ID``, ``console:NAME``)
    or an internal id. Raises :class:`UnknownUser`."""
    platform, sep, ident = who.partition(":")
    user = (await store.identities.find_user(platform, ident) if sep
            else await store.identities.get_user(int(who)) if who.isdigit() else None)
    if user is None:
        raise UnknownUser(who)
    return user


async def inspect_lines(store: Store, who: str) -> list[str]:
    """The report of one user, line by line (see the module docstring).

    Raises:
        UnknownUser: no user matches ``who``.
    """
    user = await find_user(store, who)
    rows = await store.privacy.user_rows(user.id)
    records = await store.records.prompt_records_of(user.id)
    threads = {t["id"]: t for t in rows["threads"]}
    out: list[str] = []

    accounts = ", ".join(f"{a['platform']}:{a['platform_user_id']}" for a in rows["accounts"])
    by_status: dict[str, int] = {}
    for f in rows["facts"]:
        by_status[f["status"]] = by_status.get(f["status"], 0) + 1
    out.append(f"user {user.id} ({user.display_name}); accounts: {accounts}; memory "
               f"{'on' if user.memory_enabled else 'off'}; time zone "
               f"{user.timezone or 'default'}")
    out.append("facts: " + (", ".join(f"{n} {s}" for s, n in sorted(by_status.items()))
                            or "none")
               + f"; episodes: {len(rows['episodes'])}; indexed exchanges: "
               f"{len(rows['rounds'])}; messages: {len(rows['turns'])} in "
               f"{len(rows['threads'])} chat(s)")

    def chat(thread_id: int) -> str:
        t = threads.get(thread_id)
        if t is None:
            return f"thread {thread_id}"
        topic = f"/{t['topic_id']}" if t["topic_id"] else ""
        title = f" \"{t['title']}\"" if t["title"] else ""
        return f"thread {thread_id} ({t['platform']}:{t['chat_id']}{topic} {t['chat_kind']}{title})"

    out.append("")
    out.append("chats:")
    sessions_of: dict[int, list[dict]] = {}
    for s in rows["sessions"]:
        sessions_of.setdefault(s["thread_id"], []).append(s)
    for t in rows["threads"]:
        n = sum(1 for turn in rows["turns"] if turn["thread_id"] == t["id"])
        sessions = sorted(sessions_of.get(t["id"], []), key=lambda s: s["id"])
        open_ = [s["id"] for s in sessions if not s["closed_at"]]
        pending = await store.work.pending_work(thread_id=t["id"])
        out.append(f"  {chat(t['id'])}: {n} message(s); sessions "
                   f"{_span([s['id'] for s in sessions])}"
                   + (f" (open: {_span(open_)})" if open_ else "")
                   + ("; consolidation pending: "
                      + ", ".join(f"{w.kind} of session {w.session_id}" + (
                          f" (failed {w.attempts}x, next try {_when(w.retry_after.isoformat())})"
                          if w.retry_after else "") for w in pending)
                      if pending else ""))

    out.append("")
    out.append("facts (newest first):" if rows["facts"] else "facts: none")
    for f in sorted(rows["facts"], key=lambda f: f["id"], reverse=True):
        until = f" to {f['valid_to'][:10]}" if f["valid_to"] else ""
        recalled = _when(f["last_recalled_at"]) if f["last_recalled_at"] else "never"
        out.append(f"  fact {f['id']} [{f['status']}, {f['kind']}, {f['topic'] or '-'}] "
                   f"{f['valid_from'][:10]}{until}: {f['text']}")
        out.append(f"      from turns {_span(_ids(f['source_turn_ids']))} in "
                   f"{chat(f['origin_thread_id'])}; written {_when(f['created_at'])} "
                   f"({f.get('mode') or 'explicit'}); confirmed {f['confirmations']}x, last "
                   f"{_when(f['last_confirmed_at'])}; last recalled {recalled}")
    chains: dict[str, list[dict]] = {}
    for f in rows["facts"]:
        if f["topic"]:
            chains.setdefault(f["topic"], []).append(f)
    history = [(topic, sorted(c, key=lambda f: (f["valid_from"], f["id"])))
               for topic, c in sorted(chains.items()) if len(c) > 1]
    if history:
        out.append("  history:")
        for topic, chain in history:
            steps = [f"fact {f['id']} ({f['status']}, {f['valid_from'][:10]}"
                     + (f" to {f['valid_to'][:10]})" if f["valid_to"] else " on)")
                     for f in chain]
            out.append(f"    {topic}: " + " -> ".join(steps))

    out.append("")
    out.append("episodes:" if rows["episodes"] else "episodes: none")
    for e in sorted(rows["episodes"], key=lambda e: e["id"], reverse=True):
        turns = _ids(e["turn_ids"])
        out.append(f"  episode {e['id']} session {e['session_id']} {chat(e['thread_id'])} "
                   f"[{e.get('status') or 'closed'}, by {e.get('source') or 'rules'}] "
                   f"{_when(e['started_at'])} to "
                   f"{_when(e['ended_at'])}, turns {_span(turns)} ({len(turns)}): "
                   f"{_head(e['summary'])}")

    recent = rows["turns"][-RECENT_TURNS:]
    out.append("")
    out.append(f"recent messages (last {len(recent)} of {len(rows['turns'])}):" if recent
               else "recent messages: none")
    for t in recent:
        who_ = t["speaker"] or t["role"]
        pmid = f" msg {t['platform_message_id']}" if t["platform_message_id"] else ""
        off = " (memory off)" if t["memory_off"] else ""
        out.append(f"  turn {t['id']} session {t['session_id']} thread {t['thread_id']} "
                   f"{_when(t['created_at'])} {t['role']} {who_}{pmid}{off}: {_head(t['text'])}")

    out.append("")
    out.append("last recalls (what the model saw for the last reply in each chat):" if records
               else "last recalls: none")
    sources = {f"fact:{f['id']}": _ids(f["source_turn_ids"]) for f in rows["facts"]}
    sources |= {f"episode:{e['id']}": _ids(e["turn_ids"]) for e in rows["episodes"]}
    sources |= {f"round:{x['id']}": _ids(x["turn_ids"]) for x in rows["rounds"]}
    for r in records:
        p = r["payload"]
        out.append(f"  {chat(r['thread_id'])} at {_when(r['created_at'])}, model "
                   f"{p.get('model')}: {len(p.get('items', []))} item(s), "
                   f"{p.get('memory_tokens')} of {p.get('budget')} memory tokens; working "
                   f"memory {p.get('working_turns')} turn(s), {p.get('working_tokens')} tokens")
        for item in p.get("items", []):
            session = (f", session {item['session_id']}" if item.get("session_id") is not None
                       else "")
            pin = (", profile" if item.get("profile") else ", pinned" if item.get("pinned")
                   else "")
            turns = (f", turns {_span(sources[item['key']])}" if item["key"] in sources
                     else ", gone since")  # deleted or forgotten after that reply
            out.append(f"    {item['key']} score {item['score']:.3f}, {item['tokens']} tokens"
                       f"{session}{turns}{pin}: {_head(item.get('text'))}")
    return out


async def inspect_user(db: Path, who: str, *, write: Callable[[str], None] = print) -> int:
    """``memory-bot inspect USER`` on the database at ``db``. Returns the exit code: 0, or 2
    (with a message on standard error) when there is no database or no such user."""
    import sys

    if not db.exists():
        print(f"memory-bot: no database at {db}", file=sys.stderr)
        return 2
    from bot.app import open_store

    store = await open_store(db)
    try:
        lines = await inspect_lines(store, who)
    except UnknownUser:
        print(f"memory-bot: no user {who}", file=sys.stderr)
        return 2
    finally:
        await store.close()
    for line in lines:
        write(printable(line))  # stored text never acts on the operator's terminal
    return 0
