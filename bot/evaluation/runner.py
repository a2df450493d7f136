"""A dataset-neutral replay runner: histories of dated sessions in, the eval report out.

LoCoMo, LongMemEval and MemDaily load their files into :class:`History` objects (sessions of
messages with ids, roles and times; questions with evidence message ids and, where the data
has them, evidence session ids) and hand them to :func:`run_histories`, which applies the same
rules to every dataset:

* every history is replayed in full into a fresh target folder (user messages through
  ``ingest``, recorded assistant replies through ``ingest_reply``), each session closed at its
  ``closed_at``; then each sampled question is asked read-only once, with the largest budget,
  and the returned list is re-packed for every budget (``metrics.pack``, rank order, pinned
  first); credit only for the source turns an item carries (``metrics.credited_turns``);
* the baselines rank the same raw messages, one document per message (``baselines``): BM25
  (English stemmer, or jieba for Chinese) and dense retrieval with the run's embedder;
* ``session_recall@k`` (where questions carry evidence sessions): the share of a question's
  evidence sessions among the first ``k`` distinct sessions of the system's ranking, each item
  standing for the session(s) of the messages it came from; for ``ours`` the ranking is every
  candidate of its recall before packing (``DialogueTarget.last_ranking``) without the pinned
  item, which is shown by position, not ranked;
* abstention questions are asked of ``ours`` only to measure how often nothing (besides the
  pinned item) comes back (``abstention.empty_rate``); where they carry evidence they are also
  scored under their own type, never in ``overall``;
* ``per_question`` adds ``ours``' result on every scored question to the report
  (``per_question``: its evidence recall per budget and the items packed, see
  :func:`question_record`), so two runs can be compared question by question;
* ``reuse_replay`` (with ``work_dir``) asks the questions on a history's data folder that an
  earlier run with the same ``work_dir`` replayed completely (marked by :data:`REPLAYED_MARK`)
  instead of replaying it again: read-time changes (recall, ranking, packing) can then be
  measured without the replay; what the replay wrote (turns, episodes, facts) is the earlier
  tree's.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import IO

from bot.evaluation.baselines import BM25Index, DenseIndex, JiebaBM25Index, RawDoc, make_doc
from bot.evaluation.metrics import (
    credited_turns,
    evidence_recall,
    mean,
    pack,
    percentile,
    stratified_sample,
)
from bot.evaluation.report import QuestionScore, build_report, empty_system, system_report
from bot.evaluation.target import DialogueTarget, EvalItem, ReplayTarget
from memory.ports import Embedder, TokenCounter

DEFAULT_BUDGETS = (400, 1000, 4000)
PRODUCTION_BUDGET = 1000
TURN_SPACING = timedelta(seconds=30)
SESSION_RECALL_AT = (5, 10)
#: Top-k of the bm25 ``recall@10`` (evidence share in the first 10 documents, no budget).
RECALL_AT_K = 10
#: File written into a history's data folder once its replay is complete (``reuse_replay``).
REPLAYED_MARK = "replayed.json"


@dataclass(frozen=True)
class Message:
    """One recorded message.

    Attributes:
        message_id: unique within the history; evidence refers to it.
        role: ``"user"`` or ``"assistant"``.
        speaker: display name (``"User"``, ``"Assistant"``, a person's name).
        text: the message text.
        sent_at: aware UTC send time.
        session_id: the data's id of the session the message belongs to.
    """

    message_id: str
    role: str
    speaker: str
    text: str
    sent_at: datetime
    session_id: str


@dataclass(frozen=True)
class ReplaySession:
    """One session: its id in the data, its messages in replay order, its close time."""

    session_id: str
    messages: tuple[Message, ...]
    closed_at: datetime


@dataclass(frozen=True)
class EvalQuestion:
    """One question.

    Attributes:
        question_id: the data's id.
        type: the type name it is reported under.
        in_overall: counts in ``overall``.
        evidence: evidence message ids (all in the history; may be empty for abstention).
        evidence_sessions: evidence session ids (empty where the data has none).
        asked_at: aware UTC time the question is asked.
        abstention: the right answer is to abstain.
        answer: the reference answer (a rubric for LongMemEval preference questions).
        choices: ``(letter, text)`` pairs of a multiple-choice question (MemDaily).
        ground_truth: the right letter of a multiple-choice question.
    """

    question_id: str
    question: str
    type: str
    in_overall: bool
    evidence: tuple[str, ...]
    evidence_sessions: tuple[str, ...]
    asked_at: datetime
    abstention: bool = False
    answer: str = ""
    choices: tuple[tuple[str, str], ...] = ()
    ground_truth: str = ""


@dataclass(frozen=True)
class History:
    """One user's replayable history and the questions asked about it.

    Attributes:
        history_id: the thread (``conversation_id``) it is replayed into.
        user: the user's display name (the asker).
        sessions: sessions in replay order.
        questions: questions in data order.
    """

    history_id: str
    user: str
    sessions: tuple[ReplaySession, ...]
    questions: tuple[EvalQuestion, ...]

    @property
    def messages(self) -> list[Message]:
        return [m for s in self.sessions for m in s.messages]


@dataclass(frozen=True)
class DatasetSpec:
    """What differs between datasets for the runner.

    Attributes:
        name: report ``dataset``.
        overall_scope: report ``overall_scope``.
        types: ``by_type`` names in report order.
        language: ``"en"`` (BM25 with the English stemmer) or ``"zh"`` (BM25 over jieba).
    """

    name: str
    overall_scope: str
    types: tuple[str, ...]
    language: str = "en"


def session_recall(
    ranking: Sequence[EvalItem], session_of: Mapping[str, str], evidence_sessions: Sequence[str], k: int
) -> float:
    """Share of ``evidence_sessions`` among the first ``k`` distinct sessions of ``ranking``.

    Each item stands for the sessions of its source messages, in their order; pinned items are
    skipped. Returns a fraction in [0, 1] (0.0 without evidence sessions).
    """
    wanted = set(evidence_sessions)
    if not wanted:
        return 0.0
    seen: list[str] = []
    for item in ranking:
        if item.pinned:
            continue
        for message_id in item.source_message_ids:
            session = session_of.get(message_id)
            if session is not None and session not in seen:
                seen.append(session)
        if len(seen) >= k:
            break
    top = set(seen[:k])
    return len(wanted & top) / len(wanted)


def full_history_tokens(docs: Sequence[RawDoc]) -> int:
    """Tokens of the whole history rendered as round lines (one line per message)."""
    return sum(doc.item.tokens for doc in docs)


async def replay_history(target: ReplayTarget, history: History) -> None:
    """Feed every session of ``history`` to ``target`` and close it.

    Raises:
        TypeError: the history has assistant messages and ``target`` cannot take them.
    """
    dialogue = isinstance(target, DialogueTarget)
    for session in history.sessions:
        for message in session.messages:
            if message.role == "user":
                await target.ingest(conversation_id=history.history_id, speaker=message.speaker,
                                    text=message.text, sent_at=message.sent_at,
                                    message_id=message.message_id)
            elif dialogue:
                await target.ingest_reply(conversation_id=history.history_id, user=history.user,
                                          text=message.text, sent_at=message.sent_at,
                                          message_id=message.message_id)
            else:
                raise TypeError(f"{type(target).__name__} cannot take assistant messages "
                                "(it is not a DialogueTarget)")
        await target.close_session(conversation_id=history.history_id, at=session.closed_at)


def question_record(history_id: str, q: EvalQuestion, items: Sequence[EvalItem],
                    budgets: Sequence[int], *, block_overhead_tokens: int = 0) -> dict:
    """One question's entry of the report's ``per_question`` list.

    Returns ``{"history", "question_id", "type", "in_overall", "evidence", "recall", "packed",
    "items"}``: ``recall`` maps each budget (a string of tokens) to the evidence recall
    (fraction) of what is packed at it; ``packed`` maps it to how many of ``items`` are packed
    (packing takes a prefix of the pinned-first order, ``metrics.pack``); ``items`` lists the
    items packed at the largest budget in that order, each ``{"key", "kind", "tokens",
    "pinned", "profile", "sources", "text"}`` with ``key`` = ``kind:first source`` (or
    ``kind:text`` without sources) for matching items across runs.
    """
    packs = {b: pack(items, b, block_overhead_tokens=block_overhead_tokens) for b in budgets}
    largest = packs[max(budgets)].items
    return {
        "history": history_id,
        "question_id": q.question_id,
        "type": q.type,
        "in_overall": q.in_overall,
        "evidence": list(q.evidence),
        "recall": {str(b): evidence_recall(q.evidence, credited_turns(p.items))
                   for b, p in packs.items()},
        "packed": {str(b): len(p.items) for b, p in packs.items()},
        "items": [{"key": f"{i.kind}:{i.source_message_ids[0] if i.source_message_ids else i.text}",
                   "kind": i.kind, "tokens": i.tokens, "pinned": i.pinned, "profile": i.profile,
                   "sources": list(i.source_message_ids), "text": i.text} for i in largest],
    }


def _replayed_folder(base: Path, history: History) -> Path | None:
    """A folder under ``base`` holding a complete replay of ``history`` (its mark matches the
    history's id, message and session counts), or None."""
    for folder in sorted(base.glob(f"{_safe(history.history_id)}-*")):
        try:
            mark = json.loads((folder / REPLAYED_MARK).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if (mark.get("history") == history.history_id
                and mark.get("messages") == len(history.messages)
                and mark.get("sessions") == len(history.sessions)):
            return folder
    return None


def _mark_replayed(folder: Path, history: History, target: ReplayTarget) -> None:
    state = getattr(target, "replay_state", None)
    mark = {"history": history.history_id, "messages": len(history.messages),
            "sessions": len(history.sessions), "state": state() if state is not None else {}}
    (folder / REPLAYED_MARK).write_text(json.dumps(mark, ensure_ascii=False), encoding="utf-8")


def _say(progress: IO[str] | None, line: str) -> None:
    if progress is not None:
        print(line, file=progress, flush=True)


async def run_histories(
    spec: DatasetSpec,
    histories: Sequence[History],
    *,
    paths: Sequence[str],
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
    """Replay ``histories`` into ``ours`` and score it beside the BM25 and dense baselines.

    Args:
        spec: dataset name, scope, type order and language.
        histories: the loaded data; each is replayed into its own fresh folder.
        paths: the data files, for the report.
        target_factory: builds the system under test in an empty folder under ``work_dir``;
            None skips ``ours``.
        embedder: for the dense baseline; None skips ``dense``.
        counter: the product's token counter.
        budgets: memory budgets in tokens; ``ours`` is asked once with the largest (or
            ``production_budget`` if larger) and re-packed for each.
        limit: a fixed sample of this many questions, stratified by type
            (``metrics.stratified_sample`` over ``(type order, history, question)``); a
            history without a sampled question is not replayed.
        progress: where progress lines go (None for silence).
        work_dir: base folder for the targets' data (a removed temporary folder when None).
        production_budget: budget at which ``memory_tokens_mean`` is taken.
        block_overhead_tokens: tokens of the memory block's fixed parts, charged once per
            non-empty packed block by every system.
        on_answer: awaited with each question and ``ours``' items packed at
            ``production_budget`` (answer generation and judging, ``bot.evaluation.answer``).
        per_question: add ``per_question`` to the report, one :func:`question_record` per scored
            question of ``ours``, in replay order.
        reuse_replay: ask on a complete earlier replay of a history under ``work_dir`` when
            there is one (the target's ``restore_replay_state`` gets what its
            ``replay_state`` returned then), replaying only the others.
        dense: False skips the dense baseline (it embeds every turn of every history, most of a
            cold run's time); its entry is then empty and the report still names ``embedder``.

    Returns:
        The report dict (docs/evaluation.md, "Method"; schema ``memory-bot-eval/1``).

    Raises:
        ValueError: a budget is not positive, or ``reuse_replay`` without ``work_dir``.
    """
    started = time.perf_counter()
    budgets = sorted({int(b) for b in budgets})
    if not budgets or budgets[0] < 1:
        raise ValueError("budgets must be positive token counts")
    if reuse_replay and work_dir is None:
        raise ValueError("reuse_replay needs a work_dir holding the earlier replay")
    ask_budget = max(budgets[-1], production_budget)
    order = {name: i for i, name in enumerate(spec.types)}
    pool = [(hi, qi, q) for hi, h in enumerate(histories) for qi, q in enumerate(h.questions)]
    chosen = stratified_sample(pool, limit, key=lambda t: (order.get(t[2].type, len(order)), t[0], t[1]))
    by_history: dict[int, list[EvalQuestion]] = {}
    for hi, _, question in sorted(chosen, key=lambda t: (t[0], t[1])):
        by_history.setdefault(hi, []).append(question)

    systems_run = {"ours": target_factory is not None, "bm25": True, "dense": dense and embedder is not None}
    scores: dict[str, list[QuestionScore]] = {name: [] for name in systems_run}
    memory_tokens: dict[str, list[float]] = {name: [] for name in systems_run}
    recall_ms: list[float] = []
    abstention_total = abstention_empty = 0
    history_tokens: list[int] = []
    has_sessions = any(q.evidence_sessions for _, _, q in chosen)
    per_question_records: list[dict] = []

    def record(system: str, q: EvalQuestion, items: Sequence[EvalItem], ranking: Sequence[EvalItem],
               session_of: Mapping[str, str], **values: float) -> None:
        if not q.evidence:
            return  # abstention without evidence turns: counted in ``abstention`` only
        if has_sessions:
            for k in SESSION_RECALL_AT:
                values[f"session_recall@{k}"] = session_recall(ranking, session_of, q.evidence_sessions, k)
        recall_at = {
            b: evidence_recall(q.evidence, credited_turns(
                pack(items, b, block_overhead_tokens=block_overhead_tokens).items))
            for b in budgets
        }
        scores[system].append(QuestionScore(q.type, q.in_overall, recall_at, values))
        if q.in_overall:
            memory_tokens[system].append(
                pack(items, production_budget, block_overhead_tokens=block_overhead_tokens).tokens)

    with tempfile.TemporaryDirectory(prefix="memory-bot-eval-") as scratch:
        base = Path(work_dir) if work_dir is not None else Path(scratch)
        base.mkdir(parents=True, exist_ok=True)
        for hi, history in enumerate(histories):
            questions = by_history.get(hi)
            if not questions:
                continue
            t_history = time.perf_counter()
            messages = history.messages
            session_of = {m.message_id: m.session_id for m in messages}
            docs = [make_doc(message_id=m.message_id, speaker=m.speaker, text=m.text,
                             sent_at=m.sent_at, counter=counter) for m in messages]
            history_tokens.append(full_history_tokens(docs))

            if target_factory is not None:
                reused = _replayed_folder(base, history) if reuse_replay else None
                folder = reused or Path(tempfile.mkdtemp(prefix=f"{_safe(history.history_id)}-",
                                                         dir=base))
                target = await target_factory(folder)
                try:
                    if reused is not None:
                        mark = json.loads((folder / REPLAYED_MARK).read_text(encoding="utf-8"))
                        restore = getattr(target, "restore_replay_state", None)
                        if restore is not None:
                            restore(mark.get("state") or {})
                        _say(progress, f"{spec.name} {history.history_id}: asking on the replay in "
                                       f"{folder}")
                    else:
                        t0 = time.perf_counter()
                        await replay_history(target, history)
                        _mark_replayed(folder, history, target)
                        _say(progress, f"{spec.name} {history.history_id}: replayed {len(messages)} "
                                       f"messages in {len(history.sessions)} sessions "
                                       f"({time.perf_counter() - t0:.1f} s)")
                    for q in questions:
                        t1 = time.perf_counter()
                        items = list(await target.recall(
                            conversation_id=history.history_id, speaker=history.user,
                            question=q.question, asked_at=q.asked_at, budget_tokens=ask_budget))
                        elapsed_ms = (time.perf_counter() - t1) * 1000.0
                        ranking = (target.last_ranking() if isinstance(target, DialogueTarget)
                                   else items)
                        record("ours", q, items, ranking, session_of)
                        if per_question and q.evidence:
                            per_question_records.append(question_record(
                                history.history_id, q, items, budgets,
                                block_overhead_tokens=block_overhead_tokens))
                        if q.in_overall:
                            recall_ms.append(elapsed_ms)
                        if q.abstention:
                            abstention_total += 1
                            # the profile block is in every prompt: it counts only where the
                            # question itself recalls one of its facts
                            abstention_empty += not any(
                                not item.pinned or (item.profile and item.matched)
                                for item in items)
                        if on_answer is not None:
                            await on_answer(q, list(pack(items, production_budget,
                                                         block_overhead_tokens=block_overhead_tokens).items))
                finally:
                    await target.aclose()

            bm25 = JiebaBM25Index(docs) if spec.language == "zh" else BM25Index(docs)
            for q in questions:
                ranked = [docs[i].item for i in bm25.rank(q.question)]
                top = {mid for item in ranked[:RECALL_AT_K] for mid in item.source_message_ids}
                record("bm25", q, ranked, ranked, session_of,
                       **{f"recall@{RECALL_AT_K}": evidence_recall(q.evidence, top)})

            if systems_run["dense"]:
                dense_index = await DenseIndex.build(docs, embedder)
                for q in questions:
                    ranked = await dense_index.search(q.question)
                    record("dense", q, ranked, ranked, session_of)

            shown = production_budget if production_budget in budgets else budgets[-1]
            _say(progress, f"{spec.name} {history.history_id}: {len(questions)} questions scored "
                           f"({time.perf_counter() - t_history:.1f} s); running "
                           + ", ".join(f"{name} R@{shown}={_running(scores[name], shown)}"
                                       + _running_session(scores[name])
                                       for name in scores if scores[name]))

    systems: dict[str, dict] = {}
    for name, ran in systems_run.items():
        if not ran:
            systems[name] = empty_system()
            continue
        extra: dict[str, float | None] = {"memory_tokens_mean": mean(memory_tokens[name])}
        if name == "ours":
            extra["recall_ms_p50"] = percentile(recall_ms, 50)
            extra["recall_ms_p95"] = percentile(recall_ms, 95)
        types = list(spec.types) + sorted({s.type for s in scores[name]} - set(spec.types))
        systems[name] = system_report(scores[name], budgets, types, overall_extra=extra)
    report = build_report(
        dataset=spec.name,
        paths=list(paths),
        questions=len(chosen),
        overall_scope=spec.overall_scope,
        budgets=budgets,
        embedder=embedder.name if embedder is not None else "none",
        token_counter=counter.name,
        elapsed_s=time.perf_counter() - started,
        systems=systems,
        full_history_tokens_mean=mean(history_tokens) or 0.0,
        abstention={
            "questions": abstention_total,
            "empty_rate": (abstention_empty / abstention_total) if abstention_total else None,
        },
    )
    if per_question:
        report["per_question"] = per_question_records
    return report


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:60]


def _running(scores: Sequence[QuestionScore], budget: int) -> str:
    value = mean([s.recall_at[budget] for s in scores if s.in_overall])
    return "-" if value is None else f"{value:.3f}"


def _running_session(scores: Sequence[QuestionScore]) -> str:
    """`` S@5=x`` over the scored questions so far, or "" where there are no sessions."""
    key = "session_recall@5"
    value = mean([s.values[key] for s in scores if s.in_overall and key in s.values])
    return "" if value is None else f" S@5={value:.3f}"
