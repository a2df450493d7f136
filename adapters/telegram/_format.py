"""Reply text for Telegram: split at the message limit on paragraph boundaries, and HTML with
correct escaping.

Telegram counts a message's length in UTF-16 code units of the text as shown (after entity
parsing), at most :data:`MESSAGE_LIMIT`. Splitting therefore works on the plain text; each chunk
is converted to HTML on its own, so a tag never spans two messages.
"""

from __future__ import annotations

import html
import re

#: Most UTF-16 code units Telegram shows in one message.
MESSAGE_LIMIT = 4096

_FENCE = re.compile(r"```([\w+-]*)\n(.*?)```", re.DOTALL)


def utf16_len(text: str) -> int:
    """Length of ``text`` as Telegram counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2


def _hard_cut(text: str, limit: int) -> tuple[str, str]:
    """Cut ``text`` at most ``limit`` UTF-16 units in, never inside a surrogate pair."""
    units = 0
    for i, ch in enumerate(text):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > limit:
            return text[:i], text[i:]
    return text, ""


def _cut(text: str, limit: int) -> tuple[str, str]:
    """First piece of an over-long ``text``: at the last paragraph break that fits, else the
    last line break, else the last space, else a hard cut."""
    head, _ = _hard_cut(text, limit)
    for sep in ("\n\n", "\n", " "):
        at = head.rfind(sep)
        if at > 0:
            return text[:at].rstrip(), text[at + len(sep):].lstrip("\n")
    return head, text[len(head):]


def split_message(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """Split ``text`` into chunks of at most ``limit`` UTF-16 units, preferring paragraph
    boundaries (blank lines), then line breaks, then spaces. Chunks are non-empty; an empty or
    blank text gives no chunks.

    Joining the chunks with the separators they were cut at gives back the text (minus the
    whitespace at the cuts).
    """
    text = text.strip("\n")
    chunks: list[str] = []
    while text.strip():
        if utf16_len(text) <= limit:
            chunks.append(text)
            break
        head, text = _cut(text, limit)
        if head.strip():
            chunks.append(head)
    return chunks


def to_html(chunk: str) -> str:
    """Telegram HTML for a plain-text chunk: ``<``, ``>`` and ``&`` escaped, fenced code blocks
    as ``<pre>``; everything else (``*``, ``_``, backticks outside fences) shown as written."""
    out: list[str] = []
    pos = 0
    for m in _FENCE.finditer(chunk):
        out.append(html.escape(chunk[pos:m.start()], quote=False))
        lang, code = m.group(1), m.group(2).rstrip("\n")
        body = html.escape(code, quote=False)
        if lang:
            out.append(f'<pre><code class="language-{html.escape(lang)}">{body}</code></pre>')
        else:
            out.append(f"<pre>{body}</pre>")
        pos = m.end()
    out.append(html.escape(chunk[pos:], quote=False))
    return "".join(out)
