"""``opendml.compile`` tracing ``opendml.dequantize`` and ``opendml.quantize``: one DEQUANTIZE or QUANTIZE node
each (fused with the nodes around it), the values computed here from the rule and bit for bit the eager calls;
4-bit data refused by name while tracing."""

from __future__ import annotations

import numpy as np
import pytest

import opendml as dml
from opendml.backends import cpu_kernels


@pytest.fixture(autouse=True)
def numpy_kernels() -> object:
    saved = cpu_kernels._chosen
    cpu_kernels._chosen = cpu_kernels.load("numpy")
    yield
    cpu_kernels._chosen = saved


Q = np.array([[0, 200, 17, 255, 128, 3], [9, 90, 100, 110, 1, 250]], np.uint8)
SCALE = np.float32([[0.5, 2, 0.25], [1, 0.125, 4]])  # blocks of 2 along the last axis
ZERO = np.array([[128, 0, 17], [9, 100, 255]], np.uint8)


def _dequantized() -> np.ndarray:
    """(q - zero point) * scale of the element's block, in float32 (exact here)."""
    blocks = np.repeat(SCALE, 2, axis=1), np.repeat(ZERO, 2, axis=1).astype(np.int64)
    return ((Q.astype(np.int64) - blocks[1]).astype(np.float32) * blocks[0]).astype(np.float32)


def test_dequantize_then_clip_is_traced() -> None:
    compiled = dml.compile(lambda q, s, z: dml.clip(dml.dequantize(q, s, z), -20.0, 20.0))
    got = compiled(Q, SCALE, ZERO)
    expected = np.clip(_dequantized(), -20, 20)
    assert got.dtype == np.float32 and got.tobytes() == expected.tobytes()
    assert got.tobytes() == dml.clip(dml.dequantize(Q, SCALE, ZERO), -20.0, 20.0).tobytes()


def test_values_known_while_tracing_are_held() -> None:
    compiled = dml.compile(lambda q: dml.dequantize(q, SCALE, ZERO))
    assert compiled(Q).tobytes() == _dequantized().tobytes()
    # a number: one scale for the tensor, UINT8's midpoint 128 for the absent zero point
    compiled = dml.compile(lambda q: dml.dequantize(q, 0.5))
    assert compiled(Q).tobytes() == ((Q.astype(np.float32) - 128) * np.float32(0.5)).tobytes()


def test_quantize_is_traced() -> None:
    x = np.float32([[-3.0, 0.2, 2.5, 9.0, -0.75, 1000.0]])
    scale = np.float32([[0.5, 1.0, 0.25]])
    compiled = dml.compile(lambda v: dml.quantize(dml.relu(v), scale, output_type="INT8"))
    got = compiled(x)
    # relu, / the block's scale, rounded half to even, + INT8's midpoint 0, saturated
    assert got.dtype == np.int8 and got.tolist() == [[0, 0, 2, 9, 0, 127]]
    assert got.tobytes() == dml.quantize(dml.relu(x), scale, output_type="INT8").tobytes()


@pytest.mark.parametrize(("call", "message"), [
    (lambda q: dml.dequantize(q, SCALE, data_type="UINT4"),
     r"^DEQUANTIZE: x must be INT8 or UINT8 while tracing \(opendml.compile does not take or give 4-bit arrays "),
    (lambda v: dml.quantize(v, 1.0, output_type="INT4"), r"^QUANTIZE: output_type must be INT8 or UINT8 while "),
    (lambda q: dml.dequantize(q, None, 3), r"^DEQUANTIZE: zero_point must come with a scale"),
])
def test_4_bit_data_is_refused_while_tracing(call: object, message: str) -> None:
    arg = Q if "DEQUANTIZE" in message else Q.astype(np.float32)
    with pytest.raises(dml.OpenDMLError, match=message):
        dml.compile(call)(arg)  # type: ignore[arg-type]


def test_a_number_beside_traced_blocks_serves_every_block() -> None:
    """A number zero point beside a traced blocked scale, and a number scale beside traced zero points: one
    value for every block, as the eager calls take them."""
    compiled = dml.compile(lambda q, s: dml.dequantize(q, s, 128))
    blocks = np.repeat(SCALE, 2, axis=1)
    expected = ((Q.astype(np.int64) - 128).astype(np.float32) * blocks).astype(np.float32)
    assert compiled(Q, SCALE).tobytes() == expected.tobytes() == dml.dequantize(Q, SCALE, 128).tobytes()
    compiled = dml.compile(lambda q, z: dml.dequantize(q, 0.5, z))
    expected = ((Q.astype(np.int64) - np.repeat(ZERO, 2, axis=1)).astype(np.float32) * np.float32(0.5))
    assert compiled(Q, ZERO).tobytes() == expected.astype(np.float32).tobytes()
    x = np.float32([[-3.0, 0.2, 2.5, 9.0, -0.75, 1000.0], [1, 2, 3, 4, 5, -6]])
    compiled = dml.compile(lambda v, s: dml.quantize(v, s, np.int8(-2)))
    # / the block's scale, rounded half to even, + -2, saturated
    assert compiled(x, SCALE).tolist() == [[-8, -2, -1, 2, -5, 127], [-1, 0, 22, 30, -1, -4]]
    assert compiled(x, SCALE).tobytes() == dml.quantize(x, SCALE, np.int8(-2)).tobytes()
