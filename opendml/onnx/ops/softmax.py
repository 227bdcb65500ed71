"""ONNX Softmax, LogSoftmax and Hardmax (every version) -> ACTIVATION_SOFTMAX1, LOG_SOFTMAX1 and HARDMAX1 over Axes.

Up to version 12 the input is "coerced to 2-D at ``axis``" (default 1): the rows are the elements sharing the
coordinates before ``axis``, which is SOFTMAX1 over the axes ``axis .. rank - 1``. From version 13 the
normalization runs along ``axis`` alone (default -1): SOFTMAX1 over that axis. Negative axes count from the end
from version 11 on. On a device below feature level 5_1 the old operator runs where it is the same operation (the
last axis of an effective rank of at most 2); anything else is refused as that level's. The values are
docs/semantics.md 9g's correctly rounded steps; ONNX's reference computes ``exp(x - max) / sum`` in the
input's type with NumPy's ``exp``, so its last bits may differ (a tolerance its conformance tests allow).
A rank-0 input is refused (there is no axis); an axis of size 0 too (DirectML's tensors have no size 0).
"""

from __future__ import annotations

from collections.abc import Sequence

from ...device import Device
from ...errors import InvalidArgumentError
from ...functional.softmax import _chosen
from ...ops.definition import OperatorDefinition
from ...ops.softmax import HARDMAX, HARDMAX1, LOG_SOFTMAX, LOG_SOFTMAX1, SOFTMAX, SOFTMAX1
from ..graph import NodeView, Value
from .base import (
    Lowered,
    Mapping,
    describe,
    expect_type,
    fail,
    leading_ones,
    make_step,
    newest_types,
    output_value,
    problem,
)

_VERSIONS = (1, 11, 13)
_OPERATORS = {"Softmax": (SOFTMAX1, SOFTMAX), "LogSoftmax": (LOG_SOFTMAX1, LOG_SOFTMAX),
              "Hardmax": (HARDMAX1, HARDMAX)}


def _axes(node: NodeView, rank: int) -> tuple[int, ...]:
    """SOFTMAX1's Axes for the node: ``axis`` alone from version 13, ``axis`` and every later one before."""
    assert node.version is not None
    newer = node.version >= 13
    axis = int(node.attribute("axis", -1 if newer else 1))
    lowest = -rank  # counted from the end in every version (version 11 documents it; converters wrote it before)
    if not lowest <= axis < rank:
        raise fail(node, "axis", f"must be in [{lowest}, {rank - 1}] for input of rank {rank}", axis)
    axis %= rank
    return (axis,) if newer else tuple(range(axis, rank))


def _mapping(op_type: str) -> Mapping:
    newer, older = _OPERATORS[op_type]
    allowed = newest_types(newer.schema, "InputTensor")

    def check(node: NodeView, inputs: Sequence[Value | None]) -> list[str]:
        problems = expect_type(node, "input", inputs[0], allowed)
        x = inputs[0]
        if x is not None and x.shape is not None:
            if not x.shape:
                problems.append(problem(node, "Input input", "must have rank 1 or more", "a scalar"))
            else:
                try:
                    _axes(node, len(x.shape))
                except InvalidArgumentError as error:
                    problems.append(str(error))
        return problems

    def lower(node: NodeView, inputs: Sequence[Value | None], device: Device) -> Lowered:
        x = inputs[0]
        assert x is not None and x.data_type is not None
        shape = x.concrete_shape
        axes = _axes(node, len(shape))
        if any(shape[a] == 0 for a in axes):
            raise fail(node, "Input input", "must not be empty along the normalized axes (DirectML's tensors have "
                       "no size 0)", f"shape {list(shape)}")
        op: OperatorDefinition = _chosen(newer, older, device.feature_level, shape, axes)
        pad = leading_ones(op.schema, device, len(shape))
        tensor = describe(x.data_type, shape, pad=pad)
        desc = op.desc_type(tensor, tensor) if op is older else op.desc_type(tensor, tensor, [a + pad for a in axes])
        out = output_value(node, x.onnx_type, shape)
        return Lowered((out,), make_step(node, device, desc, [x.name], out))

    return Mapping(op_type, _VERSIONS, check, lower)


SOFTMAX_MAPPINGS: tuple[Mapping, ...] = tuple(_mapping(op_type) for op_type in _OPERATORS)
