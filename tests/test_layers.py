"""The import graph keeps the layers of docs/architecture.md: nothing imports from a layer above its own (read with ast,
so lazy imports inside functions count too), and no source file grows past 600 lines."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("stages", "pipeline", "models", "samples")

# bottom up; a module belongs to the longest prefix that names it
LAYERS: tuple[tuple[str, ...], ...] = (
    ("stages.contracts",),  # config, result schema, stage types, field table, model registry
    ("stages",),  # each stage's pre-processing, predictor and post-processing
    ("pipeline.core", "pipeline"),  # decode, the document processor, the engine, the Python API
    # surfaces: CLI, operations, tools, service, scale-out; training/export and the sample generator
    ("pipeline.cli", "pipeline.commands", "pipeline.ops", "pipeline.tools", "pipeline.service",
     "pipeline.scaleout", "models", "samples"),
)


def layer_of(module: str) -> int | None:
    best, best_len = None, -1
    for level, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = level, len(prefix)
    return best


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, module: str) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.append((node.lineno, target))
            # "from pipeline import core" imports a module too
            out += [(node.lineno, f"{target}.{a.name}") for a in node.names if _is_module(f"{target}.{a.name}")]
    return out


def _is_module(name: str) -> bool:
    path = REPO.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def upward_imports(path: Path, module: str) -> list[str]:
    own = layer_of(module)
    found = []
    for lineno, target in imported_modules(path, module):
        level = layer_of(target) if target.split(".")[0] in PACKAGES else None
        if level is not None and own is not None and level > own:
            found.append(f"{module}:{lineno} imports {target}")
    return found


def source_files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py"))


def test_every_source_module_has_a_layer():
    assert [module_name(p) for p in source_files() if layer_of(module_name(p)) is None] == []


def test_no_module_imports_from_a_layer_above_its_own():
    assert [found for p in source_files() for found in upward_imports(p, module_name(p))] == []


def test_the_checker_reports_upward_imports_lazy_ones_too(tmp_path):
    code = tmp_path / "m.py"
    code.write_text("from stages.contracts.types import Page\n"
                    "def f():\n    from pipeline.core import engine\n    import stages.extraction.field_specs\n")
    assert upward_imports(code, "stages.contracts.example") == [
        "stages.contracts.example:3 imports pipeline.core",
        "stages.contracts.example:3 imports pipeline.core.engine",
        "stages.contracts.example:4 imports stages.extraction.field_specs",
    ]
    assert upward_imports(code, "pipeline.ops.example") == []


@pytest.mark.parametrize("package", ["pipeline", "stages", "models"])
def test_no_source_file_over_600_lines(package):
    long = {str(p.relative_to(REPO)): n for p in (REPO / package).rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}
