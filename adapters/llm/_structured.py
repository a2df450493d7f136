"""Helpers for structured (JSON) answers, shared by the model adapters. Imports no SDK.

Servers that ignore ``response_format`` or tool definitions still often answer with a JSON
object in their text, sometimes inside a Markdown code fence or after a sentence of prose;
:func:`parse_json_object` finds it. Nothing here repairs a truncated object: an answer cut at
the output limit is reported with ``stop_reason="max_tokens"`` and the caller discards it.
"""

from __future__ import annotations

import json
import re

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


def parse_json_object(text: str | None) -> dict | None:
    """The first JSON object in ``text``, or None.

    Tried in order: the whole text; the content of the first Markdown code fence; the text from
    each ``{`` on (``json.JSONDecoder.raw_decode``, so trailing prose is ignored). Only a
    top-level object counts (a list or a number is None).
    """
    if not text or not text.strip():
        return None
    candidates = [text.strip()]
    fence = _FENCE.search(text)
    if fence:
        candidates.append(fence.group(1).strip())
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def schema_instruction(schema: dict) -> str:
    """A system-prompt paragraph asking for one JSON object of ``schema`` (for servers that do
    not enforce ``response_format``)."""
    return ("Answer with exactly one JSON object and nothing else (no prose, no code fence). "
            "It must match this JSON schema:\n" + json.dumps(schema, ensure_ascii=False,
                                                            separators=(",", ":")))
