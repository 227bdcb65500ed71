"""ONNX TopK (every version) -> TOP_K (``largest = 1``) or TOP_K1 with AxisDirection INCREASING (``largest = 0``),
then a CAST of the indices to ONNX's INT64.

K is the attribute ``k`` in version 1 and the one-element input K from version 10 on, which opendml needs before
the graph runs (DirectML's K is a field): an initializer, a Constant node or a graph input; a K computed by
another node is refused, naming the node. ``axis`` may be negative (from the end) in every version. ``sorted = 0``
lets a backend return the K in any order: opendml returns them sorted all the same (the order DirectML's TOP_K
defines). Ties: DirectML's order, the lower index first, and at the K boundary the lowest indices kept
(docs/semantics.md, **TOP_K**), which is what ONNX's reference and its node tests expect.

The index output: TOP_K writes UINT64 (feature level 5_0) or UINT32 indices, never INT64; one CAST step makes them
ONNX's INT64, exactly (every index is below 2^63). The step is left out where no one reads the indices.
K = 0 gives empty outputs (nothing runs).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...device import Device
from ...dtypes import DataType
from ...enums import AxisDirection
from ...ops.cast import CAST_SCHEMA, CastDesc
from ...ops.top_k import TOP_K1_SCHEMA, TOP_K_SCHEMA, TopK1Desc, TopKDesc
from .. import types
from ..graph import NodeView, Value, optional
from .arg_reduction import axis_problems
from .base import (
    Lowered,
    Mapping,
    describe,
    expect_known,
    expect_single_element,
    expect_type,
    fail,
    leading_ones,
    make_step,
    newest_types,
    problem,
)

_ALLOWED = newest_types(TOP_K_SCHEMA, "InputTensor")
_WHY = "(DirectML's K is a field of the operator description)"
_K_FROM_INPUT = 10  # the version from which K is an input, not an attribute


def _axis(node: NodeView, rank: int) -> int:
    """The axis in [0, rank); a negative one counts from the end."""
    axis = int(node.attribute("axis", -1))
    if not -rank <= axis < rank:
        raise fail(node, "axis", f"must be in [{-rank}, {rank - 1}] for X of rank {rank}", axis)
    return axis % rank


def _k(node: NodeView, inputs: Sequence[Value | None]) -> int:
    """K as the node gives it (attribute or input), checked against nothing yet."""
    assert node.version is not None
    if node.version < _K_FROM_INPUT:
        k = node.attribute("k")
        if k is None:
            raise fail(node, "k", "must be given (TopK-1's attribute)", None)
        return int(k)
    given = optional(inputs, 1)
    if given is None:
        raise fail(node, "Input K", "must be given", None)
    assert given.host is not None
    return int(np.asarray(given.host).reshape(-1)[0])


def check_top_k(node: NodeView, inputs: Sequence[Value | None]) -> list[str]:
    assert node.version is not None
    problems = expect_type(node, "X", inputs[0], _ALLOWED)
    if node.version >= _K_FROM_INPUT:
        k = optional(inputs, 1)
        if k is None:
            problems.append(problem(node, "Input K", "must be given", None))
        problems += expect_known(node, "K", k, _WHY)
        problems += expect_single_element(node, "K", k)
    elif node.attribute("k") is None:
        problems.append(problem(node, "k", "must be given (TopK-1's attribute)", None))
    return problems + axis_problems(node, "X", inputs[0], _axis)


def _index_type(device: Device) -> DataType:
    """UINT64 where TOP_K's row at the device's level takes it, else UINT32."""
    row = TOP_K_SCHEMA.row_at(device.feature_level)
    return DataType.UINT64 if row is not None and DataType.UINT64 in row.types["OutputIndexTensor"] else DataType.UINT32


def lower_top_k(node: NodeView, inputs: Sequence[Value | None], device: Device) -> Lowered:
    x = inputs[0]
    assert x is not None and x.data_type is not None
    shape = tuple(int(n) for n in x.concrete_shape)
    axis = _axis(node, len(shape))
    k = _k(node, inputs)
    if not 0 <= k <= shape[axis]:
        raise fail(node, "K", f"must be in [0, {shape[axis]}] (X's size along axis {axis})", k)
    kept = (*shape[:axis], k, *shape[axis + 1:])
    largest = int(node.attribute("largest", 1)) != 0
    schema = TOP_K_SCHEMA if largest else TOP_K1_SCHEMA
    index_type = _index_type(device)
    # one padding for both steps, so that the CAST reads TOP_K's indices in the sizes they are written in
    pad = max(leading_ones(schema, device, len(shape)), leading_ones(CAST_SCHEMA, device, len(shape)))
    described = (*shape[:axis], max(k, 1), *shape[axis + 1:])  # K = 0: described with 1, never run
    tensors = (describe(x.data_type, shape, pad=pad), describe(x.data_type, described, pad=pad),
               describe(index_type, described, pad=pad), axis + pad, max(k, 1))
    desc = TopKDesc(*tensors) if largest else TopK1Desc(*tensors, AxisDirection.INCREASING)
    values_name, indices_name = node.proto.output[0], node.proto.output[1]
    values = Value(values_name, x.onnx_type, kept, source=node.label)
    raw = Value(f"{indices_name}#{index_type.name}", types.onnx_type_of(index_type.numpy), kept, source=node.label)
    indices = Value(indices_name, types.INT64, kept, source=node.label)
    select = make_step(node, device, desc, [x.name], values, raw)
    cast = CastDesc(describe(index_type, described, pad=pad), describe(DataType.INT64, described, pad=pad))
    return Lowered((values, indices), make_step(node, device, cast, [raw.name], indices), (select,))


TOP_K = Mapping("TopK", (1, 10, 11, 24), check_top_k, lower_top_k)
