"""An action a command asks the user to confirm (``/forget all``, ``/forget N`` of several
facts): the engine keeps one per thread until the next line, ``yes`` runs it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from i18n import DEFAULT_LANGUAGE


@dataclass
class PendingConfirmation:
    """An action waiting for the user's ``yes`` (any other line cancels it).

    Attributes:
        description: what will happen, as asked ("Delete everything ...?").
        action: awaited without arguments when confirmed; returns the answer text.
        user_id: the user who must confirm it.
        language: the language of the question (and so of its answer).
    """

    description: str
    action: Callable
    user_id: int
    language: str = DEFAULT_LANGUAGE
