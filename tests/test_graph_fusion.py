"""Fused kernels of compiled graphs: composed expressions keep each intermediate's rounding, the planner
groups element-wise nodes by its rules, and fused graphs give the bytes of unfused and node-by-node
execution on every backend (hypothesis-generated chains and DAGs, sizes past the threading thresholds)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml import DataType as T
from opendml import TensorDesc
from opendml import expr as ex
from opendml import graph as g
from opendml.backends import cpu_kernels
from opendml.backends.cpu_kernels.views import PARALLEL_MIN
from opendml.backends.cuda import expr_c
from opendml.kernels import compose
from opendml.kernels.numpy_lowering import evaluate
from opendml.kernels.spec import KernelSpec
from opendml.ops import DECLARED
from opendml.ops.definition import REQUIRED
from tests import elementwise_oracle as oracle
from tests.conftest import CUDA_MISSING
from tests.graph_helpers import head, output_desc, run_graph, run_node_by_node
from tests.graph_strategies import mixed_graphs
from tests.helpers import edge_values, packed_bytes, same_values

CPU = dml.Device("cpu")
F32, F16 = T.FLOAT32, T.FLOAT16


@contextmanager
def fusion_off() -> Iterator[None]:
    with mock.patch.dict(os.environ, {"OPENDML_FUSION": "0"}):
        yield


# --- composition (opendml.kernels.compose) ------------------------------------------------------------------

def spec(desc: object) -> Any:
    return CPU.create_operator(desc).kernel_spec


def dequantize_then_clip(out: T, scale_bias: tuple[float, float] | None) -> tuple[Any, Any]:
    x, f = TensorDesc("INT8", [64]), TensorDesc(out, [64])
    return (spec(dml.ElementWiseDequantizeLinearDesc(x, f, x, f)),
            spec(dml.ElementWiseClipDesc(f, f, -3.0, 1e4, scale_bias=scale_bias)))


def composed(first: Any, second: Any) -> Any:
    composer = compose.Composer()
    value = composer.add(first, [composer.operand(k, t) for k, t in enumerate(first.inputs)])
    return composer.spec("CHAIN", composer.add(second, [compose.read_back(value)]))


def chain_operands(rng: np.random.Generator, out: T) -> list[np.ndarray]:
    x = edge_values(T.INT8, 64, rng)
    scale = edge_values(out, 64, rng)
    scale[:8] = np.array([0.0, -0.0, np.nan, -1.5, 1e-3, 3.3, 0.1, 7.77], out.numpy)  # zero, negative, NaN
    return [x, scale, edge_values(T.INT8, 64, rng)]


@pytest.mark.parametrize("out", [F32, F16])
@pytest.mark.parametrize("scale_bias", [None, (1.0009765625, -0.0), (-3.1, 0.7)])
def test_composed_chain_equals_node_by_node_and_the_oracle(out: T, scale_bias: tuple[float, float] | None) -> None:
    first, second = dequantize_then_clip(out, scale_bias)
    fused = composed(first, second)
    for seed in range(4):
        x, scale, zero_point = chain_operands(np.random.default_rng(seed), out)
        got = evaluate(fused.element, [x, scale, zero_point], fused.scalars)
        middle = evaluate(first.element, [x, scale, zero_point], first.scalars)
        assert middle.dtype == out.numpy  # the intermediate as memory holds it
        assert same_values(got, evaluate(second.element, [middle], second.scalars))
        want = np.array([oracle.clamp_element(oracle.dequantize_element(int(a), float(s), int(z), out.name),
                                              out.name, scale_bias, -3.0, 1e4)
                         for a, s, z in zip(x, scale, zero_point)], out.numpy)
        assert same_values(got, want)


def test_a_float16_intermediate_is_rounded_to_half_inside_the_composition() -> None:
    first, second = dequantize_then_clip(F16, (1.0, 1.0))
    fused = composed(first, second)
    assert any(isinstance(n, ex.Store) and n.type is F16 for n in ex.nodes(fused.element.value))
    # 41 * 49.96875 = 2048.71875 is 2048 as FLOAT16; 2048 + 1 then ties to even, 2048 again. Without the
    # intermediate's rounding the sum 2049.71875 would give 2050.
    x, scale, zero_point = np.array([41], np.int8), np.array([49.96875], np.float16), np.array([0], np.int8)
    got = evaluate(fused.element, [x, scale, zero_point], fused.scalars)
    want = oracle.clamp_element(oracle.dequantize_element(41, 49.96875, 0, "FLOAT16"), "FLOAT16", (1.0, 1.0),
                                -3.0, 1e4)
    assert got.tolist() == [want] == [2048.0]
    assert oracle.clamp_element(41 * 49.96875, "FLOAT16", (1.0, 1.0), -3.0, 1e4) == 2050.0


def test_identity_stores_are_left_out_and_scalars_renumber() -> None:
    f = TensorDesc("FLOAT32", [4])
    a, b = spec(dml.ElementWiseClipDesc(f, f, -1.0, 2.0)), spec(dml.ElementWiseThresholdDesc(f, f, 0.5))
    fused = composed(a, b)
    assert fused.scalars == (np.float32(2.0), np.float32(-1.0), np.float32(0.5))
    assert sum(isinstance(n, ex.Store) for n in ex.nodes(fused.element)) == 1  # FLOAT32 reads back as is
    assert fused.inputs == (F32,) and ex.params(fused.element) == {0: F32, 1: F32, 2: F32}


def test_a_float16_store_below_the_root_is_a_value_in_every_lowering() -> None:
    inner = ex.Store(ex.Multiply(ex.ToFloat32(ex.Load(0, F16)), ex.Param(0, F32)), F16)
    element = ex.Store(ex.Add(ex.ToFloat32(inner), ex.Param(1, F32)), F32)
    lines, result = expr_c.body(element)
    held = [line for line in lines if "f2h" in line]
    assert held == [held[0]] and held[0].startswith("const float ") and "h2f(f2h(" in held[0]
    assert lines[-1].startswith("const float ") and result == f"t{len(lines) - 1}"
    values = np.array([2049.0, 1.0, -0.0, np.nan, 65504.0], np.float16)
    scalars = (np.float32(1.0009765625), np.float32(-0.0))
    want = np.array([oracle.round_f32(oracle.round_f16(oracle.round_f32(float(v) * 1.0009765625)) - 0.0)
                     for v in values], np.float32)
    assert same_values(evaluate(element, [values], scalars), want)
    if cpu_kernels.numba_available():
        from opendml.backends.cpu_kernels import fast

        out = np.zeros(values.size, np.float32)
        fast.elementwise(KernelSpec("TEST", (F16,), F32, element, scalars))(values, out, 1)
        assert same_values(out, want)


# --- planning ------------------------------------------------------------------------------------------------

def chain_graph(device: dml.Device, count: int, out: str = "FLOAT32", read: TensorDesc | None = None,
                extra_outputs: Sequence[int] = ()) -> dml.GraphDesc:
    """DEQUANTIZE_LINEAR (UINT8 [4, 4], per-column scale) then ``count`` - 1 CLIPs; ``read``: how the last
    CLIP reads its input; ``extra_outputs``: nodes whose output is also a graph output."""
    x, f = TensorDesc("UINT8", [4, 4]), TensorDesc(out, [4, 4])
    scale = TensorDesc(out, [4, 4], [0, 1])
    nodes = [dml.OperatorNode(device.create_operator(dml.ElementWiseDequantizeLinearDesc(x, scale, None, f)))]
    for k in range(1, count):
        source = read if (read is not None and k == count - 1) else f
        nodes.append(dml.OperatorNode(device.create_operator(dml.ElementWiseClipDesc(source, f, -k, 2.0 * k))))
    outputs = [dml.OutputEdge(count - 1, 0, 0)] + [dml.OutputEdge(n, 0, 1 + i) for i, n in enumerate(extra_outputs)]
    return dml.GraphDesc(2, len(outputs), nodes, [dml.InputEdge(0, 0, 0), dml.InputEdge(1, 0, 1)], outputs,
                         [dml.IntermediateEdge(k - 1, 0, k, 0) for k in range(1, count)])


def test_a_chain_is_one_kernel_with_no_temporary_memory() -> None:
    compiled = CPU.compile_graph(chain_graph(CPU, 4))
    assert compiled.plan.groups == ((0, 1, 2, 3),)
    assert compiled.binding_properties.temporary_resource_size == 0
    text = repr(compiled.plan)
    assert "Nodes[0] ELEMENT_WISE_DEQUANTIZE_LINEAR + Nodes[1] ELEMENT_WISE_CLIP" in text and "(fused)" in text
    with fusion_off():
        unfused = CPU.compile_graph(chain_graph(CPU, 4))
    assert unfused.plan.groups == ((0,), (1,), (2,), (3,))
    assert unfused.binding_properties.temporary_resource_size == 3 * 64  # three packed [4, 4] FLOAT32


def test_a_transposed_read_keeps_its_buffer_and_a_graph_output_fuses_where_kernels_write_extras() -> None:
    assert CPU.backend.fused_outputs()
    compiled = CPU.compile_graph(chain_graph(CPU, 3, extra_outputs=[1]))
    assert compiled.plan.groups == ((0, 1, 2),) and compiled.binding_properties.temporary_resource_size == 0
    (step,) = compiled.plan.steps
    assert [str(slot) for slot in step.outputs] == ["Outputs[0]", "Outputs[1]"]
    with mock.patch.object(CPU.backend, "fused_outputs", lambda: False):  # a backend writing one output a kernel
        assert CPU.compile_graph(chain_graph(CPU, 3, extra_outputs=[1])).plan.groups == ((0, 1), (2,))
    transposed = TensorDesc("FLOAT32", [4, 4], [1, 4])
    compiled = CPU.compile_graph(chain_graph(CPU, 3, read=transposed))
    assert compiled.plan.groups == ((0, 1), (2,))
    assert compiled.binding_properties.temporary_resource_size == 64
    packed = TensorDesc("FLOAT32", [4, 4], [4, 1])  # the written layout, its strides given
    assert CPU.compile_graph(chain_graph(CPU, 3, read=packed)).plan.groups == ((0, 1, 2),)


def test_a_value_read_twice_is_recomputed_when_cheaper_and_argmin_takes_its_graph_output() -> None:
    graph = head(CPU)  # DEQUANTIZE_LINEAR -> CLIP (also a graph output) -> ARGMIN
    assert CPU.compile_graph(graph).plan.groups == ((0, 1, 2),)
    f = TensorDesc("FLOAT32", [4])
    clip = CPU.create_operator(dml.ElementWiseClipDesc(f, f, -1.0, 1.0))
    threshold = CPU.create_operator(dml.ElementWiseThresholdDesc(f, f, 0.0))
    nodes = [dml.OperatorNode(clip), dml.OperatorNode(threshold), dml.OperatorNode(threshold)]
    shared = dml.GraphDesc(1, 2, nodes, [dml.InputEdge(0, 0, 0)], [dml.OutputEdge(1, 0, 0), dml.OutputEdge(2, 0, 1)],
                           [dml.IntermediateEdge(0, 0, 1, 0), dml.IntermediateEdge(0, 0, 2, 0)])
    # Recomputing the CLIP reads 4 + 4 bytes an element; materialising it reads 4, writes 4 and reads 4 twice.
    compiled = CPU.compile_graph(shared)
    assert compiled.plan.groups == ((0, 1), (0, 2)) and compiled.binding_properties.temporary_resource_size == 0


def test_the_fusion_setting_is_checked() -> None:
    with mock.patch.dict(os.environ, {"OPENDML_FUSION": "maybe"}), \
            pytest.raises(dml.OpenDMLError, match=r"^Environment: OPENDML_FUSION must be one of 1, true, yes, on \(on\) "
                          r"or 0, false, no, off \(off\); got 'maybe'\.$"):
        CPU.compile_graph(chain_graph(CPU, 2))


# --- execution: fused = unfused = node by node ----------------------------------------------------------------

# Every backend; ``cpu-numpy`` is the CPU with its NumPy kernels (the path without Numba).
KINDS = [pytest.param("cpu", id="cpu"), pytest.param("cpu-numpy", id="cpu-numpy"),
         pytest.param("cuda", id="cuda", marks=pytest.mark.skipif(
             CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}"))]


@contextmanager
def using(kind: str) -> Iterator[dml.Device]:
    """A device of ``kind``, its CPU kernels chosen for the block."""
    if kind == "cpu-numpy":
        with mock.patch.object(cpu_kernels, "_chosen", cpu_kernels.load("numpy")):
            yield dml.Device("cpu")
    else:
        yield dml.Device(kind)


def assert_fused_equals_unfused(device: dml.Device, graph: dml.GraphDesc, inputs: Sequence[np.ndarray]) -> Any:
    outputs = [np.zeros(output_desc(graph, k).total_tensor_size_in_bytes, np.uint8) for k in range(graph.output_count)]
    fused = run_graph(device, graph, inputs, outputs)
    with fusion_off():
        unfused = run_graph(device, graph, inputs, outputs)
    separate = run_node_by_node(device, graph, inputs, outputs)
    for k, (a, b, c) in enumerate(zip(fused, unfused, separate)):
        desc = output_desc(graph, k)
        typed = [v[:desc.element_count * desc.data_type.size].view(desc.data_type.numpy) for v in (a, b, c)]
        assert same_values(typed[0], typed[2]) and same_values(typed[1], typed[2]), f"output {k}"
    return device.compile_graph(graph)


def chain_into_argmin(device: dml.Device, sizes: tuple[int, ...] = (4, 6), axes: Sequence[int] = (1,)) -> dml.GraphDesc:
    """DEQUANTIZE_LINEAR (per-last-axis scale and zero point) -> CLIP [0, 6] -> ARGMIN, one graph output."""
    x, f = TensorDesc("UINT8", sizes), TensorDesc("FLOAT32", sizes)
    column = [0] * (len(sizes) - 1) + [1]
    scale, zero_point = TensorDesc("FLOAT32", sizes, column), TensorDesc("UINT8", sizes, column)
    reduced = TensorDesc("INT64", [1 if d in axes else n for d, n in enumerate(sizes)])
    nodes = [dml.OperatorNode(device.create_operator(dml.ElementWiseDequantizeLinearDesc(x, scale, zero_point, f))),
             dml.OperatorNode(device.create_operator(dml.ElementWiseClipDesc(f, f, 0.0, 6.0))),
             dml.OperatorNode(device.create_operator(dml.ArgMinDesc(f, reduced, list(axes))))]
    return dml.GraphDesc(3, 1, nodes, [dml.InputEdge(k, 0, k) for k in range(3)], [dml.OutputEdge(2, 0, 0)],
                         [dml.IntermediateEdge(0, 0, 1, 0), dml.IntermediateEdge(1, 0, 2, 0)])


@pytest.mark.parametrize("kind", KINDS)
def test_a_chain_into_argmin_is_its_prologue_where_the_backend_lowers_one(kind: str) -> None:
    with using(kind) as device:
        compiled = device.compile_graph(chain_into_argmin(device))
        if device.backend.reduction_prologues():
            assert compiled.plan.groups == ((0, 1, 2),)
            assert compiled.binding_properties.temporary_resource_size == 0
        else:
            assert compiled.plan.groups == ((0, 1), (2,))
            assert compiled.binding_properties.temporary_resource_size == 4 * 6 * 4
        if kind == "cpu-numpy":  # the NumPy kernels evaluate any element expression
            assert device.backend.reduction_prologues()
        rng = np.random.default_rng(7)
        inputs = [rng.integers(0, 256, 24, np.uint8), np.array([0.5, -0.25, 0.0, 3.0, -0.0, 1e-3], np.float32),
                  np.array([0, 255, 3, 128, 7, 9], np.uint8)]
        assert_fused_equals_unfused(device, chain_into_argmin(device), [packed_bytes(a, _total(a)) for a in inputs])


def quantize_graph(device: dml.Device, head: str, source: T = F32) -> tuple[dml.GraphDesc, list[np.ndarray]]:
    """Per-channel (last axis) graphs of QUANTIZE_LINEAR [6, 7], built with opendml.graph, and their inputs:
    ``round trip`` QUANTIZE -> DEQUANTIZE (both read the one scale and zero point); ``requantize`` DEQUANTIZE
    (INT8, per-channel) -> CLIP [-2, 3] -> QUANTIZE to UINT8 (``source``: the float type between); ``argmin``
    QUANTIZE -> ARGMIN over the last axis (the quantized values its prologue)."""
    from opendml import graph as g

    graph = dml.Graph(device)
    sizes, channel = [6, 7], [0, 1]
    rng = np.random.default_rng(11)
    scale_values = np.array([0.5, -0.25, 0.0, 3.0, 1e-3, 0.1, np.nan], source.numpy)
    if head == "requantize":
        q = graph.input(0, TensorDesc(T.INT8, sizes))
        scale = g.reinterpret(graph.input(1, TensorDesc(source, [7])), sizes, channel)
        zero_point = g.reinterpret(graph.input(2, TensorDesc(T.INT8, [7])), sizes, channel)
        out_scale = g.reinterpret(graph.input(3, TensorDesc(source, [1])), sizes, [0, 0])
        out_zero_point = g.reinterpret(graph.input(4, TensorDesc(T.UINT8, [1])), sizes, [0, 0])
        clipped = g.clip(g.dequantize_linear(q, scale, zero_point), -2.0, 3.0)
        outputs = [g.quantize_linear(clipped, out_scale, out_zero_point)]
        inputs = [edge_values(T.INT8, 42, rng), scale_values, edge_values(T.INT8, 7, rng),
                  np.array([0.03125], source.numpy), np.array([128], np.uint8)]
    else:
        x = graph.input(0, TensorDesc(source, sizes))
        scale = g.reinterpret(graph.input(1, TensorDesc(source, [7])), sizes, channel)
        zero_point = g.reinterpret(graph.input(2, TensorDesc(T.UINT8, [7])), sizes, channel)
        quantized = g.quantize_linear(x, scale, zero_point)
        if head == "round trip":
            outputs = [g.dequantize_linear(quantized, scale, zero_point)]
        else:
            outputs = [g.argmin(quantized, [1], "DECREASING")]
        values = edge_values(source, 42, rng)
        values[:14] = np.arange(-7, 7) / 2  # halves: ties to even
        inputs = [values, scale_values, np.array([0, 1, 127, 128, 254, 255, 3], np.uint8)]
    return graph.graph_desc(outputs), [packed_bytes(a, _total(a)) for a in inputs]


@pytest.mark.thin(("kind", "head"), ("kind", "source"))  # every combination under --slow
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("head", "source"), [("round trip", F32), ("round trip", F16), ("requantize", F32),
                                              ("requantize", F16), ("argmin", F32)])
def test_quantize_linear_fuses_into_chains_and_argmin(kind: str, head: str, source: T) -> None:
    """QUANTIZE -> DEQUANTIZE, DEQUANTIZE -> CLIP -> QUANTIZE and QUANTIZE -> ARGMIN run as one kernel and give
    the bits of their nodes run one by one."""
    with using(kind) as device:
        graph, inputs = quantize_graph(device, head, source)
        compiled = assert_fused_equals_unfused(device, graph, inputs)
        if head != "argmin" or device.backend.reduction_prologues():
            assert len(compiled.plan.steps) == 1 and compiled.binding_properties.temporary_resource_size == 0


@pytest.mark.parametrize("nan_policy, expected", [("IGNORE", [3, 1]), ("PROPAGATE", [2, 2])])
@pytest.mark.parametrize("kind", KINDS)
def test_a_chain_into_argmax_is_its_prologue_and_writes_its_graph_output(kind: str, nan_policy: str,
                                                                         expected: list[int]) -> None:
    """The builder's argmax over DEQUANTIZE_LINEAR -> CLIP, the clipped value also a graph output: one
    fused kernel where the backend lowers prologues and extras, the hand-worked indices, and the bytes of
    the graph run unfused. (q - 1) * [1, 0.5, NaN, 2] clipped to [-1, 4]: rows [0, 2, NaN, 4] and
    [-1, -0.5, NaN, -1]; the largest is at 3 and 1, the NaN at 2 (PROPAGATE)."""
    from opendml import graph as g

    with using(kind) as device:
        graph = dml.Graph(device)
        q = graph.input(0, TensorDesc("INT8", [2, 4]))
        scale = g.reinterpret(graph.input(1, TensorDesc("FLOAT32", [4])), sizes=[2, 4], strides=[0, 1])
        zero_point = g.reinterpret(graph.input(2, TensorDesc("INT8", [1])), sizes=[2, 4], strides=[0, 0])
        clipped = g.clip(g.dequantize_linear(q, scale, zero_point), -1.0, 4.0)
        index = g.argmax(clipped, [1], nan_policy=nan_policy)
        compiled = graph.compile([index, clipped])
        if device.backend.reduction_prologues() and device.backend.fused_outputs():
            assert compiled.plan.groups == ((0, 1, 2),)
        inputs = [np.array([1, 5, -3, 9, 0, 2, 0, 0], np.int8), np.array([1.0, 0.5, np.nan, 2.0], np.float32),
                  np.array([1, 0, 0, 0], np.int8)]
        buffers = [device.buffer_from(a) for a in inputs]
        out_index, out_clipped = device.create_buffer(16), device.create_buffer(32)
        compiled.execute(buffers, [out_index, out_clipped])
        assert out_index.to_numpy().view(np.int64).tolist() == expected
        assert_fused_equals_unfused(device, compiled.graph_desc, [packed_bytes(a, _total(a)) for a in inputs])


CLAMPED = [F32, F16, T.INT8, T.UINT8, T.INT16, T.UINT16, T.INT32, T.UINT32, T.INT64, T.UINT64]
QUANTIZED = [T.INT8, T.UINT8, T.INT16, T.UINT16, T.INT32, T.UINT32]  # DEQUANTIZE_LINEAR's inputs
QUANTIZE_INPUTS = [F32, F16, T.INT32]
FLOAT_BOUNDS = [-2.5, -1.0, -0.0, 0.0, 0.5, 3.0, 1e4, float("inf"), float("-inf"), float("nan")]
SCALE_BIASES = [None, (1.0009765625, -0.0), (-2.0, 0.75), (0.0, -0.0), (3e38, 1.0)]


@dataclass
class Built:
    graph: dml.GraphDesc
    inputs: list[np.ndarray]
    roots: int  # the plan's steps: nodes whose value is written, not computed by its readers


@st.composite
def graphs(draw: st.DrawFn, device: dml.Device, sizes: tuple[int, ...]) -> Built:
    """A DAG of DEQUANTIZE_LINEAR, QUANTIZE_LINEAR, CLIP, CLIP1, THRESHOLD, CAST and binary-family nodes (ADD, MIN,
    MODULUS_FLOOR, BIT_AND...: a broadcast second operand) over one graph input, with broadcast scale and zero point inputs,
    perhaps ending in an ARGMIN or ARGMAX; values no node reads are graph
    outputs, and about a third of the others too; a value may have several readers."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    first = draw(st.sampled_from(CLAMPED))
    inputs = [edge_values(first, int(np.prod(sizes)), rng)]
    values: list[T] = [first]  # value 0 is graph input 0, value k + 1 the output of node k
    nodes: list[dml.OperatorNode] = []
    input_edges: list[dml.InputEdge] = []
    reads: list[tuple[int, int, int]] = []  # (value, node, node input)
    operand_bytes: dict[int, int] = {0: first.size}  # graph input -> bytes an element (0: broadcast)
    for node in range(draw(st.integers(1, 5))):
        source = draw(st.one_of(st.just(len(values) - 1), st.integers(0, len(values) - 1)))
        t = values[source]
        x = TensorDesc(t, sizes)
        kind = draw(st.sampled_from(["dequantize" if t in QUANTIZED else "clamp",
                                     "quantize" if t in QUANTIZE_INPUTS else "clamp", "clamp",
                                     "binary" if _binary_ops(device, t) else "clamp", "cast"]))
        if kind == "cast":  # to any type CAST takes (CLAMPED: every one)
            out = draw(st.sampled_from(CLAMPED))
            desc = dml.CastDesc(x, TensorDesc(out, sizes))
        elif kind == "binary":  # BTensor a new graph input read through zero strides
            other, k = _broadcast_input(draw, rng, inputs, t, sizes)
            op = draw(st.sampled_from(_binary_ops(device, t)))
            out = op.api.output or t  # a comparison's UINT8
            # A required FLOAT field (CLIP_GRAD's Min and Max) drawn; any other its default.
            fields = tuple(draw(st.sampled_from([-1.5, 0.0, 2.5])) if f.default is REQUIRED else f.default
                           for f in op.api.keywords)
            desc = op.describe((x, other), TensorDesc(out, sizes), fields)
            input_edges.append(dml.InputEdge(k, node, 1))
            operand_bytes[k] = 0 if any(n > 1 and s == 0 for n, s in zip(sizes, other.strides)) else t.size
        elif kind != "clamp":
            if kind == "dequantize":
                out = draw(st.sampled_from([F32, F16]))
                scale_type, zero_type = out, t
            else:  # SPEC 9: an INT32 input takes a FLOAT32 scale, a float input a scale of its own type
                out = draw(st.sampled_from([T.INT8, T.UINT8]))
                scale_type, zero_type = (F32 if t is T.INT32 else t), out
            scale = _broadcast_input(draw, rng, inputs, scale_type, sizes)
            zero_point = _broadcast_input(draw, rng, inputs, zero_type, sizes) if draw(st.booleans()) else None
            operator = dml.ElementWiseDequantizeLinearDesc if kind == "dequantize" else dml.ElementWiseQuantizeLinearDesc
            desc: object = operator(x, scale[0], None if zero_point is None else zero_point[0], TensorDesc(out, sizes))
            for index, (read, k) in enumerate([scale] + ([] if zero_point is None else [zero_point]), 1):
                input_edges.append(dml.InputEdge(k, node, index))
                operand_bytes[k] = 0 if any(n > 1 and s == 0 for n, s in zip(sizes, read.strides)) else read.data_type.size
        else:
            out = t
            desc = _clamp(draw, x)
        nodes.append(dml.OperatorNode(device.create_operator(desc)))
        reads.append((source, node, 0))
        values.append(out)
    reduced = draw(st.booleans())
    if reduced:  # an ARGMIN or ARGMAX over the last value: its chain fuses in as the prologue where the backend can
        nodes.append(dml.OperatorNode(device.create_operator(_arg_reduction(draw, TensorDesc(values[-1], sizes)))))
        reads.append((len(values) - 1, len(nodes) - 1, 0))
    read_counts = [sum(1 for v, _, _ in reads if v == k + 1) for k in range(len(nodes))]
    outputs = [k for k in range(len(nodes)) if read_counts[k] == 0 or draw(st.integers(0, 2)) == 0]
    intermediate = [dml.IntermediateEdge(v - 1, 0, n, i) for v, n, i in reads if v > 0]
    input_edges += [dml.InputEdge(0, n, i) for v, n, i in reads if v == 0]
    graph = dml.GraphDesc(len(inputs), len(outputs), nodes, input_edges,
                          [dml.OutputEdge(n, 0, k) for k, n in enumerate(outputs)], intermediate)
    model = _Model(device, values, reads, input_edges, operand_bytes, outputs, len(nodes) - 1 if reduced else None)
    return Built(graph, [packed_bytes(a, _total(a)) for a in inputs], len(nodes) - len(model.composed()))


@dataclass
class _Model:
    """The fusion rules of ``opendml.graphs.fusion`` restated over a generated graph (packed layouts, every
    node reads its value input 0): which nodes' values their readers compute."""

    device: dml.Device
    values: list[T]
    reads: list[tuple[int, int, int]]  # (value, node, node input)
    input_edges: list[dml.InputEdge]
    operand_bytes: dict[int, int]
    outputs: list[int]
    reduction: int | None

    def composed(self) -> set[int]:
        backend = self.device.backend
        found: set[int] = set()
        for node in range(len(self.values) - 1):  # each node reads only earlier values: graph order
            readers = {n for v, n, _ in self.reads if v == node + 1}
            if not readers or (self.reduction in readers and not backend.reduction_prologues()):
                continue
            if node in self.outputs and not backend.fused_outputs():
                continue
            if len(readers) == 1 or self._recompute(node, len(readers), found):
                found.add(node)
        return found

    def _recompute(self, node: int, k: int, composed: set[int]) -> bool:
        operands: dict[tuple[str, int], int] = {}  # what computing the value reads: each operand once
        pending = [node]
        while pending:
            member = pending.pop()
            value = next(v for v, n, _ in self.reads if n == member)
            if value > 0 and value - 1 in composed:
                pending.append(value - 1)
            else:
                operands[("value", value)] = self.values[value].size
            for edge in self.input_edges:  # its scale and zero point
                if edge.to_node_index == member and edge.to_node_input_index > 0:
                    operands[("input", edge.graph_input_index)] = self.operand_bytes[edge.graph_input_index]
        p, w = sum(operands.values()), self.values[node + 1].size
        return k * p + (w if node in self.outputs else 0) < p + w + k * w


def _total(array: np.ndarray) -> int:
    return -(-array.nbytes // 4) * 4


def _binary_ops(device: dml.Device, t: T) -> list[Any]:
    """The binary family's operators taking ``t`` at the device's level."""
    found = []
    for op in DECLARED:
        row = op.schema.row_at(device.feature_level)
        if op.api is not None and len(op.api.tensors) == 2 and row is not None and t in row.types[op.api.tensors[0]]:
            found.append(op)
    return found


def _broadcast_input(draw: st.DrawFn, rng: np.random.Generator, inputs: list[np.ndarray], t: T,
                     sizes: tuple[int, ...]) -> tuple[TensorDesc, int]:
    """A new graph input of ``t`` read through zero strides on a random set of dimensions."""
    kept = [draw(st.booleans()) for _ in sizes]
    compact = [n if k else 1 for n, k in zip(sizes, kept)]
    strides, step = [0] * len(sizes), 1
    for d in range(len(sizes) - 1, -1, -1):
        strides[d] = step if kept[d] else 0
        step *= compact[d]
    inputs.append(edge_values(t, int(np.prod(compact)), rng))
    return TensorDesc(t, sizes, strides), len(inputs) - 1


def _clamp(draw: st.DrawFn, x: TensorDesc) -> object:
    t = x.data_type
    if t.is_float:
        bound = st.sampled_from(FLOAT_BOUNDS)
        scale_bias = draw(st.sampled_from(SCALE_BIASES))
    else:
        low, high = t.integer_range
        bound = st.one_of(st.integers(max(low, -3), 3), st.integers(low, high))
        scale_bias = None
    op = draw(st.sampled_from(["CLIP", "CLIP1"] + ([] if t.size == 8 else ["THRESHOLD"])))  # no 64-bit THRESHOLD
    low_bound, high_bound = draw(bound), draw(bound)
    if op == "CLIP1":
        return dml.ElementWiseClip1Desc(x, x, t, low_bound, high_bound, scale_bias=scale_bias)
    if op == "THRESHOLD":
        return dml.ElementWiseThresholdDesc(x, x, float(low_bound), scale_bias=scale_bias)
    return dml.ElementWiseClipDesc(x, x, float(low_bound), float(high_bound), scale_bias=scale_bias)


def _arg_reduction(draw: st.DrawFn, x: TensorDesc) -> dml.ArgMinDesc | dml.ArgMaxDesc:
    """ARGMIN or ARGMAX, either direction and NanPolicy, any index type, over a random set of axes."""
    rank = len(x.sizes)
    axes = sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1)))
    sizes = [1 if d in axes else n for d, n in enumerate(x.sizes)]
    index = draw(st.sampled_from(["INT64", "INT32", "UINT64", "UINT32"]))
    direction = draw(st.sampled_from(["INCREASING", "DECREASING"]))
    nan_policy = draw(st.sampled_from(["IGNORE", "PROPAGATE"]))
    desc = draw(st.sampled_from([dml.ArgMinDesc, dml.ArgMaxDesc]))
    return desc(x, TensorDesc(index, sizes), axes, direction, nan_policy)


SMALL = st.sampled_from([(1,), (7,), (3, 5), (2, 3, 4), (17, 33)])


@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data())
@settings(max_examples=max(1, settings.default.max_examples // 3))  # each new structure compiles a kernel: 6 (ci)
def test_random_graphs_fused_equal_unfused_and_node_by_node(kind: str, data: st.DataObject) -> None:
    with using(kind) as device:
        built = data.draw(graphs(device, data.draw(SMALL)))
        compiled = assert_fused_equals_unfused(device, built.graph, built.inputs)
    assert len(compiled.plan.steps) == built.roots
    if built.roots == 1:
        assert compiled.binding_properties.temporary_resource_size == 0


@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data())
@settings(max_examples=max(1, settings.default.max_examples // 3))  # each new structure compiles a kernel: 6 (ci)
def test_mixed_chains_with_binary_operators_fused_equal_unfused_and_node_by_node(kind: str,
                                                                                 data: st.DataObject) -> None:
    """Chains of old and new operators (DEQUANTIZE -> ADD bias -> RELU -> QUANTIZE, DEQUANTIZE -> MULTIPLY ->
    ARGMAX, unary operators between ADD/SUBTRACT/MULTIPLY/DIVIDE whose other operand is full-size, a broadcast
    row, column or scalar, a constant or an earlier value): the fused graph gives the bits of its nodes run one
    by one, and a chain whose values are read once is one kernel (its reduction's prologue where the backend
    lowers one)."""
    with using(kind) as device:
        built = data.draw(mixed_graphs(device))
        compiled = assert_fused_equals_unfused(device, built.graph, built.inputs)
        if built.chain and (not built.reduced or device.backend.reduction_prologues()):
            assert len(compiled.plan.groups) == 1, (built, compiled.plan)
            assert compiled.binding_properties.temporary_resource_size == 0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("sizes", [(PARALLEL_MIN + 1,), (3, PARALLEL_MIN // 2 + 5)])
def test_large_chains_cross_the_threading_threshold(kind: str, sizes: tuple[int, ...]) -> None:
    with using(kind) as device:
        large_chain(device, sizes)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tail", ["quantize", "argmax"])
def test_large_chains_with_a_broadcast_binary_operand_cross_the_threading_threshold(kind: str, tail: str) -> None:
    """DEQUANTIZE -> ADD (a bias row) -> RELU -> QUANTIZE, and DEQUANTIZE -> MULTIPLY (a column) -> ARGMAX over the
    last axis, past the threading threshold: one kernel, the bits of its nodes one by one."""
    sizes = [3, PARALLEL_MIN // 2 + 5]
    with using(kind) as device:
        graph = dml.Graph(device)
        rng = np.random.default_rng(11)
        arrays = [edge_values(T.INT8, int(np.prod(sizes)), rng), np.array([0.125], np.float32),
                  edge_values(F32, sizes[1] if tail == "quantize" else sizes[0], rng), np.array([0.25], np.float32)]
        q = graph.input(0, TensorDesc("INT8", sizes))
        scale = g.reinterpret(graph.input(1, TensorDesc("FLOAT32", [1])), sizes=sizes, strides=[0, 0])
        x = g.dequantize_linear(q, scale)
        if tail == "quantize":
            bias = g.reinterpret(graph.input(2, TensorDesc("FLOAT32", [sizes[1]])), sizes=sizes, strides=[0, 1])
            out_scale = g.reinterpret(graph.input(3, TensorDesc("FLOAT32", [1])), sizes=sizes, strides=[0, 0])
            result = g.quantize_linear(g.relu(g.add(x, bias)), out_scale, output_type="INT8")
        else:
            column = g.reinterpret(graph.input(2, TensorDesc("FLOAT32", [sizes[0]])), sizes=sizes, strides=[1, 0])
            result = g.argmax(g.multiply(x, column), [1])
            arrays.pop()
        desc = graph.graph_desc([result])
        compiled = assert_fused_equals_unfused(device, desc, [packed_bytes(a, _total(a)) for a in arrays])
        if tail == "quantize" or device.backend.reduction_prologues():
            assert len(compiled.plan.groups) == 1, compiled.plan


def large_chain(device: dml.Device, sizes: tuple[int, ...]) -> None:
    x, h = TensorDesc("UINT8", sizes), TensorDesc("FLOAT16", sizes)
    scale = TensorDesc("FLOAT16", sizes, [0] * (len(sizes) - 1) + [1])
    zero_point = TensorDesc("UINT8", sizes, [0] * len(sizes))
    nodes = [dml.ElementWiseDequantizeLinearDesc(x, scale, zero_point, h),
             dml.ElementWiseClipDesc(h, h, -6.0, 6.0, scale_bias=(1.5, -0.25)),
             dml.ElementWiseThresholdDesc(h, h, -1.0)]
    graph = dml.GraphDesc(3, 1, [dml.OperatorNode(device.create_operator(d)) for d in nodes],
                          [dml.InputEdge(0, 0, 0), dml.InputEdge(1, 0, 1), dml.InputEdge(2, 0, 2)],
                          [dml.OutputEdge(2, 0, 0)],
                          [dml.IntermediateEdge(0, 0, 1, 0), dml.IntermediateEdge(1, 0, 2, 0)])
    rng = np.random.default_rng(7)
    inputs = [edge_values(T.UINT8, int(np.prod(sizes)), rng), edge_values(F16, sizes[-1], rng),
              np.array([128], np.uint8)]
    compiled = assert_fused_equals_unfused(device, graph, [packed_bytes(a, _total(a)) for a in inputs])
    assert compiled.plan.groups == ((0, 1, 2),) and compiled.binding_properties.temporary_resource_size == 0


@pytest.mark.parametrize("kind", KINDS)
def test_a_streamed_float32_output_equals_unfused(kind: str) -> None:
    """An output past the streaming-store threshold (32 MiB of FLOAT32) takes the vector code."""
    with using(kind) as device:
        streamed_chain(device)


def streamed_chain(device: dml.Device) -> None:
    sizes = (2049, 4096)
    x, f = TensorDesc("INT8", sizes), TensorDesc("FLOAT32", sizes)
    scale = TensorDesc("FLOAT32", sizes, [0, 1])
    nodes = [dml.ElementWiseDequantizeLinearDesc(x, scale, None, f), dml.ElementWiseClipDesc(f, f, 0.0, 6.0)]
    graph = dml.GraphDesc(2, 1, [dml.OperatorNode(device.create_operator(d)) for d in nodes],
                          [dml.InputEdge(0, 0, 0), dml.InputEdge(1, 0, 1)], [dml.OutputEdge(1, 0, 0)],
                          [dml.IntermediateEdge(0, 0, 1, 0)])
    rng = np.random.default_rng(3)
    inputs = [edge_values(T.INT8, int(np.prod(sizes)), rng), edge_values(F32, sizes[-1], rng)]
    assert_fused_equals_unfused(device, graph, [packed_bytes(a, _total(a)) for a in inputs])


# --- front ends: opendml.compile and ONNX get fused kernels with no change on their side --------------------

def _compiled_graphs(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every graph Device.compile_graph compiles while the test runs."""
    made: list[Any] = []
    original = dml.Device.compile_graph

    def spy(self: dml.Device, *args: Any, **kwargs: Any) -> Any:
        made.append(original(self, *args, **kwargs))
        return made[-1]

    monkeypatch.setattr(dml.Device, "compile_graph", spy)
    return made


def _head(q: Any, scale: Any, zero_point: Any) -> Any:
    return dml.threshold(dml.clip(dml.dequantize_linear(q, scale, zero_point), -1.0, 2.5, scale_bias=(1.5, -0.5)),
                         -0.75)


def test_opendml_compile_runs_a_chain_as_one_fused_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    made = _compiled_graphs(monkeypatch)
    rng = np.random.default_rng(5)
    q = rng.integers(0, 256, (9, 33), dtype=np.uint8)
    scale = edge_values(F32, 33, rng)
    got = dml.compile(_head)(q, scale, np.uint8(100))
    (compiled,) = made
    (group,) = compiled.plan.groups  # one step: the three operator nodes (the zero point is a constant)
    assert len(group) == 3 and compiled.binding_properties.temporary_resource_size == 0
    with fusion_off():
        unfused = dml.compile(_head)(q, scale, np.uint8(100))
    assert len(made[-1].plan.steps) == 3
    assert same_values(got, _head(q, scale, np.uint8(100))) and same_values(got, unfused)


def test_an_onnx_model_runs_its_chain_as_one_fused_kernel() -> None:
    pytest.importorskip("onnx", reason="the ONNX front end needs the onnx extra (pip install 'opendml[onnx]')")
    from onnx import helper
    from onnx_models import model, reference

    from opendml.onnx import Session

    nodes = [helper.make_node("DequantizeLinear", ["x", "scale", "zp"], ["dq"], axis=1),
             helper.make_node("Clip", ["dq", "low", "high"], ["clipped"]),
             helper.make_node("Relu", ["clipped"], ["y"])]
    rng = np.random.default_rng(9)
    feeds = {"x": rng.integers(0, 256, (5, 6), dtype=np.uint8)}
    initializers = {"scale": np.array([0.5, -0.25, 0.0, 3.0, 1e-3, 7.5], np.float32),
                    "zp": np.array([0, 128, 255, 3, 7, 9], np.uint8), "low": np.float32(-1.0),
                    "high": np.float32(6.0)}
    built = model(nodes, feeds, ["y"], 21, initializers)
    session = Session(built)
    got = session.run(feeds)["y"]
    (segment,) = session.program(feeds).segments
    assert max(len(group) for group in segment.compiled.plan.groups) >= 2  # the chain shares one kernel
    assert segment.compiled.binding_properties.temporary_resource_size == 0
    with fusion_off():
        unfused = Session(built).run(feeds)["y"]
    np.testing.assert_array_equal(got, reference(built, feeds)["y"])
    assert got.tobytes() == unfused.tobytes()


# --- a fused kernel of more operands than the CPU's runs hoist (codegen_names.HOISTED_MAX) -----------------------

def _many_operands(device: dml.Device, rows: int, columns: int, bias: str, function: str | None) -> dml.GraphDesc:
    """DEQUANTIZE (scale one value, zero point per row) -> ADD bias (``bias``: a row, a column or full) ->
    [``function``] -> RELU -> QUANTIZE (scale and zero point one value): one kernel of 6 operands."""
    graph = dml.Graph(device)
    full = [rows, columns]
    strides = {"row": [0, 1], "column": [1, 0], "full": [columns, 1]}[bias]
    stored = {"row": columns, "column": rows, "full": rows * columns}[bias]

    def read(k: int, data_type: str, n: int, at: list[int]) -> g.Expression:
        return g.reinterpret(graph.input(k, TensorDesc(data_type, [n])), sizes=full, strides=at)

    x = graph.input(0, TensorDesc("UINT8", full))
    y = g.add(g.dequantize_linear(x, read(1, "FLOAT32", 1, [0, 0]), read(2, "UINT8", rows, [1, 0])),
              read(3, "FLOAT32", stored, strides))  # type: ignore[attr-defined]
    if function is not None:
        y = getattr(g, function.lower())(y)
    y = g.quantize_linear(g.relu(y), read(4, "FLOAT32", 1, [0, 0]), read(5, "UINT8", 1, [0, 0]))  # type: ignore[attr-defined]
    return graph.graph_desc([y])


@pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed (the opendml[fast] extra)")
@pytest.mark.parametrize("large", [False, True], ids=["small", "past-the-streaming-threshold"])
@pytest.mark.parametrize("function", [None, "EXP"])
@pytest.mark.parametrize("bias", ["row", "column", "full"])
def test_a_kernel_of_many_operands_equals_its_nodes(bias: str, function: str | None, large: bool,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Past HOISTED_MAX other operands a run reads each one through a view of its run or of a buffer holding
    its one value, in blocks of CHUNK elements: rows of 1300 elements (two whole blocks and a part), a bias
    that changes from row to row (its buffer filled anew each run), and the checked blocks of a vector-code
    function, against the operators run one by one (each of at most two other operands: hoisted loops). Such
    a kernel has no streamed variant: an output past the streaming threshold (lowered here) takes the plain one
    (it raised a NameError)."""
    from opendml.backends.cpu_kernels import codegen_names, fast

    if large:
        monkeypatch.setattr(fast, "STREAM_MIN_BYTES", 64)

    rows, columns = 5, 1300
    graph = _many_operands(CPU, rows, columns, bias, function)
    compiled = CPU.compile_graph(graph)
    assert len(compiled.plan.groups) == 1 and codegen_names.HOISTED_MAX < 5  # one kernel, 5 other operands: generic
    rng = np.random.default_rng(3)
    stored = {"row": columns, "column": rows, "full": rows * columns}[bias]
    inputs = [rng.integers(0, 256, rows * columns, np.uint8), np.array([0.03], np.float32),
              rng.integers(100, 156, rows, np.uint8), (rng.standard_normal(stored) * 2).astype(np.float32),
              np.array([0.02], np.float32), np.array([5], np.uint8)]
    assert_fused_equals_unfused(CPU, graph, [packed_bytes(a, _total(a)) for a in inputs])


@pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed (the opendml[fast] extra)")
def test_quantized_linear_add_in_place_over_views_matches_the_oracle() -> None:
    """QUANTIZED_LINEAR_ADD (7 other operands: the generic runs) into its own first operand, scales one value
    and zero points per column, against the page's element rule."""
    rng = np.random.default_rng(11)
    a = rng.integers(-128, 128, (3, 1100), np.int8)
    b = rng.integers(-128, 128, (3, 1100), np.int8)
    a_zero, b_zero = rng.integers(-5, 5, 1100, np.int8), rng.integers(-5, 5, 1100, np.int8)
    a_scale, b_scale, out_scale = np.float32(0.05), np.float32(0.07), np.float32(0.09)
    element = np.vectorize(lambda p, q, zp, zq: oracle.quantized_linear_add_element(
        int(p), float(a_scale), int(zp), int(q), float(b_scale), int(zq), float(out_scale), None, "INT8"))
    expected = element(a, b, a_zero, b_zero).astype(np.int8)
    got = dml.quantized_linear_add(a, a_scale, a_zero, b, b_scale, b_zero, out_scale, output_type="INT8", out=a)
    assert got is a and np.array_equal(a, expected)
