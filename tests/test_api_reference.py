"""The API reference (docs/api/, built by Sphinx in CI) covers the public API: the top-level page names its classes
one by one, but the operators' descriptions, which its ``operator-descs`` directives list from the declarations
(docs/_ext/operator_descs.py), so a class added to ``opendml.__all__`` must be added there too (a declared
operator's description needs nothing); every top-level function is one of
``opendml.functional``'s (whose page documents its ``__all__``) or ``opendml.compile``. The build itself, with
warnings as errors, is CI's ``docs`` step (``.ci/run``)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import opendml
import opendml.functional
import opendml.tracing

API = Path(__file__).resolve().parents[1] / "docs" / "api"


def _documented_list(page: str) -> list[str]:
    """The names a page documents, once per entry: its autodoc entries, and the descriptions of the declared
    operators its ``operator-descs`` directives list (a directive's prefixes, or ``other``: every operator no
    prefix of docs/_ext/operator_descs.py's families matches)."""
    from opendml.ops import BY_NAME

    text = (API / page).read_text(encoding="utf-8")
    names = re.findall(r"^\.\. auto(?:class|function|exception|data)::\s+(\w+)\s*$", text, re.MULTILINE)
    directives = [line.split() for line in re.findall(r"^\.\. operator-descs::\s+(.+?)\s*$", text, re.MULTILINE)]
    prefixes = tuple(p for args in directives if args != ["other"] for p in args)
    for args in directives:
        for name, definition in BY_NAME.items():
            other = args == ["other"] and not name.startswith(prefixes)
            if other or (args != ["other"] and name.startswith(tuple(args))):
                names.append(definition.desc_type.__name__)
    return names


def _documented(page: str) -> set[str]:
    return set(_documented_list(page))


def test_the_top_level_page_names_every_public_class() -> None:
    classes = {name for name in opendml.__all__ if inspect.isclass(getattr(opendml, name))}
    documented = _documented("opendml.rst")
    assert not classes - documented, f"docs/api/opendml.rst must document {sorted(classes - documented)}"
    assert not documented - set(opendml.__all__), f"docs/api/opendml.rst names {sorted(documented - classes)}, " \
        "which opendml does not export"


def test_the_top_level_page_describes_each_class_once() -> None:
    # Sphinx refuses (with -W) an object described twice, e.g. a description both listed by a directive and
    # named by an autoclass line.
    names = _documented_list("opendml.rst")
    twice = sorted({name for name in names if names.count(name) > 1})
    assert not twice, f"docs/api/opendml.rst describes {twice} more than once"


def test_every_top_level_function_is_on_the_functional_or_compile_page() -> None:
    functions = {name for name in opendml.__all__ if inspect.isfunction(getattr(opendml, name))}
    on_the_top_page = {"calc_buffer_tensor_size", "pack4", "unpack4"}
    elsewhere = functions - set(opendml.functional.__all__) - {"compile"} - on_the_top_page
    assert not elsewhere, f"top-level functions documented on no page: {sorted(elsewhere)}"
    for name in functions & set(opendml.functional.__all__):
        assert getattr(opendml, name) is getattr(opendml.functional, name), name
    assert opendml.compile is opendml.tracing.compile
    assert on_the_top_page <= _documented("opendml.rst")



def test_each_declared_functions_summary_closes_its_literals() -> None:
    # The summary is the first line of the operator's module docstring (functional/declared.py): a literal cut
    # at the line's end is an unclosed ``...`` in the reference, which Sphinx's -W build refuses.
    from opendml.ops import DECLARED

    for op in DECLARED:
        if op.api is None:
            continue
        summary = (getattr(opendml, op.api.python).__doc__ or "").strip().splitlines()[0]
        assert summary.count("``") % 2 == 0, f"opendml.{op.api.python}: {summary}"
