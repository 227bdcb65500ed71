"""The ARGMIN engines' modules: the CPU engines' package (``cpu_kernels/argmin``) and CUDA's templates
(``cuda/argmin_c``) import each other in no circle, lazy imports inside functions included, and hold no
module of more than 400 lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import opendml

PACKAGE = Path(opendml.__file__).parent
PACKAGES = {"cpu_kernels/argmin": PACKAGE / "backends" / "cpu_kernels" / "argmin",
            "cuda/argmin_c": PACKAGE / "backends" / "cuda" / "argmin_c"}
MAX_LINES = 400


def module_name(path: Path) -> str:
    """``opendml.backends...`` of a module file (a package's ``__init__.py`` is the package)."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it (``from . import x`` names module ``x`` where it is one)."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def graph(root: Path) -> dict[str, set[str]]:
    """The package's modules and, for each, the package's modules it imports."""
    files = {module_name(path): path for path in sorted(root.rglob("*.py"))}
    return {name: imported(path) & files.keys() - {name} for name, path in files.items()}


def circle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle, or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for other in sorted(edges[name]):
            if state.get(other) == 1:
                return path[path.index(other):] + [other]
            if other not in state and (found := visit(other)) is not None:
                return found
        path.pop()
        state[name] = 2
        return None

    for name in sorted(edges):
        if name not in state and (found := visit(name)) is not None:
            return found
    return None


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_the_packages_modules_import_each_other_in_no_circle(package: str) -> None:
    edges = graph(PACKAGES[package])
    assert len(edges) > 5 and any(edges.values())  # the graph was read
    assert circle(edges) is None, circle(edges)


def test_a_circle_is_found() -> None:
    assert circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert circle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_module_passes_400_lines(package: str) -> None:
    sizes = {path.name: len(path.read_text().splitlines()) for path in PACKAGES[package].rglob("*.py")}
    assert max(sizes.values()) <= MAX_LINES, sizes


def test_the_cpu_engines_are_laid_out_by_what_they_reduce() -> None:
    """The plan, keys and calls at the package's top; the kernels that reduce a task in ``engines``."""
    root = PACKAGES["cpu_kernels/argmin"]
    top = {p.stem for p in root.glob("*.py")}
    engines = {p.stem for p in (root / "engines").glob("*.py")}
    assert {"keys", "plan", "drivers", "spec", "call", "reduction", "prologue", "extras"} <= top
    assert {"rows", "columns", "lanes", "boxes", "fast_rows", "fast_columns", "vectors"} <= engines
    assert not list(root.parent.glob("argmin_*.py"))  # no engine module left beside the package
