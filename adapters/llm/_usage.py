"""Helpers shared by the model adapters: usage summed over attempts, the system prompt split,
the cut-off note. Imports no SDK."""

from __future__ import annotations

from dataclasses import dataclass

from memory.assembly import MEMORY_FRAME

CUT_OFF_NOTE = " …(cut off: reply limit reached)"
"""Appended to a reply that stopped at the output limit (``stop_reason == "max_tokens"``)."""


@dataclass
class Spent:
    """Tokens reported by the provider, summed over attempts (a retried call pays per try)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def add(self, *, input_tokens: int | None = 0, output_tokens: int | None = 0,
            cache_creation_input_tokens: int | None = 0,
            cache_read_input_tokens: int | None = 0) -> None:
        """Add one attempt's usage (None counts as 0)."""
        self.input_tokens += input_tokens or 0
        self.output_tokens += output_tokens or 0
        self.cache_creation_input_tokens += cache_creation_input_tokens or 0
        self.cache_read_input_tokens += cache_read_input_tokens or 0


def split_system(system: str) -> tuple[str, str]:
    """Split the engine's system prompt into ``(persona, memory)``.

    ``memory.assembly.assemble`` writes the persona, then (when anything was recalled) the
    memory frame and the memory blocks, joined by blank lines. The memory part starts at the
    frame; it is ``""`` when nothing was recalled.
    """
    start = system.find("\n\n" + MEMORY_FRAME)
    if start < 0:
        return system, ""
    return system[:start], system[start + 2:]
