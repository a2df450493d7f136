"""Reply text for Discord: split at 2,000 characters, mentions neutralised, pages.

Pure functions, no discord.py objects, so they are tested without a client.
"""

from __future__ import annotations

import re

#: Discord's limit on a message's ``content`` (characters).
MESSAGE_LIMIT = 2000

_FENCE_RE = re.compile(r"^\s*(```+|~~~+)")
_MASS_MENTION_RE = re.compile(r"@(everyone|here)\b", re.IGNORECASE)
_ZWSP = "\u200b"


def neutralise(text: str) -> str:
    """Break ``@everyone`` and ``@here`` in model output with a zero-width space, so they never
    read as mass mentions (the client also sends ``allowed_mentions`` that ping nobody)."""
    return _MASS_MENTION_RE.sub(lambda m: "@" + _ZWSP + m.group(1), text)


def _pieces(text: str, limit: int) -> list[tuple[str, str]]:
    """Cut ``text`` into ``(separator, piece)`` pairs, each piece at most ``limit`` characters,
    preferring paragraph breaks, then line breaks, then spaces, then a hard cut."""
    out: list[tuple[str, str]] = []
    for p_index, paragraph in enumerate(text.split("\n\n")):
        psep = "\n\n" if p_index else ""
        if len(paragraph) <= limit:
            out.append((psep, paragraph))
            continue
        for l_index, line in enumerate(paragraph.split("\n")):
            lsep = psep if l_index == 0 else "\n"
            if len(line) <= limit:
                out.append((lsep, line))
                continue
            words = line.split(" ")
            current = ""
            first = True
            for word in words:
                while len(word) > limit:  # one "word" longer than a message: hard cut
                    if current:
                        out.append((lsep if first else " ", current))
                        first, current = False, ""
                    out.append((lsep if first else "", word[:limit]))
                    first, word = False, word[limit:]
                candidate = f"{current} {word}" if current else word
                if len(candidate) <= limit:
                    current = candidate
                else:
                    out.append((lsep if first else " ", current))
                    first, current = False, word
            if current or first:
                out.append((lsep if first else " ", current))
    return out


def split_message(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """Split a reply into messages of at most ``limit`` characters.

    Paragraph boundaries are preferred, then line breaks, then spaces; a code block cut in two
    is closed at the end of one message and reopened (with its language tag) at the start of
    the next, so both halves render as code. Joining the chunks with the separators they were
    cut at gives back the text, apart from those added fence lines.

    Returns:
        The chunks, in order; ``[]`` for blank text.
    """
    text = text.strip("\n")
    if not text.strip():
        return []
    if len(text) <= limit:
        return [text]
    openers = [m.group(0).strip() for line in text.split("\n") if (m := _FENCE_RE.match(line))]
    # room for a reopened fence line (language tag included, capped) and a closing fence
    reserve = (min(max((len(o) for o in openers), default=0) + 24, 40) + 5) if openers else 0
    budget = limit - reserve
    chunks: list[str] = []
    current = ""
    fence: str | None = None  # the opening line of the code block open at the end of `current`
    reopen = ""
    for sep, piece in _pieces(text, budget):
        candidate = current + sep + piece if current else reopen + piece
        if current and len(candidate) > budget:
            chunks.append(current + ("\n" + _closer(fence) if fence else ""))
            reopen = fence + "\n" if fence else ""
            candidate = reopen + piece
        current = candidate
        fence = _fence_state(piece, fence)
    if current.strip():
        chunks.append(current)
    return chunks


def _closer(opener: str) -> str:
    return "~~~" if opener.lstrip().startswith("~") else "```"


def _fence_state(piece: str, fence: str | None) -> str | None:
    """The fence open after ``piece`` given the one open before it (None: outside code)."""
    for line in piece.split("\n"):
        match = _FENCE_RE.match(line)
        if not match:
            continue
        if fence is None:
            opener = line.strip()
            fence = opener if len(opener) <= 24 else match.group(1)
        elif line.strip() == match.group(1):  # a bare fence closes the block
            fence = None
    return fence


def pages(text: str, *, max_lines: int = 15, limit: int = MESSAGE_LIMIT - 100) -> list[str]:
    """Cut a listing (one item per line) into pages of at most ``max_lines`` lines and
    ``limit`` characters; a longer line is split on its own."""
    result: list[str] = []
    current: list[str] = []
    size = 0
    for line in text.split("\n"):
        for part in split_message(line, limit) or [""]:
            if current and (len(current) >= max_lines or size + len(part) + 1 > limit):
                result.append("\n".join(current))
                current, size = [], 0
            current.append(part)
            size += len(part) + 1
    if current and any(line.strip() for line in current):
        result.append("\n".join(current))
    return result or [""]
