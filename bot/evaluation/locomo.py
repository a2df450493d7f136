"""LoCoMo: load the conversations, replay them into a target, measure evidence recall.

Data: LoCoMo (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents",
ACL 2024; snap-research/locomo), one conversation per file as in ``../shared/data/locomo``.

Replay (times are aware UTC; the data's times carry no zone):
* sessions ``session_1``, ``session_2``, ... in numeric order, all into one thread
  ``locomo-<sample>``; turn i (0-based) of session N is sent at ``session_N_date_time`` + 30 s x i,
  by its own speaker, with message id = its ``dia_id`` and text = its ``text`` plus
  ``" [shares a photo: <blip_caption>]"`` when it shared a photo;
* each session is closed at its last turn's time + 30 s; sessions without turns are skipped;
* each question is asked read-only as ``speaker_a`` at the last session's time + 1 day.

Scoring: questions of categories 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial; ``overall`` covers 1-4, category 5 is reported under ``by_type`` and as abstention.
Evidence ids are normalised (``metrics.normalise_evidence``); ids not in the conversation are
dropped and questions left without evidence are skipped (both counted on standard error).
"""

from __future__ import annotations

import json
import lzma
import re
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import IO, Any

from bot.evaluation.baselines import photo_suffix
from bot.evaluation.metrics import normalise_evidence
from bot.evaluation.runner import (
    DatasetSpec,
    EvalQuestion,
    History,
    Message,
    ReplaySession,
    run_histories,
)
from bot.evaluation.target import EvalItem, ReplayTarget
from memory.ports import Embedder, TokenCounter

DEFAULT_BUDGETS = (400, 1000, 4000)
#: The production memory budget (``MEMORY_TOKEN_BUDGET`` default), where tokens are averaged.
PRODUCTION_BUDGET = 1000
TURN_SPACING = timedelta(seconds=30)
QUESTION_DELAY = timedelta(days=1)
RECALL_AT_K = 10
CATEGORY_TYPES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
TYPE_ORDER = tuple(CATEGORY_TYPES.values())
OVERALL_CATEGORIES = frozenset({1, 2, 3, 4})
OVERALL_SCOPE = "categories 1-4"
SPEC = DatasetSpec(name="locomo", overall_scope=OVERALL_SCOPE, types=TYPE_ORDER, language="en")

_SESSION_KEY_RE = re.compile(r"^session_(\d+)$")
_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
            ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
            ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
            ("dec", "december"),
        ],
        start=1,
    )
    for name in names
}
_DATE_TIME_RE = re.compile(
    r"^\s*(?:(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>[ap])\.?\s*m\.?\s*(?:on\s+)?,?\s*)?"
    r"(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?P<month>[A-Za-z]+)\.?,?\s+(?P<year>\d{4})\s*$",
    re.IGNORECASE,
)


def parse_locomo_datetime(value: str) -> datetime:
    """Parse a LoCoMo session time such as ``"1:56 pm on 8 May, 2023"`` as aware UTC.

    Tolerates upper case, missing comma or ``on``, ``a.m.``, ordinal days, abbreviated month
    names and a missing time of day (midnight).

    Raises:
        ValueError: the text is not such a date.
    """
    match = _DATE_TIME_RE.match(value)
    month = _MONTHS.get((match.group("month") if match else "").lower())
    if match is None or month is None:
        raise ValueError(f"unrecognised LoCoMo date {value!r}")
    hour = minute = 0
    if match.group("hour") is not None:
        hour, minute = int(match.group("hour")), int(match.group("minute") or 0)
        if not 1 <= hour <= 12:
            raise ValueError(f"unrecognised LoCoMo date {value!r}")
        hour = hour % 12 + (12 if match.group("ampm").lower() == "p" else 0)
    return datetime(int(match.group("year")), month, int(match.group("day")), hour, minute, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Turn:
    """One message of the replay.

    Attributes:
        dia_id: LoCoMo turn id (``"D3:7"``), used as the message id.
        speaker: first name of the speaker.
        text: the ingested text (the turn's text plus the photo suffix).
        sent_at: aware UTC send time.
    """

    dia_id: str
    speaker: str
    text: str
    sent_at: datetime


@dataclass(frozen=True)
class Session:
    """One LoCoMo session: ``number`` N of ``session_N``, its turns and its close time."""

    number: int
    started_at: datetime
    turns: tuple[Turn, ...]

    @property
    def closed_at(self) -> datetime:
        """Last turn's time + 30 s."""
        return self.turns[-1].sent_at + TURN_SPACING


@dataclass(frozen=True)
class Question:
    """One scored question.

    Attributes:
        index: position in the file's ``qa`` list (0-based).
        category: LoCoMo category 1-5; ``type`` its name.
        evidence: normalised evidence turn ids, all present in the conversation.
    """

    index: int
    question: str
    category: int
    type: str
    evidence: tuple[str, ...]
    answer: str = ""

    @property
    def in_overall(self) -> bool:
        return self.category in OVERALL_CATEGORIES


@dataclass(frozen=True)
class Conversation:
    """One LoCoMo conversation, ready to replay.

    Attributes:
        path: the file it came from.
        sample_id: the sample number (file stem, or ``sample_id`` when the record has one).
        questions: questions with valid evidence, in file order.
        asked_at: when the questions are asked (last session's time + 1 day).
        dropped_evidence_ids: evidence ids dropped as malformed or unknown.
        skipped_questions: questions without any valid evidence (not in ``questions``).
    """

    path: Path
    sample_id: str
    speaker_a: str
    speaker_b: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]
    asked_at: datetime
    dropped_evidence_ids: int
    skipped_questions: int

    @property
    def conversation_id(self) -> str:
        return f"locomo-{self.sample_id}"

    @property
    def turns(self) -> list[Turn]:
        return [turn for session in self.sessions for turn in session.turns]


def _expand_paths(paths: Iterable[Path]) -> list[Path]:
    files: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            files.extend(
                sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith((".json", ".json.xz")))
            )
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    return files


def _read_json(path: Path) -> Any:
    if path.name.endswith(".xz"):
        with lzma.open(path, "rt", encoding="utf-8") as handle:
            return json.load(handle)
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def _parse_record(record: dict, path: Path, default_id: str) -> Conversation:
    if "conversation" in record:  # upstream locomo10.json layout
        record = {**record["conversation"], "qa": record.get("qa", []), "sample_id": record.get("sample_id")}
    sample_id = str(record.get("sample_id") or default_id).removeprefix("conv-")
    numbers = sorted(int(m.group(1)) for key in record if (m := _SESSION_KEY_RE.match(key)))
    sessions: list[Session] = []
    for number in numbers:
        raw_turns = record[f"session_{number}"] or []
        if not raw_turns:
            continue
        stamp = record.get(f"session_{number}_date_time")
        if not stamp:
            raise ValueError(f"{path}: session_{number} has turns but no session_{number}_date_time")
        started = parse_locomo_datetime(stamp)
        turns = tuple(
            Turn(
                dia_id=str(raw["dia_id"]),
                speaker=str(raw["speaker"]),
                text=str(raw.get("text", "")) + photo_suffix(raw.get("blip_caption")),
                sent_at=started + TURN_SPACING * i,
            )
            for i, raw in enumerate(raw_turns)
        )
        sessions.append(Session(number=number, started_at=started, turns=turns))
    if not sessions:
        raise ValueError(f"{path}: no sessions with turns")
    valid_ids = {turn.dia_id for session in sessions for turn in session.turns}
    questions: list[Question] = []
    dropped = skipped = 0
    for index, qa in enumerate(record.get("qa", [])):
        evidence, lost = normalise_evidence(qa.get("evidence") or [], valid_ids)
        dropped += lost
        category = int(qa["category"])
        if not evidence or category not in CATEGORY_TYPES:
            skipped += 1
            continue
        questions.append(
            Question(index=index, question=str(qa["question"]), category=category,
                     type=CATEGORY_TYPES[category], evidence=tuple(evidence),
                     answer=str(qa.get("answer", qa.get("adversarial_answer", ""))))
        )
    asked_at = max(sessions[-1].started_at + QUESTION_DELAY, sessions[-1].closed_at + TURN_SPACING)
    return Conversation(
        path=path, sample_id=sample_id, speaker_a=str(record["speaker_a"]),
        speaker_b=str(record["speaker_b"]), sessions=tuple(sessions), questions=tuple(questions),
        asked_at=asked_at, dropped_evidence_ids=dropped, skipped_questions=skipped,
    )


def load_locomo(paths: Sequence[Path]) -> list[Conversation]:
    """Load LoCoMo conversations from files (``.json`` / ``.json.xz``) or folders of them.

    Folders are read in file-name order. A file holds one conversation object (the shared
    per-sample layout) or a list of them (upstream ``locomo10.json``).

    Raises:
        FileNotFoundError: a path does not exist.
        ValueError: a file is not LoCoMo-shaped.
    """
    conversations: list[Conversation] = []
    for path in _expand_paths(paths):
        data = _read_json(path)
        records = data if isinstance(data, list) else [data]
        stem = path.name.removesuffix(".xz").removesuffix(".json")
        for number, record in enumerate(records):
            default_id = stem if len(records) == 1 else f"{stem}-{number}"
            conversations.append(_parse_record(record, path, default_id))
    return conversations


def _history(conversation: Conversation, questions: Sequence[Question]) -> History:
    """One conversation as the shared runner's ``History``: every turn a user message of its
    speaker (two people talking, no assistant), asked as ``speaker_a``."""
    sessions = tuple(
        ReplaySession(
            session_id=str(session.number),
            messages=tuple(Message(message_id=t.dia_id, role="user", speaker=t.speaker, text=t.text,
                                   sent_at=t.sent_at, session_id=str(session.number))
                           for t in session.turns),
            closed_at=session.closed_at,
        )
        for session in conversation.sessions
    )
    return History(history_id=conversation.conversation_id, user=conversation.speaker_a,
                   sessions=sessions,
                   questions=tuple(_as_eval_question(conversation, q) for q in questions))


async def run_locomo(
    paths: Sequence[Path],
    *,
    target_factory: Callable[[Path], Awaitable[ReplayTarget]] | None,
    embedder: Embedder | None,
    counter: TokenCounter,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    limit: int | None = None,
    progress: IO[str] | None = sys.stderr,
    work_dir: Path | None = None,
    production_budget: int = PRODUCTION_BUDGET,
    block_overhead_tokens: int = 0,
    on_answer: Callable[[EvalQuestion, list[EvalItem]], Awaitable[None]] | None = None,
    per_question: bool = False,
    reuse_replay: bool = False,
    dense: bool = True,
) -> dict:
    """Replay LoCoMo into ``ours`` and score it beside the BM25 and dense baselines, through
    the shared runner (``runner.run_histories``: the same replay, packing, credit and report as
    LongMemEval and MemDaily).

    Args:
        paths: files or folders (see ``load_locomo``).
        target_factory: builds the system under test in a fresh, empty folder (one per
            conversation, created under ``work_dir``); None skips ``ours``.
        embedder: for the dense baseline; None skips ``dense``.
        counter: the product's token counter (round-line costs, full-history size).
        budgets: memory budgets in tokens; ``ours`` is asked once with the largest (or
            ``production_budget`` if larger) and re-packed for each.
        limit: score a fixed, category-stratified sample of this many questions over all
            conversations (``metrics.stratified_sample`` over ``(category, conversation,
            question)``); conversations are still replayed in full; a conversation with no
            sampled question is not replayed.
        progress: where progress lines go (standard error by default; None for silence).
        work_dir: base folder for the targets' data; a temporary folder, removed afterwards,
            when None. Never the live data folder.
        production_budget: budget in tokens at which ``memory_tokens_mean`` is taken.
        block_overhead_tokens: tokens of the memory block's fixed parts, charged once per
            non-empty packed block by every system (default 0).
        on_answer: awaited with each question (as a ``runner.EvalQuestion``; category 5 as
            abstention) and ``ours``' items packed at ``production_budget``
            (``bot.evaluation.answer``).
        per_question, reuse_replay, dense: as in ``runner.run_histories`` (each question's recall
            and packed items in the report; asking on an earlier complete replay).

    ``memory_tokens_mean`` (every system) and ``recall_ms_p50/p95`` (``ours``: wall time of
    the target's ``recall`` call) are taken over the questions of categories 1-4, like
    ``overall``; ``abstention`` counts the category-5 questions asked and the share for which
    ``ours`` returned no non-pinned item (null when none was asked).

    Returns:
        The report dict (docs/evaluation.md, "Method"; schema ``memory-bot-eval/1``).
    """
    expanded = _expand_paths(paths)
    conversations = load_locomo(expanded)
    dropped = sum(c.dropped_evidence_ids for c in conversations)
    skipped = sum(c.skipped_questions for c in conversations)
    if progress is not None:
        print(f"locomo: {len(conversations)} conversations; evidence: dropped {dropped} malformed "
              f"or unknown ids, skipped {skipped} questions without valid evidence",
              file=progress, flush=True)
        for c in conversations:
            if c.dropped_evidence_ids or c.skipped_questions:
                print(f"locomo {c.sample_id}: dropped {c.dropped_evidence_ids} evidence ids, "
                      f"skipped {c.skipped_questions} questions", file=progress, flush=True)
    histories = [_history(c, c.questions) for c in conversations]
    report = await run_histories(
        SPEC, histories, paths=[str(p) for p in expanded], target_factory=target_factory,
        embedder=embedder, counter=counter, budgets=budgets, limit=limit, progress=progress,
        work_dir=work_dir, production_budget=production_budget,
        block_overhead_tokens=block_overhead_tokens, on_answer=on_answer,
        per_question=per_question, reuse_replay=reuse_replay, dense=dense,
    )
    if progress is not None:
        bm25_overall = report["systems"]["bm25"]["overall"]
        print("locomo: bm25 overall " + ", ".join(
            f"{k}={v:.3f}" for k, v in bm25_overall.items() if isinstance(v, float)),
            file=progress, flush=True)
    return report


def _as_eval_question(conversation: Conversation, q: Question) -> EvalQuestion:
    return EvalQuestion(
        question_id=f"{conversation.sample_id}:{q.index}", question=q.question, type=q.type,
        in_overall=q.in_overall, evidence=q.evidence, evidence_sessions=(),
        asked_at=conversation.asked_at, abstention=q.category == 5, answer=q.answer)
