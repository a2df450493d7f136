"""No class over about 400 lines and no module over about 600 in the memory core and the bot
(docs/architecture.md, "Where a change goes"): a unit that grows past them is split by
responsibility before it lands."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODULE_LINES = 600
CLASS_LINES = 400


def _units() -> list[tuple[str, str, int]]:
    units = []
    for package in ("memory", "bot"):
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            name = str(path.relative_to(ROOT))
            units.append(("module", name, text.count("\n")))
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.ClassDef):
                    units.append(("class", f"{name}:{node.name}",
                                  node.end_lineno - node.lineno + 1))
    return units


def test_the_size_check_sees_the_packages():
    units = _units()
    assert any(kind == "class" and name.endswith(":MemoryService") for kind, name, _ in units)
    assert sum(1 for kind, _, _ in units if kind == "module") > 50


def test_no_module_or_class_is_over_its_size():
    over = [(kind, name, lines) for kind, name, lines in _units()
            if lines > (MODULE_LINES if kind == "module" else CLASS_LINES)]
    assert over == []
