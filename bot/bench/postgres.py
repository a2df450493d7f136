"""The PostgreSQL column of ``memory-bot bench``: the server, scratch schemas, CPU seconds read
from ``/proc``, and the throughput job driven in several processes sharing one database.

The server is the database of ``DATABASE_URL`` when one is given (only schemas
``bench_<hex>`` that the bench creates there and drops afterwards are touched), else a
PostgreSQL 16 with pgvector started with pgserver (a development dependency) in a temporary
folder of its own, with the server's default configuration, removed afterwards. Each measured
store lives in a scratch schema of its own; the bench's processes reach it through the URL's
``search_path`` (asyncpg passes unknown query parameters on as server settings).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import asyncpg

from bot.bench.worker import job_env

#: Start attempts of the pgserver server (pgserver gives ``pg_ctl`` 10 s, which a busy
#: machine can exceed; tests/conftest.py does the same).
START_ATTEMPTS = 2


def schema_url(url: str, schema: str, extension_schema: str = "public") -> str:
    """``url`` with ``search_path=<schema>,<extension_schema>`` in its query (any earlier
    ``search_path`` replaced): the store's tables in ``schema``, pgvector's type found in the
    schema it was created in."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "search_path"]
    path = f"{schema},{extension_schema}"
    return urlunsplit(parts._replace(query=urlencode([*query, ("search_path", path)])))


@dataclass
class PgServer:
    """A PostgreSQL server for the bench. Create with :meth:`start`.

    Attributes:
        url: the database (its password, if any, is never reported).
        source: ``"pgserver"`` (started here) or ``"DATABASE_URL"``.
        version: the server's ``server_version``.
        extension_schema: the schema holding pgvector's ``vector`` type.
    """

    url: str
    source: str
    version: str
    extension_schema: str
    _server: object | None = None
    _folder: Path | None = None

    @classmethod
    async def start(cls, database_url: str | None) -> "PgServer":
        """The server of ``database_url``, or (None) one started with pgserver.

        Raises:
            Exception: whatever pgserver or asyncpg raise when there is no server to use
                (pgserver not installed, the server does not start, the URL refuses).
        """
        server = folder = None
        url = database_url
        if url is None:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # platformdirs' XDG_RUNTIME_DIR warning
                import pgserver
            for attempt in range(START_ATTEMPTS):
                # a folder of its own: run as root, the server (user pgserver) must traverse it
                folder = Path(tempfile.mkdtemp(prefix="memory-bot-bench-pg-"))
                try:
                    server = pgserver.get_server(folder / "pgdata", cleanup_mode="delete")
                    break
                except Exception:
                    shutil.rmtree(folder, ignore_errors=True)
                    if attempt == START_ATTEMPTS - 1:
                        raise
            url = server.get_uri()
        conn = await asyncpg.connect(url)
        try:
            await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            version = await conn.fetchval("SHOW server_version")
            extension_schema = await conn.fetchval(
                "SELECT extnamespace::regnamespace::text FROM pg_extension "
                "WHERE extname = 'vector'")
        finally:
            await conn.close()
        return cls(url, "DATABASE_URL" if database_url else "pgserver", version,
                   extension_schema, server, folder)

    async def create_schema(self) -> str:
        """Create an empty scratch schema ``bench_<hex>``; returns the URL that uses it."""
        schema = f"bench_{uuid.uuid4().hex[:12]}"
        conn = await asyncpg.connect(self.url)
        try:
            await conn.execute(f'CREATE SCHEMA "{schema}"')
        finally:
            await conn.close()
        return schema_url(self.url, schema, self.extension_schema)

    async def drop_schema(self, url: str) -> None:
        """Drop the scratch schema of ``url`` (from :meth:`create_schema`) with its tables."""
        schema = dict(parse_qsl(urlsplit(url).query))["search_path"].split(",")[0]
        if not schema.startswith("bench_"):
            raise ValueError(f"not a bench schema: {schema}")
        conn = await asyncpg.connect(self.url)
        try:
            await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        finally:
            await conn.close()

    async def server_pids(self) -> list[int] | None:
        """The postmaster's pid and its children's (backends, background writers), or None when
        the server does not run on this machine (or not in its view of ``/proc``)."""
        conn = await asyncpg.connect(self.url)
        try:
            backend = await conn.fetchval("SELECT pg_backend_pid()")
            postmaster = _ppid(backend)
        finally:
            await conn.close()
        if postmaster is None or _comm(postmaster) not in {"postgres", "postmaster"}:
            return None
        return [postmaster, *(pid for pid in _pids() if _ppid(pid) == postmaster)]

    def stop(self) -> None:
        """Stop a server started here and remove its folder (nothing for ``DATABASE_URL``)."""
        if self._server is not None:
            self._server.cleanup()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _stat(pid: int) -> list[str] | None:
    """Fields of ``/proc/<pid>/stat`` after the command (field 3, the state, first)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rpartition(")")[2].split()
    except OSError:
        return None


def _ppid(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[1]) if fields else None


def _comm(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None


def cpu_s(pids: list[int]) -> dict[int, float]:
    """CPU seconds (user + system, ``utime + stime`` of ``/proc/<pid>/stat``) of each process
    of ``pids`` still alive."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for pid in pids:
        fields = _stat(pid)
        if fields:
            out[pid] = (int(fields[11]) + int(fields[12])) / tick  # fields 14 and 15
    return out


def spent(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds spent between two :func:`cpu_s` readings by the processes alive at the
    second (a process that started meanwhile counts from zero; one that ended is lost)."""
    return sum(v - before.get(pid, 0.0) for pid, v in after.items())


def _result_line(proc: subprocess.Popen, log: Path) -> dict:
    """The next JSON line a worker process prints (its other output goes to ``log``)."""
    for line in proc.stdout:
        if line.startswith("{"):
            return json.loads(line)
    proc.wait()
    raise RuntimeError(f"bench worker failed ({proc.returncode}): "
                       f"{log.read_text(errors='replace')[-2000:]}")


async def shared_throughput(server: PgServer, url: str, workers: int, job: dict,
                            folder: Path) -> dict:
    """The ``throughput`` job of :mod:`bot.bench.worker` in ``workers`` processes on the
    PostgreSQL store of ``url``, the conversations shared out among them, started together
    once every process is ready (started, warmed up).

    Returns:
        ``workers``; ``turns``; ``elapsed_s`` (seconds from the first process's start of load
        to the last one's end); ``turns_per_s``; ``worker_cpu_s_per_turn`` and
        ``server_cpu_s_per_turn`` (CPU seconds per turn of the worker processes and of the
        PostgreSQL server's processes, read from ``/proc`` from the start of the load until
        the consolidation backlog drained; the server's is None when it runs elsewhere);
        ``consolidation_backlog_after_s`` (the slowest process's; None: not drained);
        ``rss_peak_mib`` (the largest process's peak).
    """
    procs, logs = [], []
    try:
        for k in range(workers):
            logs.append(folder / f"worker-{k}.log")
            (folder / f"worker-{k}").mkdir(parents=True, exist_ok=True)
            share = {**job, "task": "throughput", "folder": str(folder / f"worker-{k}"),
                     "database_url": url, "share": [k, workers], "handshake": True,
                     "t0": time.time()}
            with open(logs[-1], "w") as err:
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", "bot.bench.worker", json.dumps(share)],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                    env=job_env()))
        for proc, log in zip(procs, logs):
            _result_line(proc, log)  # {"ready": true}
        server_pids = await server.server_pids()
        worker_pids = [p.pid for p in procs]
        before = cpu_s(worker_pids), cpu_s(server_pids or [])
        for proc in procs:
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = [_result_line(proc, log) for proc, log in zip(procs, logs)]
        after = cpu_s(worker_pids), cpu_s((await server.server_pids()) or [])
        for proc in procs:
            proc.stdin.close()  # each process closes its app and exits
        for proc in procs:
            proc.wait(timeout=120)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for pipe in (proc.stdin, proc.stdout):
                pipe.close()
    turns = sum(r["turns"] for r in results)
    elapsed = max(r["ended_at"] for r in results) - min(r["started_at"] for r in results)
    backlog = [r["consolidation_backlog_after_s"] for r in results]
    return {
        "workers": workers, "conversations": job["conversations"], "turns": turns,
        "elapsed_s": round(elapsed, 3), "turns_per_s": round(turns / elapsed, 1),
        "worker_cpu_s_per_turn": round(spent(before[0], after[0]) / turns, 4),
        "server_cpu_s_per_turn": (round(spent(before[1], after[1]) / turns, 4)
                                  if server_pids is not None else None),
        "consolidation_backlog_after_s": None if None in backlog else max(backlog),
        "rss_peak_mib": max(r["rss_peak_mib"] for r in results),
    }
