"""Lexicons: the words the memory core reads a user's statements with, one module per language
(``memory.lexicon.en``, ``memory.lexicon.zh``), both with the same names.

They hold words and phrase templates only, no regular expressions: what the words mean
(a question, a statement about the speaker, a request, a task) is decided in
``memory.language``, and what a statement says about the user (an attribute and its value,
an ending, a constraint) in ``memory.statements``. English entries are lowercase and
tokenised as ``memory.language.tokens`` tokenises (contractions expanded: "don't" is
"do not", "I'm" is "i am"); Chinese entries are plain strings.
"""

from __future__ import annotations

from types import ModuleType

from memory.lexicon import en, zh


def of(lang: str) -> ModuleType:
    """The lexicon module of ``lang`` (``"zh"`` for Chinese, English for anything else)."""
    return zh if lang == "zh" else en
