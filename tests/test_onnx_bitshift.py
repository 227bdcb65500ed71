"""ONNX's BitShift-28 of signed integers, lowered onto DirectML's unsigned shifts through CAST: right shifts
arithmetic, left shifts dropping the bits past the sign bit, a negative count or one of the width or more giving
the sign extension alone; NumPy broadcasting; a shifted value computed by another node (each step's tensors of
one type per graph edge). The expectations are computed here from the opset-28 rule, in Python integers."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx", reason="the ONNX front end needs the onnx extra (pip install 'opendml[onnx]')")

from onnx import helper
from onnx_models import model, single
from test_onnx_ops import assert_same, run


def _shifted(x: int, count: int, bits: int, direction: str) -> int:
    """BitShift-28's rule for one signed element of ``bits`` bits."""
    if count < 0 or count >= bits:
        return -1 if direction == "RIGHT" and x < 0 else 0
    if direction == "RIGHT":
        return x >> count  # Python's >> is arithmetic
    wrapped = (x << count) & ((1 << bits) - 1)
    return wrapped - (1 << bits) if wrapped >= 1 << (bits - 1) else wrapped


def _expected(x: np.ndarray, y: np.ndarray, direction: str) -> np.ndarray:
    a, b = np.broadcast_arrays(x, y)
    bits = 8 * x.dtype.itemsize
    values = [_shifted(int(p), int(q), bits, direction) for p, q in zip(a.reshape(-1), b.reshape(-1))]
    return np.array(values, x.dtype).reshape(a.shape)


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("dtype", [np.int8, np.int32])
def test_signed_shifts_broadcast(direction: str, dtype: type) -> None:
    """X (rows) against a row of counts: 0, 1, the width minus 1, the width, beyond it, negative."""
    info, bits = np.iinfo(dtype), 8 * np.dtype(dtype).itemsize
    x = np.array([[info.min, -1, -5, 0, 1, 5, info.max], [info.min + 1, -2, -64, 3, 64, 100, info.max - 1]],
                 dtype)[:, :, None]
    y = np.array([0, 1, bits - 1, bits, bits + 3, -1, -bits], dtype)
    got = run(single("BitShift", 28, {"x": x, "count": y}, direction=direction), {"x": x, "count": y})
    assert_same(got, {"y": _expected(x, y, direction)})


def test_shift_of_a_computed_value() -> None:
    """Add's INT32 output shifted right: the CAST steps keep every graph edge of one type."""
    a = np.array([-7, -100, 9, 2**30], np.int32)
    b = np.array([1, -28, 3, 2**30 - 1], np.int32)
    y = np.array([1], np.int32)
    nodes = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("BitShift", ["s", "y"], ["z"],
                                                                          direction="RIGHT")]
    got = run(model(nodes, {"a": a, "b": b, "y": y}, ["z"], 28), {"a": a, "b": b, "y": y})
    assert_same(got, {"z": _expected(a + b, y, "RIGHT")})
