"""The product's text speaks of the product: no tracked source, doc or config file refers to the
history of its making (the word issue or stop followed by a number) or to notes kept outside
the repository (a list of failures or the notes folder beside the checkout). Runs over
``git ls-files``; skipped outside a git checkout."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Whole words only: the word issue or stop, a space and a number; "tissue 3" and
#: "stop_reason" do not match.
HISTORY = re.compile(r"\b(issue|stop) [0-9]+\b", re.IGNORECASE)
#: Pointers to notes that live beside the checkout, not in it.
OUTSIDE = re.compile(r"known[- ]failures?|shared/note[s]", re.IGNORECASE)


def _tracked_files() -> list[Path]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    done = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--", "*.py", "*.md",
                           "*.toml", "Makefile"], capture_output=True)
    if done.returncode != 0:
        pytest.skip("not a git checkout: " + done.stderr.decode(errors="replace").strip())
    return [ROOT / name for name in done.stdout.decode().split("\0") if name]


def offending_lines(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` for every line of ``text`` naming a history step or an outside
    note; line numbers start at 1."""
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1)
            if HISTORY.search(line) or OUTSIDE.search(line)]


def test_the_pattern_finds_history_and_outside_pointers_only():
    text = "\n".join(["ok line", "see " + "issue" + " 12 here", "Stop" + " 17 numbers",
                      "known" + "-failures C47", "facts in ../shared/" + "notes/x.md",
                      "tissue 3, stop_reason, stops 4ff0b97"])
    assert [n for n, _ in offending_lines(text)] == [2, 3, 4, 5]


def test_no_tracked_file_speaks_of_its_making():
    files = _tracked_files()
    assert files, "git ls-files listed nothing"
    found = []
    for path in files:
        if not path.is_file():  # deleted in the work tree, not yet committed
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(ROOT)}:{n}: {line}" for n, line in offending_lines(text)]
    assert not found, "history or outside-note pointers in the product's text:\n" + "\n".join(found)
