"""The unary family's factory: an operator of one input and one output of the same type and sizes.

A unary operator is declared once (``unary``): its name, level, support rows, description type, fields, the
element math over the compute value (``element``: float32 for FLOAT32/FLOAT16 tensors, the tensor's own type
for integers, after the optional ScaleBias) and its NumPy reference over the same values (``reference``,
written apart: the oracle the kernels are tested against). Every front end (the functional API,
``opendml.compile``, Dask, the graph builder, ``opendml dispatch``, ``opendml support``) is derived from the
declaration's ``Api`` record and its ``fields``.

>>> from opendml.ops import BY_NAME
>>> relu = BY_NAME["ACTIVATION_RELU"]
>>> relu.api.python, [f.name for f in relu.fields]
('relu', [])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import expr as ex
from ..dtypes import DataType
from ..feature_levels import FeatureLevel
from ..kernels.spec import KernelSpec, Scalars
from ..schema import OperatorSchema, SupportRow, TensorField, snake_case
from ..tensor import TensorDesc
from ..validate import check_same_sizes
from .definition import REQUIRED, Adapter, Api, Field, OperatorDefinition
from .elementwise import ScaleBias, apply_scale_bias, compute_values, float_field, prepare_unary, typed_bound

UNARY_TENSORS = (TensorField("InputTensor", "input"), TensorField("OutputTensor", "output"))
SCALE_BIAS = Field("ScaleBias", "scale_bias", "scale_bias", default=None)


def unary_row(level: FeatureLevel, dimensions: tuple[int, int], types: frozenset[DataType]) -> SupportRow:
    """A support-table row whose input and output accept the same types."""
    return SupportRow(level, dimensions, {"InputTensor": types, "OutputTensor": types})


def float_parameter(name: str, default: Any = REQUIRED) -> Field:
    """A DirectML FLOAT field (``Alpha``), rounded to float32 as a C cast would; the functional keyword is
    its snake_case name (``sigmoid_input_scale``), ``default`` what it takes when left out (the page's typical
    value; none: required)."""
    return Field(name, "float", snake_case(name), default=default)


@dataclass(frozen=True)
class UnaryDesc:
    """A unary description's two tensors; each operator's Desc is a subclass adding its fields."""

    input_tensor: TensorDesc
    output_tensor: TensorDesc


@dataclass(frozen=True)
class ScaleBiasDesc(UnaryDesc):
    """A unary description with DirectML's optional DML_SCALE_BIAS (``g(x) = x * scale + bias`` first)."""

    scale_bias: ScaleBias | None = None


@dataclass(frozen=True)
class UnaryParams:
    """What a unary operator's math needs: the input's type, the float32 ScaleBias, its FLOAT fields in float32
    and its enum fields as members (by DirectML field name), and the output's type."""

    data_type: DataType
    scale_bias: tuple[np.float32, np.float32] | None
    values: Mapping[str, Any] = field(default_factory=dict)
    output_type: DataType | None = None  # None: the input's

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    @property
    def output(self) -> DataType:
        return self.data_type if self.output_type is None else self.output_type


def compute_type(t: DataType) -> DataType:
    """The type element math computes in: float32 for FLOAT32 and FLOAT16 tensors, FLOAT64 and an integer type
    themselves."""
    return DataType.FLOAT32 if t.is_float and t is not DataType.FLOAT64 else t


class Constants:
    """An element function's scalars: ``c(value)`` is a Param of the compute type holding ``value``,
    ``c.out(value)`` one of the output's compute type (where the output's type is not the input's)."""

    def __init__(self, scalars: Scalars, compute: DataType, output: DataType) -> None:
        self.scalars, self.compute, self.output = scalars, compute, output

    def __call__(self, value: float | int | np.generic) -> ex.Param:
        return self.scalars.add(self.compute.numpy.type(value), self.compute)

    def out(self, value: float | int) -> ex.Param:
        return self.scalars.add(self.output.numpy.type(value), self.output)

    def typed(self, value: int, data_type: DataType) -> ex.Param:
        """A Param of another type (an integer result's wider type, ``wrapped``'s corrections)."""
        return self.scalars.add(data_type.numpy.type(value), data_type)


# The element math: the compute value (float32 for float tensors), the parameters and a maker of constants,
# to the compute value stored.
Element = Callable[[ex.Expr, UnaryParams, Constants], ex.Expr]
Reference = Callable[[np.ndarray, UnaryParams], np.ndarray]


# The fields' values read from a description by the operator itself, where a value depends on the tensor's type
# (CLIP's bounds, typed as SPEC 8.3 says): the description and the input's type, to the values by field name.
Read = Callable[[Any, DataType], Mapping[str, Any]]


def unary(name: str, desc_type: type, introduced: FeatureLevel, rows: Sequence[SupportRow], element: Element,
          reference: Reference, python: str | None, fields: Sequence[Field] = (), in_place: bool = True,
          output: DataType | None = None, adapter: Adapter | None = None, read: Read | None = None
          ) -> OperatorDefinition:
    """A unary operator's definition. ``fields`` are the description's fields after its two tensors, in
    DirectML's order (``SCALE_BIAS``, ``float_parameter("Alpha")``). ``output``: where the output's type is not
    the input's (IS_NAN), the type the front ends give it; the rows then list the output's types apart.

    Irregular operators: ``python`` None gives no front ends by the operator's own name (CLIP1, which ``clip``
    runs); ``adapter`` is the rule over arrays (``Adapter``: CLIP's CLIP1 switch); ``read`` reads the fields'
    values itself (``Read``), where the default takes each FLOAT field in float32 and each enum as its member."""
    schema = OperatorSchema(name, introduced, UNARY_TENSORS, tuple(rows), in_place=in_place and output is None)

    def prepare(desc: Any) -> UnaryParams:
        i, o = desc.input_tensor, desc.output_tensor
        if output is None:
            scale_bias = prepare_unary(name, i, o, getattr(desc, "scale_bias", None))
        else:
            check_same_sizes(name, "InputTensor", i, "OutputTensor", o)
            scale_bias = None
        values = field_values(fields, desc, name, i.data_type) if read is None else read(desc, i.data_type)
        return UnaryParams(i.data_type, scale_bias, values, None if output is None else o.data_type)

    def kernel(params: UnaryParams, tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
        scalars = Scalars()
        stored = _expression(params, element, scalars)
        return KernelSpec(name, (params.data_type,), params.output, stored, tuple(scalars.values))

    def reference_of(inputs: Sequence[np.ndarray | None], params: UnaryParams) -> np.ndarray:
        (x,) = inputs
        assert x is not None  # InputTensor is required: execute never binds None for it
        v = apply_scale_bias(compute_values(x, params.data_type), params.scale_bias)
        with np.errstate(all="ignore"):  # overflow to infinity and NaN are the defined results
            return np.asarray(reference(v, params)).astype(params.output.numpy)

    # The fields a call may give by position come first (``clip(x, min, max, *, scale_bias=None)``).
    keywords = tuple(sorted(fields, key=lambda f: not f.positional))
    api = None if python is None else Api(python, ("InputTensor",), keywords, output, adapter)
    return OperatorDefinition(schema, desc_type, prepare, reference_of, kernel, tuple(fields), api)


def field_values(fields: Sequence[Field], desc: Any, owner: str, data_type: DataType) -> dict[str, Any]:
    """The FLOAT and enum fields' values of a description, by DirectML name (the default ``Read``)."""
    values = {f.name: _field(f, getattr(desc, f.attribute), owner) for f in fields if f.kind in ("float", "enum")}
    if data_type.is_integer:  # a NaN FLOAT field has no meaning on integers: refused, as CLIP's (SPEC 8.3)
        for f in fields:
            if f.kind == "float":
                typed_bound(values[f.name], data_type, owner, f.name)
    return values


def _field(f: Field, value: object, owner: str) -> Any:
    """A FLOAT field in float32; an enum field as its member (given as a member, a name or a value)."""
    return float_field(value, owner, f.name) if f.kind == "float" else f.enum.parse(value, owner=owner, field=f.name)


def enum_parameter(name: str, enum: Any, prefix: str, default: Any = REQUIRED) -> Field:
    """A DirectML enum field (``RoundingMode``), read by ``enum.parse``; the functional keyword is its
    snake_case name."""
    return Field(name, "enum", snake_case(name), default=default, enum=enum, prefix=prefix)


def _expression(params: UnaryParams, element: Element, scalars: Scalars) -> ex.Expr:
    """Load, FLOAT16 to float32, ScaleBias (a rounded multiply, then a rounded add), the element, Store."""
    data_type = params.data_type
    constant = Constants(scalars, compute_type(data_type), compute_type(params.output))
    v: ex.Expr = ex.Load(0, data_type)
    if data_type is DataType.FLOAT16:
        v = ex.ToFloat32(v)
    if params.scale_bias is not None:
        scale, bias = params.scale_bias
        v = ex.Add(ex.Multiply(v, constant(scale)), constant(bias))
    return ex.Store(element(v, params, constant), params.output)


def activation_rows(types: frozenset[DataType]) -> tuple[SupportRow, ...]:
    """The table most ACTIVATION_* pages give: ``types`` in 1-8 dimensions from 3_0, 4-5 from 2_0, 4 from 1_0."""
    return (unary_row(FeatureLevel.FL_3_0, (1, 8), types), unary_row(FeatureLevel.FL_2_0, (4, 5), types),
            unary_row(FeatureLevel.FL_1_0, (4, 4), types))


def hard_sigmoid(v: ex.Expr, params: UnaryParams, c: Constants) -> ex.Expr:
    """``max(0, min(Alpha * v + Beta, 1))`` in float32 (HARD_SIGMOID, and HARD_SWISH's factor): a bound
    replaces the value only when the comparison is strictly true, so NaN stays NaN."""
    t: ex.Expr = ex.Add(ex.Multiply(v, c(params["Alpha"])), c(params["Beta"]))
    t = ex.Select(ex.Less(c(1), t), c(1), t)
    return ex.Select(ex.Less(t, c(0)), c(0), t)


def hard_sigmoid_reference(v: np.ndarray, params: UnaryParams) -> np.ndarray:
    t = np.add(np.multiply(v, params["Alpha"], dtype=np.float32), params["Beta"], dtype=np.float32)
    t = np.where(t > 1, np.float32(1), t)
    return np.where(t < 0, np.float32(0), t)


def floor(v: ex.Expr, c: Constants) -> ex.Expr:
    """floor of a float32 value, exactly: its nearest integer (ties to even), less one where that lies above it.
    -0.0 stays -0.0, a value in (-1, 0) gives -1.0, NaN and the infinities stay (FLOOR, and CEIL's -floor(-x))."""
    nearest = ex.Round(v)
    return ex.Select(ex.Less(v, nearest), ex.Add(nearest, c(-1)), nearest)


def wrapped(exact: ex.Expr, t: DataType, c: Constants) -> ex.Expr:
    """An exact sum or difference of two values of the integer type ``t``, computed in ``ex.difference_type(t)``
    (twice t's width: it holds both), wrapped into ``t`` as two's complement arithmetic wraps (SPEC 11.3). Such a
    result lies less than 2**n beyond t's range (n: t's bits), so one correction brings it back: 2**n added below
    the range, taken above it (as (2**n - 1) + 1, each a Param narrow enough for the nodes' range checks)."""
    wide = exact.data_type
    assert isinstance(wide, DataType)
    low, high = t.integer_range
    unsigned = {1: DataType.UINT8, 2: DataType.UINT16, 4: DataType.UINT32}[t.size]
    span, one = ex.Widen(c.typed(high - low, unsigned), wide), ex.Widen(c.typed(1, DataType.UINT8), wide)
    below = ex.Add(ex.Add(exact, span), one)
    above = ex.Subtract(ex.Subtract(exact, span), one)
    inside = ex.Select(ex.Less(exact, c.typed(low, wide)), below,
                       ex.Select(ex.Less(c.typed(high, wide), exact), above, exact))
    return ex.Saturate(inside, t)  # in range already: exact
