"""LongMemEval: one user's dated chats with an assistant, one haystack per question.

Data: LongMemEval (Wu et al., "LongMemEval: Benchmarking Chat Assistants on Long-Term
Interactive Memory", ICLR 2025; MIT), a JSON array of questions (``.json`` or ``.json.xz``) as in
``../shared/data/longmemeval``: ``longmemeval_s`` (~50 sessions, ~115k tokens per haystack) or
``longmemeval_oracle`` (only the evidence sessions: a cheap smoke slice).

Replay (times aware UTC; the data's times carry no zone), one history per question, into its own
fresh data folder as a private chat (``lme-<question_id>``):

* sessions in date order (ties keep data order); a session starts at its date or 30 s after the
  previous session closed, whichever is later (sessions sharing a date would otherwise
  interleave); turn i (0-based, both roles) is sent at start + 30 s x i, user turns as ``User``
  through the engine, assistant turns as recorded replies (``generated_by="recorded"``);
  message id ``<session id>:<i>``; closed at its last turn + 30 s;
* the question is asked read-only at ``question_date`` (14 of the 100 shared questions have
  haystack sessions dated after it; they are replayed like the others).

Scoring: evidence turns are the turns with ``has_answer``; evidence sessions are
``answer_session_ids``. ``overall`` covers every question except the abstention ones
(``question_id`` ending in ``_abs``), which are reported under the type ``abstention`` (when they
have evidence turns) and in ``abstention.empty_rate``. Other questions without evidence turns
are skipped (counted on standard error).
"""

from __future__ import annotations

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

QUESTION_TYPES = (
    "single-session-user", "single-session-assistant", "single-session-preference",
    "multi-session", "knowledge-update", "temporal-reasoning",
)
ABSTENTION_TYPE = "abstention"
SPEC = DatasetSpec(name="longmemeval", overall_scope="all question types except abstention (_abs)",
                   types=(*QUESTION_TYPES, ABSTENTION_TYPE), language="en")
USER = "User"
ASSISTANT = "Assistant"

_DATE_RE = re.compile(
    r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\([A-Za-z]+\))?\s*(?:(\d{1,2}):(\d{2}))?\s*$")


def parse_lme_datetime(value: str) -> datetime:
    """Parse ``"2023/05/28 (Sun) 19:47"`` (weekday and time optional) as aware UTC.

    Raises:
        ValueError: not such a date.
    """
    match = _DATE_RE.match(value)
    if match is None:
        raise ValueError(f"unrecognised LongMemEval date {value!r}")
    year, month, day, hour, minute = match.groups()
    return datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0),
                    tzinfo=timezone.utc)


def _parse_record(record: dict) -> tuple[History, int]:
    qid = str(record["question_id"])
    ids = [str(s) for s in record["haystack_session_ids"]]
    dates = [parse_lme_datetime(str(d)) for d in record["haystack_dates"]]
    raw_sessions = record["haystack_sessions"]
    if not len(ids) == len(dates) == len(raw_sessions):
        raise ValueError(f"question {qid}: haystack lists of different lengths")
    sessions: list[ReplaySession] = []
    evidence: list[str] = []
    previous_close: datetime | None = None
    for index in sorted(range(len(ids)), key=lambda i: (dates[i], i)):
        turns = raw_sessions[index] or []
        if not turns:
            continue
        start = dates[index]
        if previous_close is not None and start < previous_close + TURN_SPACING:
            start = previous_close + TURN_SPACING
        messages = []
        for i, turn in enumerate(turns):
            role = str(turn.get("role", "user"))
            message = Message(
                message_id=f"{ids[index]}:{i}", role="assistant" if role == "assistant" else "user",
                speaker=ASSISTANT if role == "assistant" else USER, text=str(turn.get("content") or ""),
                sent_at=start + TURN_SPACING * i, session_id=ids[index])
            messages.append(message)
            if turn.get("has_answer"):
                evidence.append(message.message_id)
        closed = messages[-1].sent_at + TURN_SPACING
        sessions.append(ReplaySession(ids[index], tuple(messages), closed))
        previous_close = closed
    abstention = qid.endswith("_abs")
    known = {s.session_id for s in sessions}
    question = EvalQuestion(
        question_id=qid, question=str(record["question"]),
        type=ABSTENTION_TYPE if abstention else str(record["question_type"]),
        in_overall=not abstention, evidence=tuple(evidence),
        evidence_sessions=tuple(s for s in record.get("answer_session_ids") or [] if s in known),
        asked_at=parse_lme_datetime(str(record["question_date"])), abstention=abstention,
        answer=str(record.get("answer", "")),
    )
    skipped = 0
    questions: tuple[EvalQuestion, ...] = (question,)
    if not evidence and not abstention:
        questions, skipped = (), 1
    return History(history_id=f"lme-{qid}", user=USER, sessions=tuple(sessions),
                   questions=questions), skipped


def load_longmemeval(paths: Sequence[Path]) -> tuple[list[Path], list[History], int]:
    """Load LongMemEval files (``.json`` / ``.json.xz``, a list of question records) or
    folders of them.

    Returns:
        (the files read, one history per question in file order, questions skipped for
        lack of evidence turns).

    Raises:
        FileNotFoundError: a path does not exist.
        ValueError: a file is not LongMemEval-shaped.
    """
    files = _expand_paths(paths)
    histories: list[History] = []
    skipped = 0
    for path in files:
        data = _read_json(path)
        if not isinstance(data, list):
            raise ValueError(f"{path}: expected a JSON array of LongMemEval questions")
        for record in data:
            try:
                history, lost = _parse_record(record)
            except (KeyError, TypeError) as exc:
                raise ValueError(f"{path}: not a LongMemEval record ({exc!r})") from exc
            histories.append(history)
            skipped += lost
    return files, histories, skipped


async def run_longmemeval(paths: Sequence[Path], *, progress: IO[str] | None = sys.stderr,
                          **kwargs) -> dict:
    """Load LongMemEval and run it (keyword arguments as in ``runner.run_histories``)."""
    files, histories, skipped = load_longmemeval(paths)
    if progress is not None:
        print(f"longmemeval: {len(histories)} questions in {len(files)} files; skipped {skipped} "
              "without evidence turns", file=progress, flush=True)
    return await run_histories(SPEC, histories, paths=[str(p) for p in files], progress=progress,
                               **kwargs)
