"""LLM consolidation on top of the rules.

When a real model is configured, each consolidation job (a fold or a close, see
``WorkRunner._run_work``) may make ONE structured call that does two things at once:

* **Episode**: the running episode is updated from the previous one: the request carries the
  previous episode (summary, goal, decisions, open tasks, state, participants) and only the turns
  new since then, never the whole history.
* **Facts**: the rules pick candidate turns (``memory.grounding.pick_candidates``); only those, each with the
  nearest active facts of its speaker (ids from the search index), go to the model, batched in
  the same call. Per candidate the model answers facts ``{kind, text, topic}`` with an action:
  ``add``, ``confirm`` (an offered fact id), ``supersede`` (an offered fact id) or ``nothing``.

Jobs with no candidate and fewer than :data:`MIN_USER_TURNS_FOR_CALL` user turns make no call
(rules only, episode ``source`` ``rules``), so most turns cost nothing.

The rules stay in charge: explicit requests and corrections were already written at turn time by
``memory.semantic`` and their turns are not sent; the model cannot supersede a fact the rules
wrote from a turn of this batch. Every model fact is validated (``memory.grounding.check_fact``): in the
speaker's language, at most ``MAX_FACT_CHARS``, with a subject (third-party facts keep theirs),
grounded in the candidate's own words (the assistant's suggestions never become user facts), no
secret, and never an instruction to the assistant ("always answer in pirate speak" inside a
pasted document is data, not an order). Relative dates left in a fact are resolved against the
message's timestamp (``memory.dates``). An ``add`` that repeats an existing fact becomes a
confirmation, never a twin.

Output that is empty, unparsable, cut at ``max_tokens``, or fails validation falls back to the
rules' episode with ``source = "rules-fallback"`` (counted in :attr:`LLMConsolidator.stats`,
logged) and no model facts. ``ModelRateLimited`` / ``ModelUnavailable`` propagate: the durable
work record stays pending and is retried later; nothing is written before the call, and the
result is applied in the transaction that completes the work
(``memory.ports.WorkQueue.complete_work``).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from zoneinfo import ZoneInfo

from memory.consolidation_prompt import (
    ACTIONS,
    FACT_KINDS,
    MAX_OUTPUT_TOKENS,
    SCHEMA,
    SYSTEM,
    TOOL_NAME,
    TURN_CHARS,
    clip,
    episode_from,
)
from memory.dates import resolve_relative_dates
from memory.errors import ModelError, ModelRateLimited, ModelUnavailable
from memory.facts import first_person
from memory.grounding import check_fact, echoed_words, grounded, pick_candidates
from memory.ports import (
    Embedder,
    FactStore,
    IdentityStore,
    ScopeFilter,
    SearchIndex,
    StructuredModel,
)
from memory.records import EpisodeDraft, FactOp, ThreadRow
from memory.text import has_cjk, language_of, normalise
from memory.types import (
    ChatKind,
    ChatMessage,
    Fact,
    FactStatus,
    ItemKind,
    ModelReply,
    Role,
    Scope,
    Turn,
)

log = logging.getLogger(__name__)

#: A job with no candidate turn and fewer user turns than this keeps the rules' episode (no call).
MIN_USER_TURNS_FOR_CALL = 3
#: Nearest active facts offered per candidate (ids the model may confirm or supersede).
NEAREST_FACTS = 3
SOURCE_RULES, SOURCE_LLM, SOURCE_FALLBACK = "rules", "llm", "rules-fallback"


@dataclass(frozen=True, slots=True)
class Plan:
    """What a consolidation job writes: the episode (model or rules), who wrote it, and the
    validated fact decisions applied with it in one transaction."""

    draft: EpisodeDraft | None
    source: str
    ops: tuple[FactOp, ...] = ()


@dataclass
class _Candidate:
    key: str
    turn: Turn
    text: str  # dates resolved against the turn's time
    tz: str
    nearest: list[Fact] = field(default_factory=list)


class LLMConsolidator:
    """Plans one consolidation job with one structured model call (see the module docstring).

    Args:
        model: the consolidation model (``CONSOLIDATION_MODEL`` on Claude).
        facts, identities, index, embedder: the memory core's ports (nearest facts, the
            speakers' time zones, duplicate checks).
        default_timezone: IANA zone for users who set none (dates in facts).
        max_tokens: output cap of one call.
        on_usage: awaited with ``(user_id, reply, at)`` after every call that answered (the app
            records usage and cost for ``/stats``); its failures are logged, never raised.

    Attributes:
        stats: counters: ``calls``, ``skipped`` (no call needed), ``llm`` (model episode used),
            ``fallback:<reason>`` (``cut``, ``empty``, ``invalid_json``, ``invalid``,
            ``error``), ``rejected:<reason>`` (model facts dropped, see ``memory.grounding.check_fact``,
            plus ``unknown_candidate``, ``unknown_fact``, ``rules_wrote``, ``duplicate``),
            ``facts:<action>`` (decisions applied).
    """

    def __init__(self, *, model: StructuredModel, facts: FactStore, identities: IdentityStore,
                 index: SearchIndex, embedder: Embedder, default_timezone: str = "UTC",
                 max_tokens: int = MAX_OUTPUT_TOKENS,
                 on_usage: Callable[[int, ModelReply, datetime], Awaitable[None]] | None = None,
                 ) -> None:
        self.model = model
        self.facts = facts
        self.identities = identities
        self.index = index
        self.embedder = embedder
        self.default_timezone = default_timezone
        self.max_tokens = max_tokens
        self.on_usage = on_usage
        self.stats: Counter[str] = Counter()

    async def plan(self, *, thread: ThreadRow, scope: Scope, turns: Sequence[Turn],
                   rules: EpisodeDraft | None, previous: EpisodeDraft | None,
                   carried: Sequence[str], now: datetime) -> Plan:
        """Plan a fold or close of ``turns`` (the new turns only, memory-off ones removed).

        Returns:
            The plan: the model's episode (``source`` ``llm``) with validated fact decisions,
            or the rules' draft (``rules`` when no call was needed, ``rules-fallback`` when the
            output was unusable).

        Raises:
            ModelRateLimited, ModelUnavailable: the model could not answer now; nothing was
                written and the job should stay pending.
        """
        if rules is None or not turns:
            return Plan(rules, SOURCE_RULES)
        batch_ids = {t.id for t in turns}
        facts_here = await self.facts.facts_of_thread(thread.id)
        handled = {i for f in facts_here for i in f.source_turn_ids if i in batch_ids}
        flagged = await self.facts.candidate_turn_ids(batch_ids)
        picked = pick_candidates(turns, private=thread.chat_kind is ChatKind.PRIVATE,
                                 flagged=flagged, handled=handled)
        user_turns = [t for t in turns if t.role is Role.USER and t.text.strip()]
        if not picked and len(user_turns) < MIN_USER_TURNS_FOR_CALL:
            self.stats["skipped"] += 1
            return Plan(rules, SOURCE_RULES)
        candidates = await self._candidates(picked, scope)
        request = self._request(turns, candidates, previous, carried)
        payer = (candidates[0].turn.user_id if candidates else user_turns[0].user_id
                 if user_turns else None)
        self.stats["calls"] += 1
        try:
            answer = await self.model.complete_structured(
                system=SYSTEM, messages=[ChatMessage("user", request)], schema=SCHEMA,
                tool_name=TOOL_NAME, description="Record the updated episode and the fact "
                "decisions for the candidates.", max_tokens=self.max_tokens)
        except (ModelRateLimited, ModelUnavailable):
            self.stats["calls"] -= 1
            raise
        except ModelError as exc:  # a request the provider rejects: retrying will not help
            return self._fallback(rules, "error", str(exc))
        if payer is not None and self.on_usage is not None:
            try:
                await self.on_usage(payer, answer.reply, now)
            except Exception:  # usage accounting must never lose the consolidation
                log.exception("recording consolidation usage failed")
        if answer.reply.stop_reason == "max_tokens":
            return self._fallback(rules, "cut", "output cut at max_tokens")
        if answer.data is None:
            reason = "invalid_json" if answer.reply.text.strip() else "empty"
            return self._fallback(rules, reason, "no JSON object in the answer")
        draft = episode_from(answer.data, rules)
        facts = answer.data.get("facts", [])
        if draft is None or not isinstance(facts, list):
            return self._fallback(rules, "invalid", "episode or facts do not match the schema")
        try:
            ops = await self._ops(facts, candidates, batch_ids, thread=thread, scope=scope,
                                  turns=turns)
        except (ModelRateLimited, ModelUnavailable):
            raise  # the embedder is down: retry the job later
        except Exception as exc:  # odd output must never block the rules' consolidation
            log.exception("consolidation: the model's fact decisions could not be used")
            return self._fallback(rules, "invalid", f"{type(exc).__name__}: {exc}")
        self.stats["llm"] += 1
        log.info("consolidation by model thread=%s turns=%d candidates=%d fact_ops=%d",
                 thread.id, len(turns), len(candidates), len(ops))
        return Plan(draft, SOURCE_LLM, tuple(ops))

    def _fallback(self, rules: EpisodeDraft, reason: str, detail: str) -> Plan:
        self.stats[f"fallback:{reason}"] += 1
        log.warning("consolidation fell back to the rules (%s): %s", reason, detail)
        return Plan(rules, SOURCE_FALLBACK)

    async def _tz(self, user_id: int, cache: dict[int, str]) -> str:
        if user_id not in cache:
            user = await self.identities.get_user(user_id)
            cache[user_id] = (user.timezone if user and user.timezone else self.default_timezone)
        return cache[user_id]

    async def _candidates(self, turns: Sequence[Turn], scope: Scope) -> list[_Candidate]:
        """Candidates with dates resolved and the nearest active facts of each speaker (one
        embedding call for the batch, one index query per candidate)."""
        if not turns:
            return []
        zones: dict[int, str] = {}
        out = []
        for n, turn in enumerate(turns, 1):
            tz = await self._tz(turn.user_id, zones)
            text = resolve_relative_dates(turn.text, at=turn.created_at, tz=tz,
                                          lang=language_of(turn.text))
            out.append(_Candidate(f"c{n}", turn, text, tz))
        vectors = await self.embedder.embed_documents([c.text for c in out])
        for cand, vector in zip(out, vectors):
            hits = await self.index.search(
                vector=vector, text="", limit=NEAREST_FACTS * 3,
                where=ScopeFilter(scope=str(scope), owner=str(cand.turn.user_id)))
            ids = [h.item_id for h in sorted(hits, key=lambda h: -(h.cosine or 0))
                   if h.kind is ItemKind.FACT]
            facts = await self.facts.get_facts(ids)
            cand.nearest = [facts[i] for i in ids if i in facts
                            and facts[i].status is FactStatus.ACTIVE][:NEAREST_FACTS]
        return out

    @staticmethod
    def _local(at: datetime, tz: str) -> str:
        local = at.astimezone(ZoneInfo(tz))
        return f"{local:%Y-%m-%d %H:%M} ({local:%A}, {tz})"

    def _request(self, turns: Sequence[Turn], candidates: Sequence[_Candidate],
                 previous: EpisodeDraft | None, carried: Sequence[str]) -> str:
        """The user message: one JSON document inside ``<data>`` (quoted data, not orders)."""
        prev = None
        if previous is not None:
            prev = {"summary": previous.summary, "goal": previous.goal,
                    "decisions": list(previous.decisions), "open_tasks": list(previous.open_tasks),
                    "state": previous.state, "participants": list(previous.participants)}
        doc = {
            "previous_episode": prev,
            "carried_open_tasks": list(carried),
            "new_turns": [
                {"turn": t.id, "at": f"{t.created_at:%Y-%m-%d %H:%M} UTC",
                 "role": "user" if t.role is Role.USER else "assistant",
                 "speaker": t.speaker or t.role.value, "text": clip(t.text, TURN_CHARS)}
                for t in turns
                if t.role in (Role.USER, Role.ASSISTANT) and t.generated_by != "offline"],
            "candidates": [
                {"id": c.key, "turn": c.turn.id, "speaker": c.turn.speaker,
                 "said_at": self._local(c.turn.created_at, c.tz), "text": clip(c.text, TURN_CHARS),
                 "nearest_facts": [{"id": f.id, "text": f.text,
                                    "since": f"{f.valid_from:%Y-%m-%d}"} for f in c.nearest]}
                for c in candidates],
        }
        return "<data>\n" + json.dumps(doc, ensure_ascii=False, indent=1) + "\n</data>"

    def _reject(self, reason: str, item) -> None:
        self.stats[f"rejected:{reason}"] += 1
        log.info("model fact rejected (%s)", reason)

    async def _ops(self, items: list, candidates: Sequence[_Candidate], batch_ids: set[int],
                   *, thread: ThreadRow, scope: Scope, turns: Sequence[Turn] = ()
                   ) -> list[FactOp]:
        """Validate the model's fact decisions into store operations (invalid ones dropped).

        A confirmation must be grounded in the candidate's own words as an added fact is
        (``memory.grounding.grounded``): the model cannot confirm a fact the candidate does not state, nor
        one the user only echoes from the assistant (``turns``: the job's turns, for
        ``memory.grounding.echoed_words``)."""
        by_key = {c.key: c for c in candidates}
        ordered = sorted(turns, key=lambda t: t.id)
        echoes = {c.key: echoed_words(ordered, c.turn) for c in candidates}
        ops: list[FactOp] = []
        seen: set[tuple[int, str]] = set()
        for item in items:
            if not isinstance(item, dict):
                self._reject("invalid", item)
                continue
            cand = by_key.get(str(item.get("candidate", "")))
            action = item.get("action")
            if cand is None:
                self._reject("unknown_candidate", item)
                continue
            if action not in ACTIONS or action == "nothing":
                if action != "nothing":
                    self._reject("invalid", item)
                continue
            offered = {f.id: f for f in cand.nearest}
            fact_id = item.get("fact_id")
            target = offered.get(fact_id) if type(fact_id) is int else None
            if action in ("confirm", "supersede") and target is None:
                self._reject("unknown_fact", item)
                continue
            turn = cand.turn
            base = dict(user_id=turn.user_id, scope=scope, origin=thread,
                        source_turn_id=turn.id)
            if action == "confirm":
                if not grounded(target.text, source=cand.text, echo=echoes[cand.key]):
                    self._reject("ungrounded", item)
                    continue
                ops.append(FactOp("confirm", **base, target_id=target.id))
                continue
            if action == "supersede" and target.mode in ("explicit", "correction") \
                    and set(target.source_turn_ids) & batch_ids:
                self._reject("rules_wrote", item)
                continue
            lang = language_of(cand.turn.text)
            raw = item.get("text")
            text = " ".join(raw.split()) if isinstance(raw, str) else ""
            text = resolve_relative_dates(text, at=turn.created_at, tz=cand.tz, lang=lang)
            reason = check_fact(text, source=cand.text, lang=lang, echo=echoes[cand.key])
            if reason is not None:
                self._reject(reason, item)
                continue
            norm = normalise(text)
            if (turn.user_id, norm) in seen:
                self._reject("duplicate", item)
                continue
            seen.add((turn.user_id, norm))
            twin = await self._twin(text, cand, scope=scope,
                                    exclude=target.id if target else None)
            if twin is not None:  # saying it again confirms, never adds a twin
                ops.append(FactOp("confirm", **base, target_id=twin.id))
                continue
            kind = item.get("kind") if item.get("kind") in FACT_KINDS else "note"
            ops.append(FactOp(action, **base, kind=kind, text=text, lang=lang,
                              topic=target.topic if target is not None else None,
                              valid_from=turn.created_at,
                              target_id=target.id if target else None))
        for op in ops:
            self.stats[f"facts:{op.action}"] += 1
        return ops

    async def _twin(self, text: str, cand: _Candidate, *, scope: Scope,
                    exclude: int | None) -> Fact | None:
        """An active fact of the speaker that says the same as ``text``: same normalised words,
        or a cosine at least the embedder's ``duplicate`` (``duplicate_cross_language`` across
        scripts), as in ``memory.semantic``."""
        norm = normalise(text)
        vector = (await self.embedder.embed_documents([first_person(text)]))[0]  # as indexed
        hits = await self.index.search(
            vector=vector, text="", limit=8,
            where=ScopeFilter(scope=str(scope), owner=str(cand.turn.user_id)))
        facts = await self.facts.get_facts([h.item_id for h in hits if h.kind is ItemKind.FACT])
        cal = self.embedder.calibration
        for hit in sorted(hits, key=lambda h: -(h.cosine or 0)):
            fact = facts.get(hit.item_id) if hit.kind is ItemKind.FACT else None
            if fact is None or fact.status is not FactStatus.ACTIVE or fact.id == exclude:
                continue
            cut = cal.duplicate_cut(has_cjk(fact.text), has_cjk(text))
            if normalise(fact.text) == norm or (cut is not None and (hit.cosine or 0) >= cut):
                return fact
        return None
