"""The layout rules import-linter cannot check: module length, and which parts of
OpenTelemetry a module imports (import-linter sees ``opentelemetry`` as one package)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Where each part of OpenTelemetry may be imported (paths relative to the repo root).
ALLOWED = {
    "opentelemetry.proto": ("faithmon/ingest/",),
    "opentelemetry.sdk": (
        "faithmon/ingest/processor.py",
        "faithmon/alerts/telemetry.py",
        "instrumentation/faithmon_instrumentation/_setup.py",
        "instrumentation/faithmon_instrumentation/_export.py",
    ),
    "opentelemetry.exporter": (
        "faithmon/alerts/telemetry.py",
        "instrumentation/faithmon_instrumentation/_export.py",
    ),
}


def _runtime_imports(path: Path) -> list[tuple[int, str]]:
    """Modules imported when ``path`` runs (``if TYPE_CHECKING:`` blocks are types only)."""
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for child in ast.walk(node))
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def _sources() -> list[Path]:
    shim = ROOT / "instrumentation" / "faithmon_instrumentation"
    return sorted([*ROOT.joinpath("faithmon").rglob("*.py"), *shim.rglob("*.py")])


def test_opentelemetry_parts_stay_in_their_rooms() -> None:
    wrong = []
    for path in _sources():
        relative = path.relative_to(ROOT).as_posix()
        for line, module in _runtime_imports(path):
            for part, rooms in ALLOWED.items():
                inside = module == part or module.startswith(part + ".")
                if inside and not relative.startswith(rooms):
                    wrong.append(f"{relative}:{line} imports {module}")
    assert not wrong, "OpenTelemetry imported outside its rooms:\n" + "\n".join(wrong)


def test_the_rule_reads_imports() -> None:
    # The checker must see the imports it polices, or the test above passes vacuously.
    found = {m for _, m in _runtime_imports(ROOT / "faithmon" / "alerts" / "telemetry.py")}
    assert any(m.startswith("opentelemetry.sdk") for m in found)
    shim = ROOT / "instrumentation" / "faithmon_instrumentation" / "__init__.py"
    assert not any(m.startswith("opentelemetry.sdk") for _, m in _runtime_imports(shim))


def test_every_module_stays_under_400_lines() -> None:
    """No module of faithmon/ or instrumentation/ grows past 400 lines (migrations excepted):
    a module that long holds more than one job."""
    too_long = []
    for folder in ("faithmon", "instrumentation"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if {"migrations", "build"} & set(path.parts):
                continue
            lines = len(path.read_text().splitlines())
            if lines > 400:
                too_long.append(f"{path.relative_to(ROOT)}: {lines}")
    assert too_long == []
