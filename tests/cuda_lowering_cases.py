"""Cases for the CUDA lowering tests: every operator description the support tables admit, and random
well-typed element expressions (drawn by Hypothesis, or by a seeded generator for batch compiles)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

import numpy as np
from hypothesis import strategies as st

import opendml as dml
from opendml import DataType as T
from opendml import TensorDesc
from opendml import expr as ex
from opendml.kernels.spec import KernelSpec
from opendml.ops import BY_NAME, DECLARED
from opendml.ops.definition import REQUIRED
from tests.helpers import edge_values

X = TypeVar("X")
INTEGERS = sorted(ex.INTEGERS, key=lambda t: t.value)
STORED = [T.FLOAT32, T.FLOAT16, *INTEGERS]


def admitted_types(operator: str, field: str = "InputTensor") -> list[T]:
    """The data types ``field`` of ``operator`` takes at the newest feature level, in a fixed order."""
    row = BY_NAME[operator].schema.row_at(dml.Device("cpu").feature_level)
    assert row is not None
    return sorted(row.types[field], key=lambda t: t.value)


def _clamp_descs(t: T, sizes: list[int]) -> list[tuple[str, object]]:
    x = TensorDesc(t, sizes)
    cases: list[tuple[str, object]] = []
    if t.is_float:
        nan = float("nan")
        for low, high in [(-1.25, 2.5), (nan, 2.5), (-1.25, nan), (nan, nan)]:  # NaN: that bound is absent
            for scale_bias in (None, dml.ScaleBias(1.5, -0.25)):
                cases.append((f"CLIP-{low}-{high}-{scale_bias is not None}",
                              dml.ElementWiseClipDesc(x, x, low, high, scale_bias)))
        cases.append(("CLIP1", dml.ElementWiseClip1Desc(x, x, t, -0.0, 0.75, dml.ScaleBias(2.0, 0.125))))
    else:
        low, high = t.integer_range
        cases += [("CLIP", dml.ElementWiseClipDesc(x, x, -2.7, 1e30)),
                  ("CLIP1", dml.ElementWiseClip1Desc(x, x, t, low + 3, high - 1))]
    if t in admitted_types("ELEMENT_WISE_THRESHOLD"):
        scale_bias = dml.ScaleBias(0.5, 1.0) if t.is_float else None
        cases.append(("THRESHOLD", dml.ElementWiseThresholdDesc(x, x, 1.5, scale_bias)))
    return cases


def operator_descs(sizes: list[int]) -> list[tuple[str, object]]:
    """(id, description) of every operator x admitted data type x option, on tensors of ``sizes``."""
    cases = []
    for t in admitted_types("ELEMENT_WISE_CLIP"):
        cases += [(f"{name}-{t.name}", desc) for name, desc in _clamp_descs(t, sizes)]
    for t in admitted_types("ELEMENT_WISE_DEQUANTIZE_LINEAR"):
        for scale_type in admitted_types("ELEMENT_WISE_DEQUANTIZE_LINEAR", "ScaleTensor"):
            x, scale = TensorDesc(t, sizes), TensorDesc(scale_type, sizes)
            for zero_point in (None, TensorDesc(t, sizes)):
                cases.append((f"DEQUANTIZE_LINEAR-{t.name}-{scale_type.name}-{zero_point is not None}",
                              dml.ElementWiseDequantizeLinearDesc(x, scale, zero_point, scale)))
    for t in admitted_types("ELEMENT_WISE_QUANTIZE_LINEAR"):
        scale = TensorDesc(T.FLOAT32 if t is T.INT32 else t, sizes)  # SPEC 9: an INT32 input takes FLOAT32
        for out_type in admitted_types("ELEMENT_WISE_QUANTIZE_LINEAR", "OutputTensor"):
            out = TensorDesc(out_type, sizes)
            for zero_point in (None, out):
                cases.append((f"QUANTIZE_LINEAR-{t.name}-{out_type.name}-{zero_point is not None}",
                              dml.ElementWiseQuantizeLinearDesc(TensorDesc(t, sizes), scale, zero_point, out)))
    for t in admitted_types("ARGMIN"):
        for index_type in admitted_types("ARGMIN", "OutputTensor"):
            for direction in ("INCREASING", "DECREASING"):
                out = TensorDesc(index_type, [1] * len(sizes))
                cases.append((f"ARGMIN-{t.name}-{index_type.name}-{direction}",
                              dml.ArgMinDesc(TensorDesc(t, sizes), out, list(range(len(sizes))), direction)))
    for op in DECLARED:  # the unary family: a ScaleBias on floats, every other field its default (else 1.5)
        assert op.api is not None
        if op.schema.name in ("ELEMENT_WISE_CLIP", "ELEMENT_WISE_THRESHOLD") or len(op.api.tensors) > 1:
            continue  # their bounds' classes above; the binary family below
        for t in admitted_types(op.schema.name):
            x = TensorDesc(t, sizes)
            scaled = t.is_float and t is not T.FLOAT64  # FLOAT64 takes no ScaleBias (no FLOAT64 arithmetic)
            values = [(dml.ScaleBias(1.5, -0.5) if scaled else None) if f.kind == "scale_bias"
                      else (1.5 if f.default is REQUIRED else f.default) for f in op.api.keywords]
            y = x if op.api.output is None else TensorDesc(op.api.output, sizes)
            cases.append((f"{op.schema.name}-{t.name}", op.describe((x,), y, values)))
    for op in DECLARED:  # the binary family: a full second operand, and one broadcast along the last dimension
        assert op.api is not None
        if len(op.api.tensors) != 2 or op.schema.name == "ELEMENT_WISE_CLIP_GRAD":
            continue  # CLIP_GRAD's bounds below
        for t in admitted_types(op.schema.name, op.api.tensors[0]):
            x = TensorDesc(t, sizes)
            row = TensorDesc(t, sizes, [0] * (len(sizes) - 1) + [1])
            y = x if op.api.output is None else TensorDesc(op.api.output, sizes)  # a comparison's UINT8
            cases.append((f"{op.schema.name}-{t.name}", op.describe((x, x), y, ())))
            cases.append((f"{op.schema.name}-{t.name}-broadcast", op.describe((x, row), y, ())))
    for t in admitted_types("ELEMENT_WISE_IF", "ATensor"):  # a full condition, and one broadcast along a column
        x, condition = TensorDesc(t, sizes), TensorDesc(T.UINT8, sizes)
        packed = [int(np.prod(sizes[k + 1:-1])) for k in range(len(sizes) - 1)]  # the leading dimensions' strides
        column = TensorDesc(T.UINT8, sizes, [*packed, 0])
        cases.append((f"ELEMENT_WISE_IF-{t.name}", dml.ElementWiseIfDesc(condition, x, x, x)))
        cases.append((f"ELEMENT_WISE_IF-{t.name}-broadcast", dml.ElementWiseIfDesc(column, x, x, x)))
    for source in admitted_types("CAST"):  # every conversion CAST takes
        for target in admitted_types("CAST", "OutputTensor"):
            cases.append((f"CAST-{source.name}-{target.name}",
                          dml.CastDesc(TensorDesc(source, sizes), TensorDesc(target, sizes))))
    for t in admitted_types("ELEMENT_WISE_ADD1", "ATensor"):  # a fused activation composed onto the sum
        x = TensorDesc(t, sizes)
        cases.append((f"ELEMENT_WISE_ADD1-{t.name}-fused", dml.ElementWiseAdd1Desc(
            x, x, x, dml.ActivationLeakyReluDesc(None, None, 0.1))))
    for t in admitted_types("ELEMENT_WISE_CLIP_GRAD"):  # the bounds: FLOAT fields, and CLIP_GRAD1's exact values
        x = TensorDesc(t, sizes)
        row = TensorDesc(t, sizes, [0] * (len(sizes) - 1) + [1])
        cases.append((f"ELEMENT_WISE_CLIP_GRAD-{t.name}", dml.ElementWiseClipGradDesc(x, row, x, -1.5, 100.0)))
    for t in admitted_types("ELEMENT_WISE_CLIP_GRAD1"):
        x = TensorDesc(t, sizes)
        cases.append((f"ELEMENT_WISE_CLIP_GRAD1-{t.name}", dml.ElementWiseClipGrad1Desc(x, x, x, t, 0, 100)))
    one = TensorDesc(T.FLOAT32, sizes, [0] * len(sizes))  # a single scale, read through zero strides
    for a_type, out_type in ((T.INT8, T.UINT8), (T.UINT8, T.INT8)):  # zero points given, and all absent
        a, b, out = TensorDesc(a_type, sizes), TensorDesc(out_type, sizes), TensorDesc(out_type, sizes)
        cases.append((f"ELEMENT_WISE_QUANTIZED_LINEAR_ADD-{a_type.name}-{out_type.name}",
                      dml.ElementWiseQuantizedLinearAddDesc(a, one, a, b, one, b, one, out, out)))
        cases.append((f"ELEMENT_WISE_QUANTIZED_LINEAR_ADD-{a_type.name}-{out_type.name}-no-zero-points",
                      dml.ElementWiseQuantizedLinearAddDesc(a, one, None, b, one, None, one, None, out)))
    return cases


class Choices(Protocol):
    """Where a random expression's choices come from."""

    def pick(self, options: Sequence[X]) -> X: ...

    def scalar(self, data_type: T) -> np.generic: ...


class DrawnChoices:
    """Choices drawn by Hypothesis (so failures shrink)."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def pick(self, options: Sequence[X]) -> X:
        return self.draw(st.sampled_from(list(options)))

    def scalar(self, data_type: T) -> np.generic:
        if data_type.is_float:
            return np.float32(self.draw(st.floats(width=32, allow_subnormal=True)))
        low, high = data_type.integer_range
        return data_type.numpy.type(self.draw(st.integers(low, high)))


class SeededChoices:
    """Choices of a seeded NumPy generator (for many expressions compiled at once)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def pick(self, options: Sequence[X]) -> X:
        return options[int(self.rng.integers(len(options)))]

    def scalar(self, data_type: T) -> np.generic:
        return edge_values(data_type, 1, self.rng)[0]


def _fits(inner: tuple[int, int], outer: tuple[int, int]) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1]


class ExpressionBuilder:
    """Random well-typed expressions over operands of ``inputs`` (None: an absent operand)."""

    def __init__(self, choices: Choices, inputs: Sequence[T | None]) -> None:
        self.choices, self.inputs = choices, list(inputs)
        self.scalars: list[np.generic] = []

    def available(self, t: T) -> bool:
        """Every type can be made (from a Param) except FLOAT16, which needs a FLOAT16 operand."""
        return t is not T.FLOAT16 or T.FLOAT16 in self.inputs

    def param(self, t: T) -> ex.Param:
        self.scalars.append(self.choices.scalar(t))
        return ex.Param(len(self.scalars) - 1, t)

    def make(self, t: ex.ValueType, depth: int) -> ex.Expr:
        options = self._leaves(t) if depth <= 0 else self._leaves(t) + self._branches(t)
        return self.choices.pick(options)(max(depth - 1, 0))

    def _leaves(self, t: ex.ValueType) -> list[Callable[[int], ex.Expr]]:
        loads: list[Callable[[int], ex.Expr]] = [lambda d, k=k: ex.Load(k, t)  # type: ignore[misc]
                                                 for k, s in enumerate(self.inputs) if s == t]
        if t == ex.BOOL:
            return [lambda d: ex.Less(self.make(T.FLOAT32, 0), self.make(T.FLOAT32, 0))]
        if t is T.FLOAT16:
            return loads
        return loads * 3 + [lambda d: self.param(t)]  # type: ignore[arg-type]  (operands mostly)

    def _branches(self, t: ex.ValueType) -> list[Callable[[int], ex.Expr]]:
        if t == ex.BOOL:
            comparable = [T.FLOAT32, *INTEGERS]
            return [lambda d: self._less(self.choices.pick(comparable), d),
                    lambda d: ex.IsNumber(self.make(T.FLOAT32, d))] + self.sign_branches()
        select = [lambda d: ex.Select(self.make(ex.BOOL, d), self.make(t, d), self.make(t, d))]
        if t is T.FLOAT32:
            sources = [s for s in [T.FLOAT16, *INTEGERS] if self.available(s)]
            return select + [lambda d: ex.ToFloat32(self.make(self.choices.pick(sources), d)),
                             lambda d: ex.Multiply(self.make(T.FLOAT32, d), self.make(T.FLOAT32, d)),
                             lambda d: ex.Add(self.make(T.FLOAT32, d), self.make(T.FLOAT32, d)),
                             lambda d: ex.Divide(self.make(T.FLOAT32, d), self.make(T.FLOAT32, d)),
                             lambda d: ex.Round(self.make(T.FLOAT32, d)),
                             lambda d: ex.Negate(self.make(T.FLOAT32, d)),
                             lambda d: ex.Sqrt(self.make(T.FLOAT32, d))] + self.arithmetic_branches(t)
        if t is T.FLOAT16:
            return select
        return select + self._integer_branches(t) + self.arithmetic_branches(t)  # type: ignore[arg-type]

    def sign_branches(self) -> list[Callable[[int], ex.Expr]]:
        """SignBit, a BOOL of a FLOAT32 (the binary family's MIN and MAX tell -0.0 from +0.0 with it)."""
        return [lambda d: ex.SignBit(self.make(T.FLOAT32, d))]

    def arithmetic_branches(self, t: T) -> list[Callable[[int], ex.Expr]]:
        """The binary family's nodes: FLOAT32 Remainder; an integer's Wrapping, Divide and Remainder."""
        if t is T.FLOAT32:
            return [lambda d: ex.Remainder(self.make(t, d), self.make(t, d))]
        return [lambda d: ex.Wrapping(self.make(t, d), self.make(t, d), self.choices.pick(ex.WRAPPING_OPS)),
                lambda d: ex.Divide(self.make(t, d), self.make(t, d)),
                lambda d: ex.Remainder(self.make(t, d), self.make(t, d))]

    def _less(self, t: T, depth: int) -> ex.Expr:
        return ex.Less(self.make(t, depth), self.make(t, depth))

    def _integer_branches(self, t: T) -> list[Callable[[int], ex.Expr]]:
        narrower = [s for s in INTEGERS if _fits(s.integer_range, t.integer_range)]
        branches = [lambda d: ex.Widen(self.make(self.choices.pick(narrower), d), t),
                    lambda d: ex.Saturate(self.make(self.choices.pick([T.FLOAT32, *INTEGERS]), d), t)]
        branches.append(lambda d: ex.BitNot(self.make(t, d)))
        if _fits(T.UINT8.integer_range, t.integer_range):  # a UINT8 count of any integer's bits, widened to t
            branches.append(lambda d: ex.Widen(ex.BitCount(self.make(self.choices.pick(INTEGERS), d)), t))
        if t.is_signed:
            branches.append(lambda d: ex.Negate(self.make(t, d)))
        low, high = t.integer_range
        pairs = [(a, b) for a in INTEGERS for b in INTEGERS
                 if low <= a.integer_range[0] - b.integer_range[1] and a.integer_range[1] - b.integer_range[0] <= high]
        if pairs:
            branches.append(lambda d: self._combine(ex.Subtract, t, self.choices.pick(pairs), d))
        sums = [(a, b) for a in INTEGERS for b in INTEGERS
                if low <= a.integer_range[0] + b.integer_range[0] and a.integer_range[1] + b.integer_range[1] <= high]
        if sums:
            branches.append(lambda d: self._combine(ex.Add, t, self.choices.pick(sums), d))
        branches.append(lambda d: ex.Bitwise(self.make(t, d), self.make(t, d), self.choices.pick(ex.BITWISE_OPS)))
        branches.append(lambda d: ex.Wrap(self.make(self.choices.pick(INTEGERS), d), t))
        return branches

    def _combine(self, node: type[ex.Subtract] | type[ex.Add], t: T, pair: tuple[T, T], depth: int) -> ex.Expr:
        a, b = (ex.Widen(self.make(s, depth), t) for s in pair)
        return node(a, b)


def build_spec(choices: Choices, inputs: Sequence[T | None], depth: int) -> KernelSpec:
    """An element-wise KernelSpec of a random expression over ``inputs``, stored in a type it admits."""
    builder = ExpressionBuilder(choices, inputs)
    operands = [t for t in inputs if t is not None]
    value_type = choices.pick(operands * 2 + [t for t in STORED if builder.available(t)])
    value = builder.make(value_type, depth)
    output = choices.pick([T.FLOAT32, T.FLOAT16]) if value_type is T.FLOAT32 else value_type
    return KernelSpec("EXPRESSION", tuple(inputs), output, ex.Store(value, output), tuple(builder.scalars))


@st.composite
def expression_specs(draw: st.DrawFn, max_depth: int = 4) -> KernelSpec:
    """Hypothesis: a random element-wise KernelSpec over one to three operands (one may be absent)."""
    inputs: list[T | None] = draw(st.lists(st.sampled_from(STORED), min_size=1, max_size=3))
    if len(inputs) > 1 and draw(st.booleans()):
        inputs[draw(st.integers(1, len(inputs) - 1))] = None  # an absent optional operand
    return build_spec(DrawnChoices(draw), inputs, draw(st.integers(0, max_depth)))


def seeded_specs(count: int, seed: int = 13, max_depth: int = 5) -> list[KernelSpec]:
    """``count`` random element-wise KernelSpecs from a seeded generator."""
    rng = np.random.default_rng(seed)
    choices = SeededChoices(rng)
    specs = []
    for _ in range(count):
        inputs = [STORED[int(k)] for k in rng.integers(len(STORED), size=int(rng.integers(1, 4)))]
        specs.append(build_spec(choices, inputs, int(rng.integers(0, max_depth + 1))))
    return specs



def double_specs() -> list[KernelSpec]:
    """Every FLOAT64 node in a kernel of its own: Load and Store of FLOAT64, ToFloat64 of each integer type and of
    FLOAT32 and FLOAT16, Saturate of FLOAT64 to each integer type, FLOAT64 stored as FLOAT32 and as FLOAT16 (at the
    root and inside, a fused kernel's intermediate), and a Select of FLOAT64 values."""
    f64, f32, f16 = T.FLOAT64, T.FLOAT32, T.FLOAT16
    d = ex.Load(0, f64)
    specs = [KernelSpec("TEST", (f64,), f64, ex.Store(d, f64)), KernelSpec("TEST", (f64,), f32, ex.Store(d, f32)),
             KernelSpec("TEST", (f64,), f16, ex.Store(d, f16)),
             KernelSpec("TEST", (f64,), f64, ex.Store(ex.ToFloat64(ex.ToFloat32(ex.Store(d, f16))), f64)),
             KernelSpec("TEST", (f32,), f64, ex.Store(ex.ToFloat64(ex.Load(0, f32)), f64)),
             KernelSpec("TEST", (f16,), f64, ex.Store(ex.ToFloat64(ex.ToFloat32(ex.Load(0, f16))), f64)),
             KernelSpec("TEST", (f64, f64), f64, ex.Store(ex.Select(ex.SignBit(ex.Store(d, f32)), d, ex.Load(1, f64)),
                                                          f64))]
    for t in INTEGERS:
        specs += [KernelSpec("TEST", (t,), f64, ex.Store(ex.ToFloat64(ex.Load(0, t)), f64)),
                  KernelSpec("TEST", (f64,), t, ex.Store(ex.Saturate(d, t), t))]
    return specs
