"""Bounded retries with exponential backoff and jitter, shared by the model adapters.

The SDKs' own retries are switched off (``max_retries=0``): they only cover an HTTP status
before the body starts, while an ``error`` event inside an accepted (200) stream is raised while
reading it and never retried by the SDK (anthropic-sdk-python #688). One loop
here covers both, plus time-outs, refused connections and empty replies.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from memory.errors import ModelError, ModelMisconfigured, ModelRateLimited, ModelUnavailable

log = logging.getLogger(__name__)

T = TypeVar("T")
FailureKind = Literal["rate_limited", "unavailable", "fatal", "misconfigured"]


@dataclass(frozen=True, slots=True)
class Failure:
    """What a provider error means for the retry loop.

    Attributes:
        kind: ``rate_limited`` (429, 529, overloaded) and ``unavailable`` (time-out, refused
            connection, 5xx, error event in a stream) are retried; ``fatal`` (other 4xx, bad
            request) is not, nor is ``misconfigured`` (401, 403: the key or its access is
            wrong, a configuration error).
        retry_after: seconds the provider asked us to wait, or None.
        detail: short text for logs and the raised error (no message content).
    """

    kind: FailureKind
    retry_after: float | None = None
    detail: str = ""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry one model call.

    Delay before retry ``n`` (0-based): ``d = min(max_delay, base_delay * 2**n)``, waited as
    ``d/2 + U(0, d/2)`` ("equal jitter", AWS Architecture Blog, "Exponential Backoff And
    Jitter", 2015), or the provider's ``retry-after`` when that is longer. The sum of the waits of
    one call never exceeds ``max_total_wait``: when the next wait would, the call gives up at once.

    Attributes:
        attempts: total tries of one call, at least 1.
        base_delay: seconds; first backoff step.
        max_delay: seconds; cap of one backoff step (a longer ``retry-after`` is still honoured
            while it fits in ``max_total_wait``).
        max_total_wait: seconds; cap of the summed waits of one call.
        empty_retries: extra tries when the model answers with no text at all.
        sleep: the sleep function (tests inject a recorder).
        random: uniform [0, 1) source for the jitter.
    """

    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_total_wait: float = 30.0
    empty_retries: int = 1
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, repr=False)
    random: Callable[[], float] = field(default=random.random, repr=False)

    def backoff(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (0-based), jitter included."""
        step = min(self.max_delay, self.base_delay * (2 ** retry))
        return step / 2 + self.random() * step / 2


def retry_after_seconds(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Parse ``retry-after-ms`` (milliseconds) or ``retry-after`` (seconds or an HTTP date).

    Returns seconds (>= 0) or None when absent or unreadable.
    """
    if not headers:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def to_model_error(failure: Failure, what: str) -> ModelError:
    """The core error for a failure: rate-limited, unavailable, or a plain model error."""
    message = f"{what}: {failure.detail}" if failure.detail else what
    if failure.kind == "rate_limited":
        return ModelRateLimited(message)
    if failure.kind == "unavailable":
        return ModelUnavailable(message)
    if failure.kind == "misconfigured":
        return ModelMisconfigured(message)
    return ModelError(message)


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    classify: Callable[[BaseException], Failure | None],
    policy: RetryPolicy,
    what: str,
    is_empty: Callable[[T], bool] = lambda _: False,
) -> T:
    """Run ``attempt`` until it succeeds, retrying what ``classify`` says is retryable.

    Args:
        attempt: one try of the call.
        classify: maps an exception to a :class:`Failure`; None means "not ours": re-raised.
        policy: attempts, backoff and the cap on the total wait.
        what: names the call in logs and errors (e.g. ``anthropic claude-sonnet-4-5``).
        is_empty: a result that should be tried again (up to ``policy.empty_retries`` times);
            the last such result is returned as it is.

    Raises:
        ModelRateLimited: still rate-limited or overloaded after the last try.
        ModelUnavailable: still unreachable (time-out, refused, 5xx) after the last try.
        ModelError: a failure that retrying cannot fix (e.g. 400, 401).
    """
    waited = 0.0
    empty_left = policy.empty_retries
    retry = 0
    while True:
        try:
            result = await attempt()
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            last = retry + 1 >= policy.attempts
            if failure.kind in ("fatal", "misconfigured") or last:
                log.warning("%s failed (%s%s), giving up after %d attempt(s)", what, failure.kind,
                            f": {failure.detail}" if failure.detail else "", retry + 1)
                raise to_model_error(failure, what) from exc
            delay = max(policy.backoff(retry), failure.retry_after or 0.0)
            if waited + delay > policy.max_total_wait:
                log.warning("%s failed (%s); the next wait of %.1fs would exceed the cap of %.1fs",
                            what, failure.kind, delay, policy.max_total_wait)
                raise to_model_error(failure, what) from exc
            log.info("%s failed (%s), retry %d in %.2fs", what, failure.kind, retry + 1, delay)
            await policy.sleep(delay)
            waited += delay
            retry += 1
            continue
        if is_empty(result) and empty_left > 0 and retry + 1 < policy.attempts:
            empty_left -= 1
            delay = policy.backoff(retry)
            if waited + delay <= policy.max_total_wait:
                log.info("%s answered with no text, retry %d in %.2fs", what, retry + 1, delay)
                await policy.sleep(delay)
                waited += delay
                retry += 1
                continue
        return result
