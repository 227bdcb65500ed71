"""Fused kernels with several outputs, and values recomputed or materialised (issue 14's row 5).

An intermediate that is also a graph output is written by the fused kernel that computes it (an extra
output of the kernel, ``FusedKernel.extras`` / ``KernelSpec.extra``) where the backend lowers them
(``Backend.fused_outputs``); a value read by several nodes is recomputed in each or materialised once by the
bytes rule of ``opendml.graphs.fusion``. Every test is backend-generic: the plan it expects follows the
backend's ``fused_outputs``, and results are checked against unfused and node-by-node execution or the
independent oracle (``tests/elementwise_oracle.py``), sizes crossing the CPU engines' thresholds.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from unittest import mock

import numpy as np
import pytest

import opendml as dml
from opendml import DataType as T
from opendml import TensorDesc
from opendml import expr as ex
from opendml.backends import cpu_kernels
from opendml.graphs.plan import Slot
from tests.graph_helpers import output_desc, run_graph, run_node_by_node
from tests.helpers import packed_bytes, same_values
from tests.test_argmin_large import oracle_argmin
from tests.test_graph_fusion import KINDS, assert_fused_equals_unfused, fusion_off

F32, F16 = T.FLOAT32, T.FLOAT16


@contextmanager
def device_of(kind: str, threads: int = 2) -> Iterator[dml.Device]:
    """A device of ``kind`` (``cpu-numpy``: the CPU with its NumPy kernels) with ``threads`` on the CPU."""
    if kind == "cuda":
        yield dml.Device("cuda")
        return
    with mock.patch.object(cpu_kernels, "_chosen", cpu_kernels.load("numpy") if kind == "cpu-numpy" else None):
        yield dml.Device("cpu", threads=threads)


def raw(a: np.ndarray) -> np.ndarray:
    return packed_bytes(a, -(-a.nbytes // 16) * 16)


# --- row 5: DEQUANTIZE_LINEAR -> CLIP (graph output 0) -> ARGMIN (graph output 1) ----------------------------

def row_five(device: dml.Device, sizes: tuple[int, ...], axes: Sequence[int], direction: str = "INCREASING",
             clipped: TensorDesc | None = None) -> dml.GraphDesc:
    """UINT8 ``sizes``, scale and zero point per last-axis position; ``clipped``: the CLIP's output (and the
    ARGMIN's input) description, packed FLOAT32 by default."""
    x = TensorDesc("UINT8", sizes)
    column = [0] * (len(sizes) - 1) + [1]
    scale, zero_point = TensorDesc("FLOAT32", sizes, column), TensorDesc("UINT8", sizes, column)
    f = clipped or TensorDesc("FLOAT32", sizes)
    reduced = TensorDesc("INT64", [1 if d in axes else n for d, n in enumerate(sizes)])
    nodes = [dml.ElementWiseDequantizeLinearDesc(x, scale, zero_point, TensorDesc("FLOAT32", sizes)),
             dml.ElementWiseClipDesc(TensorDesc("FLOAT32", sizes), f, 0.0, 6.0),
             dml.ArgMinDesc(f, reduced, list(axes), direction)]
    return dml.GraphDesc(3, 2, [dml.OperatorNode(device.create_operator(d)) for d in nodes],
                         [dml.InputEdge(k, 0, k) for k in range(3)], [dml.OutputEdge(1, 0, 0), dml.OutputEdge(2, 0, 1)],
                         [dml.IntermediateEdge(0, 0, 1, 0), dml.IntermediateEdge(1, 0, 2, 0)])


SCALES = np.array([0.05, -0.04, 0.0, -0.0, np.nan, 0.1, 1e-3, 0.07], np.float32)


def row_five_inputs(sizes: tuple[int, ...], seed: int) -> list[np.ndarray]:
    """x, scale, zero point: negative, zero and NaN scales, values clipped to 0 and 6 (ties)."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, sizes, dtype=np.uint8), rng.choice(SCALES, sizes[-1]),
            rng.integers(0, 256, sizes[-1], dtype=np.uint8)]


def oracle_clipped(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray) -> np.ndarray:
    """The oracle's DEQUANTIZE_LINEAR then CLIP [0, 6], element-wise in double precision: the exact
    difference to float32 (exact: it is below 2**24), the product of two float32 values (exact as a double)
    rounded once to float32; a bound replaces only what is strictly beyond it (NaN stays, -0.0 stays)."""
    product = (x.astype(np.float64) - zero_point.astype(np.float64)) * scale.astype(np.float64)
    v = product.astype(np.float32)
    with np.errstate(invalid="ignore"):
        v = np.where(v > 6.0, np.float32(6.0), v)
        return np.where(v < 0.0, np.float32(0.0), v).astype(np.float32)


@pytest.mark.parametrize("kind", KINDS)
def test_row_five_is_one_step_whose_argmin_kernel_writes_the_clipped_output(kind: str) -> None:
    with device_of(kind) as device:
        compiled = device.compile_graph(row_five(device, (4, 6), (1,)))
        if not device.backend.fused_outputs():  # the CLIP writes its graph output in a step of its own
            assert compiled.plan.groups == ((0, 1), (2,))
            return
        assert compiled.plan.groups == ((0, 1, 2),)
        assert compiled.binding_properties.temporary_resource_size == 0
        (step,) = compiled.plan.steps
        assert step.outputs == (Slot("output", 1), Slot("output", 0))  # the ARGMIN's, then the CLIP's
        spec = step.fused.spec  # type: ignore[union-attr]
        assert spec.reduction is not None and spec.extra == (ex.Store(spec.element, F32),)
        assert [(e.node, e.index, e.graph_output) for e in step.fused.extras] == [(1, 0, 0)]  # type: ignore[union-attr]
        text = repr(compiled.plan)
        assert "step 0:" in text and "step 1:" not in text and "-> Outputs[1], Outputs[0]" in text
        assert "temporary 0 bytes" in text


# (sizes, axes, threads): the engines' paths on the CPU (tests/test_argmin_large.py names them), each
# past PARALLEL_MIN elements but the first.
ROW_FIVE_CASES = {
    "small": ((4, 6), (1,), 2),
    "short rows on threads": ((4096, 100), (1,), 4),
    "long rows on threads": ((300, 1000), (1,), 2),
    "split runs": ((2, 200_000), (1,), 4),
    "split columns": ((40, 8200), (0,), 4),
    "split rows": ((2406, 130), (0,), 4),
    "every axis": ((600, 500), (0, 1), 2),
    "axes around a kept one": ((3, 350, 300), (0, 2), 2),
}


@pytest.mark.thin("name", "kind")  # each path on one kind of device; every pair under --slow
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(ROW_FIVE_CASES))
def test_row_five_matches_the_oracle_on_every_path(kind: str, name: str) -> None:
    sizes, axes, threads = ROW_FIVE_CASES[name]
    x, scale, zero_point = row_five_inputs(sizes, sorted(ROW_FIVE_CASES).index(name))
    clipped = oracle_clipped(x, scale, zero_point)
    with device_of(kind, threads) as device:
        for direction in ("INCREASING", "DECREASING"):
            graph = row_five(device, sizes, axes, direction)
            assert len(device.compile_graph(graph).plan.steps) == (1 if device.backend.fused_outputs() else 2)
            outputs = [np.zeros(output_desc(graph, k).total_tensor_size_in_bytes, np.uint8) for k in range(2)]
            got = run_graph(device, graph, [raw(x), raw(scale), raw(zero_point)], outputs)
            # NaN payloads may differ by backend (SPEC 8.5): the GPU's arithmetic gives its own NaN.
            assert same_values(got[0].view(np.float32)[:clipped.size].reshape(clipped.shape), clipped), (name, direction)
            indices = got[1][:clipped.size // math.prod(sizes[a] for a in axes) * 8].view(np.int64)
            assert np.array_equal(indices, oracle_argmin(clipped, axes, direction).reshape(-1)), (name, direction)


@pytest.mark.parametrize("kind", KINDS)
def test_padding_of_extra_outputs_is_untouched(kind: str) -> None:
    """The CLIP's output (an extra output of the ARGMIN's kernel, and of the THRESHOLD's) has padding
    between its rows: those bytes keep what the caller left there (SPEC 8.8)."""
    sizes = (70, 300)
    padded = TensorDesc("FLOAT32", sizes, [307, 1], total_tensor_size_in_bytes=70 * 307 * 4)  # padding last too
    x, scale, zero_point = row_five_inputs(sizes, 3)
    want = oracle_clipped(x, scale, zero_point)
    with device_of(kind) as device:
        graphs = [row_five(device, sizes, (1,), clipped=padded), clip_then_threshold(device, sizes, padded)]
        for graph in graphs:
            outputs = [np.full(output_desc(graph, k).total_tensor_size_in_bytes, 0xA5, np.uint8) for k in range(2)]
            got = run_graph(device, graph, [raw(x), raw(scale), raw(zero_point)], outputs)[0]
            rows = got[:70 * 307 * 4].view(np.float32).reshape(70, 307)
            assert same_values(rows[:, :300], want)
            assert (got.reshape(-1)[np.ones(got.size, bool) & ~_elements(got.size, 70, 307, 300)] == 0xA5).all()
            if device.backend.fused_outputs():
                assert len(device.compile_graph(graph).plan.steps) == 1


def _elements(total: int, rows: int, pitch: int, width: int) -> np.ndarray:
    """The bytes of a FLOAT32 [rows, width] tensor with rows ``pitch`` elements apart."""
    mask = np.zeros(total, bool)
    for r in range(rows):
        mask[r * pitch * 4:(r * pitch + width) * 4] = True
    return mask


def clip_then_threshold(device: dml.Device, sizes: tuple[int, ...], clipped: TensorDesc) -> dml.GraphDesc:
    """DEQUANTIZE_LINEAR -> CLIP [0, 6] (graph output 0, described by ``clipped``) -> THRESHOLD (output 1)."""
    x = TensorDesc("UINT8", sizes)
    column = [0] * (len(sizes) - 1) + [1]
    f = TensorDesc("FLOAT32", sizes)
    nodes = [dml.ElementWiseDequantizeLinearDesc(x, TensorDesc("FLOAT32", sizes, column),
                                                 TensorDesc("UINT8", sizes, column), f),
             dml.ElementWiseClipDesc(f, clipped, 0.0, 6.0), dml.ElementWiseThresholdDesc(clipped, f, 1.0)]
    return dml.GraphDesc(3, 2, [dml.OperatorNode(device.create_operator(d)) for d in nodes],
                         [dml.InputEdge(k, 0, k) for k in range(3)], [dml.OutputEdge(1, 0, 0), dml.OutputEdge(2, 0, 1)],
                         [dml.IntermediateEdge(0, 0, 1, 0), dml.IntermediateEdge(1, 0, 2, 0)])


# --- element-wise kernels with extra outputs ------------------------------------------------------------------

@pytest.mark.thin(("kind", "variant"), ("kind", "offset"))  # every combination under --slow
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("offset", [0, 16])
@pytest.mark.parametrize("variant", ["FLOAT32", "FLOAT16", "two sizes"])
def test_large_element_wise_extras_streamed_or_not_equal_unfused(kind: str, offset: int, variant: str) -> None:
    """Row 4's chain with the CLIP's result a graph output, past the streaming-store size: FLOAT32 outputs
    are written together by vector stores where their rows align alike, else by ordinary ones (output 1
    bound 16 bytes into its buffer); FLOAT16 outputs, and outputs of two element sizes, are never streamed."""
    sizes = (2049, 4096)
    x, scale, zero_point = row_five_inputs(sizes, 11)
    with device_of(kind) as device:
        graph = scaled_chain(device, sizes, variant)
        if device.backend.fused_outputs():
            assert device.compile_graph(graph).plan.groups == ((0, 1, 2),)
        middle = F16 if variant == "FLOAT16" else F32
        inputs = [raw(x), raw(scale.astype(middle.numpy)), raw(zero_point)]
        outputs = [np.zeros(output_desc(graph, k).total_tensor_size_in_bytes + 16, np.uint8) for k in range(2)]
        fused = _run_at(device, graph, inputs, outputs, offset)
        with fusion_off():
            unfused = _run_at(device, graph, inputs, outputs, offset)
        separate = run_node_by_node(device, graph, inputs, [o[:-16] for o in outputs])
        assert fused[0][:separate[0].size].tobytes() == separate[0].tobytes()
        assert fused[1][offset:][:separate[1].size].tobytes() == separate[1].tobytes()
        assert [u.tobytes() for u in unfused] == [f.tobytes() for f in fused]


def scaled_chain(device: dml.Device, sizes: tuple[int, ...], variant: str) -> dml.GraphDesc:
    """Three element-wise nodes, node 1 graph output 1 and node 2 graph output 0: DEQUANTIZE_LINEAR ->
    CLIP with ScaleBias -> THRESHOLD in FLOAT32 or FLOAT16, or ("two sizes") CLIP1 of the UINT8 input ->
    DEQUANTIZE_LINEAR -> CLIP in FLOAT32 (a UINT8 output beside a FLOAT32 one)."""
    x, f = TensorDesc("UINT8", sizes), TensorDesc(F16 if variant == "FLOAT16" else F32, sizes)
    column = [0] * (len(sizes) - 1) + [1]
    scale, zero_point = TensorDesc(f.data_type, sizes, column), TensorDesc("UINT8", sizes, column)
    if variant == "two sizes":
        nodes: list[object] = [dml.ElementWiseClip1Desc(x, x, T.UINT8, 3, 200),
                               dml.ElementWiseDequantizeLinearDesc(x, scale, zero_point, f),
                               dml.ElementWiseClipDesc(f, f, -1.0, 6.0)]
        wiring = [dml.InputEdge(0, 0, 0), dml.InputEdge(1, 1, 1), dml.InputEdge(2, 1, 2)]
    else:
        nodes = [dml.ElementWiseDequantizeLinearDesc(x, scale, zero_point, f),
                 dml.ElementWiseClipDesc(f, f, -1.0, 6.0, scale_bias=(0.5, 0.25)), dml.ElementWiseThresholdDesc(f, f, 0.0)]
        wiring = [dml.InputEdge(k, 0, k) for k in range(3)]
    return dml.GraphDesc(3, 2, [dml.OperatorNode(device.create_operator(d)) for d in nodes], wiring,
                         [dml.OutputEdge(2, 0, 0), dml.OutputEdge(1, 0, 1)],
                         [dml.IntermediateEdge(0, 0, 1, 0), dml.IntermediateEdge(1, 0, 2, 0)])


def _run_at(device: dml.Device, graph: dml.GraphDesc, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray],
            offset: int) -> list[np.ndarray]:
    """The graph run with output 1 bound ``offset`` bytes into its buffer; returns the buffers' bytes."""
    compiled = device.compile_graph(graph)
    buffers = [device.buffer_from(o) for o in outputs]
    bindings = [buffers[0], dml.BufferBinding(buffers[1], offset, output_desc(graph, 1).total_tensor_size_in_bytes)]
    compiled.execute([device.buffer_from(a) for a in inputs], bindings)
    return [b.to_numpy() for b in buffers]


# --- a value read by several nodes: recomputed or materialised by bytes moved ---------------------------------

def shared_value(device: dml.Device, x: TensorDesc, scale: TensorDesc, zero_point: TensorDesc | None, out: T,
                 argmin: bool = False, also_output: bool = False) -> dml.GraphDesc:
    """DEQUANTIZE_LINEAR (node 0) read by a CLIP (node 1) and by a THRESHOLD (node 2), or by an ARGMIN (node 2,
    ``argmin``); ``also_output``: node 0's value is graph output 2 too."""
    sizes = x.sizes
    f = TensorDesc(out, sizes)
    second: object = (dml.ArgMinDesc(f, TensorDesc("UINT32", [sizes[0], 1]), [1]) if argmin
                      else dml.ElementWiseThresholdDesc(f, f, 0.5))
    nodes = [dml.ElementWiseDequantizeLinearDesc(x, scale, zero_point, f), dml.ElementWiseClipDesc(f, f, -1.0, 2.0),
             second]
    count = 2 if zero_point is None else 3
    outputs = [dml.OutputEdge(1, 0, 0), dml.OutputEdge(2, 0, 1)] + ([dml.OutputEdge(0, 0, 2)] if also_output else [])
    return dml.GraphDesc(count, len(outputs), [dml.OperatorNode(device.create_operator(d)) for d in nodes],
                         [dml.InputEdge(k, 0, k) for k in range(count)], outputs,
                         [dml.IntermediateEdge(0, 0, 1, 0), dml.IntermediateEdge(0, 0, 2, 0)])


SIZES = [64, 33]
PER_COLUMN = [0, 1]


def shared_inputs(graph: dml.GraphDesc, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    found = []
    for k in range(graph.input_count):
        edge = next(e for e in graph.input_edges if e.graph_input_index == k)
        desc = graph.nodes[edge.to_node_index].operator.tensor(  # type: ignore[union-attr]
            graph.nodes[edge.to_node_index].operator.definition.schema.inputs[edge.to_node_input_index].name)  # type: ignore[union-attr]
        n = desc.total_tensor_size_in_bytes // desc.data_type.size
        values = rng.integers(0, 100, n) if desc.data_type.is_integer else rng.choice(SCALES, n)
        found.append(packed_bytes(values.astype(desc.data_type.numpy), desc.total_tensor_size_in_bytes))
    return found


# (x, scale, zero point, the value's type, a graph output too, an ARGMIN reader, recomputed): the bytes an
# element of recomputing (k = 2 readers) against materialising, P the chain's operands (the scale has the
# value's type), W the value.
RULE_CASES = {
    # P = 1 (the scale broadcast), W = 4: 2 against 1 + 4 + 8.
    "uint8, one scale": ("UINT8", "column", None, F32, False, False, True),
    # The same value read by a CLIP and an ARGMIN (its prologue where the backend lowers one).
    "uint8 into an argmin": ("UINT8", "column", None, F32, False, True, True),
    # P = 4 + 2 + 4 (a scale and a zero point per element), W = 2: 20 against 10 + 2 + 4.
    "int32, all per element, to FLOAT16": ("INT32", "element", "element", F16, False, False, False),
    # P = 4 + 2, W = 2: 12 against 6 + 2 + 4, a tie: materialised.
    "a tie": ("INT32", "element", None, F16, False, False, False),
    # A graph output too: P = 1 + 4 + 1, W = 4: 12 + 4 against 6 + 4 + 8; one kernel writes it.
    "a graph output, recomputed": ("UINT8", "element", "element", F32, True, False, True),
    # A graph output too: P = 4 + 2, W = 2: 12 + 2 against 6 + 2 + 4.
    "a graph output, materialised": ("INT32", "element", None, F16, True, False, False),
}


def _case_graph(device: dml.Device, name: str) -> dml.GraphDesc:
    x_type, scale_kind, zero_kind, out, also_output, argmin, _ = RULE_CASES[name]
    strides = {"column": [0, 1], "element": None}
    x = TensorDesc(x_type, SIZES)
    scale = TensorDesc(out, SIZES, strides[scale_kind])
    zero_point = None if zero_kind is None else TensorDesc(x_type, SIZES, strides[zero_kind])
    return shared_value(device, x, scale, zero_point, out, argmin, also_output)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", list(RULE_CASES))
def test_a_value_read_twice_is_recomputed_or_materialised_by_bytes_moved(kind: str, name: str) -> None:
    recomputed, also_output, argmin = RULE_CASES[name][6], RULE_CASES[name][4], RULE_CASES[name][5]
    with device_of(kind) as device:
        graph = _case_graph(device, name)
        compiled = assert_fused_equals_unfused(device, graph, shared_inputs(graph, 4))
        backend = device.backend
        if (also_output and not backend.fused_outputs()) or (argmin and not backend.reduction_prologues()):
            recomputed = False
        if recomputed:
            assert compiled.plan.groups == ((0, 1), (0, 2))
            assert compiled.binding_properties.temporary_resource_size == 0
            writers = [step for step in compiled.plan.steps if Slot("output", 2) in step.outputs]
            assert len(writers) == int(also_output)  # written by exactly one of the two kernels
        else:
            assert compiled.plan.groups == ((0,), (1,), (2,))
            size = 0 if also_output else output_desc(graph, 0).total_tensor_size_in_bytes
            assert compiled.binding_properties.temporary_resource_size == size


@pytest.mark.parametrize("kind", KINDS)
def test_steps_run_after_the_values_they_read_whatever_the_node_order(kind: str) -> None:
    """Nodes listed readers first: the materialised value's step comes before its readers' kernels, and a
    recomputed value (read by the CLIP and the THRESHOLD) is computed in both."""
    sizes = [40, 33]
    with device_of(kind) as device:
        x, h = TensorDesc("INT32", sizes), TensorDesc("FLOAT16", sizes)
        scale = TensorDesc("FLOAT16", sizes)  # per element: P = 4 + 2, W = 2, three readers: 18 against 14
        nodes = [dml.ElementWiseThresholdDesc(h, h, 0.5),  # 0 reads 3
                 dml.ElementWiseClipDesc(h, h, -1.0, 1.0),  # 1 reads 3
                 dml.ElementWiseClipDesc(h, h, -0.5, 0.5),  # 2 reads 3
                 dml.ElementWiseDequantizeLinearDesc(x, scale, None, h)]  # 3: read three times
        graph = dml.GraphDesc(2, 3, [dml.OperatorNode(device.create_operator(d)) for d in nodes],
                              [dml.InputEdge(0, 3, 0), dml.InputEdge(1, 3, 1)],
                              [dml.OutputEdge(k, 0, k) for k in range(3)],
                              [dml.IntermediateEdge(3, 0, k, 0) for k in range(3)])
        compiled = assert_fused_equals_unfused(device, graph, shared_inputs(graph, 8))
        assert compiled.plan.groups[0] == (3,) and sorted(compiled.plan.groups[1:]) == [(0,), (1,), (2,)]


@pytest.mark.parametrize("kind", KINDS)
def test_a_value_feeding_several_graph_outputs_is_written_to_each_by_one_kernel(kind: str) -> None:
    """The CLIP feeds graph outputs 1 and 2 and the ARGMIN (output 0); the THRESHOLD root of the second graph
    feeds outputs 0 and 1: one step each where the backend writes extra outputs."""
    sizes = (9, 40)
    x, scale, zero_point = row_five_inputs(sizes, 6)
    inputs = [raw(x), raw(scale), raw(zero_point)]
    with device_of(kind) as device:
        base = row_five(device, sizes, (1,))
        to_argmin = dml.GraphDesc(3, 3, base.nodes, base.input_edges,
                                  [dml.OutputEdge(2, 0, 0), dml.OutputEdge(1, 0, 1), dml.OutputEdge(1, 0, 2)],
                                  base.intermediate_edges)
        chain = clip_then_threshold(device, sizes, TensorDesc("FLOAT32", sizes))
        rooted = dml.GraphDesc(3, 3, chain.nodes, chain.input_edges,
                               [dml.OutputEdge(2, 0, 0), dml.OutputEdge(2, 0, 1), dml.OutputEdge(1, 0, 2)],
                               chain.intermediate_edges)
        for graph in (to_argmin, rooted):
            compiled = assert_fused_equals_unfused(device, graph, inputs)
            if device.backend.fused_outputs():
                (step,) = compiled.plan.steps
                assert sorted(slot.index for slot in step.outputs) == [0, 1, 2]
        want = oracle_clipped(x, scale, zero_point)
        outputs = [np.zeros(output_desc(to_argmin, k).total_tensor_size_in_bytes, np.uint8) for k in range(3)]
        got = run_graph(device, to_argmin, inputs, outputs)
        assert got[1].tobytes() == got[2].tobytes()
        assert same_values(got[1].view(np.float32)[:want.size].reshape(want.shape), want)


# --- errors -----------------------------------------------------------------------------------------------------

def test_a_too_small_extra_output_binding_names_the_graph_output() -> None:
    device = dml.Device("cpu")
    graph = row_five(device, (4, 6), (1,))
    compiled = device.compile_graph(graph)
    buffers = [device.buffer_from(raw(a)) for a in row_five_inputs((4, 6), 0)]
    with pytest.raises(dml.OpenDMLError, match=r"^GRAPH: Outputs\[0\]"):
        compiled.execute(buffers, [device.create_buffer(16), device.create_buffer(32)])


def test_compile_spec_needs_one_description_per_extra_output() -> None:
    device = dml.Device("cpu")
    graph = row_five(device, (4, 6), (1,))
    (step,) = device.compile_graph(graph).plan.steps
    spec = step.fused.spec  # type: ignore[union-attr]
    descs = [operand.desc for operand in step.fused.operands]  # type: ignore[union-attr]
    with pytest.raises(dml.OpenDMLError, match=r"extra_outputs must hold one description per extra output \(1\); "
                                               r"got 0\.$"):
        device.backend.compile_spec(device, spec, descs, output_desc(graph, 1))


# --- the Numba ARGMIN with extra outputs on every path of the engines' plan ------------------------------------

@pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed: the paths are its kernels'")
@pytest.mark.thin("chain", "box", "streamed")  # each chain, the small boxes and streaming; all five under --slow
@pytest.mark.parametrize("chain, box, streamed", [(0, None, False), (1, None, False), (2, 200, False),
                                                  (0, None, True), (2, 200, True)])
def test_every_plan_path_with_an_extra_output_equals_node_by_node(chain: int, box: int | None, streamed: bool,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/test_cpu_prologue.py's graphs (every case of tests/test_argmin_large.py: threads, split runs,
    columns and rows, strided and sliced inputs, several axes) with the CLIP's result a graph output too
    (FLOAT16 or FLOAT32); ``box``: scratch tiles of so few elements that box boundaries fall inside rows,
    runs and column ranges (the modules generated again for it); ``streamed``: FLOAT32 extras of any size
    written with streaming stores (aligned heads and tails around them, strided runs one by one)."""
    from opendml.backends.cpu_kernels import fast
    from opendml.backends.cpu_kernels.argmin import extras as argmin_extras
    from opendml.backends.cpu_kernels.argmin import prologue as argmin_prologue
    from opendml.backends.cpu_kernels.argmin.engines import boxes as argmin_boxes
    from tests.test_argmin_large import CASES
    from tests.test_cpu_prologue import CHAINS, build

    if box is not None:
        monkeypatch.setattr(argmin_boxes, "BOX", box)
        monkeypatch.setattr(argmin_extras, "_modules", {})
    if streamed:
        monkeypatch.setattr(fast, "STREAM_MIN_BYTES", 0)
    engines: list[str] = []
    launch = argmin_prologue._launch

    def spy(module: object, found: argmin_prologue.Prepared, *args: object) -> None:
        engines.append(found.engine)
        launch(module, found, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(argmin_prologue, "_launch", spy)
    for name, case in CASES.items():
        device = dml.Device("cpu", threads=case.threads)
        graph, inputs, _ = build(case.shape, case.axes, case.layout, CHAINS[chain], device, seed=chain)
        both = dml.GraphDesc(3, 2, graph.nodes, graph.input_edges, [*graph.output_edges, dml.OutputEdge(1, 0, 1)],
                             graph.intermediate_edges)
        compiled = device.compile_graph(both)
        assert compiled.plan.groups == ((0, 1, 2),), name
        outputs = [np.zeros(output_desc(both, k).total_tensor_size_in_bytes, np.uint8) for k in range(2)]
        fused = run_graph(device, both, inputs, outputs)
        separate = run_node_by_node(device, both, inputs, outputs)
        assert [a.tobytes() for a in fused] == [b.tobytes() for b in separate], name
    assert engines and all(engine.endswith("_streamed") == streamed for engine in engines)


def test_a_backend_without_fused_outputs_refuses_extras_and_fusion_leaves_graph_outputs_alone() -> None:
    device = dml.Device("cpu")
    graph = row_five(device, (4, 6), (1,))
    (step,) = device.compile_graph(graph).plan.steps
    descs = [operand.desc for operand in step.fused.operands]  # type: ignore[union-attr]
    with mock.patch.object(type(device.backend), "fused_outputs", lambda self: False):
        with pytest.raises(dml.KernelUnsupportedError, match=r"extra must be empty on backend 'cpu'"):
            device.backend.compile_spec(device, step.fused.spec, descs, output_desc(graph, 1),  # type: ignore[union-attr]
                                        [output_desc(graph, 0)])
        assert device.compile_graph(graph).plan.groups == ((0, 1), (2,))
