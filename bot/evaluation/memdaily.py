"""MemDaily: Chinese daily-life messages of one user, replayed as one long history.

Data: MemDaily from MemSim (Zhang et al., "MemSim: A Bayesian Simulator for Evaluating Memory of
LLM-based Personal Assistants", 2024; repository nuster1128/MemSim), files
``<NN>_<type>_<entity>.json`` as in ``../shared/data/memdaily``, each a list of trajectories
``{"tid", "message_list": [{"mid", "message", "time", "place"}], "question_list": [{"qid",
"question", "answer", "target_step_id", "choices", "ground_truth", "time"}]}``.

Replay (times aware UTC; the data's times carry no zone): every trajectory of every file under
PATH is one session of the same user in one private chat (``memdaily``), so that each question
competes with all the other messages. Sessions are replayed in order of their first message time
(ties keep file and trajectory order); messages in data order, each at its own time from the data
(trajectories overlap in time, and some list their messages out of time order: kept as they
are); message id ``<file stem>#<tid>#<mid>``; a session closes 30 s after its latest message.
Each question is asked read-only at its ``time``, or 30 s after its trajectory's latest message
if that is later (11 questions of the shared folder are dated before their own evidence).

Scoring: evidence = the messages named by ``target_step_id``; type = the file's type (``simple``,
``conditional``, ``comparative``, ``aggregative``, ``post_processing``, ``noisy``); every valid
question counts in ``overall``. Questions carrying an ``[ERROR...]`` placeholder upstream, and
questions without a valid evidence id, are skipped (counted on standard error).
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from bot.evaluation.locomo import _expand_paths, _read_json
from bot.evaluation.runner import (
    TURN_SPACING,
    DatasetSpec,
    EvalQuestion,
    History,
    Message,
    ReplaySession,
    run_histories,
)

TYPES = ("simple", "conditional", "comparative", "aggregative", "post_processing", "noisy")
SPEC = DatasetSpec(name="memdaily", overall_scope="all valid questions", types=TYPES, language="zh")
HISTORY_ID = "memdaily"
USER = "User"

_TIME_RE = re.compile(r"^\s*(\d{4})年(\d{1,2})月(\d{1,2})日\s*(?:周.)?\s*(?:(\d{1,2}):(\d{2}))?\s*$")
_STEM_RE = re.compile(r"^\d+_(?P<type>[a-z_]+?)_(?P<entity>[a-z]+)$")


def parse_memdaily_time(value: str) -> datetime:
    """Parse ``"2024年04月01日 周一 08:43"`` (weekday and time optional) as aware UTC.

    Raises:
        ValueError: not such a time.
    """
    match = _TIME_RE.match(value)
    if match is None:
        raise ValueError(f"unrecognised MemDaily time {value!r}")
    year, month, day, hour, minute = match.groups()
    return datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0),
                    tzinfo=timezone.utc)


def file_type(path: Path) -> str:
    """The question type of a MemDaily file, from ``<NN>_<type>_<entity>.json``."""
    stem = path.name.removesuffix(".xz").removesuffix(".json")
    match = _STEM_RE.match(stem)
    return match.group("type") if match else stem


def _is_error(qa: dict) -> bool:
    return "[ERROR" in json.dumps(qa, ensure_ascii=False)


def load_memdaily(paths: Sequence[Path]) -> tuple[list[Path], History, dict[str, int]]:
    """Load MemDaily files or folders of them into one history.

    Returns:
        (the files read, the history with every valid question, counts of skipped questions
        ``{"error": n, "no_evidence": n}`` and of dropped evidence ids ``{"dropped_ids": n}``).

    Raises:
        FileNotFoundError: a path does not exist.
        ValueError: a file is not MemDaily-shaped.
    """
    files = _expand_paths(paths)
    sessions: list[tuple[datetime, int, ReplaySession]] = []
    questions: list[EvalQuestion] = []
    counts = {"error": 0, "no_evidence": 0, "dropped_ids": 0}
    for path in files:
        data = _read_json(path)
        if not isinstance(data, list):
            raise ValueError(f"{path}: expected a JSON array of MemDaily trajectories")
        stem = path.name.removesuffix(".xz").removesuffix(".json")
        kind = file_type(path)
        for trajectory in data:
            try:
                tid = trajectory["tid"]
                session_id = f"{stem}#{tid}"
                messages = tuple(
                    Message(message_id=f"{session_id}#{m['mid']}", role="user", speaker=USER,
                            text=str(m["message"]), sent_at=parse_memdaily_time(str(m["time"])),
                            session_id=session_id)
                    for m in trajectory["message_list"]
                )
                if not messages:
                    continue
                latest = max(m.sent_at for m in messages)
                closed = latest + TURN_SPACING
                sessions.append((min(m.sent_at for m in messages), len(sessions),
                                 ReplaySession(session_id, messages, closed)))
                valid = {m.message_id for m in messages}
                for qa in trajectory.get("question_list") or []:
                    if _is_error(qa):
                        counts["error"] += 1
                        continue
                    wanted = [f"{session_id}#{mid}" for mid in qa.get("target_step_id") or []]
                    evidence = tuple(dict.fromkeys(w for w in wanted if w in valid))
                    counts["dropped_ids"] += len(wanted) - sum(1 for w in wanted if w in valid)
                    if not evidence:
                        counts["no_evidence"] += 1
                        continue
                    asked = parse_memdaily_time(str(qa["time"])) if qa.get("time") else closed
                    questions.append(EvalQuestion(
                        question_id=f"{session_id}#{qa['qid']}", question=str(qa["question"]),
                        type=kind, in_overall=True, evidence=evidence, evidence_sessions=(),
                        asked_at=max(asked, closed), answer=str(qa.get("answer", "")),
                        choices=tuple((str(k), str(v)) for k, v in (qa.get("choices") or {}).items()),
                        ground_truth=str(qa.get("ground_truth") or "")))
            except (KeyError, TypeError) as exc:
                raise ValueError(f"{path}: not a MemDaily trajectory ({exc!r})") from exc
    ordered = tuple(session for _, _, session in sorted(sessions, key=lambda t: (t[0], t[1])))
    return files, History(history_id=HISTORY_ID, user=USER, sessions=ordered,
                          questions=tuple(questions)), counts


async def run_memdaily(paths: Sequence[Path], *, progress: IO[str] | None = sys.stderr,
                       **kwargs) -> dict:
    """Load MemDaily as one history and run it (keyword arguments as in
    ``runner.run_histories``)."""
    files, history, counts = load_memdaily(paths)
    if progress is not None:
        print(f"memdaily: {len(files)} files, {len(history.sessions)} trajectories, "
              f"{len(history.messages)} messages, {len(history.questions)} questions; skipped "
              f"{counts['error']} [ERROR] questions and {counts['no_evidence']} without evidence; "
              f"dropped {counts['dropped_ids']} unknown evidence ids", file=progress, flush=True)
    return await run_histories(SPEC, [history], paths=[str(p) for p in files], progress=progress,
                               **kwargs)
