"""ARGMIN (and ARGMAX) with a fused prologue on the Numba kernels: DEQUANTIZE_LINEAR -> CLIP -> ARGMIN graphs, sized and laid
out to take every path of the engines' plan (``tests/test_argmin_large.py``'s cases), give the bits of the
same graph run node by node (each operator its own kernel, the intermediates in memory).

The clip creates ties (every element at or below Min becomes Min), NaN scales make NaN elements that ARGMIN
skips (a NaN per-row or per-column scale a whole row or column of them), zero and negative scales make -0.0
and +0.0 and reverse the order; FLOAT16 intermediates are rounded to half before they are compared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pytest

import opendml as dml
from opendml import TensorDesc
from opendml.backends import cpu_kernels
from tests.graph_helpers import run_graph, run_node_by_node
from tests.test_argmin_large import CASES, Case

pytestmark = pytest.mark.skipif(not cpu_kernels.numba_available(),
                                reason="Numba is not installed: the paths tested are the fast kernels'")

if cpu_kernels.numba_available():
    from opendml.backends.cpu_kernels.argmin import call as argmin_engine
    from opendml.backends.cpu_kernels.argmin import prologue as argmin_prologue
    from opendml.backends.cpu_kernels.argmin.plan import plan


@dataclass(frozen=True)
class Chain:
    """How the chain into ARGMIN is built: the scale's and zero point's broadcast (``tensor``, ``column``:
    one per last-axis position, ``row``: one per first-axis position), the intermediate's type, the
    ARGMIN's direction and index type, the quantized type, the clip's bounds, and the reduction (ARGMIN or
    ARGMAX) and its NanPolicy."""

    broadcast: str
    intermediate: str = "FLOAT32"
    direction: str = "INCREASING"
    index: str = "INT64"
    quantized: str = "UINT8"
    clip: tuple[float, float] = (0.0, 6.0)
    operator: str = "ARGMIN"  # or ARGMAX
    nan_policy: str = "IGNORE"


def _broadcast(shape: tuple[int, ...], how: str) -> tuple[int, list[int]]:
    """The element count of a broadcast operand and its strides over ``shape``."""
    if how == "tensor":
        return 1, [0] * len(shape)
    if how == "column":
        return shape[-1], [0] * (len(shape) - 1) + [1]
    return shape[0], [1] + [0] * (len(shape) - 1)


def _quantized(shape: tuple[int, ...], layout: str, t: np.dtype, rng: np.random.Generator) -> tuple[np.ndarray, list[int]]:
    """The quantized input's buffer and element strides: packed, strided (every other element of the last
    axis) or sliced (axis 1 cut from one twice as long); values from a small set, to make ties."""
    if layout == "strided":
        full = (*shape[:-1], 2 * shape[-1])
    elif layout == "sliced":
        full = (shape[0], 2 * shape[1], *shape[2:])
    else:
        full = shape
    buf = rng.integers(0, 12, full).astype(t)
    view = buf[..., ::2] if layout == "strided" else (buf[:, :shape[1]] if layout == "sliced" else buf)
    return buf, [s // buf.itemsize for s in view.strides]


def _padded(a: np.ndarray) -> np.ndarray:
    raw = np.zeros(-(-a.nbytes // 4) * 4, np.uint8)
    raw[:a.nbytes] = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    return raw


SCALES = np.array([0.5, -0.75, 0.0, -0.0, np.nan, 1.0009765625, 3.0, 1e-3], np.float32)


def build(shape: tuple[int, ...], axes: tuple[int, ...], layout: str, chain: Chain, device: dml.Device,
          seed: int, fixed: tuple[float, int] | None = None) -> tuple[dml.GraphDesc, list[np.ndarray], list[list[int]]]:
    """The graph, its input buffers, and the strides of the prologue's operands (x, scale, zero point);
    ``fixed``: one scale and zero point for all."""
    rng = np.random.default_rng(seed)
    qt = np.dtype(chain.quantized.lower())
    buf, x_strides = _quantized(shape, layout, qt, rng)
    count, b_strides = _broadcast(shape, chain.broadcast)
    scale = rng.choice(SCALES[SCALES == SCALES] if count == 1 and seed % 3 else SCALES, count)
    if count > 2:
        scale[1] = np.nan  # a whole row or column of NaN
    zero_point = rng.integers(0, 12, count).astype(qt)
    if fixed is not None:
        scale[:], zero_point[:] = fixed
    x = TensorDesc(chain.quantized, shape, x_strides, total_tensor_size_in_bytes=-(-buf.nbytes // 4) * 4)
    f = TensorDesc(chain.intermediate, shape)
    s = TensorDesc(chain.intermediate, shape, b_strides, total_tensor_size_in_bytes=-(-count * f.data_type.size // 4) * 4)
    z = TensorDesc(chain.quantized, shape, b_strides, total_tensor_size_in_bytes=-(-count // 4) * 4)
    reduced = TensorDesc(chain.index, [1 if d in axes else n for d, n in enumerate(shape)])
    nodes = [dml.ElementWiseDequantizeLinearDesc(x, s, z, f), dml.ElementWiseClipDesc(f, f, *chain.clip),
             (dml.ArgMaxDesc if chain.operator == "ARGMAX" else dml.ArgMinDesc)(f, reduced, list(axes), chain.direction,
                                                                                chain.nan_policy)]
    graph = dml.GraphDesc(3, 1, [dml.OperatorNode(device.create_operator(d)) for d in nodes],
                          [dml.InputEdge(k, 0, k) for k in range(3)], [dml.OutputEdge(2, 0, 0)],
                          [dml.IntermediateEdge(0, 0, 1, 0), dml.IntermediateEdge(1, 0, 2, 0)])
    inputs = [_padded(buf), _padded(scale.astype(f.data_type.numpy)), _padded(zero_point)]
    return graph, inputs, [x_strides, b_strides, b_strides]


def check(shape: tuple[int, ...], axes: tuple[int, ...], layout: str, chain: Chain, threads: int,
          seed: int = 0, fixed: tuple[float, int] | None = None) -> argmin_prologue.Prepared:
    """The fused graph (one kernel) gives node-by-node execution's bits; returns the plan it ran."""
    device = dml.Device("cpu", threads=threads)
    graph, inputs, strides = build(shape, axes, layout, chain, device, seed, fixed)
    compiled = device.compile_graph(graph)
    assert compiled.plan.groups == ((0, 1, 2),) and compiled.binding_properties.temporary_resource_size == 0
    size = math.prod(1 if d in axes else n for d, n in enumerate(shape)) * np.dtype(chain.index.lower()).itemsize
    outputs = [np.zeros(-(-size // 4) * 4, np.uint8)]
    fused = run_graph(device, graph, inputs, outputs)[0]
    separate = run_node_by_node(device, graph, inputs, outputs)[0]
    assert np.array_equal(fused, separate), (shape, axes, layout, chain, threads)
    fast = chain.intermediate == "FLOAT32"
    return argmin_prologue.prepare(shape, strides, axes, threads, fast)


def takes(case: Case, prepared: argmin_prologue.Prepared, strides: list[int]) -> bool:
    found = argmin_prologue.merged(case.shape, [strides], case.axes)
    layout = replace(found.layout, strides=found.strides[0])  # the path checks see the input's own strides
    return case.takes(layout, plan(found.layout, case.threads)) and prepared.work == plan(found.layout, case.threads)


# The last: ARGMAX with NaN (NaN scales) winning, FLOAT32: the fast rows and columns, whose vector lanes
# compare negated values and leave a run whose lanes met a NaN to the keys, and the scratch tiles of the
# strided layouts (which pass the kind to the engines, as for ARGMIN).
CHAINS = [Chain("tensor"), Chain("column", "FLOAT16", "DECREASING", "UINT32"),
          Chain("row", "FLOAT32", "DECREASING", "INT32", "INT8"), Chain("column", index="UINT64", clip=(0.5, 2.0)),
          Chain("column", operator="ARGMAX", nan_policy="PROPAGATE")]


@pytest.mark.thin("name", "chain")  # each path, each chain; every pair under --slow
@pytest.mark.parametrize("chain", range(len(CHAINS)))
@pytest.mark.parametrize("name", list(CASES))
def test_every_plan_path_with_a_prologue_equals_node_by_node(name: str, chain: int) -> None:
    case = CASES[name]
    prepared = check(case.shape, case.axes, case.layout, CHAINS[chain], case.threads, seed=chain)
    if CHAINS[chain].broadcast == "tensor":  # the scale merges wherever the input does: the input's own path
        strides = _quantized(case.shape, case.layout, np.dtype(np.uint8), np.random.default_rng(0))[1]
        assert takes(case, prepared, strides), name


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("axes", [(0,), (1,), (0, 1)])
def test_row_one_of_the_benchmark_shrunk_with_float32_rows_compared_as_keys(
        threads: int, axes: tuple[int, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """DEQUANTIZE_LINEAR per column -> CLIP [0, 6] -> ARGMIN, rows compared as floats and as integer keys:
    the fast rows compute the element in registers, the fast columns in the fold over each group of rows."""
    for floats in (True, False):
        monkeypatch.setattr(argmin_engine, "FLOAT_COMPARISONS", floats)
        prepared = check((1031, 700), axes, "packed", Chain("column"), threads, seed=threads)
        assert prepared.engine == ("fast_columns" if axes == (0,) else "fast_rows")


@pytest.mark.parametrize("shape", [(3, 5), (64, 2000), (2, 70_000)])
def test_int8_per_tensor_logits(shape: tuple[int, ...]) -> None:
    """Row 3 of the benchmark's chain, shrunk: DEQUANTIZE_LINEAR INT8 per tensor -> ARGMIN (no CLIP: a
    CLIP of infinite bounds stands for none, and keeps NaN)."""
    chain = Chain("tensor", quantized="INT8", clip=(-math.inf, math.inf))
    for direction in ("INCREASING", "DECREASING"):
        check(shape, (len(shape) - 1,), "packed", replace(chain, direction=direction), 2, seed=len(shape))


@pytest.mark.parametrize("name", list(CASES))
def test_small_boxes_cut_rows_and_columns_anywhere(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tiles of 200 elements: every box boundary falls inside a row, a run or a column range (the module is
    generated again for the other tile size)."""
    from opendml.backends.cpu_kernels.argmin.engines import boxes as argmin_boxes

    monkeypatch.setattr(argmin_boxes, "BOX", 200)
    monkeypatch.setattr(argmin_boxes, "_modules", {})
    case = CASES[name]
    check(case.shape, case.axes, case.layout, Chain("column", "FLOAT32", "DECREASING", "INT64"), case.threads, seed=5)


@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_rows_of_infinity_only_are_reduced_again_with_keys(direction: str) -> None:
    """Every element +inf (a scale of 3e38, x - zero point >= 116): the vector lanes, starting at +inf, find
    nothing smaller and the run is reduced again; the first (INCREASING) or last index wins."""
    chain = Chain("tensor", quantized="INT8", direction=direction, clip=(-math.inf, math.inf))
    prepared = check((5, 300), (1,), "packed", chain, 2, fixed=(3e38, -116))
    assert prepared.engine == "fast_rows"


@pytest.mark.parametrize("nan_policy", ["IGNORE", "PROPAGATE"])
@pytest.mark.parametrize("direction", ["INCREASING", "DECREASING"])
def test_argmax_rows_of_minus_infinity_or_nan_only_are_reduced_again_with_keys(direction: str, nan_policy: str) -> None:
    """ARGMAX's lanes compare negated values from +inf: rows of -inf only (a scale of -3e38) find nothing
    and are reduced again, as are rows of NaN only (a NaN scale: ignored, or tied winners); the first
    (INCREASING) or last index wins."""
    chain = Chain("tensor", quantized="INT8", direction=direction, clip=(-math.inf, math.inf), operator="ARGMAX",
                  nan_policy=nan_policy)
    for fixed in ((-3e38, -116), (math.nan, 0)):
        prepared = check((5, 300), (1,), "packed", chain, 2, fixed=fixed)
        assert prepared.engine == "fast_rows"


def test_a_float16_intermediate_takes_the_scratch_tiles() -> None:
    """Its values are rounded to half and compared as FLOAT16 keys: not the FLOAT32 fast rows."""
    prepared = check((40, 1000), (1,), "packed", Chain("column", "FLOAT16"), 2)
    assert prepared.engine == "rows"
