"""The export document (``/export``, ``memory-bot import``): everything stored about one user.

Shape (``format`` ``memory-bot-export``, ``version`` 1)::

    {"format": "memory-bot-export", "version": 1, "exported_at": "2026-11-30T09:00:00+00:00",
     "user": {"id": 1, "display_name": ..., "created_at": ..., "memory_enabled": true,
              "timezone": null, "accounts": [{"platform": "console", "platform_user_id": "bob"}]},
     "facts": [{"id": 3, "text": ..., "status": "superseded", "valid_from": ..., "valid_to": ...,
                "supersedes": [], "superseded_by": 5, "source_turn_ids": [7], ...}],
     "episodes": [...], "rounds": [...], "turns": [...], "sessions": [...], "threads": [...]}

Every time is ISO-8601 in UTC (``+00:00``); ids are those of the exporting database and every
reference (``source_turn_ids``, ``turn_ids``, ``thread_id``, ``session_id``, ``supersedes``,
``superseded_by``) uses them. A supersede chain is the facts of one ``topic`` ordered by
``valid_from``: each superseded fact names the fact that replaced it (``superseded_by``) and
that fact lists it under ``supersedes``. Importing maps every id to a fresh one.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

FORMAT = "memory-bot-export"
VERSION = 1
_JSON_LISTS = {"source_turn_ids", "turn_ids", "key_data", "decisions", "open_tasks",
               "participants"}
_SECTIONS = ("facts", "episodes", "rounds", "turns", "sessions", "threads")


class ExportFormatError(ValueError):
    """The file is not an export document this version can load."""


def _utc(value):
    if isinstance(value, str) and len(value) >= 19 and value[4] == "-" and value[10] == "T":
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return value
        if parsed.tzinfo is not None:
            return parsed.astimezone(timezone.utc).isoformat()
    return value


def _plain(row: dict) -> dict:
    out = {}
    for key, value in row.items():
        if key in _JSON_LISTS and isinstance(value, str):
            value = json.loads(value)
        out[key] = _utc(value)
    return out


def _chains(facts: list[dict]) -> None:
    by_topic: dict[str, list[dict]] = {}
    for f in facts:
        f["supersedes"], f["superseded_by"] = [], None
        if f.get("topic"):
            by_topic.setdefault(f["topic"], []).append(f)
    for chain in by_topic.values():
        chain.sort(key=lambda f: (f["valid_from"], f["id"]))
        for old, new in zip(chain, chain[1:]):
            if old["status"] == "superseded" and old.get("valid_to"):
                old["superseded_by"] = new["id"]
                new["supersedes"].append(old["id"])


def build_document(rows: dict[str, list[dict]], now: datetime) -> dict:
    """Turn :meth:`memory.ports.PrivacyStore.user_rows` into the export document."""
    (user,) = rows["users"]
    doc = {
        "format": FORMAT, "version": VERSION, "exported_at": now.astimezone(timezone.utc).isoformat(),
        "user": {**_plain(user), "memory_enabled": bool(user["memory_enabled"]),
                 "accounts": [dict(a) for a in rows["accounts"]]},
    }
    for section in _SECTIONS:
        doc[section] = [_plain(r) for r in rows[section]]
    _chains(doc["facts"])
    return doc


#: Fields each row of a section must have, with the check of their value (issue: a file
#: with "created_at": "notadate" was written and then broke every start).
_REQUIRED = {
    "threads": {"id": int, "platform": str, "chat_id": str, "chat_kind": "chat_kind",
                "created_at": "time"},
    "sessions": {"id": int, "thread_id": int, "started_at": "time", "last_turn_at": "time"},
    "turns": {"id": int, "thread_id": int, "session_id": int, "role": "role", "text": str,
              "created_at": "time"},
    "episodes": {"thread_id": int, "session_id": int, "scope": str, "summary": str,
                 "turn_ids": "ids", "started_at": "time", "ended_at": "time", "created_at": "time"},
    "rounds": {"thread_id": int, "session_id": int, "scope": str, "turn_ids": "ids",
               "text": str, "created_at": "time"},
    "facts": {"id": int, "kind": str, "text": str, "status": "status", "created_at": "time",
              "valid_from": "time", "last_confirmed_at": "time", "origin_kind": "chat_kind"},
}
_OPTIONAL_TIMES = ("closed_at", "valid_to", "last_recalled_at")


def _valid(value, check) -> bool:
    from memory.types import ChatKind, FactStatus, Role

    if check == "time":
        if not isinstance(value, str):
            return False
        try:
            return datetime.fromisoformat(value).tzinfo is not None
        except ValueError:
            return False
    if check == "ids":
        return isinstance(value, list) and all(isinstance(i, int) and not isinstance(i, bool)
                                               for i in value)
    enums = {"role": Role, "status": FactStatus, "chat_kind": ChatKind}
    if check in enums:
        return value in {e.value for e in enums[check]}
    if check is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, check)


def _check_rows(doc: dict) -> None:
    """Every row a dict with its required fields valid, and every reference to a thread,
    session or fact one the document holds (turn ids may name deleted turns); raises
    ExportFormatError naming the first problem (section, row number, field)."""
    ids: dict[str, set[int]] = {}
    for section, fields in _REQUIRED.items():
        rows = doc[section]
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise ExportFormatError(f"{section} must be a list of objects")
        for n, row in enumerate(rows, 1):
            for field, check in fields.items():
                if not _valid(row.get(field), check):
                    raise ExportFormatError(
                        f"{section} row {n}: {field} is missing or invalid ({row.get(field)!r})")
            for field in _OPTIONAL_TIMES:
                if row.get(field) is not None and not _valid(row[field], "time"):
                    raise ExportFormatError(f"{section} row {n}: {field} is not an ISO-8601 "
                                            f"time with a zone ({row[field]!r})")
        ids[section] = {r["id"] for r in rows if "id" in r}
    refs = (("sessions", "thread_id", "threads"), ("turns", "thread_id", "threads"),
            ("turns", "session_id", "sessions"), ("episodes", "thread_id", "threads"),
            ("episodes", "session_id", "sessions"), ("rounds", "thread_id", "threads"),
            ("rounds", "session_id", "sessions"))
    for section, field, target in refs:
        for n, row in enumerate(doc[section], 1):
            if row[field] not in ids[target]:
                raise ExportFormatError(f"{section} row {n}: {field} {row[field]} is not in "
                                        f"the document's {target}")
    # turn ids may name turns that are gone (retention and /forget N delete turns, episodes and
    # facts keep citing them): the unknown ones are dropped on import. A fact's history must
    # resolve inside the document.
    for n, row in enumerate(doc["facts"], 1):
        for field in ("source_turn_ids", "supersedes"):
            if not _valid(row.get(field) or [], "ids"):
                raise ExportFormatError(f"facts row {n}: {field} must be a list of ids")
        later = row.get("superseded_by")
        for field, named in (("supersedes", row.get("supersedes") or []),
                             ("superseded_by", [] if later is None else [later])):
            unknown = [i for i in named if i not in ids["facts"]]
            if unknown:
                raise ExportFormatError(f"facts row {n}: {field} names {unknown[0]!r}, which is "
                                        "not in the document's facts")


def parse_document(doc: dict) -> dict[str, list[dict]]:
    """Check an export document and return the rows for :meth:`memory.ports.PrivacyStore.load_user_rows`.

    Every row is checked before anything is written: required fields present and valid
    (ISO-8601 times with a zone, known roles, statuses and chat kinds, text as strings) and
    every thread, session and fact reference inside the document.

    Raises:
        ExportFormatError: wrong format or version, a missing section, or an invalid row.
    """
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ExportFormatError(f"not a {FORMAT} document")
    if doc.get("version") != VERSION:
        raise ExportFormatError(f"unsupported export version {doc.get('version')!r}")
    missing = [s for s in (*_SECTIONS, "user") if s not in doc]
    if missing:
        raise ExportFormatError(f"export document lacks {', '.join(missing)}")
    if not isinstance(doc["user"], dict):
        raise ExportFormatError("user must be an object")
    user = dict(doc["user"])
    accounts = user.pop("accounts", [])
    if not accounts:
        raise ExportFormatError("export document names no account")
    if not isinstance(accounts, list) or not all(
            isinstance(a, dict) and isinstance(a.get("platform"), str)
            and isinstance(a.get("platform_user_id"), str) for a in accounts):
        raise ExportFormatError("user accounts must be objects with platform and platform_user_id")
    if not isinstance(user.get("id"), int) or not _valid(user.get("created_at"), "time") \
            or not isinstance(user.get("display_name"), str):
        raise ExportFormatError("user needs an id, a display_name and a created_at time")
    _check_rows(doc)
    user["memory_enabled"] = int(bool(user.get("memory_enabled", True)))
    rows: dict[str, list[dict]] = {"users": [user], "accounts": accounts}
    for section in _SECTIONS:
        rows[section] = []
        for r in doc[section]:
            r = {k: v for k, v in r.items() if k not in ("supersedes", "superseded_by")}
            for key in _JSON_LISTS & r.keys():
                if not isinstance(r[key], str):
                    r[key] = json.dumps(r[key], ensure_ascii=False)
            rows[section].append(r)
    return rows


class UserExistsError(ValueError):
    """The document's user already exists here (``memory-bot import`` without ``--replace``)."""
