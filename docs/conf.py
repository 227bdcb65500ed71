"""Sphinx configuration of the documentation: the pages in docs/ (Markdown, read by MyST) and the API reference
in docs/api/ (autodoc, from the docstrings, which are reStructuredText). Built in CI with warnings as errors:

    python -m sphinx -W --keep-going -b html docs build/docs

Needs the ``docs`` extra (``pip install ".[docs]"``). Nothing here runs at import but assignments (and docs/_ext
put on the path, for its extensions), so the test suite's doctest collection, which imports every module under
docs/, finds nothing to do.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))  # operator_descs: the descriptions' list

project = "opendml"
author = "the opendml authors"
copyright = "the opendml authors"

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
extensions = ["sphinx.ext.autodoc", "myst_parser", "operator_descs"]
root_doc = "index"
exclude_patterns = ["_build"]

# The API reference: members in source order, signatures as written (the annotations are strings under
# ``from __future__ import annotations``; the type aliases of opendml.typing stay named).
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autodoc_type_aliases = {name: f"opendml.typing.{name}"
                        for name in ("ArrayInput", "ArrayObject", "Axes", "DataTypeLike", "DeviceLike", "Scalar")}
autodoc_default_options = {"members": True, "show-inheritance": True}

# The Markdown pages link to each other's sections (``graphs.md#benchmark``): anchors for headings to level 3.
myst_heading_anchors = 3


html_theme = "alabaster"
html_title = "opendml"
