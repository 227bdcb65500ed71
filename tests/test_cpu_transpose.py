"""The tiled copy of a reduction's rows (opendml/backends/cpu_kernels/transpose.py) against NumPy's copy of the
transposed view: reduced axes leading, in the middle, several of them; tiles cut at every edge; any thread count."""

from __future__ import annotations

import numpy as np
import pytest

from opendml.backends import cpu_kernels

pytestmark = pytest.mark.skipif(not cpu_kernels.numba_available(),
                                reason="Numba is not installed (the opendml[fast] extra)")


@pytest.mark.parametrize(("shape", "axes"), [
    ((70, 45), (0,)), ((5, 33, 9), (1,)), ((3, 4, 5, 66), (1, 2)), ((1, 40, 1), (0, 1)), ((300, 2), (0,)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.uint8])
def test_the_tiled_rows_are_numpys_copy(shape: tuple[int, ...], axes: tuple[int, ...], dtype: type) -> None:
    from opendml.backends.cpu_kernels.transpose import contiguous_rows

    x = np.arange(np.prod(shape)).reshape(shape).astype(dtype)
    kept = [k for k in range(x.ndim) if k not in axes]
    n = int(np.prod([shape[a] for a in axes]))
    want = np.ascontiguousarray(np.transpose(x, kept + list(axes))).reshape(-1, n)
    for threads in (1, 2, 3):
        got = contiguous_rows(x, axes, threads)
        assert got is not None and got.flags.c_contiguous and np.array_equal(got, want), threads


def test_layouts_it_does_not_take_are_left_to_the_caller() -> None:
    from opendml.backends.cpu_kernels.transpose import contiguous_rows

    x = np.zeros((4, 5, 6), np.float32)
    assert contiguous_rows(x, (2,), 2) is None  # innermost: already rows
    assert contiguous_rows(x, (0, 2), 2) is None  # not one block of axes
    assert contiguous_rows(x[:, ::2], (0,), 2) is None  # not contiguous
