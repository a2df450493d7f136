"""An earlier checkout of the code, measured in the same bench run as this one.

Ratios between two versions are only worth something when both run on the same machine at the
same moment (timings on a shared 2-core VM move 3-5x with the load), so ``memory-bot bench
--against REV`` exports the tree of git revision ``REV`` (``git archive``) into the run's
temporary folder, puts this checkout's ``bot/bench`` package over its own (the same jobs and
the same workload for both), and runs the jobs of :mod:`bot.bench.worker` with that tree first
on ``PYTHONPATH``: the reference's product code (``memory``, ``adapters``, ``bot``) in this
interpreter and virtual environment. Its folders are seeded by its own code (the ``seed`` job),
so it opens them as it would its own data.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def export_reference(revision: str, dest: Path) -> tuple[Path | None, str]:
    """Export ``revision`` of this repository into ``dest`` (created) with this checkout's
    ``bot/bench`` over its own.

    Returns:
        ``(the tree, "")``, or ``(None, why not)`` when it cannot be exported (no git, not a
        clone, an unknown revision): the bench then reports the reference as unavailable.
    """
    try:
        out = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", revision],
                             capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"git archive failed: {exc}"
    if out.returncode != 0:
        return None, out.stderr.decode("utf-8", "replace").strip()[:300]
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(out.stdout)) as tar:
        tar.extractall(dest, filter="data")
    bench = dest / "bot" / "bench"
    shutil.rmtree(bench, ignore_errors=True)
    shutil.copytree(REPO / "bot" / "bench", bench,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dest, ""
