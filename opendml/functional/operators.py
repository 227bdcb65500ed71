"""The element-wise functions of one array: ``clip`` and ``threshold`` (as ELEMENT_WISE_CLIP1 where the
operator asked for takes no such tensor but CLIP1 gives its bits).

Both start with the cached fast path (a repeated call on NumPy arrays). Each then hands a traced argument
to ``opendml.compile``'s tracing, and otherwise describes its array and runs one operator over it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..dask.detect import any_dask as _any_dask
from ..device import Device
from ..dtypes import DataType
from ..errors import invalid
from ..ops.clip import CLIP1_SCHEMA, CLIP_SCHEMA, ElementWiseClip1Desc, ElementWiseClipDesc
from ..ops.elementwise import ScaleBias, float_field, typed_bound
from ..ops.threshold import THRESHOLD_SCHEMA, ElementWiseThresholdDesc
from ..schema import OperatorSchema
from ..tensor import TensorDesc
from .devices import _as_array, _dask, _resolve_device, _traced, _tracing
from .fastpath import Repeats, _direct, _exact, _remember, _repeated
from .placement import _leading_ones, _run, _view_as
from .results import _output

# Calls remembered for a repeat on the same arrays (``fastpath._repeated``), one table per function.
_clip_repeats: Repeats = {}
_threshold_repeats: Repeats = {}


def _unary(schema: OperatorSchema, x: Any, out: Any, device: Device,
           make_desc: Callable[[TensorDesc, TensorDesc], object], key: Any = None, device_arg: object = None,
           repeats: Repeats | None = None, scalars: tuple[Any, Any, Any] = (None, None, None),
           dtype: Any = None) -> Any:
    """One operator over ``x``'s array, into ``out`` or a new array of ``dtype`` (None: x's)."""
    array = _as_array(device, x, schema.name, "InputTensor")
    result = _output(device, out, array.shape, array.dtype if dtype is None else dtype, schema.name, x)
    pad = _leading_ones(schema, device, max(array.ndim, 1))
    shape = (1,) * pad + (array.shape or (1,))
    compiled = _run(device, schema, make_desc, [_view_as(array, shape)], _view_as(result.array, shape))
    if key is not None and array is x and compiled is not None:
        _remember(device, key, x, out, result.array, compiled, device_arg, repeats, scalars)
    return result.deliver()


def clip(x: Any, min: float | None, max: float | None, *, scale_bias: ScaleBias | tuple[float, float] | None = None,
         out: Any = None, device: Device | str | None = None) -> Any:
    """``max(min, min(x * scale + bias, max))`` element by element; None leaves a side unbounded.

    Integer tensors use ELEMENT_WISE_CLIP1 with exact typed bounds where the device's level has it.

    >>> clip(np.array([-3, 0, 5], np.int32), -1, 2.7)
    array([-1,  0,  2], dtype=int32)
    """
    done = _repeated(_clip_repeats, x, out, device, min, max, scale_bias)  # first: the per-call cost of small
    if done is not None:                                                    # arrays (never a traced x)
        return done
    key = ("clip", _exact(min), _exact(max), _exact(scale_bias))
    done = _direct(device, key, x, out, _clip_repeats, (min, max, scale_bias))
    if done is not None:
        return done
    if _tracing(x):
        return _traced().clip(x, min, max, scale_bias, out, device)
    if _any_dask(x, out):
        return _dask().clip(x, min, max, scale_bias, out, device)
    resolved = _resolve_device(device, x, CLIP_SCHEMA.name)
    dtype = _as_array(resolved, x, CLIP_SCHEMA.name, "InputTensor").dtype
    schema, make_desc = _clip_desc(resolved, dtype, min, max, scale_bias)
    return _unary(schema, x, out, resolved, make_desc, key, device, _clip_repeats, (min, max, scale_bias))


def _clip_desc(device: Device, dtype: np.dtype, min: float | None, max: float | None,
               scale_bias: ScaleBias | tuple[float, float] | None
               ) -> tuple[OperatorSchema, Callable[[TensorDesc, TensorDesc], object]]:
    """The operator clip runs for an input of ``dtype``, and how its description is made from the input's
    and the output's: one rule for arrays and for traced functions."""
    data_type = DataType.parse(dtype, owner=CLIP_SCHEMA.name, field="InputTensor.DataType")
    sb = ScaleBias.parse(scale_bias, CLIP_SCHEMA.name)
    if data_type.is_integer and device.feature_level >= CLIP1_SCHEMA.introduced:
        owner = CLIP1_SCHEMA.name
        low, high = data_type.integer_range
        lo = low if min is None else typed_bound(_number(min, owner, "Min"), data_type, owner, "Min")
        hi = high if max is None else typed_bound(_number(max, owner, "Max"), data_type, owner, "Max")
        assert lo is not None and hi is not None  # an integer bound is never None: typed_bound refuses NaN

        def clip1(i: TensorDesc, o: TensorDesc) -> object:
            return ElementWiseClip1Desc(i, o, data_type, int(lo), int(hi), sb)

        return CLIP1_SCHEMA, clip1
    lo_f = -math.inf if min is None else min
    hi_f = math.inf if max is None else max
    return CLIP_SCHEMA, lambda i, o: ElementWiseClipDesc(i, o, lo_f, hi_f, sb)


def _number(value: object, owner: str, field: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise invalid(owner, field, "must be a number", repr(value))
    return int(value) if isinstance(value, (int, np.integer)) else float(value)


def threshold(x: Any, min: float, *, scale_bias: ScaleBias | tuple[float, float] | None = None,
              out: Any = None, device: Device | str | None = None) -> Any:
    """``max(x * scale + bias, min)`` element by element (ELEMENT_WISE_THRESHOLD).

    >>> threshold(np.array([-2.0, 0.5], np.float32), 0.0)
    array([0. , 0.5], dtype=float32)
    """
    done = _repeated(_threshold_repeats, x, out, device, min, scale_bias, None)  # first: the per-call cost of
    if done is not None:                                                         # small arrays
        return done
    key = ("threshold", _exact(min), _exact(scale_bias))
    done = _direct(device, key, x, out, _threshold_repeats, (min, scale_bias, None))
    if done is not None:
        return done
    if _tracing(x):
        return _traced().threshold(x, min, scale_bias, out, device)
    if _any_dask(x, out):
        return _dask().threshold(x, min, scale_bias, out, device)
    resolved = _resolve_device(device, x, THRESHOLD_SCHEMA.name)
    dtype = _as_array(resolved, x, THRESHOLD_SCHEMA.name, "InputTensor").dtype
    schema, make_desc = _threshold_desc(resolved, dtype, min, scale_bias)
    return _unary(schema, x, out, resolved, make_desc, key, device, _threshold_repeats, (min, scale_bias, None))


def _threshold_desc(device: Device, dtype: np.dtype, min: float, scale_bias: ScaleBias | tuple[float, float] | None
                    ) -> tuple[OperatorSchema, Callable[[TensorDesc, TensorDesc], object]]:
    """The operator threshold runs for an input of ``dtype`` (one rule for arrays and traced functions).

    ELEMENT_WISE_THRESHOLD takes no INT64 or UINT64 tensor: those run as ELEMENT_WISE_CLIP1 with Max the
    type's largest value and Min what THRESHOLD's FLOAT Min would be on such a tensor (rounded to float32,
    truncated toward zero, saturated: SPEC 8.3), so the bits are THRESHOLD's, where the level has CLIP1.
    """
    owner = THRESHOLD_SCHEMA.name
    sb = ScaleBias.parse(scale_bias, owner)
    data_type = DataType.parse(dtype, owner=owner, field="InputTensor.DataType")
    if data_type in _WIDE_INTEGERS and device.feature_level >= CLIP1_SCHEMA.introduced:
        if sb is not None:  # THRESHOLD's own rule (SPEC 8.2), under its name
            raise invalid(owner, "ScaleBias", "must be absent on integer tensors", f"ScaleBias on {data_type.name}")
        low = typed_bound(float_field(min, owner, "Min"), data_type, owner, "Min")
        high = data_type.integer_range[1]

        def clip1(i: TensorDesc, o: TensorDesc) -> object:
            return ElementWiseClip1Desc(i, o, data_type, int(low), high, sb)  # type: ignore[arg-type]

        return CLIP1_SCHEMA, clip1
    return THRESHOLD_SCHEMA, lambda i, o: ElementWiseThresholdDesc(i, o, min, sb)


_WIDE_INTEGERS = frozenset({DataType.INT64, DataType.UINT64})
