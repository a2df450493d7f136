"""Small measuring helpers: percentiles, medians of runs, folder size, peak resident memory."""

from __future__ import annotations

import os
import resource
import statistics
from collections.abc import Sequence
from pathlib import Path


def percentiles(values: Sequence[float], points: Sequence[int] = (50, 95, 99)) -> dict:
    """``{"p50": ..., "p95": ..., "p99": ...}`` (milliseconds, rounded to 0.01) by the
    nearest-rank method; zeros for no values."""
    ordered = sorted(values)
    out = {}
    for p in points:
        if not ordered:
            out[f"p{p}"] = 0.0
            continue
        rank = max(1, -(-p * len(ordered) // 100))  # ceil(p/100 * n), nearest rank
        out[f"p{p}"] = round(float(ordered[min(rank, len(ordered)) - 1]), 2)
    return out


def median_of(runs: Sequence[dict]) -> dict:
    """Merge the results of several runs: numbers become their median, nested dicts are
    merged key by key, anything else is taken from the first run."""
    first = runs[0]
    out = {}
    for key, value in first.items():
        values = [r.get(key) for r in runs]
        if isinstance(value, dict):
            out[key] = median_of([v for v in values if isinstance(v, dict)])
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and all(
                isinstance(v, (int, float)) for v in values):
            med = statistics.median(values)
            out[key] = round(med, 3) if isinstance(med, float) else med
        else:
            out[key] = value
    return out


def dir_mib(folder: Path) -> float:
    """Total size of the files under ``folder``, in MiB (1,048,576 bytes)."""
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:  # removed meanwhile (WAL, old versions)
                pass
    return total / 1048576


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far (``VmHWM``), in MiB."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
