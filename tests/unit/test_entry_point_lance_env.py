"""Every entry point bounds LanceDB's thread pools before LanceDB is imported.

LanceDB reads ``LANCE_CPU_THREADS`` / ``LANCE_IO_THREADS`` when its native runtime starts, so
``bot.memtune`` must have set them by then. Each entry point runs in a fresh interpreter with
an import hook that writes what the environment holds at the first ``import lancedb`` and ends
the process there; an entry point that imported LanceDB (directly or through the app) before
applying the defaults would record them unset.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.memtune import LANCE_THREADS

REPO = Path(__file__).resolve().parents[2]

WATCH = """
import importlib.abc, json, os, runpy, sys

names = json.loads(os.environ["WATCH_NAMES"])

class WatchLanceImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "lancedb":
            with open(os.environ["WATCH_RECORD"], "w") as out:
                json.dump({k: os.environ.get(k) for k in names}, out)
            os._exit(0)
        return None

sys.meta_path.insert(0, WatchLanceImport())
module, *args = sys.argv[1:]
sys.argv = [module, *args]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def _env_at_lancedb_import(tmp_path: Path, module: str, *args: str) -> dict[str, str | None]:
    record = tmp_path / "env.json"
    env = {k: v for k, v in os.environ.items() if k not in LANCE_THREADS}
    env.update(WATCH_RECORD=str(record), WATCH_NAMES=json.dumps(sorted(LANCE_THREADS)),
               MEMORY_BOT_DATA_DIR=str(tmp_path / "data"), LLM_PROVIDER="offline",
               PYTHONPATH=os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])]))
    proc = subprocess.run([sys.executable, "-c", WATCH, module, *args], cwd=tmp_path, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert record.exists(), (f"{module} {args} never imported lancedb "
                             f"(exit {proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(record.read_text())


@pytest.mark.parametrize("args", [
    pytest.param(("bot.cli", "console"), id="memory-bot console"),
    pytest.param(("bot.cli", "eval", "locomo", "{dataset}"), id="memory-bot eval"),
    pytest.param(("bot.bench.worker", '{{"task": "startup", "folder": "{folder}", "t0": 0}}'),
                 id="bench worker"),
])
def test_lance_thread_defaults_are_set_before_lancedb_is_imported(tmp_path, args) -> None:
    dataset = tmp_path / "locomo.json"
    dataset.write_text("[]")
    filled = [a.format(dataset=dataset, folder=tmp_path / "bench") for a in args]
    assert _env_at_lancedb_import(tmp_path, *filled) == LANCE_THREADS
