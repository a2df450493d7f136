"""The ``memory-bot`` command line (CONTRACTS.md "Command line").

Exit codes: 0 ok, 1 runtime failure, 2 configuration or usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from pathlib import Path

from memory.errors import ConfigError, MemoryCoreError

log = logging.getLogger(__name__)

NOT_YET = {"bench": "issue 11", "inspect": "issue 8", "backup": "issue 12",
           "restore": "issue 12", "import": "issue 8"}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memory-bot", description=(
        "A self-hosted chat assistant that remembers its users across sessions."))
    sub = parser.add_subparsers(dest="command", required=True)
    console = sub.add_parser("console", help="chat in the terminal with the full pipeline")
    console.add_argument("--user", default="local", help="console user name (default: local)")
    sub.add_parser("run", help="start every platform adapter that has a token")
    ev = sub.add_parser("eval", help="replay public data through the pipeline and measure recall")
    ev.add_argument("dataset", choices=["locomo", "longmemeval", "memdaily"])
    ev.add_argument("path", type=Path)
    ev.add_argument("--limit", type=int, default=None, help="stratified sample of N questions")
    ev.add_argument("--budget", type=int, action="append", default=[],
                    help="extra memory budget in tokens (repeatable)")
    ev.add_argument("--out", type=Path, default=None, help="write the JSON report here")
    ev.add_argument("--work-dir", type=Path, default=None, help="work folder (default: temporary)")
    ev.add_argument("--answer", action="store_true", help="also answer with the model (not yet)")
    ev.add_argument("--judge", action="store_true", help="also judge answers (not yet)")
    bench = sub.add_parser("bench", help="performance benchmark")
    bench.add_argument("--quick", action="store_true")
    bench.add_argument("--out", type=Path)
    config = sub.add_parser("config", help="settings")
    config.add_argument("action", choices=["check"])
    inspect_ = sub.add_parser("inspect", help="an operator's view of one user")
    inspect_.add_argument("user")
    for name in ("backup", "restore"):
        p = sub.add_parser(name, help=f"{name} the data folder")
        p.add_argument("path", type=Path)
    imp = sub.add_parser("import", help="load an export document")
    imp.add_argument("file", type=Path)
    imp.add_argument("--replace", action="store_true")
    sub.add_parser("reindex", help="rebuild the LanceDB indexes from SQLite")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``memory-bot`` console script. Returns the exit code."""
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    args = _parser().parse_args(argv)
    from bot.logging_setup import configure_logging
    from bot.settings import load_settings

    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"memory-bot: {exc}", file=sys.stderr)
        return 2
    if args.command == "config":
        print("\n".join(settings.describe()))
        return 0
    if args.command == "run":
        if settings.telegram_bot_token is None and settings.discord_bot_token is None:
            print("memory-bot: no platform adapter has a token: set TELEGRAM_BOT_TOKEN and/or "
                  "DISCORD_BOT_TOKEN (or use `memory-bot console`)", file=sys.stderr)
            return 2
        print("memory-bot: the Telegram and Discord adapters are not built yet (issues 9 and 10); "
              "use `memory-bot console`", file=sys.stderr)
        return 2
    if args.command in NOT_YET:
        print(f"memory-bot: `{args.command}` is not available yet ({NOT_YET[args.command]})",
              file=sys.stderr)
        return 2
    configure_logging(settings, console=args.command == "console")
    try:
        if args.command == "console":
            return asyncio.run(_console(settings, args.user))
        if args.command == "reindex":
            from bot.app import reindex

            written, removed = asyncio.run(reindex(settings))
            print(f"reindexed: {written} rows written ({removed} old rows replaced)")
            return 0
        if args.command == "eval":
            return asyncio.run(_eval(settings, args))
    except ConfigError as exc:
        print(f"memory-bot: {exc}", file=sys.stderr)
        return 2
    except MemoryCoreError as exc:
        log.exception("command failed")
        print(f"memory-bot: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: pending work was finished or durably recorded
        return 130
    return 2


async def _console(settings, user: str) -> int:
    from adapters.console import run_console
    from bot.app import build_app

    app = await build_app(settings)
    banner = (f"memory-bot console - user {user} - model {app.engine.model.name} - "
              f"type /help for commands, /quit to leave")
    try:
        await app.start()  # overdue sessions close before any input is read
        await run_console(app.engine.handle, user=user, banner=banner)
    finally:
        try:
            await asyncio.wait_for(app.aclose(), timeout=settings.shutdown_grace_seconds)
        except asyncio.TimeoutError:
            log.warning("shutdown grace of %ss exceeded; pending work stays recorded",
                        settings.shutdown_grace_seconds)
    return 0


async def _eval(settings, args) -> int:
    if args.dataset != "locomo":
        print(f"memory-bot: eval {args.dataset} is not available yet (issue 5)", file=sys.stderr)
        return 2
    if args.answer or args.judge:
        print("memory-bot: --answer and --judge are not available yet (issue 5)", file=sys.stderr)
        return 2
    if not args.path.exists():
        print(f"memory-bot: {args.path} does not exist", file=sys.stderr)
        return 2
    from adapters.embedders import make_embedder
    from bot.evaluation.locomo import run_locomo
    from bot.evaluation.pipeline import EngineTarget
    from bot.evaluation.report import format_markdown
    from memory.recall import EPISODIC_HEADER
    from memory.tokens import HeuristicTokenCounter

    embedder = make_embedder(settings.embedder)
    counter = HeuristicTokenCounter()

    async def factory(folder: Path):
        return await EngineTarget.create(folder, settings=settings, embedder=embedder)

    report = await run_locomo(
        [args.path], target_factory=factory, embedder=embedder, counter=counter,
        budgets=(400, 1000, 4000, *args.budget), limit=args.limit, work_dir=args.work_dir,
        production_budget=settings.memory_token_budget,
        block_overhead_tokens=counter.count(EPISODIC_HEADER),
    )
    print(format_markdown(report))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
