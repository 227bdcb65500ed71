"""ONNX's Cast as DML_OPERATOR_CAST: ``to`` names the output's element type, one of the types CAST takes here
(DOUBLE, FLOAT, FLOAT16 and the 8- to 64-bit integers; not BOOL, strings or float8). ONNX leaves a float beyond the
target integer's range undefined; opendml's rule (docs/semantics.md 9d: truncated, saturated, NaN 0) answers it; a
DOUBLE to FLOAT16 rounds once, straight from the double. ``saturate`` concerns float8 outputs only, which DirectML
has none of."""

from __future__ import annotations

from collections.abc import Sequence

from ...device import Device
from ...ops.cast import CAST_SCHEMA, CastDesc
from .. import types
from ..graph import NodeView, Value
from .base import Lowered, Mapping, describe, expect_type, leading_ones, make_step, output_value, problem

_TAKEN = frozenset(types.FLOATS | types.INTEGERS | {types.DOUBLE})  # CAST's 4_1 row (the device's level checks it)


def _check(node: NodeView, values: Sequence[Value | None]) -> list[str]:
    if len(values) != 1:
        return [problem(node, "inputs", "must be one", len(values))]
    to = node.attribute("to")
    found = [] if to in _TAKEN else [problem(node, "to", f"must be one of the types opendml maps "
                                                         f"({types.type_names(_TAKEN)})",
                                             types.type_name(int(to)) if to is not None else None)]
    return found + expect_type(node, "input", values[0], _TAKEN)


def _lower(node: NodeView, values: Sequence[Value | None], device: Device) -> Lowered:
    (x,) = values
    assert x is not None and x.data_type is not None
    to = int(node.attribute("to"))
    target = types.data_type(to)
    assert target is not None  # checked
    shape = tuple(int(n) for n in x.concrete_shape)
    pad = leading_ones(CAST_SCHEMA, device, max(len(shape), 1))
    desc = CastDesc(describe(x.data_type, shape, pad=pad), describe(target, shape, pad=pad))
    out = output_value(node, to, shape)
    return Lowered((out,), make_step(node, device, desc, [x.name], out))


CAST = Mapping("Cast", None, _check, _lower)
