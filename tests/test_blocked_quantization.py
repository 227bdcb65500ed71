"""QUANTIZE and DEQUANTIZE (feature level 6_3) against an oracle written here from the pages and ONNX's
blocked QuantizeLinear and DequantizeLinear, sharing no code with opendml.

The oracle works element by element in Python: a quantization value is the one of the element's block (index
``i // block`` on each axis, ``block = input size / quantization size``); DEQUANTIZE is the exact integer
difference, rounded once to float32, times the scale in float32, stored (FLOAT16 rounded once more); QUANTIZE
is one float32 division, rounded half to even (Python's ``round``), the zero point added, saturated (NaN gives
the zero point). An absent zero point (QuantizationType SCALE) is the quantized type's midpoint; NONE is a
plain conversion. 4-bit data is packed here by hand: the element at offset ``e`` in the nibble ``e % 2`` (low
first) of byte ``e // 2``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml.dtypes import DataType as T
from opendml.ops.dequantize import dequantize_reference
from opendml.ops.quantize import quantize_reference
from tests.conftest import CUDA_MISSING
from tests.helpers import disjoint_strides, edge_values

FOUR_BIT = {T.INT4, T.UINT4}
QUANTIZED = [T.INT8, T.INT4, T.UINT8, T.UINT4]
FLOATS = [T.FLOAT32, T.FLOAT16]
RANGES = {T.INT8: (-128, 127), T.UINT8: (0, 255), T.INT4: (-8, 7), T.UINT4: (0, 15)}
MIDPOINTS = {T.INT8: 0, T.UINT8: 128, T.INT4: 0, T.UINT4: 8}
NUMPY = {T.INT8: np.int8, T.UINT8: np.uint8, T.INT4: np.int8, T.UINT4: np.uint8, T.FLOAT32: np.float32,
         T.FLOAT16: np.float16}

# (input sizes, quantization sizes): per tensor, per axis, blocks along one axis, along both, odd sizes.
LAYOUTS = [
    ((7,), (1,)), ((7,), (7,)), ((6,), (2,)), ((9,), (3,)),
    ((3, 5), (1, 1)), ((3, 5), (3, 1)), ((3, 5), (1, 5)), ((4, 6), (2, 1)), ((4, 6), (4, 3)), ((4, 6), (2, 3)),
    ((2, 3, 8), (1, 3, 2)), ((1, 5, 4), (1, 5, 2)),
]


# --- the oracle ------------------------------------------------------------------------------------------------

def _offsets(sizes: Sequence[int], strides: Sequence[int]) -> list[int]:
    return [sum(i * s for i, s in zip(index, strides)) for index in itertools.product(*map(range, sizes))]


def _row_major(sizes: Sequence[int]) -> list[int]:
    strides, step = [], 1
    for n in reversed(sizes):
        strides.insert(0, step)
        step *= n
    return strides


def _bytes_of(desc: dml.TensorDesc, values: np.ndarray, fill: int = 0) -> np.ndarray:
    """A buffer holding ``values`` where ``desc`` places them (bytes outside the tensor ``fill``)."""
    raw = np.full(desc.total_tensor_size_in_bytes, fill, np.uint8)
    strides = desc.strides if desc.strides is not None else _row_major(desc.sizes)
    flat = [int(v) for v in values.reshape(-1)] if desc.data_type in FOUR_BIT else values.reshape(-1)
    for offset, value in zip(_offsets(desc.sizes, strides), flat):
        if desc.data_type in FOUR_BIT:
            shift = 4 * (offset % 2)
            raw[offset // 2] = (int(raw[offset // 2]) & ~(0xF << shift) & 0xFF) | ((value & 0xF) << shift)
        else:
            size = np.dtype(NUMPY[desc.data_type]).itemsize
            raw[offset * size:(offset + 1) * size] = np.array([value], NUMPY[desc.data_type]).view(np.uint8)
    return raw


def _values_of(desc: dml.TensorDesc, raw: np.ndarray) -> np.ndarray:
    strides = desc.strides if desc.strides is not None else _row_major(desc.sizes)
    out = []
    for offset in _offsets(desc.sizes, strides):
        if desc.data_type in FOUR_BIT:
            nibble = (int(raw[offset // 2]) >> (4 * (offset % 2))) & 0xF
            out.append(nibble - 16 if desc.data_type is T.INT4 and nibble >= 8 else nibble)
        else:
            size = np.dtype(NUMPY[desc.data_type]).itemsize
            out.append(raw[offset * size:(offset + 1) * size].view(NUMPY[desc.data_type])[0])
    return np.array(out, NUMPY[desc.data_type]).reshape(desc.sizes)


def _block_value(values: np.ndarray | None, index: tuple[int, ...], sizes: Sequence[int]) -> object:
    if values is None:
        return None
    return values[tuple(i // (n // q) for i, n, q in zip(index, sizes, values.shape))]


def dequantize_oracle(x: np.ndarray, scale: np.ndarray | None, zero_point: np.ndarray | None, kind: str,
                      quantized: T, out: T) -> np.ndarray:
    result = np.zeros(x.shape, NUMPY[out])
    for index in itertools.product(*map(range, x.shape)):
        zp = _block_value(zero_point, index, x.shape)
        subtrahend = int(zp) if zp is not None else MIDPOINTS[quantized] if kind == "SCALE" else 0
        value = np.float32(int(x[index]) - subtrahend)  # exact difference, rounded once
        s = _block_value(scale, index, x.shape)
        if s is not None:
            value = np.float32(value * np.float32(s))  # float32 product: one rounding
        result[index] = NUMPY[out](value)
    return result


def quantize_oracle(x: np.ndarray, scale: np.ndarray | None, zero_point: np.ndarray | None, kind: str,
                    quantized: T) -> np.ndarray:
    low, high = RANGES[quantized]
    result = np.zeros(x.shape, NUMPY[quantized])
    for index in itertools.product(*map(range, x.shape)):
        quotient = np.float32(x[index])
        s = _block_value(scale, index, x.shape)
        if s is not None:
            with np.errstate(all="ignore"):
                quotient = np.float32(quotient / np.float32(s))
        zp = _block_value(zero_point, index, x.shape)
        addend = int(zp) if zp is not None else MIDPOINTS[quantized] if kind == "SCALE" else 0
        if math.isnan(quotient):
            whole = addend
        elif math.isinf(quotient):
            whole = high if quotient > 0 else low
        else:
            whole = round(float(quotient)) + addend  # Python rounds half to even
        result[index] = min(max(whole, low), high)
    return result


# --- running an operator ---------------------------------------------------------------------------------------

def _execute(desc: object, inputs: Sequence[np.ndarray | None], fill: int = 0, level: str = "6_3",
             backend: str = "cpu") -> np.ndarray:
    device = dml.Device(backend, level)
    op = device.compile_operator(device.create_operator(desc))
    tensors = op.operator.tensors
    names = ["InputTensor", "QuantizationTensors[0]", "QuantizationTensors[1]"]
    bindings = [None if values is None else dml.BufferBinding(device.buffer_from(_bytes_of(tensors[name], values)))
                for name, values in zip(names, inputs)]
    out_desc = tensors["OutputTensor"]
    assert out_desc is not None
    out = device.buffer_from(np.full(out_desc.total_tensor_size_in_bytes, fill, np.uint8))
    op.execute(bindings, [dml.BufferBinding(out)])
    return _values_of(out_desc, out.to_numpy())


def _tensors(kind: str, float_type: T, quantized: T, sizes: Sequence[int], q_sizes: Sequence[int]
             ) -> list[dml.TensorDesc]:
    count = {"NONE": 0, "SCALE": 1, "SCALE_ZERO_POINT": 2}[kind]
    return [dml.TensorDesc(float_type, q_sizes), dml.TensorDesc(quantized, q_sizes)][:count]


def _data(kind: str, float_type: T, quantized: T, sizes: Sequence[int], q_sizes: Sequence[int],
          rng: np.random.Generator, *, quantize: bool) -> list[np.ndarray | None]:
    n, q = math.prod(sizes), math.prod(q_sizes)
    x = edge_values(float_type if quantize else quantized, n, rng).reshape(sizes)
    if quantize:
        x = x.astype(NUMPY[float_type])
    else:
        x = x.astype(NUMPY[quantized])
    scale = (rng.choice([0.5, 1.0, 0.25, 3.0, 0.1, 1.5], q) * rng.choice([1, -1], q)).astype(NUMPY[float_type])
    zero = rng.integers(*RANGES[quantized], q, endpoint=True).astype(NUMPY[quantized])
    quantization: list[np.ndarray | None] = [scale.reshape(q_sizes), zero.reshape(q_sizes)]
    count = {"NONE": 0, "SCALE": 1, "SCALE_ZERO_POINT": 2}[kind]
    return [x, *quantization[:count], *([None] * (2 - count))]


def _same(got: np.ndarray, expected: np.ndarray) -> bool:
    if got.dtype.kind == "f":
        nan = np.isnan(expected)
        bits = {2: np.uint16, 4: np.uint32}[got.itemsize]
        return bool((np.isnan(got) == nan).all() and (got[~nan].view(bits) == expected[~nan].view(bits)).all())
    return bool((got == expected).all())


KINDS = ["NONE", "SCALE", "SCALE_ZERO_POINT"]
BACKENDS = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(CUDA_MISSING is not None,
                                                                 reason=f"no usable CUDA GPU: {CUDA_MISSING}"))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("quantized", QUANTIZED, ids=lambda t: t.name)
@pytest.mark.parametrize("float_type", FLOATS, ids=lambda t: t.name)
def test_dequantize_every_type_and_layout(kind: str, quantized: T, float_type: T, backend: str) -> None:
    rng = np.random.default_rng(7)
    for sizes, q_sizes in LAYOUTS if kind != "NONE" else LAYOUTS[:1] + LAYOUTS[4:5]:
        inputs = _data(kind, float_type, quantized, sizes, q_sizes, rng, quantize=False)
        desc = dml.DequantizeDesc(dml.TensorDesc(quantized, sizes), kind,
                                  _tensors(kind, float_type, quantized, sizes, q_sizes),
                                  dml.TensorDesc(float_type, sizes))
        expected = dequantize_oracle(*inputs, kind, quantized, float_type)  # type: ignore[arg-type]
        got = _execute(desc, inputs, backend=backend)
        assert _same(got, expected), (sizes, q_sizes, inputs, got, expected)
        params = dml.Device("cpu").create_operator(desc).params
        assert _same(dequantize_reference(inputs, params), expected)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("quantized", QUANTIZED, ids=lambda t: t.name)
@pytest.mark.parametrize("float_type", FLOATS, ids=lambda t: t.name)
def test_quantize_every_type_and_layout(kind: str, quantized: T, float_type: T, backend: str) -> None:
    rng = np.random.default_rng(11)
    for sizes, q_sizes in LAYOUTS if kind != "NONE" else LAYOUTS[:1] + LAYOUTS[4:5]:
        inputs = _data(kind, float_type, quantized, sizes, q_sizes, rng, quantize=True)
        desc = dml.QuantizeDesc(dml.TensorDesc(float_type, sizes), kind,
                                _tensors(kind, float_type, quantized, sizes, q_sizes),
                                dml.TensorDesc(quantized, sizes))
        expected = quantize_oracle(*inputs, kind, quantized)  # type: ignore[arg-type]
        got = _execute(desc, inputs, backend=backend)
        assert _same(got, expected), (sizes, q_sizes, inputs, got, expected)
        params = dml.Device("cpu").create_operator(desc).params
        assert _same(quantize_reference(inputs, params), expected)


# --- worked by hand --------------------------------------------------------------------------------------------

def test_dequantize_uint4_blocks_by_hand() -> None:
    # Two rows of 6 UINT4 elements, blocks of 3 along the last axis: scales [[1, 2], [0.5, 4]], zero points
    # [[8, 0], [15, 1]].
    x = np.array([[0, 8, 15, 1, 2, 3], [15, 14, 0, 1, 0, 15]], np.uint8)
    scale = np.array([[1, 2], [0.5, 4]], np.float32)
    zero = np.array([[8, 0], [15, 1]], np.uint8)
    desc = dml.DequantizeDesc(dml.TensorDesc("UINT4", [2, 6]), "SCALE_ZERO_POINT",
                              [dml.TensorDesc("FLOAT32", [2, 2]), dml.TensorDesc("UINT4", [2, 2])],
                              dml.TensorDesc("FLOAT32", [2, 6]))
    got = _execute(desc, [x, scale, zero])
    assert got.tolist() == [[-8, 0, 7, 2, 4, 6], [0, -0.5, -7.5, 0, -4, 56]]


def test_quantize_int4_edges_by_hand() -> None:
    # Ties to even, saturation at -8 and 7, NaN to the zero point (0: INT4's midpoint), infinities saturated.
    x = np.array([2.5, 3.5, -2.5, 7.5, -8.5, -9.0, 100.0, np.nan, np.inf, -np.inf, 0.5, -0.5], np.float32)
    desc = dml.QuantizeDesc(dml.TensorDesc("FLOAT32", [12]), "SCALE", [dml.TensorDesc("FLOAT32", [1])],
                            dml.TensorDesc("INT4", [12]))
    got = _execute(desc, [x, np.array([1], np.float32), None])
    assert got.tolist() == [2, 4, -2, 7, -8, -8, 7, 0, 7, -8, 0, 0]


def test_quantize_uint4_midpoint_by_hand() -> None:
    # SCALE without a zero point: UINT4's midpoint 8 is added after rounding (symmetric 4-bit weights).
    x = np.array([-1.0, 0.0, 0.25, 3.5, -20.0, 20.0, np.nan], np.float32)
    desc = dml.QuantizeDesc(dml.TensorDesc("FLOAT32", [7]), "SCALE", [dml.TensorDesc("FLOAT32", [1])],
                            dml.TensorDesc("UINT4", [7]))
    got = _execute(desc, [x, np.array([0.5], np.float32), None])
    assert got.tolist() == [6, 8, 8, 15, 0, 15, 8]


def test_dequantize_midpoint_and_none() -> None:
    x = np.array([0, 8, 15], np.uint8)
    scale = dml.TensorDesc("FLOAT32", [1])
    desc = dml.DequantizeDesc(dml.TensorDesc("UINT4", [3]), "SCALE", [scale], dml.TensorDesc("FLOAT32", [3]))
    assert _execute(desc, [x, np.array([2], np.float32), None]).tolist() == [-16, 0, 14]
    desc = dml.DequantizeDesc(dml.TensorDesc("UINT4", [3]), "NONE", [], dml.TensorDesc("FLOAT16", [3]))
    assert _execute(desc, [x, None, None]).tolist() == [0, 8, 15]


# --- strides and nibbles ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_strided_4bit_input_and_output_keep_other_nibbles(backend: str) -> None:
    # A [3, 2] INT4 input read transposed (strides [1, 3]: nibbles 0, 3, 1, 4, 2, 5), and a [3, 2] INT4 output
    # written with odd strides [3, 1] padded by one nibble a row: the nibbles between stay as they were.
    rng = np.random.default_rng(3)
    x = rng.integers(-8, 8, (3, 2)).astype(np.float32) * 2
    x_desc = dml.TensorDesc("FLOAT32", [3, 2], [1, 3])
    out_desc = dml.TensorDesc("INT4", [3, 2], [3, 1])
    desc = dml.QuantizeDesc(x_desc, "SCALE", [dml.TensorDesc("FLOAT32", [1, 1])], out_desc)
    got = _execute(desc, [x, np.array([[2]], np.float32), None], fill=0xAB, backend=backend)
    assert got.tolist() == (x / 2).astype(int).tolist()
    device = dml.Device(backend, "6_3")
    op = device.compile_operator(device.create_operator(desc))
    out = device.buffer_from(np.full(out_desc.total_tensor_size_in_bytes, 0xAB, np.uint8))
    op.execute([dml.BufferBinding(device.buffer_from(_bytes_of(x_desc, x))),
                dml.BufferBinding(device.buffer_from(np.array([2], np.float32))), None], [dml.BufferBinding(out)])
    raw = out.to_numpy()
    untouched = set(range(2 * raw.size)) - set(_offsets([3, 2], [3, 1]))
    assert all((int(raw[e // 2]) >> (4 * (e % 2))) & 0xF == (0xB if e % 2 == 0 else 0xA) for e in untouched)


@pytest.mark.parametrize("backend", BACKENDS)
def test_strided_4bit_input_dequantized(backend: str) -> None:
    x = np.array([[1, -2, 3], [-4, 5, -6]], np.int8)
    x_desc = dml.TensorDesc("INT4", [2, 3], [1, 2])  # element (i, j) at nibble i + 2 j
    desc = dml.DequantizeDesc(x_desc, "SCALE_ZERO_POINT",
                              [dml.TensorDesc("FLOAT16", [2, 1]), dml.TensorDesc("INT4", [2, 1])],
                              dml.TensorDesc("FLOAT16", [2, 3]))
    scale, zero = np.array([[0.5], [2]], np.float16), np.array([[1], [-1]], np.int8)
    got = _execute(desc, [x, scale, zero], backend=backend)
    assert got.tolist() == [[0, -1.5, 1], [-6, 12, -10]]


# --- the rules -------------------------------------------------------------------------------------------------

def _make(kind: str = "SCALE", x: str = "UINT4", sizes: Sequence[int] = (4, 6), q_sizes: Sequence[int] = (4, 2),
          scale: str = "FLOAT32", zero: str = "UINT4", out: str = "FLOAT32") -> dml.DequantizeDesc:
    tensors = [dml.TensorDesc(scale, q_sizes), dml.TensorDesc(zero, q_sizes)]
    count = {"NONE": 0, "SCALE": 1, "SCALE_ZERO_POINT": 2}.get(kind, 1)
    return dml.DequantizeDesc(dml.TensorDesc(x, sizes), kind, tensors[:count], dml.TensorDesc(out, sizes))


@pytest.mark.parametrize(("desc", "message"), [
    (dml.DequantizeDesc(dml.TensorDesc("UINT4", [4]), "SCALE", [], dml.TensorDesc("FLOAT32", [4])),
     r"^DEQUANTIZE: QuantizationTensorCount must be 1 for QuantizationType SCALE; got 0\.$"),
    (_make(q_sizes=(4, 4)), r"^DEQUANTIZE: QuantizationTensors\[0\]\.Sizes\[1\] must divide InputTensor\.Sizes\[1\] "
                            r"\(6\): one value for each block of equal size along the axis; got 4\.$"),
    (_make(q_sizes=(4,)), r"^DEQUANTIZE: QuantizationTensors\[0\]\.DimensionCount must equal "
                          r"InputTensor\.DimensionCount \(2\); got 1\.$"),
    (_make(scale="FLOAT16"), r"^DEQUANTIZE: QuantizationTensors\[0\]\.DataType must equal OutputTensor\.DataType "
                             r"\(FLOAT32\): it is the scale; got FLOAT16\.$"),
    (_make("SCALE_ZERO_POINT", zero="INT4"), r"^DEQUANTIZE: QuantizationTensors\[1\]\.DataType must equal "
                                             r"InputTensor\.DataType \(UINT4\): it is the zero point; got INT4\.$"),
    (_make(x="INT32"), r"^DEQUANTIZE: InputTensor\.DataType must be one of INT8, INT4, UINT8, UINT4 at feature "
                       r"level 6_4; got INT32\.$"),
    (_make("BLOCKED"), r"^DEQUANTIZE: QuantizationType must be one of NONE, SCALE, SCALE_ZERO_POINT; "
                       r"got 'BLOCKED'\.$"),
])
def test_dequantize_rules(desc: dml.DequantizeDesc, message: str) -> None:
    with pytest.raises(dml.InvalidArgumentError, match=message):
        dml.Device("cpu").create_operator(desc)


def test_zero_point_sizes_must_match_the_scale() -> None:
    desc = dml.QuantizeDesc(dml.TensorDesc("FLOAT32", [4, 6]), "SCALE_ZERO_POINT",
                            [dml.TensorDesc("FLOAT32", [4, 2]), dml.TensorDesc("INT8", [4, 1])],
                            dml.TensorDesc("INT8", [4, 6]))
    with pytest.raises(dml.InvalidArgumentError, match=r"^QUANTIZE: QuantizationTensors\[1\]\.Sizes must equal "
                       r"QuantizationTensors\[0\]\.Sizes \(\[4, 2\]\): a scale and a zero point per block; "
                       r"got \[4, 1\]\.$"):
        dml.Device("cpu").create_operator(desc)


def test_quantize_scale_has_the_input_type() -> None:
    desc = dml.QuantizeDesc(dml.TensorDesc("FLOAT16", [4]), "SCALE", [dml.TensorDesc("FLOAT32", [1])],
                            dml.TensorDesc("INT4", [4]))
    with pytest.raises(dml.InvalidArgumentError, match=r"^QUANTIZE: QuantizationTensors\[0\]\.DataType must equal "
                       r"InputTensor\.DataType \(FLOAT16\): it is the scale; got FLOAT32\.$"):
        dml.Device("cpu").create_operator(desc)


@pytest.mark.parametrize("level", ["6_2", "5_0"])
def test_below_6_3_they_are_refused(level: str) -> None:
    with pytest.raises(dml.UnsupportedFeatureLevelError, match=r"^DEQUANTIZE: FeatureLevel must be at least 6_3.* "
                       r"The lowest feature level that accepts this description is 6_3\.$"):
        dml.Device("cpu", level).create_operator(_make(x="INT8", zero="INT8"))


# --- the functional API ----------------------------------------------------------------------------------------

def test_functional_dequantize_takes_ml_dtypes_and_blocks() -> None:
    import ml_dtypes

    x = np.array([[-8, 7, 0, -1, 3, 2]], ml_dtypes.int4)
    scale = np.array([[0.5, 2.0]], np.float16)
    zero = np.array([[1, -1]], ml_dtypes.int4)
    got = dml.dequantize(x, scale, zero)
    assert got.dtype == np.float16
    assert got.tolist() == dequantize_oracle(x.astype(np.int8), scale, zero.astype(np.int8), "SCALE_ZERO_POINT",
                                             T.INT4, T.FLOAT16).tolist() == [[-4.5, 3.0, -0.5, 0.0, 8.0, 6.0]]
    # The same values as int8 with data_type, and UINT4's midpoint without a zero point.
    assert dml.dequantize(x.astype(np.int8), scale, zero.astype(np.int8), data_type="INT4").tolist() == got.tolist()
    assert dml.dequantize(np.array([0, 8, 15], np.uint8), 1.0, data_type="UINT4").tolist() == [-8, 0, 7]


def test_functional_quantize_round_trip_of_4bit_weights() -> None:
    import ml_dtypes

    rng = np.random.default_rng(5)
    w = rng.standard_normal((4, 32)).astype(np.float32)
    scale = (np.abs(w).reshape(4, 2, 16).max(axis=2) / 7).astype(np.float32)  # blocks of 16 along the rows
    q = dml.quantize(w, scale, output_type="INT4")
    assert q.dtype == ml_dtypes.int4 and q.shape == (4, 32)
    assert q.astype(np.int8).tolist() == quantize_oracle(w, scale, None, "SCALE", T.INT4).tolist()
    back = dml.dequantize(q, scale)
    assert back.tolist() == dequantize_oracle(q.astype(np.int8), scale, None, "SCALE", T.INT4, T.FLOAT32).tolist()
    assert np.abs(back - w).max() <= scale.max() / 2 + 1e-6
    u = dml.quantize(w, scale, np.full((4, 2), 8, ml_dtypes.uint4))
    assert u.dtype == ml_dtypes.uint4 and (u.astype(np.int16) - 8).tolist() == q.astype(np.int16).tolist()


@pytest.mark.parametrize(("call", "message"), [
    (lambda: dml.dequantize(np.array([1.5]), 1.0), r"^DEQUANTIZE: x must be an INT8, INT4, UINT8 or UINT4 array; got float64\.$"),
    (lambda: dml.dequantize(np.array([16], np.uint8), 1.0, data_type="UINT4"),
     r"^DEQUANTIZE: x must hold UINT4 values, in \[0, 15\]; got values in \[16, 16\]\.$"),
    (lambda: dml.dequantize(np.zeros((2, 6), np.int8), np.ones((2, 4), np.float32)),
     r"^DEQUANTIZE: QuantizationTensors\[0\]\.Sizes\[1\] must divide InputTensor\.Sizes\[1\] \(6\)"),
    (lambda: dml.dequantize(np.zeros((2, 6), np.int8), np.ones(2, np.float32)),
     r"^DEQUANTIZE: scale.ndim must equal x.ndim \(2\), or be a number; got 1\.$"),
    (lambda: dml.quantize(np.zeros(3, np.float32), 1.0, 9, output_type="INT4"),
     r"^QUANTIZE: zero_point must be an integer in \[-8, 7\] \(INT4\); got 9\.$"),
    (lambda: dml.quantize(np.zeros(3, np.float32), 1.0, output_type="INT16"),
     r"^QUANTIZE: output_type must be INT8, INT4, UINT8 or UINT4; got INT16\.$"),
])
def test_functional_refusals(call: object, message: str) -> None:
    with pytest.raises(dml.OpenDMLError, match=message):
        call()  # type: ignore[operator]


@pytest.fixture
def numpy_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """The NumPy lowering: the functional calls below test how their arguments are described, not new kernels."""
    from opendml.backends import cpu_kernels

    monkeypatch.setattr(cpu_kernels, "_chosen", cpu_kernels.load("numpy"))


@pytest.mark.usefixtures("numpy_kernels")
def test_functional_number_beside_blocks_serves_every_block() -> None:
    """A number zero point beside a blocked scale (and a number scale beside blocked zero points) is one value
    for every block: read through zero strides at the other's sizes."""
    import ml_dtypes

    q = np.array([[0, 200, 17, 255, 128, 3], [9, 90, 100, 110, 1, 250]], np.uint8)
    scale = np.float32([[0.5, 2, 0.25], [1, 0.125, 4]])
    zero = np.array([[128, 0, 17], [9, 100, 255]], np.uint8)
    full = np.full((2, 3), 128, np.uint8)
    oracle = dequantize_oracle(q, scale, full, "SCALE_ZERO_POINT", T.UINT8, T.FLOAT32)
    for number in (128, np.uint8(128), np.array([[128]], np.uint8)):
        assert _same(dml.dequantize(q, scale, number), oracle)
    halves = np.full((2, 3), 0.5, np.float32)
    oracle = dequantize_oracle(q, halves, zero, "SCALE_ZERO_POINT", T.UINT8, T.FLOAT32)
    for number in (0.5, np.float32(0.5), np.float32([[0.5]])):
        assert _same(dml.dequantize(q, number, zero), oracle)
    w = np.float32([[-3.0, 0.2, 2.5, 9.0, -0.75, 1000.0], [1, 2, 3, 4, 5, -6]])
    assert dml.quantize(w, scale, np.int8(3)).tolist() == quantize_oracle(
        w, scale, np.full((2, 3), 3, np.int8), "SCALE_ZERO_POINT", T.INT8).tolist()
    four = np.array([[1, -1, 7]], ml_dtypes.int4)
    got = dml.quantize(w, 0.5, four)
    assert got.dtype == ml_dtypes.int4 and got.astype(np.int8).tolist() == quantize_oracle(
        w, np.full((1, 3), 0.5, np.float32), four.astype(np.int8), "SCALE_ZERO_POINT", T.INT4).tolist()


@pytest.mark.usefixtures("numpy_kernels")
def test_functional_zero_point_of_other_blocks_is_refused() -> None:
    """Two arrays of different blocks are not widened: the zero point is refused naming its sizes."""
    with pytest.raises(dml.InvalidArgumentError, match=r"^DEQUANTIZE: QuantizationTensors\[1\]\.Sizes must equal "
                                                      r"QuantizationTensors\[0\]\.Sizes \(\[1, 3\]\)"):
        dml.dequantize(np.zeros((2, 6), np.uint8), np.ones((1, 3), np.float32), np.zeros((2, 1), np.uint8))


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.sampled_from(["scale", "zero_point"]), st.sampled_from(QUANTIZED),
       st.booleans(), st.integers(0, 2**16))
def test_property_a_single_value_beside_blocks(blocks: int, count: int, single: str, quantized: T, dequantize: bool,
                                               seed: int) -> None:
    """Against the oracle: one of the scale and the zero point a number, the other blocks along the last axis;
    DEQUANTIZE and QUANTIZE, every quantized type (4-bit as ml_dtypes' arrays)."""
    import ml_dtypes

    from opendml.backends import cpu_kernels

    rng = np.random.default_rng(seed)
    shape, q_shape = (2, blocks * count), (2, count)
    scale = rng.choice([0.5, 1.0, 0.25, 3.0, 0.1, -1.5], q_shape).astype(np.float32)
    zero = rng.integers(*RANGES[quantized], q_shape, endpoint=True).astype(NUMPY[quantized])
    if single == "scale":
        scale = np.full(q_shape, scale[0, 0], np.float32)
    else:
        zero = np.full(q_shape, zero[0, 0], NUMPY[quantized])
    arguments = (float(scale[0, 0]), zero) if single == "scale" else (scale, int(zero[0, 0]))
    kind = {T.INT4: ml_dtypes.int4, T.UINT4: ml_dtypes.uint4}.get(quantized)
    saved = cpu_kernels._chosen
    cpu_kernels._chosen = cpu_kernels.load("numpy")
    try:
        if dequantize:
            x = rng.integers(*RANGES[quantized], shape, endpoint=True).astype(NUMPY[quantized])
            s, z = arguments
            z = z.astype(kind) if kind is not None and isinstance(z, np.ndarray) else z
            given_x = x.astype(kind) if kind is not None else x
            expected = dequantize_oracle(x, scale, zero, "SCALE_ZERO_POINT", quantized, T.FLOAT32)
            assert _same(dml.dequantize(given_x, s, z, data_type=quantized.name), expected)
        else:
            x = (rng.standard_normal(shape) * 8).astype(np.float32)
            s, z = arguments
            z = z.astype(kind) if kind is not None and isinstance(z, np.ndarray) else z
            got = dml.quantize(x, s, z, output_type=quantized.name)
            expected = quantize_oracle(x, scale, zero, "SCALE_ZERO_POINT", quantized)
            assert np.asarray(got).astype(np.int16).tolist() == expected.astype(np.int16).tolist()
    finally:
        cpu_kernels._chosen = saved


# --- graphs ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fuse", ["1", "0"])
def test_dequantize_feeding_clip_in_a_graph(fuse: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Fused, DEQUANTIZE is computed inside the CLIP's kernel (one step); unfused, it runs as a step of its own,
    # its output an intermediate that the CLIP reads: either way the graph gives the oracle's values clipped.
    monkeypatch.setenv("OPENDML_FUSION", fuse)
    device = dml.Device("cpu")
    x, s, z = dml.TensorDesc("UINT4", [2, 6]), dml.TensorDesc("FLOAT32", [2, 2]), dml.TensorDesc("UINT4", [2, 2])
    f = dml.TensorDesc("FLOAT32", [2, 6])
    nodes = [dml.OperatorNode(device.create_operator(dml.DequantizeDesc(x, "SCALE_ZERO_POINT", [s, z], f))),
             dml.OperatorNode(device.create_operator(dml.ElementWiseClipDesc(f, f, -2.0, 2.0)))]
    graph = dml.GraphDesc(3, 1, nodes, input_edges=[dml.InputEdge(k, 0, k) for k in range(3)],
                          output_edges=[dml.OutputEdge(1, 0, 0)], intermediate_edges=[dml.IntermediateEdge(0, 0, 1, 0)])
    compiled = device.compile_graph(graph)
    assert compiled.plan.groups == (((0, 1),) if fuse == "1" else ((0,), (1,)))
    rng = np.random.default_rng(9)
    xv = rng.integers(0, 16, (2, 6)).astype(np.uint8)
    sv = np.array([[0.25, 0.5], [1, 0.125]], np.float32)
    zv = rng.integers(0, 16, (2, 2)).astype(np.uint8)
    out = device.create_buffer(48)
    compiled.execute([dml.BufferBinding(device.buffer_from(_bytes_of(t, v))) for t, v in ((x, xv), (s, sv), (z, zv))],
                     [dml.BufferBinding(out)])
    expected = np.clip(dequantize_oracle(xv, sv, zv, "SCALE_ZERO_POINT", T.UINT4, T.FLOAT32), -2, 2)
    assert out.to_numpy().view(np.float32).reshape(2, 6).tolist() == expected.tolist()


# --- the ONNX front end: 4-bit DequantizeLinear and QuantizeLinear with block_size, against ONNX's reference ----

@pytest.mark.parametrize("four_bit", ["int4", "uint4"])
@pytest.mark.parametrize(("shape", "axis", "block"), [((4, 6), 1, 2), ((4, 6), 0, 2), ((3, 7), 1, 3), ((5,), 0, 0)])
@pytest.mark.parametrize("with_zero_point", [True, False])
def test_onnx_4bit_blocked_against_onnx_reference(four_bit: str, shape: tuple[int, ...], axis: int, block: int,
                                                  with_zero_point: bool) -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    pytest.importorskip("onnx")
    from opendml import onnx as dml_onnx
    from tests.onnx_models import feeds, reference, single

    dtype = getattr(ml_dtypes, four_bit)
    low, high = (-8, 7) if four_bit == "int4" else (0, 15)
    rng = np.random.default_rng(len(shape) * 10 + axis + block)
    q_shape = list(shape)
    if block:
        q_shape[axis] = -(-shape[axis] // block)
    else:
        q_shape = [shape[axis]]
    x = rng.integers(low, high + 1, shape).astype(dtype)
    scale = rng.choice([0.5, 0.25, 2.0, 1.5], q_shape).astype(np.float32)
    zero = rng.integers(low, high + 1, q_shape).astype(dtype) if with_zero_point else None
    attributes = {"axis": axis, **({"block_size": block} if block else {})}
    # The scale and zero point are initializers where a short last block needs them expanded on the host.
    constants = ("scale", "zero") if block and shape[axis] % block else ()
    dequantize = single("DequantizeLinear", 21, {"x": x, "scale": scale, "zero": zero}, constants=constants,
                        output=(1, shape), **attributes)
    arrays = {"x": x, "scale": scale, "zero": zero}
    got = dml_onnx.run(dequantize, feeds(dequantize, arrays))["y"]
    expected = reference(dequantize, feeds(dequantize, arrays))["y"]
    assert got.dtype == expected.dtype and got.tolist() == expected.tolist()
    # QuantizeLinear back to 4 bits (the zero point's type, else output_dtype), ties and saturation included.
    y = (got + rng.choice([0.0, 0.5, -0.5, 100.0], got.shape).astype(np.float32)).astype(np.float32)
    onnx_type = 22 if four_bit == "int4" else 21
    output = {} if with_zero_point else {"output_dtype": onnx_type}
    quantize = single("QuantizeLinear", 21, {"v": y, "scale": scale, "zero": zero}, constants=constants,
                      output=(onnx_type, shape), **attributes, **output)
    arrays = {"v": y, "scale": scale, "zero": zero}
    got_q = dml_onnx.run(quantize, feeds(quantize, arrays))["y"]
    expected_q = reference(quantize, feeds(quantize, arrays))["y"]
    assert got_q.dtype == expected_q.dtype == dtype
    assert got_q.astype(np.int8).tolist() == expected_q.astype(np.int8).tolist()


def test_packed_4bit_output_keeps_the_tail_nibble_and_the_bytes_after() -> None:
    # Five UINT4 elements, packed: bytes 0 and 1 whole, byte 2's low nibble; its high nibble and byte 3 (the
    # tensor's padding to 4 bytes) stay as they were.
    device = dml.Device("cpu")
    x, s, y = dml.TensorDesc("FLOAT32", [5]), dml.TensorDesc("FLOAT32", [1]), dml.TensorDesc("UINT4", [5])
    op = device.compile_operator(device.create_operator(dml.QuantizeDesc(x, "SCALE", [s], y)))
    out = device.buffer_from(np.full(4, 0xAB, np.uint8))
    op.execute([dml.BufferBinding(device.buffer_from(np.float32([-8, -7, 0, 6, 7]))),
                dml.BufferBinding(device.buffer_from(np.float32([1]))), None], [dml.BufferBinding(out)])
    assert out.to_numpy().tolist() == [0x10, 0xE8, 0xAF, 0xAB]


# --- opendml dispatch: QuantizationTensors as a tensor array, bound as a list of resources ----------------------

def _dispatch_model(count: object = 2, bindings: object = ("S", "Z"), x_type: str = "UINT8") -> dict:
    return {
        "resources": {
            "X": {"initialValuesDataType": x_type, "initialValues": [0x21, 0x43, 0x05, 0]},
            "S": {"initialValuesDataType": "FLOAT32", "initialValues": [1.0, 0.5]},
            "Z": {"initialValuesDataType": "UINT8", "initialValues": [0x18, 0, 0, 0]},
            "Out": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 6, "value": 0}},
        },
        "dispatchables": {"dq": {"type": "DML_OPERATOR_DEQUANTIZE", "desc": {
            "InputTensor": {"DataType": "UINT4", "Sizes": [1, 6]}, "QuantizationType": "SCALE_ZERO_POINT",
            "QuantizationTensorCount": count,
            "QuantizationTensors": [{"DataType": "FLOAT32", "Sizes": [1, 2]}, {"DataType": "UINT4", "Sizes": [1, 2]}],
            "OutputTensor": {"DataType": "FLOAT32", "Sizes": [1, 6]}}}},
        "commands": [{"type": "dispatch", "dispatchable": "dq", "bindings": {
            "InputTensor": "X", "QuantizationTensors": list(bindings), "OutputTensor": "Out"}},
            {"type": "print", "resource": "Out"}],
    }


def test_dispatch_reads_dequantize_and_binds_its_tensor_array(tmp_path: Path) -> None:
    # X's bytes 0x21 0x43 0x05 are the UINT4 elements 1 2 3 4 5 0; Z's byte 0x18 the zero points 8 and 1.
    from tests.dispatch_helpers import assert_printed, run_dispatch, write_model

    result = run_dispatch(write_model(tmp_path / "m.json", _dispatch_model()))
    assert result.returncode == 0, result.stderr
    assert_printed(result.stdout, "Out", np.array([-7, -6, -5, 1.5, 2, -0.5]))


@pytest.mark.parametrize(("model", "message"), [
    (_dispatch_model(count=1), "QuantizationTensorCount: must equal the number of QuantizationTensors (2); got 1"),
    (_dispatch_model(bindings=("S",)), "QuantizationTensors: must bind 2 resources, one for each of "
                                       "QuantizationTensors (a list); got 1 bindings"),
    (_dispatch_model(x_type="UINT4"), "initialValuesDataType: must be a type of whole bytes (a UINT4 or INT4 "
                                      "tensor's resource holds its packed bytes as UINT8"),
])
def test_dispatch_refusals(model: dict, message: str, tmp_path: Path) -> None:
    from tests.dispatch_helpers import run_dispatch, write_model

    result = run_dispatch(write_model(tmp_path / "m.json", model))
    assert result.returncode != 0 and message in result.stderr, result.stderr


# --- a property: random ranks, sizes, blocks, strides and types against the oracle, bytes around kept ------------

@st.composite
def _case(draw: st.DrawFn) -> dict:
    rank = draw(st.integers(1, 3))
    sizes = [draw(st.integers(1, 6)) for _ in range(rank)]
    q_sizes = [draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0])) for n in sizes]
    dequantize = draw(st.booleans())
    quantized = draw(st.sampled_from(QUANTIZED))
    float_type = draw(st.sampled_from(FLOATS))
    kind = draw(st.sampled_from(KINDS))
    strided = [draw(st.booleans()) for _ in range(4)]
    strides = [disjoint_strides(draw, s) if on else None for s, on in zip([sizes, q_sizes, q_sizes, sizes], strided)]
    return {"sizes": sizes, "q_sizes": q_sizes, "dequantize": dequantize, "quantized": quantized,
            "float_type": float_type, "kind": kind, "strides": strides, "seed": draw(st.integers(0, 2**16))}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_case())
def test_property_blocked_quantization(case: dict) -> None:
    sizes, q_sizes, kind = case["sizes"], case["q_sizes"], case["kind"]
    quantized, float_type, strides = case["quantized"], case["float_type"], case["strides"]
    rng = np.random.default_rng(case["seed"])
    x_type, out_type = (quantized, float_type) if case["dequantize"] else (float_type, quantized)
    descs = [dml.TensorDesc(x_type, sizes, strides[0]), dml.TensorDesc(float_type, q_sizes, strides[1]),
             dml.TensorDesc(quantized, q_sizes, strides[2]), dml.TensorDesc(out_type, sizes, strides[3])]
    count = {"NONE": 0, "SCALE": 1, "SCALE_ZERO_POINT": 2}[kind]
    inputs = _data(kind, float_type, quantized, sizes, q_sizes, rng, quantize=not case["dequantize"])
    make = dml.DequantizeDesc if case["dequantize"] else dml.QuantizeDesc
    desc = make(descs[0], kind, descs[1:1 + count], descs[3])
    device = dml.Device("cpu")
    op = device.compile_operator(device.create_operator(desc))
    bindings = [None if v is None else dml.BufferBinding(device.buffer_from(_bytes_of(d, v)))
                for d, v in zip(descs[:3], inputs)]
    out = device.buffer_from(np.full(descs[3].total_tensor_size_in_bytes, 0x5A, np.uint8))
    op.execute(bindings, [dml.BufferBinding(out)])
    raw = out.to_numpy()
    if case["dequantize"]:
        expected = dequantize_oracle(*inputs, kind, quantized, float_type)  # type: ignore[arg-type]
    else:
        expected = quantize_oracle(*inputs, kind, quantized)  # type: ignore[arg-type]
    assert _same(_values_of(descs[3], raw), expected)
    # Every byte (nibble, for 4-bit data) the output does not address is as it was.
    untouched = _bytes_of(descs[3], expected, fill=0x5A)
    assert raw.tolist() == untouched.tolist()
