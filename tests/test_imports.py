"""No import circle: each module imports alone in a fresh interpreter, the modules' imports form no cycle, and
the front ends over array kinds find each other through ``opendml.front_ends`` (by name, as backends are), not
through imports made late inside functions, which is how a circle hides."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import opendml

PACKAGE = Path(opendml.__file__).parent
MODULES = ["opendml", *sorted(m.name for m in pkgutil.walk_packages(opendml.__path__, "opendml."))]
# The front ends and what they build on: the modules of the circle the registry removed (each imports in a
# default run; every other module under --slow).
FRONT_ENDS = ("opendml.front_ends", "opendml.functional", "opendml.functional.declared", "opendml.tracing",
              "opendml.tracing.functions", "opendml.dask.api", "opendml.device", "opendml.graph")
OPTIONAL = ("cupy", "torch", "onnx", "distributed", "matplotlib")  # a module of an extra needs its package


@pytest.mark.parametrize("module", [m if m in FRONT_ENDS else pytest.param(m, marks=pytest.mark.slow)
                                    for m in MODULES])
def test_each_module_imports_alone_in_a_fresh_interpreter(module: str) -> None:
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, check=False)
    missing = [name for name in OPTIONAL if f"No module named '{name}" in done.stderr]
    if done.returncode and missing:
        pytest.skip(f"{module} needs {missing[0]}")
    assert done.returncode == 0, done.stderr


def _module_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path, body: list[ast.stmt]) -> set[str]:
    """The opendml modules a module's top level imports (those under ``if TYPE_CHECKING:`` are never run)."""
    name = _module_of(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            found |= _imported(path, node.body + node.orelse)
        elif isinstance(node, ast.Try):
            found |= _imported(path, node.body + [s for h in node.handlers for s in h.body] + node.orelse)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "opendml"}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            if module.split(".")[0] == "opendml":
                found |= {f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module for a in node.names}
    return found - {name}


def _graph() -> dict[str, set[str]]:
    return {_module_of(p): _imported(p, ast.parse(p.read_text()).body) for p in PACKAGE.rglob("*.py")}


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """A cycle of the graph (its modules in order), or an empty list."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = 1
        path.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state and (found := visit(target)):
                return found
        state[module] = 2
        path.pop()
        return []

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return []


def test_no_module_imports_another_in_a_circle() -> None:
    assert _cycle(_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


def _late_imports(path: Path) -> list[str]:
    """The opendml modules imported inside a function of the module (run when it is called)."""
    tree = ast.parse(path.read_text())
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return sorted({f"{path.name}:{node.lineno}" for f in functions for node in ast.walk(f)
                   if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("opendml"))})


@pytest.mark.parametrize("part", ["functional", "dask", "tracing", "front_ends.py", "device.py", "graph.py",
                                  "graphs/builder.py"])
def test_the_front_ends_import_nothing_late(part: str) -> None:
    paths = [PACKAGE / part] if part.endswith(".py") else sorted((PACKAGE / part).glob("*.py"))
    assert [late for p in paths for late in _late_imports(p)] == []


def test_the_device_finds_its_backends_by_name() -> None:
    """``opendml.device`` imports the backends' registry, not a backend's modules (a thread count is the
    device's own setting: ``opendml.thread_count``)."""
    imported = _imported(PACKAGE / "device.py", ast.parse((PACKAGE / "device.py").read_text()).body)
    assert [m for m in imported if m.startswith("opendml.backends.")] == []
