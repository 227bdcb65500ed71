"""The binary family's factory: an operator of two inputs (``ATensor``, ``BTensor``) and one output, all three of
one data type and of the output's sizes.

DirectML broadcasts by strides: every tensor has the output's sizes, and an operand read again along a dimension
has a zero stride there (``TensorDesc``'s strides; the functional API describes NumPy broadcasting this way,
never materialising the broadcast operand). A binary operator is declared once (``binary``): its name, level,
support rows, description type, the element math over the two compute values (float32 for FLOAT32/FLOAT16
tensors, the tensor's own type for integers) and its NumPy reference over the same values. The front ends are
derived from the declaration's ``Api`` record as the unary family's are (``ops.unary``), its ``tensors`` naming
both inputs: the functional ``opendml.add(a, b)``, ``opendml.compile``, Dask, ``opendml.graph.add(a, b)``,
``opendml dispatch`` and ``opendml support``.

>>> from opendml.ops import BY_NAME
>>> add = BY_NAME["ELEMENT_WISE_ADD"]
>>> add.api.python, add.api.tensors, [t.name for t in add.schema.tensors]
('add', ('ATensor', 'BTensor'), ['ATensor', 'BTensor', 'OutputTensor'])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import expr as ex
from ..dtypes import INTEGERS_32, INTEGERS_64, DataType
from ..feature_levels import FeatureLevel
from ..kernels.spec import KernelSpec, Scalars
from ..schema import OperatorSchema, SupportRow, TensorField, snake_case
from ..tensor import TensorDesc
from ..validate import check_same_data_type, check_same_sizes
from .definition import Adapter, Api, Field, OperatorDefinition
from .elementwise import compute_values
from .unary import Constants, Read, UnaryParams, compute_type, field_values

INPUTS = ("ATensor", "BTensor")
BINARY_TENSORS = (TensorField("ATensor", "input"), TensorField("BTensor", "input"),
                  TensorField("OutputTensor", "output"))

# The element math: the two compute values (float32 for float tensors), the parameters and a maker of constants,
# to the compute value stored. The reference: the same over NumPy arrays of the compute values.
BinaryElement = Callable[[ex.Expr, ex.Expr, UnaryParams, Constants], ex.Expr]
BinaryReference = Callable[[np.ndarray, np.ndarray, UnaryParams], np.ndarray]


@dataclass(frozen=True)
class BinaryDesc:
    """A binary description's three tensors, in DirectML's order; each operator's Desc is a subclass."""

    a_tensor: TensorDesc
    b_tensor: TensorDesc
    output_tensor: TensorDesc


def binary_row(level: FeatureLevel, dimensions: tuple[int, int], types: frozenset[DataType],
               names: tuple[str, str, str] = (*INPUTS, "OutputTensor")) -> SupportRow:
    """A support-table row whose three tensors (``names``: the inputs', then the output's) accept the same types."""
    return SupportRow(level, dimensions, {name: types for name in names})


def binary(name: str, desc_type: type, introduced: FeatureLevel, rows: Sequence[SupportRow], element: BinaryElement,
           reference: BinaryReference, python: str | None, in_place: bool = True, output: DataType | None = None,
           names: tuple[str, str, str] = (*INPUTS, "OutputTensor"), fields: Sequence[Field] = (),
           read: Read | None = None, adapter: Adapter | None = None) -> OperatorDefinition:
    """A binary operator's definition: ``f(a, b)`` element by element over ATensor and BTensor. ``output``: where
    the output's type is not the inputs' (the comparisons' UINT8 or UINT32), the type the front ends give it; the
    rows then list the OutputTensor's types apart, and ``c.out(value)`` is a constant of the output's type.
    ``names``: the tensors' DirectML names where they are not ATensor, BTensor, OutputTensor (ACTIVATION_RELU_GRAD's
    InputTensor, InputGradientTensor, OutputGradientTensor); ``fields`` and ``read`` as the unary factory's
    (``ops.unary``); ``python`` None: no front ends by the operator's own name (ELEMENT_WISE_CLIP_GRAD1, which
    ``clip_grad`` runs); ``adapter``: the rule over arrays (``Adapter``: CLIP_GRAD's CLIP_GRAD1 switch)."""
    first, second, out = names
    tensor_fields = (TensorField(first, "input"), TensorField(second, "input"), TensorField(out, "output"))
    schema = OperatorSchema(name, introduced, tensor_fields, tuple(rows), in_place=in_place)

    def prepare(desc: BinaryDesc) -> UnaryParams:
        a, b, o = (getattr(desc, snake_case(n)) for n in names)
        check_same_data_type(name, first, a, second, b)
        if output is None:
            check_same_data_type(name, first, a, out, o)
        check_same_sizes(name, out, o, first, a)  # a broadcast operand: zero strides, same sizes
        check_same_sizes(name, out, o, second, b)
        values = field_values(fields, desc, name, a.data_type) if read is None else read(desc, a.data_type)
        return UnaryParams(a.data_type, None, values, output_type=None if output is None else o.data_type)

    def kernel(params: UnaryParams, tensors: Mapping[str, TensorDesc | None]) -> KernelSpec:
        scalars = Scalars()
        t = params.data_type
        constant = Constants(scalars, compute_type(t), compute_type(params.output))
        a, b = (load(k, t) for k in range(2))
        stored = ex.Store(element(a, b, params, constant), params.output)
        return KernelSpec(name, (t, t), params.output, stored, tuple(scalars.values))

    def reference_of(inputs: Sequence[np.ndarray | None], params: UnaryParams) -> np.ndarray:
        a, b = inputs
        assert a is not None and b is not None  # both required: execute never binds None for them
        t = params.data_type
        with np.errstate(all="ignore"):  # overflow to infinity and NaN are the defined results
            value = reference(compute_values(a, t), compute_values(b, t), params)
        return np.asarray(value).astype(params.output.numpy)

    keywords = tuple(sorted(fields, key=lambda f: not f.positional))
    api = None if python is None else Api(python, (first, second), keywords, output, adapter=adapter)
    return OperatorDefinition(schema, desc_type, prepare, reference_of, kernel, tuple(fields), api)


def load(operand: int, t: DataType) -> ex.Expr:
    """Operand ``operand``'s compute value: FLOAT16 read as float32 (exactly), any other type as it is."""
    value: ex.Expr = ex.Load(operand, t)
    return ex.ToFloat32(value) if t is DataType.FLOAT16 else value


def arithmetic(float_element: BinaryElement, op: str) -> BinaryElement:
    """``float_element`` on float tensors; on integers ``a op b`` wrapping as two's complement does (SPEC 11.3),
    modulo 2**bits in the type's own width (``ex.Wrapping``; 64-bit types too)."""

    def element(a: ex.Expr, b: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
        return float_element(a, b, p, c) if p.data_type.is_float else ex.Wrapping(a, b, op)

    return element


_UFUNCS = {"+": np.add, "-": np.subtract, "*": np.multiply}


def arithmetic_reference(op: str) -> BinaryReference:
    """``a op b`` in float32 rounded once (floats), or in the integer type itself (NumPy's integer ufuncs wrap)."""
    ufunc = _UFUNCS[op]

    def reference(a: np.ndarray, b: np.ndarray, p: UnaryParams) -> np.ndarray:
        return ufunc(a, b, dtype=np.float32 if p.data_type.is_float else p.data_type.numpy)

    return reference


def by_kind(float_element: BinaryElement, integer_element: BinaryElement) -> BinaryElement:
    """``float_element`` on float tensors (FLOAT32 compute values), ``integer_element`` on integer ones."""

    def element(a: ex.Expr, b: ex.Expr, p: UnaryParams, c: Constants) -> ex.Expr:
        return (float_element if p.data_type.is_float else integer_element)(a, b, p, c)

    return element


def reference_by_kind(float_reference: BinaryReference, integer_reference: BinaryReference) -> BinaryReference:
    """``by_kind``'s twin for the NumPy references."""

    def reference(a: np.ndarray, b: np.ndarray, p: UnaryParams) -> np.ndarray:
        return (float_reference if p.data_type.is_float else integer_reference)(a, b, p)

    return reference


def min_max_rows() -> tuple[SupportRow, ...]:
    """The table MIN's and MAX's pages give: every type in 1-8 dimensions from 5_0; the floats and the 8- to
    32-bit integers in 1-8 from 3_0, in 4 from 2_1; the floats in 4 from 1_0."""
    floats = frozenset({DataType.FLOAT32, DataType.FLOAT16})
    narrow = floats | INTEGERS_32
    return (binary_row(FeatureLevel.FL_5_0, (1, 8), narrow | INTEGERS_64),
            binary_row(FeatureLevel.FL_3_0, (1, 8), narrow), binary_row(FeatureLevel.FL_2_1, (4, 4), narrow),
            binary_row(FeatureLevel.FL_1_0, (4, 4), floats))


def modulus_rows() -> tuple[SupportRow, ...]:
    """The table MODULUS_FLOOR's and MODULUS_TRUNCATE's pages give: every type in 1-8 dimensions from 6_0; the
    floats and the 8- to 32-bit integers in 1-8 from 3_0, in 4 from 2_1 (the level they were introduced at)."""
    narrow = frozenset({DataType.FLOAT32, DataType.FLOAT16}) | INTEGERS_32
    return (binary_row(FeatureLevel.FL_6_0, (1, 8), narrow | INTEGERS_64),
            binary_row(FeatureLevel.FL_3_0, (1, 8), narrow), binary_row(FeatureLevel.FL_2_1, (4, 4), narrow))


def arithmetic_rows(top: FeatureLevel, every: frozenset[DataType]) -> tuple[SupportRow, ...]:
    """The table ADD's, SUBTRACT's and MULTIPLY's pages give (DIVIDE's, with its own top row): ``every`` type
    in 1-8 dimensions from ``top``; FLOAT32, FLOAT16, INT64, INT32, UINT64, UINT32 from 4_1; the 32-bit types
    and the floats from 3_0; the same in 4-5 dimensions from 2_1; the floats in 4-5 from 1_0."""
    floats = frozenset({DataType.FLOAT32, DataType.FLOAT16})
    wide = floats | {DataType.INT32, DataType.UINT32}
    return (binary_row(top, (1, 8), every),
            binary_row(FeatureLevel.FL_4_1, (1, 8), wide | {DataType.INT64, DataType.UINT64}),
            binary_row(FeatureLevel.FL_3_0, (1, 8), wide), binary_row(FeatureLevel.FL_2_1, (4, 5), wide),
            binary_row(FeatureLevel.FL_1_0, (4, 5), floats))
