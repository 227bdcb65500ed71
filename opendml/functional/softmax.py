"""``opendml.softmax``, ``log_softmax`` and ``hardmax``: DML_OPERATOR_ACTIVATION_SOFTMAX1, LOG_SOFTMAX1 and
HARDMAX1 over arrays.

``axis`` is SOFTMAX1's Axes: one axis (``-1``, the last, by default, as ``torch.softmax``'s ``dim`` and ONNX's
``axis``) or several, normalized together (every element sharing the other coordinates is one row). On a device
below feature level 5_1 the old operator runs where it computes the same thing (the last axis, an effective rank
of at most 2), and anything else is refused as the level's own.
"""

from __future__ import annotations

from typing import Any

import numpy as np  # noqa: F401 (the docstrings' examples run in this module's namespace)

from .. import front_ends
from ..errors import invalid
from ..feature_levels import FeatureLevel
from ..ops.definition import OperatorDefinition
from ..ops.softmax import (
    HARDMAX,
    HARDMAX1,
    LOG_SOFTMAX,
    LOG_SOFTMAX1,
    SOFTMAX,
    SOFTMAX1,
)
from ..tensor import TensorDesc
from ..typing import ArrayInput, ArrayObject, Axes, DeviceLike
from .devices import _as_array, _resolve_device
from .placement import _leading_ones, _run, _view_as
from .reductions import _normalize_axes
from .results import _output

NORMALIZATIONS = {"softmax": (SOFTMAX1, SOFTMAX), "log_softmax": (LOG_SOFTMAX1, LOG_SOFTMAX),
              "hardmax": (HARDMAX1, HARDMAX)}


def softmax(x: ArrayInput, axis: Axes = -1, *, out: ArrayObject | None = None, device: DeviceLike = None) -> Any:
    """SOFTMAX of ``x`` over ``axis`` (an axis or several; -1 by default): ``exp(x_i - m) / sum`` of each row,
    FLOAT32 or FLOAT16, by docs/semantics.md 9g's correctly rounded steps (the same bits on every backend and
    thread count). A row holding a NaN, a +inf, or only -inf is NaN.

    >>> softmax(np.array([[0.0, 0.0, 0.0, 0.0], [-np.inf, 7.0, 7.0, -np.inf]], np.float32))
    array([[0.25, 0.25, 0.25, 0.25],
           [0.  , 0.5 , 0.5 , 0.  ]], dtype=float32)
    """
    return _normalized("softmax", x, axis, out, device)


def log_softmax(x: ArrayInput, axis: Axes = -1, *, out: ArrayObject | None = None,
                device: DeviceLike = None) -> Any:
    """LOG_SOFTMAX of ``x`` over ``axis``: ``(x_i - m) - log(sum)`` of each row (docs/semantics.md 9g).

    >>> log_softmax(np.array([0.0, 0.0, -np.inf], np.float32))
    array([-0.6931472, -0.6931472,       -inf], dtype=float32)
    """
    return _normalized("log_softmax", x, axis, out, device)


def hardmax(x: ArrayInput, axis: Axes = -1, *, out: ArrayObject | None = None, device: DeviceLike = None) -> Any:
    """HARDMAX of ``x`` over ``axis``: 1 at the first largest element of each row (ARGMAX's index: NaN ignored),
    0 elsewhere.

    >>> hardmax(np.array([[1, 3, 3], [np.nan, 0, 2]], np.float32))
    array([[0., 1., 0.],
           [0., 0., 1.]], dtype=float32)
    """
    return _normalized("hardmax", x, axis, out, device)


def _normalized(python: str, x: ArrayInput, axis: Axes, out: Any, device: DeviceLike) -> Any:
    newer, older = NORMALIZATIONS[python]
    owner = f"opendml.{python}"
    front_end = front_ends.of((x,), out)
    if front_end is not None:  # traced (opendml.compile) or Dask
        return front_end.normalized(python, x, axis, out, device)
    device = _resolve_device(device, x, newer.schema.name)
    array = _as_array(device, x, newer.schema.name, "InputTensor")
    if array.ndim == 0:
        raise invalid(owner, "x", "must have at least one dimension (the normalization runs along an axis)",
                      "a 0-d array")
    axes = _normalize_axes(axis, array.ndim, newer.schema.name)
    op = _chosen(newer, older, device.feature_level, tuple(array.shape), axes)
    result = _output(device, out, tuple(array.shape), array.dtype, op.schema.name, x)
    pad = _leading_ones(op.schema, device, array.ndim)
    full = (1,) * pad + tuple(array.shape)
    shifted = [a + pad for a in axes]

    def make(i: TensorDesc, o: TensorDesc) -> object:
        return op.desc_type(i, o) if op is older else op.desc_type(i, o, shifted)

    _run(device, op.schema, make, [_view_as(array, full)], _view_as(result.array, full))
    return result.deliver()


def _chosen(newer: OperatorDefinition, older: OperatorDefinition, level: FeatureLevel, shape: tuple[int, ...],
            axes: tuple[int, ...]) -> OperatorDefinition:
    """The 1 variant from its level (5_1); below it the old operator where it is the same operation (the last
    axis of an effective rank of at most 2), else the 1 variant, which the level then refuses by name."""
    if newer.schema.row_at(level) is not None:
        return newer
    leading = next((k for k, n in enumerate(shape) if n != 1), len(shape))
    if axes == (len(shape) - 1,) and len(shape) - leading <= 2:
        return older
    return newer
