"""How many consolidation model calls LLM consolidation makes (model calls per 100
turns on a shared LoCoMo conversation replayed with a scripted model; the target is under 10).

A LoCoMo conversation is replayed through the production pipeline (``EngineTarget``: the
engine's ingest path, sessions closed as in ``memory-bot eval``) with a scripted model that
implements the structured-output port, counts its calls and the candidates it was sent, and
answers a valid episode with ``nothing`` for every candidate. No network, no weights (the
hashing embedder). Run::

    python -m bot.evaluation.llm_calls ../shared/data/locomo/30.json [--private]

``--private`` replays the conversation as one private chat (every turn went through the write
policy, so rules may pick any turn) instead of a group chat (the eval's default, where only the
turns the rules flagged are candidates).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from adapters.embedders import HashingEmbedder
from bot.app import build_app
from bot.evaluation.locomo import load_locomo
from bot.evaluation.pipeline import EngineTarget
from bot.settings import load_settings
from memory.ports import ManualClock, StructuredReply
from memory.types import ChatKind, ChatMessage, ModelReply


class CountingModel:
    """A scripted chat + structured model: counts calls and candidates; never fails."""

    name = "scripted-counter"

    def __init__(self) -> None:
        self.structured_calls = 0
        self.reply_calls = 0
        self.candidates = 0

    async def complete(self, *, system: str, messages: Sequence[ChatMessage],
                       max_tokens: int) -> ModelReply:
        self.reply_calls += 1
        return ModelReply(text="ok", model=self.name, stop_reason="end_turn")

    async def complete_structured(self, *, system: str, messages: Sequence[ChatMessage],
                                  schema: dict, tool_name: str, description: str,
                                  max_tokens: int) -> StructuredReply:
        self.structured_calls += 1
        content = messages[-1].content
        doc = json.loads(content[content.index("\n") + 1:content.rindex("\n")])
        self.candidates += len(doc["candidates"])
        data = {"episode": {"summary": f"Scripted summary {self.structured_calls}.",
                            "goal": None, "decisions": [], "open_tasks": [], "state": None,
                            "participants": []},
                "facts": [{"candidate": c["id"], "action": "nothing"} for c in doc["candidates"]]}
        return StructuredReply(data=data, reply=ModelReply(text="", model=self.name,
                                                           stop_reason="tool_use"))


@dataclass(frozen=True)
class CallCount:
    """The measured numbers of one replay.

    Attributes:
        turns: messages replayed.
        sessions: sessions closed.
        calls: consolidation (structured) model calls.
        candidates: candidate turns sent to the model, summed over calls.
        per_100_turns: ``100 * calls / turns``.
    """

    turns: int
    sessions: int
    calls: int
    candidates: int
    per_100_turns: float


async def count_calls(path: Path, *, private: bool = False, work_dir: Path | None = None
                      ) -> CallCount:
    """Replay the LoCoMo file at ``path`` with :class:`CountingModel` and count its calls."""
    [conversation] = load_locomo([path])[:1]
    model = CountingModel()
    with tempfile.TemporaryDirectory(dir=work_dir) as folder:
        settings = load_settings({"MEMORY_BOT_DATA_DIR": folder, "EMBEDDER": "hashing"},
                                 env_file=None)
        clock = ManualClock(datetime.fromisoformat("2000-01-01T00:00:00+00:00"))
        app = await build_app(settings, data_dir=Path(folder), embedder=HashingEmbedder(),
                              clock=clock, model=model)
        target = EngineTarget(app, clock, ChatKind.PRIVATE if private else ChatKind.GROUP)
        try:
            turns = 0
            for session in conversation.sessions:
                for turn in session.turns:
                    turns += 1
                    await target.ingest(conversation_id=conversation.conversation_id,
                                        speaker=turn.speaker, text=turn.text,
                                        sent_at=turn.sent_at, message_id=turn.dia_id)
                await target.close_session(conversation_id=conversation.conversation_id,
                                           at=session.closed_at)
            await app.memory.drain()
        finally:
            await target.aclose()
    return CallCount(turns=turns, sessions=len(conversation.sessions),
                     calls=model.structured_calls, candidates=model.candidates,
                     per_100_turns=round(100 * model.structured_calls / max(1, turns), 2))


def main(argv: Sequence[str] | None = None) -> int:
    """Print the call count of one LoCoMo file as one JSON line."""
    parser = argparse.ArgumentParser(prog="python -m bot.evaluation.llm_calls")
    parser.add_argument("path", type=Path)
    parser.add_argument("--private", action="store_true")
    args = parser.parse_args(argv)
    if not args.path.exists():
        print(f"no such file: {args.path}", file=sys.stderr)
        return 2
    result = asyncio.run(count_calls(args.path, private=args.private))
    print(json.dumps({"file": str(args.path), "chat": "private" if args.private else "group",
                      **result.__dict__}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
