"""The message catalogue (``i18n``): complete in every language, and the only source of the
text the product shows its users.

Two mechanisms keep it so:

- Completeness: every message id of the English catalogue has a non-empty Chinese text with
  the same ``str.format`` placeholders, neither catalogue has ids the other lacks, and every
  message id the code names (a literal second argument of ``say``, or the literal head of an
  f-string id such as ``f"engine.bye.{outcome}"``) exists.
- No user text outside it: an AST scan of every module of ``bot/`` and ``adapters/`` that
  talks to users (the operator's command-line tools are left out, below, with their reason)
  finds no string literal that reads as prose: Chinese characters, two words of Latin letters
  in a row, or one capitalised word standing alone ("Cancel", "Goodbye."). Literals that are
  not shown to users are not looked at: docstrings, log and warning calls, exceptions raised
  (they reach the operator's log or terminal), regular-expression patterns, and the
  vocabularies incoming text is compared with (``text in {"yes", "是"}``).
"""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from i18n import DEFAULT_LANGUAGE, LANGUAGES, catalogue, po_path

ROOT = Path(__file__).resolve().parents[2]

#: Modules of bot/ and adapters/ that speak to the operator, not to chat users (their words
#: are English like the logs): the command line and its tools, settings and start-up errors.
OPERATOR_MODULES = (
    "bot/cli.py", "bot/settings.py", "bot/inspection.py", "bot/backup.py", "bot/datadir.py",
    "bot/logging_setup.py", "bot/health.py", "bot/memtune.py", "bot/runner.py", "bot/app.py",
    "bot/scheduler.py", "bot/evaluation/", "bot/bench/", "adapters/llm/", "adapters/embedders/",
)

#: Literals of these functions and module-level names are for the operator (``/readyz``
#: reasons, a warning logged at start-up), not for chat users.
OPERATOR_TEXTS = {
    "adapters/discord/__init__.py": {"readiness"},
    "adapters/discord/_adapter.py": {"CONTENT_INTENT_MISSING"},
    "adapters/telegram/_adapter.py": {"readiness"},
}

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_TAG = re.compile(r"<[^>]*>?")
_COMMAND = re.compile(r"/[a-z_]+(?: (?:all|episodes|chat))?")
_TWO_WORDS = re.compile(r"[A-Za-z]{2,}[,.;:!?']?\s+[A-Za-z]{2,}")
_ONE_WORD = re.compile(r"^[\W\d_]*[A-Z][a-z]+[.!?…]?[\W\d_]*$")
_LOG_METHODS = {"debug", "info", "warning", "error", "exception", "critical", "log", "warn"}


def _placeholders(text: str) -> list[str]:
    return sorted({name for _, name, _, _ in string.Formatter().parse(text) if name})


def test_every_message_exists_in_every_language_with_the_same_placeholders():
    english = catalogue(DEFAULT_LANGUAGE)
    assert len(english) > 100
    for lang in LANGUAGES:
        texts = catalogue(lang)
        assert set(texts) == set(english), lang
        for msgid, text in english.items():
            assert texts[msgid].strip(), (lang, msgid)
            assert _placeholders(texts[msgid]) == _placeholders(text), (lang, msgid)


def test_catalogues_are_po_files_without_fuzzy_or_empty_entries_and_no_compiled_files():
    for lang in LANGUAGES:
        with po_path(lang).open("rb") as fh:
            po = read_po(fh, locale=lang)
        entries = [m for m in po if m.id]
        assert entries and not [m.id for m in entries if m.fuzzy or not m.string], lang
    assert not list((ROOT / "i18n").rglob("*.mo"))


def _user_facing_modules() -> list[Path]:
    modules = []
    for top in ("bot", "adapters"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if not any(rel == m or (m.endswith("/") and rel.startswith(m))
                       for m in OPERATOR_MODULES):
                modules.append(path)
    return modules


def _exempt_nodes(tree: ast.AST, operator_names: set[str]) -> set[int]:
    """ids of the nodes whose string literals are not user text (see the module docstring)."""
    exempt: set[int] = set()

    def cover(node: ast.AST) -> None:
        exempt.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.name in operator_names:
            cover(node)
        if isinstance(node, ast.Assign) and any(
                getattr(t, "id", None) in operator_names | {"__all__"} for t in node.targets):
            cover(node)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            cover(node)  # a docstring (of a module, class, function or attribute)
        if isinstance(node, ast.Assert) and node.msg is not None:
            cover(node.msg)
        if isinstance(node, ast.Raise) and node.exc is not None:
            cover(node.exc)
        if isinstance(node, ast.Compare):
            cover(node)
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            owner = getattr(func.value, "id", "") if isinstance(func, ast.Attribute) else ""
            if (name in _LOG_METHODS and owner in ("log", "logger", "logging", "warnings")) \
                    or owner == "re":
                cover(node)
    return exempt


def _literals(tree: ast.AST, operator_names: set[str] = frozenset()):
    exempt = _exempt_nodes(tree, set(operator_names))
    for node in ast.walk(tree):
        if id(node) in exempt:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def prose(text: str) -> bool:
    """Whether a string literal reads as words to a person (see the module docstring)."""
    words = _COMMAND.sub(" ", _TAG.sub(" ", text))
    return bool(_CJK.search(words) or _TWO_WORDS.search(words) or _ONE_WORD.match(words.strip()))


def test_the_prose_test_tells_words_from_code():
    assert prose("Goodbye.") and prose("Cancel") and prose("Next »") and prose("记住了：")
    assert prose("I sent you the answer")
    assert not prose("cf:y:{user_id}") and not prose("memory-export.json") and not prose("\n")
    assert not prose("engine.bye.saved") and not prose("%Y-%m-%d") and not prose("- {text}")


@pytest.mark.parametrize("path", _user_facing_modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_user_text_is_written_outside_the_catalogue(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = OPERATOR_TEXTS.get(path.relative_to(ROOT).as_posix(), set())
    found = [(line, value) for line, value in _literals(tree, names) if prose(value)]
    assert not found, f"{path.relative_to(ROOT)}: user text outside the catalogue: {found}"


def _named_ids():
    """(module, message id or f-string head) for every ``say(lang, <literal>)`` call."""
    for path in _user_facing_modules() + [ROOT / "i18n" / "__init__.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "say" \
                    and len(node.args) >= 2:
                arg = node.args[1]
                if isinstance(arg, ast.Constant):
                    yield path.name, arg.value, False
                elif isinstance(arg, ast.JoinedStr) and isinstance(arg.values[0], ast.Constant):
                    yield path.name, arg.values[0].value, True


def test_every_message_id_the_code_names_exists():
    ids = set(catalogue(DEFAULT_LANGUAGE))
    named = list(_named_ids())
    assert len(named) > 50
    for module, msgid, is_head in named:
        if is_head:
            assert any(i.startswith(msgid) for i in ids), (module, msgid)
        else:
            assert msgid in ids, (module, msgid)
