"""Waiting in end-to-end tests: poll a condition until it holds, with a generous time-out that
only guards against a hung test (nothing is timed)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

WAIT_S = 60.0
"""Seconds a wait may take before the test counts as hung (a guard, not a measurement)."""

POLL_S = 0.01
"""Seconds between two looks at the condition."""


async def until(predicate: Callable[[], T], timeout: float = WAIT_S) -> T:
    """Poll ``predicate`` every :data:`POLL_S` seconds until it returns a truthy value, and
    return that value.

    Raises:
        TimeoutError: ``predicate`` stayed falsy for ``timeout`` seconds.
    """
    async def poll() -> T:
        while not (value := predicate()):
            await asyncio.sleep(POLL_S)
        return value
    return await asyncio.wait_for(poll(), timeout)
