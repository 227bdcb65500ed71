"""ACTIVATION_SOFTMAX, LOG_SOFTMAX and HARDMAX, and their 5_1 variants SOFTMAX1, LOG_SOFTMAX1 and HARDMAX1 (Axes).

The old three normalize over the last dimension of an input whose effective rank (its DimensionCount less the
leftmost dimensions of size 1) is at most 2, as their pages require; the 1 variants over any set of Axes (the
old ones are the 1 variants with ``Axes = {DimensionCount - 1}``, their pages say). One "row" below is the set of
elements that share every coordinate off the axes.

Each is a documented **composition of correctly rounded steps** (docs/semantics.md, 9g), so every backend, thread
count and split gives the same bits. FLOAT32, per row:

1. ``m`` = the largest element (exact; +0.0 above -0.0, as REDUCE's MAX);
2. ``d_i = x_i - m``, one IEEE FLOAT32 subtraction (so ``d_i <= 0``, and 0 at the largest);
3. ``e_i = EXP(d_i)`` correctly rounded to FLOAT32 (``opendml.rounded``);
4. ``S`` = the exact sum of the ``e_i``, rounded once to FLOAT32 (REDUCE's accumulator; ``1 <= S <= n``);
5. SOFTMAX: ``y_i = e_i / S``, one IEEE FLOAT32 division; LOG_SOFTMAX: ``y_i = d_i - LOG(S)``, the logarithm
   correctly rounded to FLOAT32, then one IEEE FLOAT32 subtraction.

A row holding a NaN, a +inf, or only -inf is NaN throughout (the steps' IEEE results: ``inf - inf`` is NaN). FLOAT16
inputs are converted to FLOAT32 exactly, run the same steps, and the FLOAT32 result is rounded once to FLOAT16.
HARDMAX is 1 at ARGMAX's index with its defaults (the first largest element, NaN ignored: the first NaN where
the row holds nothing else), 0 elsewhere. The reference below states the steps in NumPy; the CPU kernels
(``backends/cpu_kernels/softmax.py``) run them another way and are tested against an oracle of tests/ own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import FLOATS
from ..errors import invalid
from ..feature_levels import FeatureLevel as L
from ..kernels.spec import KernelSpec, Normalization
from ..schema import OperatorSchema, SupportRow, TensorField
from ..tensor import TensorDesc
from ..validate import check_same_data_type
from .arg_reduction import check_axes
from .definition import OperatorDefinition

TENSORS = (TensorField("InputTensor", "input"), TensorField("OutputTensor", "output"))
FUNCTIONS = ("SOFTMAX", "LOG_SOFTMAX", "HARDMAX")


def _row(level: L, dims: tuple[int, int]) -> SupportRow:
    return SupportRow(level, dims, {"InputTensor": FLOATS, "OutputTensor": FLOATS})


# The old pages' tables (the three give the same rows), newest first; the 1 variants' single row (5_1).
_OLD_ROWS = (_row(L.FL_3_0, (1, 8)), _row(L.FL_2_0, (4, 5)), _row(L.FL_1_0, (4, 4)))
_NEW_ROWS = (_row(L.FL_5_1, (1, 8)),)


def _schema(function: str, axes: bool) -> OperatorSchema:
    name = f"ACTIVATION_{function}1" if axes else f"ACTIVATION_{function}"
    return OperatorSchema(name=name, introduced=L.FL_5_1 if axes else L.FL_1_0, tensors=TENSORS,
                          rows=_NEW_ROWS if axes else _OLD_ROWS)


@dataclass(frozen=True)
class ActivationSoftmaxDesc:
    """DML_ACTIVATION_SOFTMAX_OPERATOR_DESC: over the last dimension (effective rank at most 2)."""

    input_tensor: TensorDesc
    output_tensor: TensorDesc


@dataclass(frozen=True)
class ActivationSoftmax1Desc:
    """DML_ACTIVATION_SOFTMAX1_OPERATOR_DESC, its fields in DirectML's order; AxisCount is ``len(axes)``."""

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    axes: Sequence[int]


@dataclass(frozen=True)
class ActivationLogSoftmaxDesc(ActivationSoftmaxDesc):
    """DML_ACTIVATION_LOG_SOFTMAX_OPERATOR_DESC: over the last dimension (effective rank at most 2)."""


@dataclass(frozen=True)
class ActivationLogSoftmax1Desc(ActivationSoftmax1Desc):
    """DML_ACTIVATION_LOG_SOFTMAX1_OPERATOR_DESC; AxisCount is ``len(axes)``."""


@dataclass(frozen=True)
class ActivationHardmaxDesc(ActivationSoftmaxDesc):
    """DML_ACTIVATION_HARDMAX_OPERATOR_DESC: over the last dimension (effective rank at most 2)."""


@dataclass(frozen=True)
class ActivationHardmax1Desc(ActivationSoftmax1Desc):
    """DML_ACTIVATION_HARDMAX1_OPERATOR_DESC; AxisCount is ``len(axes)``."""


@dataclass(frozen=True)
class NormalizationParams:
    function: str  # SOFTMAX, LOG_SOFTMAX or HARDMAX
    axes: tuple[int, ...]  # sorted increasingly


def _prepare(owner: str, function: str, desc: ActivationSoftmaxDesc | ActivationSoftmax1Desc) -> NormalizationParams:
    x, out = desc.input_tensor, desc.output_tensor
    check_same_data_type(owner, "InputTensor", x, "OutputTensor", out)
    if out.sizes != x.sizes:
        raise invalid(owner, "OutputTensor.Sizes", f"must equal InputTensor.Sizes ({list(x.sizes)})", list(out.sizes))
    if isinstance(desc, ActivationSoftmax1Desc):
        return NormalizationParams(function, check_axes(owner, desc.axes, x.dimension_count))
    leading = next((k for k, n in enumerate(x.sizes) if n != 1), x.dimension_count)
    if x.dimension_count - leading > 2:
        raise invalid(owner, "InputTensor.Sizes", "must have an effective rank of at most 2 (the DimensionCount "
                      "less the leftmost dimensions of size 1)", list(x.sizes))
    return NormalizationParams(function, (x.dimension_count - 1,))


def rows_of(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``x`` as 2-D: one row per combination of the other axes (in order), the normalized axes flattened."""
    kept = [k for k in range(x.ndim) if k not in axes]
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    return np.transpose(x, kept + list(axes)).reshape(-1, n)


def from_rows(rows: np.ndarray, shape: tuple[int, ...], axes: tuple[int, ...]) -> np.ndarray:
    """``rows_of``'s inverse: the rows laid back out in ``shape``."""
    kept = [k for k in range(len(shape)) if k not in axes]
    order = kept + list(axes)
    moved = rows.reshape([shape[k] for k in order])
    return np.transpose(moved, np.argsort(order))


def hardmax_rows(rows: np.ndarray) -> np.ndarray:
    """1 at each row's ARGMAX index with its defaults (the first largest, NaN ignored), 0 elsewhere (rows 2-D)."""
    wide = rows.astype(np.float32)
    nan = np.isnan(wide)
    key = np.where(nan, -np.inf, wide)
    first = np.argmax(key, axis=-1)  # the first of the largest; a NaN-only row or NaN and -inf: fixed below
    lost = nan[np.arange(len(rows)), first]
    if lost.any():  # the first element was NaN while another (-inf) is a number: the first number wins
        numbers = ~nan[lost]
        first[lost] = np.where(numbers.any(axis=-1), np.argmax(numbers, axis=-1), 0)
    out = np.zeros(rows.shape, rows.dtype)
    out[np.arange(len(rows)), first] = 1
    return out


def normalize_rows(rows: np.ndarray, function: str, exact_sums: object = None) -> np.ndarray:
    """SOFTMAX or LOG_SOFTMAX of each row (2-D FLOAT32 or FLOAT16) by the module's steps, in the rows' type.
    ``exact_sums(e)``: each row of the FLOAT32 ``e`` summed exactly and rounded once to FLOAT32 (the
    reference's own, by ``math.fsum``, where None)."""
    from ..rounded.evaluate import evaluate

    x = rows.astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        m = _largest(x)
        d = x - m[:, None]
        e = evaluate("EXP", d, "FLOAT32")
        s = _exact_sums(e) if exact_sums is None else exact_sums(e)  # type: ignore[operator]
        if function == "SOFTMAX":
            y = e / s[:, None]
        else:
            y = d - evaluate("LOG", s, "FLOAT32")[:, None]
        y[np.isnan(x).any(axis=-1) | np.isinf(m)] = np.nan
        return y.astype(rows.dtype)  # FLOAT16: the FLOAT32 result rounded once (a LOG_SOFTMAX may overflow)


def _largest(x: np.ndarray) -> np.ndarray:
    """Each row's largest element, +0.0 above -0.0 (a NaN row's value does not matter: the row is NaN)."""
    with np.errstate(invalid="ignore"):
        m = np.nanmax(np.where(np.isnan(x), -np.inf, x), axis=-1) if x.shape[-1] else np.zeros(len(x), x.dtype)
    zero = m == 0
    if zero.any():
        positive = ((x[zero] == 0) & ~np.signbit(x[zero])).any(axis=-1)
        m[zero] = np.where(positive, np.float32(0.0), np.float32(-0.0))
    return m.astype(np.float32)


def _exact_sums(e: np.ndarray) -> np.ndarray:
    """Each row's exact sum rounded once to FLOAT32 (REDUCE's reference: ``math.fsum`` and the midpoint fix)."""
    from .reduce import _exact_float

    out = np.empty(len(e), np.float32)
    for r, row in enumerate(e):
        out[r] = np.float32(_exact_float(row.astype(np.float64), np.dtype(np.float32))) if row.any() else 0.0
    return out


def normalization_reference(inputs: Sequence[np.ndarray | None], params: NormalizationParams) -> np.ndarray:
    """The operator over the input, shaped and typed as the output."""
    (x,) = inputs
    assert x is not None
    rows = rows_of(x, params.axes)
    if params.function == "HARDMAX":
        result = hardmax_rows(rows)
    else:
        result = normalize_rows(rows, params.function)
    return from_rows(result, x.shape, params.axes).copy()


def normalization_kernel(name: str, params: NormalizationParams,
                         tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
    """A normalization record over the input's own elements (the CPU kernels' ``softmax`` module runs it)."""
    x = tensors["InputTensor"]
    assert x is not None
    return KernelSpec(name, (x.data_type,), x.data_type, ex.Load(0, x.data_type),
                      normalization=Normalization(params.function, params.axes))


def _definition(function: str, axes: bool, desc_type: type) -> OperatorDefinition:
    schema = _schema(function, axes)
    name = schema.name

    def prepare(desc: ActivationSoftmaxDesc | ActivationSoftmax1Desc) -> NormalizationParams:
        return _prepare(name, function, desc)

    def kernel(params: NormalizationParams, tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
        return normalization_kernel(name, params, tensors)

    return OperatorDefinition(schema, desc_type, prepare, normalization_reference,  # type: ignore[arg-type]
                              kernel)


SOFTMAX = _definition("SOFTMAX", False, ActivationSoftmaxDesc)
SOFTMAX1 = _definition("SOFTMAX", True, ActivationSoftmax1Desc)
LOG_SOFTMAX = _definition("LOG_SOFTMAX", False, ActivationLogSoftmaxDesc)
LOG_SOFTMAX1 = _definition("LOG_SOFTMAX", True, ActivationLogSoftmax1Desc)
HARDMAX = _definition("HARDMAX", False, ActivationHardmaxDesc)
HARDMAX1 = _definition("HARDMAX", True, ActivationHardmax1Desc)
