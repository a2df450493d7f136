"""The ``memory-bot-eval/1`` report (docs/evaluation.md, "Method") and its Markdown table.

All recall values are fractions in [0, 1] (means over questions, every question weighing the
same); token values are tokens by the product's counter; latencies are milliseconds; a value is
``null`` where a type has no question in the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from bot.evaluation.metrics import mean

SCHEMA = "memory-bot-eval/1"
SYSTEMS = ("ours", "bm25", "dense")
#: Per dataset, the ``by_type`` names left out of ``overall`` (for the table's overall n).
NOT_IN_OVERALL = {"locomo": ("adversarial",), "longmemeval": ("abstention",), "memdaily": ()}


def recall_key(budget: int) -> str:
    """Report key of the evidence recall at ``budget`` tokens: ``"evidence_recall@1000"``."""
    return f"evidence_recall@{budget}"


@dataclass(frozen=True)
class QuestionScore:
    """One system's result on one question.

    Attributes:
        type: the question's type name (e.g. ``"multi-hop"``).
        in_overall: whether the question counts in ``overall`` (LoCoMo: categories 1-4).
        recall_at: evidence recall (fraction) per budget in tokens.
        values: further per-question numbers averaged under their own key
            (e.g. ``"recall@10"``).
    """

    type: str
    in_overall: bool
    recall_at: Mapping[int, float]
    values: Mapping[str, float] = field(default_factory=dict)


def _block(scores: Sequence[QuestionScore], budgets: Sequence[int], with_n: bool) -> dict:
    block: dict = {"n": len(scores)} if with_n else {}
    for budget in budgets:
        block[recall_key(budget)] = mean([s.recall_at[budget] for s in scores])
    extra_keys: list[str] = []
    for score in scores:
        extra_keys.extend(k for k in score.values if k not in extra_keys)
    for key in extra_keys:
        block[key] = mean([s.values[key] for s in scores if key in s.values])
    return block


def system_report(
    scores: Sequence[QuestionScore],
    budgets: Sequence[int],
    types: Sequence[str],
    *,
    overall_extra: Mapping[str, float] | None = None,
) -> dict:
    """``{"overall": {...}, "by_type": {type: {"n", "evidence_recall@B", ...}}}`` for one system.

    ``overall`` averages the questions with ``in_overall``; ``by_type`` lists every name of
    ``types`` (with ``n`` = 0 and null values when a type had no question) in that order.
    ``overall_extra`` entries are appended to ``overall`` as given.
    """
    overall = _block([s for s in scores if s.in_overall], budgets, with_n=False)
    overall.update(overall_extra or {})
    by_type = {name: _block([s for s in scores if s.type == name], budgets, with_n=True) for name in types}
    return {"overall": overall, "by_type": by_type}


def empty_system() -> dict:
    """The entry of a system that was not run."""
    return {"overall": {}, "by_type": {}}


def build_report(
    *,
    dataset: str,
    paths: Sequence[str],
    questions: int,
    overall_scope: str,
    budgets: Sequence[int],
    embedder: str,
    token_counter: str,
    elapsed_s: float,
    systems: Mapping[str, dict],
    full_history_tokens_mean: float,
    abstention: Mapping[str, float],
) -> dict:
    """Assemble the report in the report's documented key order."""
    return {
        "schema": SCHEMA,
        "dataset": dataset,
        "paths": list(paths),
        "questions": questions,
        "overall_scope": overall_scope,
        "budgets_tokens": list(budgets),
        "embedder": embedder,
        "token_counter": token_counter,
        "elapsed_s": round(elapsed_s, 3),
        "systems": {name: systems.get(name, empty_system()) for name in SYSTEMS},
        "full_history_tokens_mean": full_history_tokens_mean,
        "abstention": dict(abstention),
    }


def with_profile_flag(report: dict, profile_block: bool) -> dict:
    """``report`` with ``"profile_block"`` (the profile block was in every recall: true, or
    the run was made with ``--no-profile-block``: false) after ``token_counter``."""
    out: dict = {}
    for key, value in report.items():
        if key != "profile_block":
            out[key] = value
        if key == "token_counter":
            out["profile_block"] = profile_block
    out.setdefault("profile_block", profile_block)
    return out


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def format_markdown(report: dict) -> str:
    """A Markdown table of the report: rows system x type, columns n and recall per budget.

    The ``overall`` row of each system comes first (its ``n`` is the sum of the types it
    covers); a few summary lines follow the table.
    """
    budgets = report["budgets_tokens"]
    session_keys = [k for k in ("session_recall@5", "session_recall@10")
                    if any(k in system.get("overall", {}) for system in report["systems"].values())]
    header = ["system", "type", "n", *(f"R@{b}" for b in budgets),
              *(k.replace("session_recall@", "S@") for k in session_keys)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    scope = report.get("overall_scope", "")
    for name, system in report["systems"].items():
        if not system.get("overall"):
            lines.append(f"| {name} | (not run) | " + " | ".join("-" for _ in range(len(header) - 2)) + " |")
            continue
        by_type = system.get("by_type", {})
        overall_n = sum(
            block["n"] for type_name, block in by_type.items()
            if type_name not in NOT_IN_OVERALL.get(report.get("dataset"), ())
        ) if report.get("dataset") in NOT_IN_OVERALL else None
        rows = [(f"overall ({scope})" if scope else "overall", overall_n, system["overall"])]
        rows += [(type_name, block["n"], block) for type_name, block in by_type.items()]
        for type_name, n, block in rows:
            cells = [name, type_name, _fmt(n), *(_fmt(block.get(recall_key(b))) for b in budgets),
                     *(_fmt(block.get(k)) for k in session_keys)]
            lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    systems = report["systems"]
    bm25 = systems.get("bm25", {}).get("overall", {})
    if "recall@10" in bm25:
        lines.append(f"- bm25 recall@10 (top 10 turns, no budget): {_fmt(bm25['recall@10'])}")
    ours = systems.get("ours", {}).get("overall", {})
    if ours:
        lines.append(
            f"- ours: memory tokens mean {_fmt(ours.get('memory_tokens_mean'))}, "
            f"recall ms p50 {_fmt(ours.get('recall_ms_p50'))} / p95 {_fmt(ours.get('recall_ms_p95'))}"
        )
    lines.append(f"- full history tokens mean: {_fmt(report.get('full_history_tokens_mean'))}")
    abstention = report.get("abstention", {})
    lines.append(
        f"- abstention: {abstention.get('questions', 0)} questions, "
        f"empty rate {_fmt(abstention.get('empty_rate'))}"
    )
    answers = report.get("answers")
    if answers:
        lines.append(
            f"- answers by {answers.get('model')} (judge {answers.get('judge_model') or '-'}): "
            f"{answers.get('answered')} of {answers.get('questions')} answered, accuracy "
            f"{_fmt(answers.get('accuracy'))} over {answers.get('judged')} graded")
    if "profile_block" in report:
        lines.append(f"- profile block: {'on' if report['profile_block'] else 'off'} "
                     "(abstention never counts it)")
    lines.append(
        f"- {report.get('questions')} questions, budgets {budgets} tokens, embedder "
        f"{report.get('embedder')}, counter {report.get('token_counter')}, {report.get('elapsed_s')} s"
    )
    return "\n".join(lines) + "\n"
