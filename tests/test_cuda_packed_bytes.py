"""8-bit operands given to ``apply`` as 32-bit words and a byte's place (expr_c.BYTES): one PTX prmt per
element, for every byte value and both signs, checked against NumPy on the host (tests/cuda_emulation.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from opendml import DataType as T
from opendml import TensorDesc
from opendml import expr as ex
from opendml.backends.cuda import elementwise_c
from opendml.kernels.spec import KernelSpec
from tests.cuda_emulation import run_elementwise_on_host
from tests.test_cuda_extra_outputs import elementwise_layout

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")


def difference_spec(t: T) -> KernelSpec:
    """x - zero point as FLOAT32 (the offset conversion where both are bytes), and x widened to INT32 (a
    packed element on its own) as an extra output."""
    x, zero_point = ex.Widen(ex.Load(0, t), T.INT16), ex.Widen(ex.Load(1, t), T.INT16)
    element = ex.Store(ex.ToFloat32(ex.Subtract(x, zero_point)), T.FLOAT32)
    return KernelSpec("FUSED", (t, t), T.FLOAT32, element, (), None,
                      (ex.Store(ex.Widen(ex.Load(0, t), T.INT32), T.INT32),))


def layout_of(t: T, sizes: tuple[int, ...]) -> tuple[list[TensorDesc], TensorDesc, object]:
    descs = [TensorDesc(t, sizes), TensorDesc(t, sizes, [0] * (len(sizes) - 1) + [1])]
    out = TensorDesc(T.FLOAT32, sizes)
    return descs, out, elementwise_layout(descs, out, [TensorDesc(T.INT32, sizes)])


@needs_gxx
@pytest.mark.parametrize("t", [T.UINT8, T.INT8])
def test_every_pair_of_bytes_converts_exactly(t: T, tmp_path: Path) -> None:
    """Row i holds the byte i everywhere, column j's zero point is the byte j: all 65536 pairs."""
    spec = difference_spec(t)
    _, _, layout = layout_of(t, (256, 256))
    width = elementwise_c.vector_width(spec, layout)
    assert width == 4 and elementwise_c.packed(spec, layout, width) == {0, 1}  # 16 bytes of FLOAT32 a chunk
    bytes_ = np.arange(256, dtype=np.uint8)
    x = np.repeat(bytes_, 256)
    buffers = [x, bytes_.copy(), np.zeros(256 * 256 * 4, np.uint8), np.zeros(256 * 256 * 4, np.uint8)]
    got = run_elementwise_on_host(spec, layout, width, buffers, [0] * 4, tmp_path)
    values = bytes_.view(t.numpy).astype(np.int64)
    want = (values[:, None] - values[None, :]).astype(np.float32)
    assert np.array_equal(got[2].view(np.float32).reshape(256, 256), want)
    assert np.array_equal(got[3].view(np.int32).reshape(256, 256), np.repeat(values, 256).reshape(256, 256))


def test_only_whole_words_of_chunk_loaded_bytes_are_packed() -> None:
    spec = difference_spec(T.UINT8)
    _, _, layout = layout_of(T.UINT8, (8, 64))
    source = elementwise_c.elementwise_vector(spec, layout, 4)
    assert "apply(u0_0.u[e >> 2], e & 3, u1_0.u[e >> 2], e & 3, uo1.e[e])" in source
    assert "add_rn(__int_as_float(prmt(0x4B000000u, a0, 0x3004u + s0))" in source  # x - zero point: 2 prmt
    _, _, flat = layout_of(T.UINT8, (37,))  # a tail of single elements loads elements, not words
    assert elementwise_c.packed(spec, flat, 4) == frozenset() and "prmt" not in elementwise_c.elementwise_vector(
        spec, flat, 4)
    assert elementwise_c.packed(spec, layout, 2) == frozenset()  # a chunk of 2 bytes holds no whole word
