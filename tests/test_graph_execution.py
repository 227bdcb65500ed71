"""A compiled graph gives, bit for bit, what its nodes give run one by one through their own compiled
operators; its bindings obey the operators' rules; its memory is reported in binding_properties."""

from __future__ import annotations

import gc
import os
import re
import sys
import types
import weakref

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml import DataType as T
from opendml import TensorDesc
from tests.conftest import BACKENDS
from tests.graph_helpers import head, output_desc, run_graph, run_node_by_node

# compute-sanitizer runs the program with its injection library preloaded: CUDA_INJECTION64_PATH before its 2025
# releases, NV_SANITIZER_INJECTION_* since.
UNDER_SANITIZER = any(k == "CUDA_INJECTION64_PATH" or k.startswith("NV_SANITIZER_INJECTION") for k in os.environ)
INTEGERS = [T.INT32, T.INT16, T.INT8, T.UINT32, T.UINT16, T.UINT8]
FLOATS = [T.FLOAT32, T.FLOAT16]
INDEX_TYPES = [T.INT64, T.INT32, T.UINT64, T.UINT32]


def test_quantized_head_known_values(device: dml.Device) -> None:
    x = np.array([3, 9, 1, 0, 7, 8, 0, 0], np.uint8)  # UINT8 [2, 3], padded to 8 bytes
    scale, zero_point = np.array([0.5], np.float32), np.full(8, 2, np.uint8)
    argmin, clipped = run_graph(device, head(device), [x, scale, zero_point],
                                [np.zeros(16, np.uint8), np.zeros(24, np.uint8)])
    # (x - 2) * 0.5 = [[0.5, 3.5, -0.5], [-1, 2.5, 3]], clipped to [-1, 2]
    assert clipped.view(np.float32).tolist() == [0.5, 2.0, -0.5, -1.0, 2.0, 2.0]
    assert argmin.view(np.int64).tolist() == [2, 0]


def test_float16_intermediates_are_rounded_as_memory_rounds_them(device: dml.Device) -> None:
    x, h = TensorDesc("INT32", [3]), TensorDesc("FLOAT16", [3])
    deq = device.create_operator(dml.ElementWiseDequantizeLinearDesc(x, TensorDesc("FLOAT16", [3], [0]), None, h))
    scaled = device.create_operator(dml.ElementWiseThresholdDesc(h, h, -1e4, dml.ScaleBias(1.0, 1.0)))
    graph = dml.GraphDesc(2, 1, [dml.OperatorNode(deq), dml.OperatorNode(scaled)],
                          [dml.InputEdge(0, 0, 0), dml.InputEdge(1, 0, 1)], [dml.OutputEdge(1, 0, 0)],
                          [dml.IntermediateEdge(0, 0, 1, 0)])
    values = np.array([2049, 2051, -3], np.int32).view(np.uint8)  # 2049 rounds to 2048 in FLOAT16
    one = np.array([1.0, 0.0], np.float16).view(np.uint8)
    (out,) = run_graph(device, graph, [values, one], [np.zeros(8, np.uint8)])
    # 2049 -> 2048 (FLOAT16) -> 2049 in float32 -> 2048 again; 2051 -> 2052 -> 2053 -> 2052; -3 -> -2
    assert out[:6].view(np.float16).tolist() == [2048.0, 2052.0, -2.0]


def test_a_graph_input_feeding_several_nodes_and_an_output_read_by_another_node(device: dml.Device) -> None:
    f = TensorDesc("FLOAT32", [4])
    low = device.create_operator(dml.ElementWiseClipDesc(f, f, -1.0, 1.0))
    high = device.create_operator(dml.ElementWiseThresholdDesc(f, f, 0.0))
    again = device.create_operator(dml.ElementWiseClipDesc(f, f, 0.5, 0.75))
    graph = dml.GraphDesc(1, 3, [dml.OperatorNode(low), dml.OperatorNode(high), dml.OperatorNode(again)],
                          [dml.InputEdge(0, 0, 0), dml.InputEdge(0, 1, 0)],
                          [dml.OutputEdge(0, 0, 0), dml.OutputEdge(1, 0, 1), dml.OutputEdge(0, 0, 2)],
                          [dml.IntermediateEdge(0, 0, 2, 0)])
    graph = dml.GraphDesc(1, 4, graph.nodes, graph.input_edges, [*graph.output_edges, dml.OutputEdge(2, 0, 3)],
                          graph.intermediate_edges)
    x = np.array([-3.0, 0.6, 0.2, 5.0], np.float32).view(np.uint8)
    outs = run_graph(device, graph, [x], [np.zeros(16, np.uint8)] * 4)
    assert [o.view(np.float32).tolist() for o in outs] == [
        [-1.0, 0.6000000238418579, 0.20000000298023224, 1.0], [0.0, 0.6000000238418579, 0.20000000298023224, 5.0],
        [-1.0, 0.6000000238418579, 0.20000000298023224, 1.0], [0.5, 0.6000000238418579, 0.5, 0.75]]
    assert device.compile_graph(graph).binding_properties == dml.BindingProperties(0, 0)  # no intermediate


def test_binding_properties_count_intermediates_and_constants(device: dml.Device,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    graph = head(device)
    assert device.compile_graph(graph).binding_properties == dml.BindingProperties(0, 0)  # fused away
    monkeypatch.setenv("OPENDML_FUSION", "0")  # each node its own step: the intermediates are allocated
    assert device.compile_graph(graph).binding_properties == dml.BindingProperties(24, 0)  # FLOAT32 [2, 3]
    op = device.compile_operator(graph.nodes[0].operator)  # type: ignore[union-attr]
    assert op.binding_properties == dml.BindingProperties(0, 0)
    f = TensorDesc("FLOAT32", [2, 3])
    clip = device.create_operator(dml.ElementWiseClipDesc(f, f, -1.0, 1.0))
    graph = dml.GraphDesc(0, 1, [dml.ConstantNode(np.arange(6, dtype=np.float32)), dml.ConstantNode(b"\x01" * 3),
                                 dml.OperatorNode(clip), dml.OperatorNode(clip)],
                          output_edges=[dml.OutputEdge(3, 0, 0)],
                          intermediate_edges=[dml.IntermediateEdge(0, 0, 2, 0), dml.IntermediateEdge(2, 0, 3, 0)])
    compiled = device.compile_graph(graph)
    assert compiled.binding_properties == dml.BindingProperties(24, 32 + 3)  # the second constant at offset 32
    out = device.create_buffer(24)
    compiled.execute([], [out])
    assert out.to_numpy().view(np.float32).tolist() == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0]


def test_graph_bindings_follow_the_operator_rules(device: dml.Device) -> None:
    compiled = device.compile_graph(head(device))
    x, s, z = (device.create_buffer(16) for _ in range(3))
    argmin_out, clip_out = device.create_buffer(16), device.create_buffer(64)
    compiled.execute([x, s, z], [argmin_out, clip_out])

    def refused(inputs: list, outputs: list, text: str) -> None:
        with pytest.raises(dml.BindingError, match=f"^{re.escape(text)}$"):
            compiled.execute(inputs, outputs)

    refused([x, s], [argmin_out, clip_out], "GRAPH: inputs must hold 3 binding(s), one per graph input; got 2.")
    refused([dml.BufferBinding(x, 8), s, z], [argmin_out, clip_out],
            "GRAPH: Inputs[0].Offset must be a non-negative multiple of 16; got 8.")
    refused([x, s, z], [device.create_buffer(8), clip_out],
            "GRAPH: Outputs[0].SizeInBytes must be at least TotalTensorSizeInBytes (16); got 8.")
    refused([x, s, z], [argmin_out, dml.BufferBinding(clip_out, 48, 32)],
            "GRAPH: Outputs[1] binding must lie inside its buffer of 64 bytes; got bytes [48, 80).")
    refused([x, s, z], [argmin_out, dml.BufferBinding(argmin_out)],
            "GRAPH: Outputs[1].SizeInBytes must be at least TotalTensorSizeInBytes (24); got 16.")
    refused([x, s, z], [x, clip_out], "GRAPH: Outputs[0] binding must not overlap Inputs[0]; got bytes [0, 16) "
            "against [0, 8).")
    refused([x, s, z], [dml.BufferBinding(clip_out, 16), clip_out],
            "GRAPH: Outputs[1] binding must not overlap Outputs[0]; got bytes [0, 24) against [16, 32).")


def test_an_unread_graph_input_is_bound_as_none(device: dml.Device) -> None:
    f = TensorDesc("FLOAT32", [2])
    clip = device.create_operator(dml.ElementWiseClipDesc(f, f, 0.0, 1.0))
    compiled = device.compile_graph(dml.GraphDesc(2, 1, [dml.OperatorNode(clip)], [dml.InputEdge(1, 0, 0)],
                                                  [dml.OutputEdge(0, 0, 0)]))
    x, out = device.buffer_from(np.array([-1, 2], np.float32)), device.create_buffer(8)
    with pytest.raises(dml.BindingError, match=re.escape(
            "GRAPH: Inputs[0] must be bound as None (no edge reads this graph input); got CpuBuffer.")
            if device.backend.name == "cpu" else "Inputs\\[0\\] must be bound as None"):
        compiled.execute([x, x], [out])
    compiled.execute([None, x], [out])
    assert out.to_numpy().view(np.float32).tolist() == [0.0, 1.0]


# Random graphs: chains and DAGs of the five operators, compared with node-by-node execution.

def _strides(draw: st.DrawFn, sizes: tuple[int, ...], broadcast: bool) -> tuple[int, ...] | None:
    kind = draw(st.sampled_from(["packed", "padded", "column-major", "broadcast"] if broadcast
                                else ["packed", "padded", "column-major"]))
    if kind == "packed":
        return None
    if kind == "padded":
        strides, step = [], 1
        for n in reversed(sizes):
            strides.append(step)
            step *= n + 1
        return tuple(reversed(strides))
    if kind == "column-major":
        strides, step = [], 1
        for n in sizes:
            strides.append(step)
            step *= n
        return tuple(strides)
    return tuple(0 if draw(st.booleans()) else s for s in TensorDesc("UINT8", sizes).effective_strides)


class _Builder:
    """Draws a random GraphDesc: values are graph inputs or node outputs, each node reads earlier values."""

    def __init__(self, draw: st.DrawFn, device: dml.Device, sizes: tuple[int, ...]) -> None:
        self.draw, self.device, self.sizes = draw, device, sizes
        self.nodes: list[dml.OperatorNode] = []
        self.input_descs: list[TensorDesc] = []
        self.input_edges: list[dml.InputEdge] = []
        self.intermediate_edges: list[dml.IntermediateEdge] = []
        self.values: list[tuple[int, TensorDesc]] = []  # (producing node, its output description)

    def graph_input(self, data_type: T, broadcast: bool) -> tuple[int | None, TensorDesc]:
        if self.input_descs and self.draw(st.booleans()):  # a graph input feeding several nodes
            same = [k for k, d in enumerate(self.input_descs) if d.data_type == data_type and d.sizes == self.sizes]
            if same:
                k = self.draw(st.sampled_from(same))
                return -1 - k, self.input_descs[k]
        desc = TensorDesc(data_type, self.sizes, _strides(self.draw, self.sizes, broadcast))
        self.input_descs.append(desc)
        return -len(self.input_descs), desc

    def operand(self, types: list[T], broadcast: bool = True) -> tuple[int | None, TensorDesc]:
        """An earlier node's output of one of ``types`` (read packed or as written), or a graph input."""
        choices = [(n, d) for n, d in self.values if d.data_type in types and d.sizes == self.sizes]
        if choices and self.draw(st.integers(0, 3)):
            node, desc = self.draw(st.sampled_from(choices))
            return node, desc if self.draw(st.booleans()) else TensorDesc(desc.data_type, desc.sizes)
        return self.graph_input(self.draw(st.sampled_from(types)), broadcast)

    def add(self, desc: object, operands: list[tuple[int | None, TensorDesc] | None]) -> None:
        try:
            operator = self.device.create_operator(desc)
        except dml.OpenDMLError:
            return  # not valid at this level (or a bound out of range): draw the next node
        node = len(self.nodes)
        self.nodes.append(dml.OperatorNode(operator))
        for index, operand in enumerate(operands):
            if operand is None:
                continue
            source, _ = operand
            if source is not None and source < 0:
                self.input_edges.append(dml.InputEdge(-1 - source, node, index))
            else:
                self.intermediate_edges.append(dml.IntermediateEdge(source, 0, node, index))  # type: ignore[arg-type]
        out = operator.tensor(operator.definition.schema.outputs[0].name)
        if out.sizes == self.sizes:
            self.values.append((node, out))

    def out_desc(self, data_type: T, sizes: tuple[int, ...] | None = None) -> TensorDesc:
        sizes = self.sizes if sizes is None else sizes
        return TensorDesc(data_type, sizes, _strides(self.draw, sizes, broadcast=False))

    def step(self) -> None:
        kind = self.draw(st.sampled_from(["clip", "clip1", "threshold", "dequantize", "argmin"]))
        draw = self.draw
        if kind == "dequantize":
            x = self.operand(INTEGERS)
            scale = self.graph_input(draw(st.sampled_from(FLOATS)), broadcast=True)
            zero_point = None if draw(st.booleans()) else self.graph_input(x[1].data_type, broadcast=True)
            self.add(dml.ElementWiseDequantizeLinearDesc(x[1], scale[1], None if zero_point is None else zero_point[1],
                                                         self.out_desc(scale[1].data_type)), [x, scale, zero_point])
        elif kind == "argmin":
            x = self.operand(FLOATS + INTEGERS)
            axes = draw(st.lists(st.integers(0, len(self.sizes) - 1), min_size=1, unique=True))
            sizes = tuple(1 if k in axes else n for k, n in enumerate(self.sizes))
            self.add(dml.ArgMinDesc(x[1], self.out_desc(draw(st.sampled_from(INDEX_TYPES)), sizes), axes,
                                    draw(st.sampled_from(["INCREASING", "DECREASING"]))), [x])
        else:
            x = self.operand(FLOATS + INTEGERS)
            data_type = x[1].data_type
            out = self.out_desc(data_type)
            low, high = sorted(draw(st.integers(-20, 20)) for _ in range(2))
            scale_bias = dml.ScaleBias(draw(st.sampled_from([0.5, -2.0])), 1.0) \
                if data_type in FLOATS and draw(st.booleans()) else None
            if kind == "clip":
                desc: object = dml.ElementWiseClipDesc(x[1], out, float(low), float(high), scale_bias)
            elif kind == "clip1":
                desc = dml.ElementWiseClip1Desc(x[1], out, data_type, low if data_type not in FLOATS else float(low),
                                                high if data_type not in FLOATS else float(high), scale_bias)
            else:
                desc = dml.ElementWiseThresholdDesc(x[1], out, float(low), scale_bias)
            self.add(desc, [x])

    def graph(self) -> dml.GraphDesc:
        read = {e.from_node_index for e in self.intermediate_edges}
        outputs = [n for n in range(len(self.nodes)) if n not in read or self.draw(st.booleans())]
        outputs += self.draw(st.lists(st.sampled_from(outputs), max_size=2))  # one node output, two graph outputs
        order = self.draw(st.permutations(range(len(outputs))))
        edges = [dml.OutputEdge(outputs[k], 0, g) for g, k in enumerate(order)]
        return dml.GraphDesc(len(self.input_descs), len(outputs), self.nodes, self.input_edges, edges,
                             self.intermediate_edges)


@st.composite
def graphs(draw: st.DrawFn, device: dml.Device) -> dml.GraphDesc:
    sizes = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    builder = _Builder(draw, device, sizes)
    for _ in range(draw(st.integers(1, 6))):
        builder.step()
    if not builder.nodes:
        builder.add(dml.ElementWiseThresholdDesc(TensorDesc("FLOAT32", sizes), TensorDesc("FLOAT32", sizes), 0.0),
                    [builder.graph_input(T.FLOAT32, broadcast=True)])
    return builder.graph()


LEVELS = ["3_0", "4_1", "5_0", "6_0", "6_2", "6_4"]


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=max(1, settings.default.max_examples // 2))  # each example compiles several operators
@given(data=st.data())
def test_random_graphs_match_node_by_node_execution(backend: str, data: st.DataObject) -> None:
    device = dml.Device(backend, data.draw(st.sampled_from(LEVELS)))
    graph = data.draw(graphs(device))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    readers = {}
    for edge in graph.input_edges:
        operator = graph.nodes[edge.to_node_index].operator
        field = operator.definition.schema.inputs[edge.to_node_input_index].name
        readers[edge.graph_input_index] = max(readers.get(edge.graph_input_index, 0),
                                              operator.tensor(field).total_tensor_size_in_bytes)
    inputs = [rng.integers(0, 256, readers[k], dtype=np.uint8) if k in readers else None
              for k in range(graph.input_count)]
    outputs = [rng.integers(0, 256, output_desc(graph, k).total_tensor_size_in_bytes, dtype=np.uint8)
               for k in range(graph.output_count)]
    expected = run_node_by_node(device, graph, inputs, outputs)
    got = run_graph(device, graph, inputs, outputs)
    for k, (want, have) in enumerate(zip(expected, got)):
        assert want.tobytes() == have.tobytes(), f"graph output {k}"


def held_by(root: object, targets: list[object]) -> list[object]:
    """The ``targets`` reachable from ``root`` through the objects it refers to (modules, classes and
    functions' globals left out: what ``root`` itself holds, not the program around it)."""
    seen, pending, found = {id(root)}, [root], []
    while pending:
        for child in gc.get_referents(pending.pop()):
            if id(child) in seen or isinstance(child, (types.ModuleType, type, types.FunctionType)):
                continue
            seen.add(id(child))
            if any(child is t for t in targets):
                found.append(child)
            pending.append(child)
    return found


def test_remembered_graph_bindings_keep_no_buffer_alive(device: dml.Device) -> None:
    """What a compiled graph keeps of the bindings it executed (remembered for the next execution, with each
    step's call prepared over them) refers to no buffer: the buffers are held weakly, the prepared calls hold
    addresses. So nothing of the graph's keeps a buffer alive, and a dropped buffer is freed. Under
    compute-sanitizer with host backtraces (its default) a dropped buffer may stay alive: the tool keeps the
    Python frame of every CUDA call it intercepts, for its reports, and a frame its locals (the bound buffers;
    with ``--show-backtrace device`` or ``no`` they are freed). There the test checks that nothing but such
    frames of calls that have returned holds them."""
    compiled = device.compile_graph(head(device))
    checks = []
    bind = compiled._bind
    compiled._bind = lambda *args: checks.append(len(args)) or bind(*args)  # type: ignore[method-assign]
    x, scale, zero_point = np.array([3, 9, 1, 0, 7, 8, 0, 0], np.uint8), np.array([0.5], np.float32), np.full(8, 2, np.uint8)
    ins = [device.buffer_from(a) for a in (x, scale, zero_point)]
    outs = [device.create_buffer(16), device.create_buffer(24)]
    for _ in range(3):
        compiled.execute(ins, outs)
    assert len(checks) == 1  # the later executions found the binding remembered
    assert outs[0].to_numpy().view(np.int64).tolist() == [2, 0]
    assert held_by(compiled, ins + outs) == []
    refs = [weakref.ref(b) for b in ins + outs]
    del ins, outs
    gc.collect()
    alive = [buffer for buffer in (ref() for ref in refs) if buffer is not None]
    if not UNDER_SANITIZER:
        assert alive == []
    assert [holder for buffer in alive if (holder := other_holder(buffer, alive)) is not None] == []


def other_holder(target: object, mine: list[object]) -> str | None:
    """None where every holder of ``target`` (but ``mine`` and the calls running now), followed up through lists,
    tuples, dicts and bound tensors, ends at the frame of a call that has returned: no module, opendml object
    or running call holds it. Else the first other holder's type, with the chain of types that leads to it."""
    from opendml.binding import BoundTensor

    running = set()
    frame: types.FrameType | None = sys._getframe()
    while frame is not None:
        running.add(id(frame))
        frame = frame.f_back
    seen, pending = {id(mine)}, [(target, type(target).__name__)]
    while pending:
        held, chain = pending.pop()
        for holder in gc.get_referrers(held):
            if id(holder) in seen or holder is pending or id(holder) in running:
                continue
            seen.add(id(holder))
            if isinstance(holder, types.FrameType):
                continue  # a returned call's frame, kept by whoever keeps frames
            if not isinstance(holder, (list, tuple, dict, BoundTensor)):
                return f"{chain} <- {type(holder).__module__}.{type(holder).__qualname__}"
            pending.append((holder, f"{chain} <- {type(holder).__name__}"))
    return None


def _long_rows_argmin(device: dml.Device, rows: int, length: int) -> dml.CompiledGraph:
    """DEQUANTIZE_LINEAR (INT8, per-tensor scale 0.5, zero point 3) -> ARGMIN over the last axis: few long
    rows, which CUDA splits into pieces merged by a second pass (partial results in buffers of the call's)."""
    x, f = TensorDesc("INT8", [rows, length]), TensorDesc("FLOAT32", [rows, length])
    scale, zero_point = TensorDesc("FLOAT32", [rows, length], [0, 0]), TensorDesc("INT8", [rows, length], [0, 0])
    nodes = [dml.OperatorNode(device.create_operator(dml.ElementWiseDequantizeLinearDesc(x, scale, zero_point, f))),
             dml.OperatorNode(device.create_operator(dml.ArgMinDesc(f, TensorDesc("INT64", [rows, 1]), [1])))]
    graph = dml.GraphDesc(3, 1, nodes, [dml.InputEdge(k, 0, k) for k in range(3)], [dml.OutputEdge(1, 0, 0)],
                          [dml.IntermediateEdge(0, 0, 1, 0)])
    return device.compile_graph(graph)


def test_executions_over_the_same_buffers_follow_new_data(device: dml.Device) -> None:
    """The second and later executions over remembered bindings run each step's prepared call: the answers
    follow the data written into the same buffers in between (first index of the row's minimum)."""
    from tests.recording_helpers import read, write

    rows, length = 3, 70000
    compiled = _long_rows_argmin(device, rows, length)
    x = device.create_buffer(rows * length)
    scale = device.buffer_from(np.array([0.5], np.float32))
    zero_point = device.buffer_from(np.array([3, 0, 0, 0], np.int8))
    out = device.create_buffer(rows * 8)
    rng = np.random.default_rng(11)
    for _ in range(4):
        values = rng.integers(-128, 128, (rows, length), dtype=np.int8)
        write(device, x, values)
        compiled.execute([x, scale, zero_point], [out])
        assert read(out, np.int64, rows).tolist() == np.argmin(values, axis=1).tolist()
    assert all(checked.run for steps in compiled._bound.values() for _, checked in steps)  # prepared calls ran


def test_a_split_reduction_executed_on_streams_in_turn() -> None:
    """A remembered CUDA split reduction holds its partial results' buffers: executions on two streams in
    turn (each after its own stream wrote new data) give each one's answer."""
    from tests.conftest import CUDA_MISSING
    from tests.recording_helpers import read

    if CUDA_MISSING is not None:
        pytest.skip(f"no usable CUDA GPU: {CUDA_MISSING}")
    import cupy

    gpu = dml.Device("cuda")
    rows, length = 2, 1 << 20
    compiled = _long_rows_argmin(gpu, rows, length)
    x, out = gpu.create_buffer(rows * length), gpu.create_buffer(rows * 8)
    scale = gpu.buffer_from(np.array([0.5], np.float32))
    zero_point = gpu.buffer_from(np.array([3, 0, 0, 0], np.int8))
    streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(2)]
    rng = np.random.default_rng(12)
    for turn in range(6):
        values = rng.integers(-128, 128, (rows, length), dtype=np.int8)
        host = cupy.cuda.alloc_pinned_memory(values.nbytes)
        staged = np.frombuffer(host, np.int8, values.size)
        staged[:] = values.reshape(-1)
        with streams[turn % 2] as stream:
            x.data.view(cupy.int8).set(staged, stream)  # type: ignore[attr-defined]
            compiled.execute([x, scale, zero_point], [out])
            stream.synchronize()
        assert read(out, np.int64, rows).tolist() == np.argmin(values, axis=1).tolist()
