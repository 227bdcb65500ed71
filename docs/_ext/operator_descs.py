"""The ``operator-descs`` directive: an ``autoclass`` entry for the description class of every operator opendml
declares whose DirectML name starts with one of the directive's arguments (``ELEMENT_WISE_``, ``ACTIVATION_``,
``DEQUANTIZE QUANTIZE``), or of every other one (``other``), in DirectML's name order; each class is listed
once (Sphinx refuses a class described twice). The reference then lists a newly declared operator's
description with no line written for it here."""

from __future__ import annotations

from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

FAMILIES = ("ELEMENT_WISE_", "ACTIVATION_", "DEQUANTIZE", "QUANTIZE")


def desc_names(*families: str) -> list[str]:
    """The description classes' names (as ``opendml`` exports them) of the operators of ``families``."""
    import opendml
    from opendml.ops import BY_NAME

    names = []
    for name, definition in sorted(BY_NAME.items()):
        ours = not name.startswith(FAMILIES) if families == ("other",) else name.startswith(families)
        if ours and getattr(opendml, definition.desc_type.__name__, None) is definition.desc_type:
            names.append(definition.desc_type.__name__)
    return names


class OperatorDescs(SphinxDirective):
    required_arguments = 1
    optional_arguments = len(FAMILIES) - 1

    def run(self) -> list[nodes.Node]:
        lines = StringList()
        for name in desc_names(*self.arguments):
            lines.append(f".. autoclass:: {name}", "<operator-descs>")
            lines.append("", "<operator-descs>")
        node = nodes.section()
        node.document = self.state.document
        nested_parse_with_titles(self.state, lines, node)
        return node.children


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("operator-descs", OperatorDescs)
    return {"parallel_read_safe": True}
