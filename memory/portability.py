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
    """Turn :meth:`SQLiteStore.user_rows` into the export document."""
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


def parse_document(doc: dict) -> dict[str, list[dict]]:
    """Check an export document and return the rows for :meth:`SQLiteStore.load_user_rows`.

    Raises:
        ExportFormatError: wrong format or version, or a missing section.
    """
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ExportFormatError(f"not a {FORMAT} document")
    if doc.get("version") != VERSION:
        raise ExportFormatError(f"unsupported export version {doc.get('version')!r}")
    missing = [s for s in (*_SECTIONS, "user") if s not in doc]
    if missing:
        raise ExportFormatError(f"export document lacks {', '.join(missing)}")
    user = dict(doc["user"])
    accounts = user.pop("accounts", [])
    if not accounts:
        raise ExportFormatError("export document names no account")
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
