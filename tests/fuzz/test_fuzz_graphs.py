"""Fuzzing graph compilation: chains mixing the element-wise operators old and new give, fused, the bits of
their nodes run one by one.

``tests.graph_strategies.mixed_graphs`` draws a FLOAT32 or FLOAT16 chain of DEQUANTIZE_LINEAR, unary
operators, CLIP and THRESHOLD, and ELEMENT_WISE_ADD, SUBTRACT, MULTIPLY and DIVIDE (the other operand a graph
input read full-size or broadcast as a row, a column or a scalar, a ConstantNode, or an earlier value), ending
perhaps in QUANTIZE_LINEAR, ARGMIN or ARGMAX, over edge values (NaN, infinities, signed zeros, denormals,
limits). Each graph runs fused, unfused (OPENDML_FUSION=0) and node by node on the CPU: every output's bits
must agree (any NaN equal to any NaN); each operator's own bits are judged against the oracle elsewhere
(tests/test_binary.py, tests/elementwise_oracle.py). The report counts the operators and operand layouts the
family drew.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import opendml as dml
from tests.graph_strategies import MixedGraph, fused_unfused_and_node_by_node, mixed_graphs
from tests.helpers import same_values

from .settings import fuzz_settings, judging, record

FAMILY = "graphs"
TEST = "fused = node by node"
CPU = dml.Device("cpu")


@fuzz_settings(FAMILY)
@given(data=st.data())
def test_mixed_graphs_fused_equal_node_by_node(data: st.DataObject) -> None:
    built = data.draw(mixed_graphs(CPU))
    with judging(FAMILY, TEST, built):
        check(built)


def check(built: MixedGraph) -> None:
    for drawn in built.drawn:
        record(FAMILY, TEST, f"drew {drawn.split('(')[0]}")
    for layout in built.layouts:
        record(FAMILY, TEST, f"operand {layout}")
    for k, (fused, unfused, separate) in enumerate(fused_unfused_and_node_by_node(CPU, built)):
        assert same_values(fused, separate), f"output {k}: fused differs from node by node"
        assert same_values(unfused, separate), f"output {k}: unfused differs from node by node"
    record(FAMILY, TEST, "executed")
