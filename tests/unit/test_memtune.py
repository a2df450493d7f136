"""LanceDB's thread pools are bounded unless the environment chose them."""

from bot.memtune import LANCE_THREADS, bound_lance_threads


def test_lance_threads_default_and_environment_wins() -> None:
    env = {"LANCE_IO_THREADS": "8"}
    assert bound_lance_threads(env) == {"LANCE_CPU_THREADS": LANCE_THREADS["LANCE_CPU_THREADS"]}
    assert env == {"LANCE_IO_THREADS": "8", "LANCE_CPU_THREADS": "1"}
    assert bound_lance_threads(env) == {}  # set once, kept
