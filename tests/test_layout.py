"""The layout rules import-linter cannot check: module length, private names imported
across modules, and which parts of OpenTelemetry a module imports (import-linter sees
``opentelemetry`` as one package).

Module length: 400 lines is the guideline and 600 the hard limit. A module between the
two is allowed when it holds one job; a cohesive module is never split to meet the count.
Only past 600 lines does ``test_every_module_stays_under_the_hard_limit`` fail."""

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
    found: list[tuple[int, str]] = []
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


GUIDELINE_LINES = 400
"""A module of one job usually fits here; past it, check that it still holds one job."""
HARD_LIMIT_LINES = 600
"""No module may grow past this (see the module docstring)."""


def test_every_module_stays_under_the_hard_limit() -> None:
    """No module of faithmon/ or instrumentation/ grows past 600 lines (migrations excepted).
    400 lines is the guideline: a module between 400 and 600 lines passes if it holds one job."""
    too_long = []
    for folder in ("faithmon", "instrumentation"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if {"migrations", "build"} & set(path.parts):
                continue
            lines = len(path.read_text().splitlines())
            if lines > HARD_LIMIT_LINES:
                too_long.append(f"{path.relative_to(ROOT)}: {lines}")
    assert too_long == [], (
        f"past the hard limit of {HARD_LIMIT_LINES} lines (the guideline is "
        f"{GUIDELINE_LINES}; split by job, not by count):\n" + "\n".join(too_long)
    )


def _private_imports(path: Path, text: str | None = None) -> list[str]:
    """``from module import _name`` in ``path`` where ``module`` is another faithmon module
    and ``_name`` is not a module: a private name borrowed across modules. A package-private
    module's names (``sinks/_http.py``) are its package's, so they do not count."""
    tree = ast.parse(path.read_text() if text is None else text)
    package = path.parent
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 0 and not (node.module or "").startswith("faithmon"):
            continue
        if node.level == 0:
            folder = ROOT / Path(*(node.module or "").split(".")[:-1])
            last = (node.module or "").split(".")[-1]
        else:
            folder = package.parents[node.level - 2] if node.level > 1 else package
            parts = (node.module or "").split(".") if node.module else []
            folder = folder.joinpath(*parts[:-1]) if parts else folder
            last = parts[-1] if parts else ""
        if last.startswith("_"):
            continue
        source = folder / last if last else folder
        for alias in node.names:
            private = alias.name.startswith("_") and not alias.name.startswith("__")
            is_module = (source / f"{alias.name}.py").exists() or (source / alias.name).is_dir()
            if private and not is_module:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {alias.name}")
    return found


def test_no_private_name_is_imported_across_modules() -> None:
    """A name another module needs is public where it is defined: no module imports a
    ``_private`` name of another (package-private ``_module`` files excepted)."""
    borrowed = [line for path in _sources() for line in _private_imports(path)]
    assert borrowed == [], "private names imported across modules:\n" + "\n".join(borrowed)


def test_the_private_import_rule_reads_imports() -> None:
    # The checker must see what it polices, or the test above passes vacuously.
    probe = ROOT / "faithmon" / "store" / "probe.py"  # read from text, never written
    text = (
        "from .evaluations import _hidden, settle\n"
        "from . import _dialect\n"
        "from ._dialect import _shared\n"
        "from faithmon.config_values import _gone\n"
    )
    assert _private_imports(probe, text) == [
        "faithmon/store/probe.py:1 imports _hidden",
        "faithmon/store/probe.py:4 imports _gone",
    ]
