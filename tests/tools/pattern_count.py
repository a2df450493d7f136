"""Count the regular expressions of the memory core: ``python -m tests.tools.pattern_count``.

Two numbers, over every module under ``memory/`` (lexicon modules included, so moving a pattern
into one changes nothing):

* **patterns**: distinct compiled patterns: every ``re.Pattern`` reachable from a module's
  globals (also inside lists, tuples, dicts, sets, dataclass rows and class attributes), plus
  every pattern given as text to a ``re`` function inside a function body (``re.sub(r"...",
  ...)``), counted once per distinct pattern text;
* **branches**: alternation branches: for each pattern, the ``|`` outside character classes
  plus one (a pattern without alternation is one branch).

Word lists (frozensets, tuples of words) are not patterns; ``--words`` also prints how many
words the lexicons hold, for comparison.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_RE_FUNCTIONS = {"compile", "match", "search", "sub", "subn", "split", "findall", "finditer",
                 "fullmatch"}


def branches(pattern: str) -> int:
    """``|`` outside character classes and escapes in ``pattern``, plus one."""
    count, i, in_class = 1, 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "^":
                i += 1
            if pattern[i + 1:i + 2] == "]":  # "[]...]": a literal bracket first
                i += 1
        elif ch == "|":
            count += 1
        i += 1
    return count


def _walk(value, seen: set[int], out: dict[tuple[str, int], str], where: str, depth=0) -> None:
    if depth > 6 or id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, re.Pattern):
        out.setdefault((value.pattern if isinstance(value.pattern, str) else "", value.flags),
                       where)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _walk(item, seen, out, where, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            _walk(item, seen, out, where, depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _walk(getattr(value, f.name), seen, out, where, depth + 1)
    elif isinstance(value, type) and value.__module__.startswith("memory"):
        for item in vars(value).values():
            _walk(item, seen, out, where, depth + 1)


def _inline(path: Path, module) -> list[str]:
    """Pattern texts given to ``re`` functions inside function bodies of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        for node in ast.walk(func):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                    and node.func.attr in _RE_FUNCTIONS and node.args):
                arg = node.args[0]
                try:
                    text = eval(compile(ast.Expression(arg), str(path), "eval"), vars(module))
                except Exception:  # a local name: count the literal parts
                    text = "".join(v.value for v in ast.walk(arg)
                                   if isinstance(v, ast.Constant) and isinstance(v.value, str))
                if isinstance(text, str):
                    found.append(text)
    return found


def _lexicon_words(value, seen: set[int], depth=0) -> int:
    if depth > 4 or id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, (frozenset, set)) and all(isinstance(v, str) for v in value):
        return len(value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return len(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        return sum(_lexicon_words(v, seen, depth + 1) for v in value)
    if isinstance(value, dict):
        return sum(_lexicon_words(v, seen, depth + 1) for v in value.values())
    return 0


def count(root: Path = ROOT) -> dict:
    """``{"patterns": n, "branches": n, "words": n, "by_module": {module: [patterns,
    branches]}}`` for the ``memory`` package under ``root``."""
    sys.path.insert(0, str(root))
    patterns: dict[tuple[str, int], str] = {}
    words = 0
    for path in sorted((root / "memory").rglob("*.py")):
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        module = importlib.import_module(name)
        seen: set[int] = set()
        for attr, value in vars(module).items():
            if isinstance(value, type) and value.__module__ != name:
                continue  # imported classes count where they are defined
            if getattr(value, "__module__", name) != name and callable(value):
                continue
            _walk(value, seen, patterns, name)
        for text in _inline(path, module):
            if not any(text == p for p, _ in patterns):
                patterns.setdefault((text, -1), name)
        words += sum(_lexicon_words(v, set()) for k, v in vars(module).items()
                     if k.isupper() or k.lstrip("_").isupper())
    by_module: dict[str, list[int]] = {}
    for (text, _), where in patterns.items():
        row = by_module.setdefault(where, [0, 0])
        row[0] += 1
        row[1] += branches(text)
    return {"patterns": len(patterns), "branches": sum(branches(p) for p, _ in patterns),
            "words": words, "by_module": dict(sorted(by_module.items()))}


def main(argv: list[str] | None = None) -> int:
    """Print the counts (``--modules``: per module too)."""
    parser = argparse.ArgumentParser(prog="python -m tests.tools.pattern_count")
    parser.add_argument("--modules", action="store_true", help="one line per module")
    parser.add_argument("--words", action="store_true", help="also the lexicons' word count")
    args = parser.parse_args(argv)
    result = count()
    if args.modules:
        for module, (n, b) in result["by_module"].items():
            print(f"{module}: {n} patterns, {b} branches")
    print(f"patterns: {result['patterns']}")
    print(f"branches: {result['branches']}")
    if args.words:
        print(f"lexicon words: {result['words']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
