"""Compiled graphs: opendml fused and unfused against node-by-node calls, every peer and the memory floor.

The rows are issue 14's: DEQUANTIZE_LINEAR -> CLIP -> ARGMIN chains and their element-wise and two-output
variants. Each row's graph is built once with the builder (``opendml.Graph``) and compiled twice from the
same GraphDesc: fused (the default) and unfused (``OPENDML_FUSION=0`` while compiling: the variable is read
by each ``compile_graph``, and the script checks that the unfused plan runs one kernel per node). They are
timed against the same chain as node-by-node functional calls (``opendml.dequantize_linear``, ``clip``,
``threshold``, ``argmin``, into existing outputs) and against the peers:

- ``--device cpu`` (the default; opendml's threads: all cores, or ``--threads``): NumPy (the
  straightforward expression), ONNX Runtime running the same graph as an ONNX model (DequantizeLinear,
  Mul and Add for ScaleBias, Clip, Max for THRESHOLD, ArgMin; all graph optimizations, intra-op threads =
  opendml's threads), PyTorch eager and ``torch.compile`` on the CPU.
- ``--device cuda``: PyTorch eager, ``torch.compile``, CuPy (the straightforward expression), ONNX
  Runtime's CUDA provider (inputs and outputs bound on the GPU), and ``torch.argmin`` on the ARGMIN's
  input already computed (the targets of rows 2 and 3 compare with it).

The floor is each graph input read once and each graph output written once, at the bandwidth of a copy
measured in the same run: a copy of half those bytes (read and written, so that it moves all of them),
``np.copyto`` on the opendml threads or a Numba-parallel loop (the faster) on the CPU, ``cupy.copyto`` on the
GPU. ``x floor`` is a time over the floor's.

Timing: on the CPU, the median of several runs after one warm-up, the implementations of a row taking
turns run by run (``benchmarks/cpu.py``'s ``timed_together``); on the GPU, the median of CUDA-event-timed
samples of five calls in a row after warm-up (ONNX Runtime, which runs on its own stream and synchronizes
before returning, by the wall clock). ``torch.compile`` uses its default mode with static shapes, and is
warmed (compiled) before it is timed; Dynamo is reset for each row.

Every implementation's answer is checked against opendml fused's on the same inputs (which hold no NaN):
opendml unfused and node by node must give the same bytes; a peer's floats must be equal (or, for FLOAT16,
exactly the chain computed in float32 and rounded to half once: a compiler that keeps the intermediates in
float32, reported as such), and its indices equal, or pointing at an element equal to the one opendml
found (another tie rule, reported as such). A peer that is not installed, or cannot run a row, is skipped
with a printed line. Targets from the issue are printed next to each row, PASS or FAIL.

    python benchmarks/graphs.py                      # CPU, the issue's sizes
    python benchmarks/graphs.py --quick              # CPU, rows 3 and 4 shrunk, fewer runs
    python benchmarks/graphs.py --device cuda        # GPU
    python benchmarks/graphs.py --rows 1,3b --skip torch.compile --out DIR

Writes ``graphs-cpu.csv`` and ``graphs-cpu.png`` (``graphs-<gpu>.csv``, ``.png`` on the GPU; ``-quick`` or
``-tiny`` added for shrunk sizes) into ``benchmarks/results`` or ``--out``. The CSV has one line per row and
implementation (``floor`` for the copy, ``target`` for each target's verdict), the machine in its header.
The exit status is 1 when an answer differed.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import opendml as dml
from opendml import graph as g
from opendml.backends.cpu_kernels import kernels

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the CPU benchmark's timing and copies, harness.py
import harness
from cpu import numba_copy, threaded_copy, timed_together

OPENDML = ("fused", "unfused", "node-by-node")  # opendml's implementations, fused first: the reference

# The chain's steps after DEQUANTIZE_LINEAR.


@dataclass(frozen=True)
class Clip:
    min: float
    max: float
    scale_bias: tuple[float, float] | None = None


@dataclass(frozen=True)
class Threshold:
    min: float
    scale_bias: tuple[float, float] | None = None


@dataclass(frozen=True)
class ArgMin:
    axis: int


Op = Clip | Threshold | ArgMin


@dataclass(frozen=True)
class Row:
    """One benchmark row: DEQUANTIZE_LINEAR of ``quantized`` [rows, columns] (per-column or per-tensor scale
    and zero point; the output has ``scale_type``), then ``ops``. Value 0 is DEQUANTIZE_LINEAR's output,
    value k the k-th op's; ``outputs`` are the values that are graph outputs, in order."""

    key: str
    title: str
    shape: tuple[int, int]
    quantized: str
    per_column: bool
    scale_type: str
    ops: tuple[Op, ...]
    outputs: tuple[int, ...]

    def value_dtypes(self) -> list[np.dtype]:
        scale = dml.DataType.parse(self.scale_type).numpy
        return [np.dtype(np.int64) if isinstance(op, ArgMin) else np.dtype(scale) for op in (None, *self.ops)]

    def value_shapes(self) -> list[tuple[int, ...]]:
        shapes = [self.shape]
        for op in self.ops:
            shapes.append(tuple(1 if k == op.axis else n for k, n in enumerate(shapes[-1]))
                          if isinstance(op, ArgMin) else shapes[-1])
        return shapes

    @property
    def label(self) -> str:
        return f"{self.key}: {self.title} {list(self.shape)}"


def issue_rows(device: str, sizes: str) -> list[Row]:
    """Issue 14's rows. ``quick`` shrinks the CPU's rows 3 ([4096, 32000] to [1024, 32000]) and 4
    ([65536, 4096] to [16384, 4096]); ``tiny`` (a smoke test of the script) shrinks every row."""
    chain = (65536, 4096) if device == "cuda" else (16384, 4096)
    vocab, greedy, wide = (4096, 32000), (64, 256000), (65536, 4096)
    if sizes == "quick" and device == "cpu":
        vocab, wide = (1024, 32000), (16384, 4096)
    if sizes == "tiny":
        chain, vocab, greedy, wide = (64, 256), (16, 1000), (4, 4000), (64, 256)
    clip = Clip(0.0, 6.0)
    scaled = (Clip(-1.0, 6.0, (0.5, 0.25)), Threshold(0.0))
    dq = "DEQUANTIZE_LINEAR"
    return [
        Row("1", f"{dq} per-column -> CLIP [0, 6] -> ARGMIN last axis", chain, "UINT8", True, "FLOAT32",
            (clip, ArgMin(1)), (2,)),
        Row("2", f"{dq} per-column -> CLIP [0, 6] -> ARGMIN first axis", chain, "UINT8", True, "FLOAT32",
            (clip, ArgMin(0)), (2,)),
        Row("3a", f"{dq} INT8 per-tensor -> ARGMIN last axis", vocab, "INT8", False, "FLOAT32", (ArgMin(1),), (1,)),
        Row("3b", f"{dq} INT8 per-tensor -> ARGMIN last axis", greedy, "INT8", False, "FLOAT32", (ArgMin(1),), (1,)),
        Row("4a", f"{dq} per-column -> CLIP ScaleBias -> THRESHOLD, FLOAT32", wide, "UINT8", True, "FLOAT32",
            scaled, (2,)),
        Row("4b", f"{dq} per-column -> CLIP ScaleBias -> THRESHOLD, FLOAT16", wide, "UINT8", True, "FLOAT16",
            scaled, (2,)),
        Row("5", f"{dq} per-column -> CLIP [0, 6] -> outputs: clipped, ARGMIN last axis", chain, "UINT8", True,
            "FLOAT32", (clip, ArgMin(1)), (1, 2)),
    ]


# Inputs, laid out for opendml's buffers.


@dataclass
class Inputs:
    """The graph inputs as arrays of the device's kind (x [rows, columns]; scale and zero point [columns]
    or [1]), and the raw byte arrays under them (rounded up to 16 bytes, as a bound range must be)."""

    x: Any
    scale: Any
    zero_point: Any
    raws: list[Any]

    @property
    def arrays(self) -> list[Any]:
        return [self.x, self.scale, self.zero_point]

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in self.arrays)


def padded(xp: Any, shape: tuple[int, ...], dtype: np.dtype) -> tuple[Any, Any]:
    """An array and the raw bytes under it, rounded up to 16 bytes (DirectML's 4-byte tensor sizes fit)."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    raw = xp.zeros(-(-nbytes // 16) * 16, xp.uint8)
    return raw[:nbytes].view(dtype).reshape(shape), raw


def make_inputs(xp: Any, row: Row, seed: int) -> Inputs:
    """Full-range quantized values; scales in [0.01, 0.11) (finite, positive: no NaN reaches ARGMIN)."""
    rng = np.random.default_rng(seed)
    qtype = np.dtype(dml.DataType.parse(row.quantized).numpy)
    info = np.iinfo(qtype)
    n = row.shape[1] if row.per_column else 1
    host = [rng.integers(info.min, int(info.max) + 1, row.shape, dtype=qtype),
            (rng.random(n) * 0.1 + 0.01).astype(dml.DataType.parse(row.scale_type).numpy),
            rng.integers(info.min, int(info.max) + 1, n, dtype=qtype) if row.per_column else np.array([3], qtype)]
    arrays, raws = [], []
    for h in host:
        array, raw = padded(xp, h.shape, h.dtype)
        array[...] = xp.asarray(h)
        arrays.append(array)
        raws.append(raw)
    return Inputs(*arrays, raws)


# opendml: the compiled graph, fused and unfused, and the chain as functional calls.


def graph_desc(device: dml.Device, row: Row) -> dml.GraphDesc:
    """The row's graph, from the builder: scale and zero point broadcast over the rows by zero strides."""
    graph = dml.Graph(device)
    shape = list(row.shape)
    n = row.shape[1] if row.per_column else 1
    strides = [0, 1] if row.per_column else [0, 0]
    x = graph.input(0, dml.TensorDesc(row.quantized, shape))
    scale = g.reinterpret(graph.input(1, dml.TensorDesc(row.scale_type, [n])), sizes=shape, strides=strides)
    zero_point = g.reinterpret(graph.input(2, dml.TensorDesc(row.quantized, [n])), sizes=shape, strides=strides)
    values = [g.dequantize_linear(x, scale, zero_point)]
    for op in row.ops:
        if isinstance(op, Clip):
            values.append(g.clip(values[-1], op.min, op.max, op.scale_bias))
        elif isinstance(op, Threshold):
            values.append(g.threshold(values[-1], op.min, op.scale_bias))
        else:
            values.append(g.argmin(values[-1], [op.axis]))
    return graph.graph_desc([values[k] for k in row.outputs])


@contextmanager
def fusion(on: bool) -> Iterator[None]:
    """OPENDML_FUSION set for the compiles inside (``compile_graph`` reads it each time), whatever the
    caller's environment says."""
    before = os.environ.get("OPENDML_FUSION")
    os.environ["OPENDML_FUSION"] = "1" if on else "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ["OPENDML_FUSION"]
        else:
            os.environ["OPENDML_FUSION"] = before


@dataclass
class Impl:
    """``run`` is what is timed; ``answer`` returns its graph outputs as host arrays (running it if needed)."""

    run: Callable[[], object]
    answer: Callable[[], tuple[np.ndarray, ...]]
    kernels: int | None = None  # for a compiled graph: the steps of its plan
    plan: str = ""  # for a compiled graph: the nodes of each step, "[0, 1] + [2]"
    wall_clock: bool = False  # on the GPU: timed by the host's clock (it waits for its own stream)


def to_host(array: Any) -> np.ndarray:
    if hasattr(array, "detach"):  # PyTorch
        return array.detach().cpu().numpy()
    if hasattr(array, "get"):  # CuPy
        return array.get()
    return np.asarray(array)


def compiled_impl(device: dml.Device, xp: Any, row: Row, inputs: Inputs, compiled: dml.CompiledGraph) -> Impl:
    """A compiled graph executed over buffers that wrap the inputs' and its own outputs' memory."""
    wrap = device.backend.wrap
    in_buffers = [wrap(device, raw) for raw in inputs.raws]
    shapes, dtypes = row.value_shapes(), row.value_dtypes()
    outs = [padded(xp, shapes[k], dtypes[k]) for k in row.outputs]
    out_buffers = [wrap(device, raw) for _, raw in outs]

    def run() -> None:
        compiled.execute(in_buffers, out_buffers)

    def answer() -> tuple[np.ndarray, ...]:
        run()
        return tuple(to_host(array) for array, _ in outs)

    plan = " + ".join("[" + ", ".join(map(str, group)) + "]" for group in compiled.plan.groups)
    return Impl(run, answer, len(compiled.plan.steps), plan)


def node_by_node(device: dml.Device, xp: Any, row: Row, inputs: Inputs) -> tuple[Impl, list[Any]]:
    """The chain as functional calls into existing arrays; also those arrays (every value of the chain)."""
    values = [xp.empty(shape, dtype) for shape, dtype in zip(row.value_shapes(), row.value_dtypes())]

    def run() -> None:
        dml.dequantize_linear(inputs.x, inputs.scale, inputs.zero_point, out=values[0], device=device)
        for k, op in enumerate(row.ops):
            if isinstance(op, Clip):
                dml.clip(values[k], op.min, op.max, scale_bias=op.scale_bias, out=values[k + 1], device=device)
            elif isinstance(op, Threshold):
                dml.threshold(values[k], op.min, scale_bias=op.scale_bias, out=values[k + 1], device=device)
            else:
                dml.argmin(values[k], op.axis, out=values[k + 1], device=device)

    def answer() -> tuple[np.ndarray, ...]:
        run()
        return tuple(to_host(values[k]) for k in row.outputs)

    return Impl(run, answer), values


# Peers.


@dataclass(frozen=True)
class ArrayLib:
    """What the straightforward expression needs from an array library (NumPy, CuPy, PyTorch)."""

    wide: Any  # its int32
    cast: Callable[[Any, Any], Any]
    clip: Callable[[Any, float, float], Any]
    at_least: Callable[[Any, float], Any]
    argmin: Callable[[Any, int], Any]


def numpy_like(xp: Any) -> ArrayLib:
    return ArrayLib(xp.int32, lambda a, t: a.astype(t), xp.clip, xp.maximum, lambda v, axis: xp.argmin(v, axis=axis))


def torch_lib(torch: Any) -> ArrayLib:
    return ArrayLib(torch.int32, lambda a, t: a.to(t), torch.clamp, torch.clamp_min,
                    lambda v, axis: torch.argmin(v, dim=axis, keepdim=True))


def array_chain(lib: ArrayLib, row: Row) -> Callable[[Any, Any, Any], tuple]:
    """The row's chain as the straightforward expression: ``(x - zero_point) * scale`` exact in int32,
    converted to the scale's type, one multiply; then each op, ScaleBias as a multiply and an add."""

    def chain(x: Any, scale: Any, zero_point: Any) -> tuple:
        values = [lib.cast(lib.cast(x, lib.wide) - lib.cast(zero_point, lib.wide), scale.dtype) * scale]
        for op in row.ops:
            v = values[-1]
            if isinstance(op, ArgMin):
                values.append(lib.argmin(v, op.axis))
                continue
            if op.scale_bias is not None:
                v = v * op.scale_bias[0] + op.scale_bias[1]
            values.append(lib.clip(v, op.min, op.max) if isinstance(op, Clip) else lib.at_least(v, op.min))
        return tuple(values[k] for k in row.outputs)

    return chain


def onnx_model(row: Row) -> bytes:
    """The row's graph as an ONNX model: inputs x, s and z (scale and zero point [columns], or scalars for
    a per-tensor row); ScaleBias as Mul and Add, THRESHOLD as Max; outputs v<k> for the graph's values."""
    import onnx
    from onnx import helper, numpy_helper

    qtype = np.dtype(dml.DataType.parse(row.quantized).numpy)
    stype = np.dtype(dml.DataType.parse(row.scale_type).numpy)
    param_shape = [row.shape[1]] if row.per_column else []
    inputs = [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(qtype), list(row.shape)),
              helper.make_tensor_value_info("s", helper.np_dtype_to_tensor_dtype(stype), param_shape),
              helper.make_tensor_value_info("z", helper.np_dtype_to_tensor_dtype(qtype), param_shape)]
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["v0"], axis=1)]
    constants = []

    def constant(name: str, value: float) -> str:
        constants.append(numpy_helper.from_array(np.array(value, stype), name))
        return name

    for k, op in enumerate(row.ops, 1):
        source = f"v{k - 1}"
        if isinstance(op, ArgMin):
            nodes.append(helper.make_node("ArgMin", [source], [f"v{k}"], axis=op.axis, keepdims=1))
            continue
        if op.scale_bias is not None:
            nodes.append(helper.make_node("Mul", [source, constant(f"scale{k}", op.scale_bias[0])], [f"m{k}"]))
            nodes.append(helper.make_node("Add", [f"m{k}", constant(f"bias{k}", op.scale_bias[1])], [f"g{k}"]))
            source = f"g{k}"
        if isinstance(op, Clip):
            nodes.append(helper.make_node("Clip", [source, constant(f"min{k}", op.min), constant(f"max{k}", op.max)],
                                          [f"v{k}"]))
        else:
            nodes.append(helper.make_node("Max", [source, constant(f"min{k}", op.min)], [f"v{k}"]))
    shapes, dtypes = row.value_shapes(), row.value_dtypes()
    outputs = [helper.make_tensor_value_info(f"v{k}", helper.np_dtype_to_tensor_dtype(dtypes[k]), list(shapes[k]))
               for k in row.outputs]
    model = helper.make_model(helper.make_graph(nodes, "chain", inputs, outputs, constants),
                              opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model.SerializeToString()


def ort_session(ort: Any, row: Row, threads: int, provider: str) -> Any:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Its workers would otherwise spin on the cores after each run, slowing whatever runs next.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(onnx_model(row), options, providers=[provider])


def ort_feeds(row: Row, inputs: Inputs) -> dict[str, Any]:
    """ONNX's per-tensor scale and zero point are scalars; per-column ones are [columns]."""
    s, z = (inputs.scale, inputs.zero_point) if row.per_column else (inputs.scale.reshape(()),
                                                                     inputs.zero_point.reshape(()))
    return {"x": inputs.x, "s": s, "z": z}


def ort_cpu_impl(ort: Any, row: Row, inputs: Inputs, threads: int) -> Impl:
    session = ort_session(ort, row, threads, "CPUExecutionProvider")
    feeds = ort_feeds(row, inputs)

    def run() -> list:
        return session.run(None, feeds)

    return Impl(run, lambda: tuple(np.asarray(a) for a in run()))


def ort_cuda_impl(ort: Any, row: Row, inputs: Inputs) -> Impl:
    """The CUDA provider with inputs bound where they lie on the GPU and outputs left on it."""
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        raise RuntimeError("this onnxruntime has no CUDAExecutionProvider (onnxruntime-gpu is not installed)")
    session = ort_session(ort, row, 1, "CUDAExecutionProvider")
    binding = session.io_binding()
    for name, array in ort_feeds(row, inputs).items():
        binding.bind_input(name, "cuda", 0, array.dtype, list(array.shape), array.data.ptr)
    for k in row.outputs:
        binding.bind_output(f"v{k}", "cuda", 0)

    def run() -> None:
        session.run_with_iobinding(binding)  # returns once the GPU is done

    def answer() -> tuple[np.ndarray, ...]:
        run()
        return tuple(binding.copy_outputs_to_cpu())

    return Impl(run, answer, wall_clock=True)


def library_impl(chain: Callable[[Any, Any, Any], tuple], operands: Sequence[Any]) -> Impl:
    def run() -> tuple:
        return chain(*operands)

    return Impl(run, lambda: tuple(to_host(a) for a in run()))


def torch_ready_impl(torch: Any, tensor: Any, axis: int) -> Impl:
    """``torch.argmin`` of the ARGMIN's input, already computed (by opendml, node by node)."""

    def run() -> Any:
        return torch.argmin(tensor, dim=axis, keepdim=True)

    return Impl(run, lambda: (to_host(run()),))


@dataclass
class Context:
    """The device under test and the peers installed for it (None: absent, with the reason printed)."""

    kind: str
    device: dml.Device
    xp: Any
    threads: int
    repeats: int
    skip: frozenset[str] = frozenset()  # peers left out by --skip
    torch: Any = None
    ort: Any = None
    header: dict[str, str] = field(default_factory=dict)


def peer_builders(ctx: Context, row: Row, inputs: Inputs, values: list[Any]) -> dict[str, Callable[[], Impl]]:
    """Each available peer of the row, built when called (a failure skips that peer)."""
    builders: dict[str, Callable[[], Impl]] = {}
    operands = inputs.arrays
    if ctx.kind == "cpu":
        builders["numpy"] = lambda: library_impl(array_chain(numpy_like(np), row), operands)
        if ctx.ort is not None:
            builders["onnxruntime"] = lambda: ort_cpu_impl(ctx.ort, row, inputs, ctx.threads)
    else:
        import cupy as cp

        builders["cupy"] = lambda: library_impl(array_chain(numpy_like(cp), row), operands)
        if ctx.ort is not None:
            builders["onnxruntime-cuda"] = lambda: ort_cuda_impl(ctx.ort, row, inputs)
    if ctx.torch is not None:
        torch = ctx.torch
        tensors = [torch.from_dlpack(a) if ctx.kind == "cuda" else torch.from_numpy(a) for a in operands]
        chain = array_chain(torch_lib(torch), row)
        builders["torch"] = lambda: library_impl(chain, tensors)
        builders["torch.compile"] = lambda: library_impl(torch.compile(chain, dynamic=False), tensors)
        last = row.ops[-1]
        if isinstance(last, ArgMin) and row.outputs == (len(row.ops),):
            ready = values[-2]
            tensor = torch.from_dlpack(ready) if ctx.kind == "cuda" else torch.from_numpy(ready)
            builders["torch.argmin (ready)"] = lambda: torch_ready_impl(torch, tensor, last.axis)
    return builders


# Checks: every answer against opendml fused's.


@dataclass
class Reference:
    """opendml fused's answer, and what a peer's is compared with where its semantics differ."""

    row: Row
    outputs: tuple[np.ndarray, ...]
    argmin_inputs: dict[int, np.ndarray]  # by output value: the ARGMIN's input (node by node), for ties
    unrounded: dict[int, np.ndarray]  # by FLOAT16 output value: the chain in float32, rounded to half once


def reference_of(row: Row, outputs: tuple[np.ndarray, ...], inputs: Inputs, values: list[Any]) -> Reference:
    argmin_inputs = {k: to_host(values[k - 1]) for k in row.outputs if k and isinstance(row.ops[k - 1], ArgMin)}
    unrounded: dict[int, np.ndarray] = {}
    if row.scale_type == "FLOAT16":
        x, scale, zero_point = (to_host(a) for a in inputs.arrays)
        wide = array_chain(numpy_like(np), row)(x, scale.astype(np.float32), zero_point)
        unrounded = {k: v.astype(np.float16) for k, v in zip(row.outputs, wide) if v.dtype == np.float32}
    return Reference(row, outputs, argmin_inputs, unrounded)


def compare(reference: Reference, got: tuple[Any, ...], same_bytes: bool) -> str:
    """``exact`` (the same bytes: opendml's own), ``equal``, or equal but for a peer's documented difference
    (another tie rule; FLOAT16 intermediates not rounded to half), else ``DIFFERS: ...``."""
    if len(got) != len(reference.outputs):
        return f"DIFFERS: {len(got)} outputs, not {len(reference.outputs)}"
    notes = []
    for k, ref, value in zip(reference.row.outputs, reference.outputs, got):
        value = np.asarray(value)
        if value.size != ref.size:
            return f"DIFFERS: output v{k} has {value.size} elements, not {ref.size}"
        if same_bytes:
            if value.dtype != ref.dtype or value.reshape(ref.shape).tobytes() != ref.tobytes():
                return f"DIFFERS: output v{k} is not the same bytes"
            continue
        value = value.reshape(ref.shape)
        if ref.dtype.kind == "i":
            op = reference.row.ops[k - 1]
            assert isinstance(op, ArgMin)
            note = compare_indices(ref, value, reference.argmin_inputs[k], op.axis)
        else:
            note = compare_floats(ref, value, reference.unrounded.get(k))
        if note.startswith("DIFFERS"):
            return f"{note} (output v{k})"
        notes.extend([note] if note else [])
    return "exact" if same_bytes else ("equal" if not notes else "equal but " + "; ".join(notes))


def compare_indices(ref: np.ndarray, value: np.ndarray, source: np.ndarray, axis: int) -> str:
    """Equal indices, or indices of elements equal to the ones opendml picked: another tie rule."""
    value = value.astype(np.int64)
    if np.array_equal(ref, value):
        return ""
    if value.min() < 0 or value.max() >= source.shape[axis]:
        return "DIFFERS: an index out of range"
    if not np.array_equal(np.take_along_axis(source, value, axis), np.take_along_axis(source, ref, axis)):
        return f"DIFFERS: {int(np.count_nonzero(ref != value))} indices point at larger elements"
    return f"{int(np.count_nonzero(ref != value))} indices pick another of equal minima (its tie rule)"


def compare_floats(ref: np.ndarray, value: np.ndarray, unrounded: np.ndarray | None = None) -> str:
    """Equal values (-0.0 == +0.0), or for FLOAT16 exactly the chain computed in float32 and rounded to
    half once (a compiler that keeps the intermediates in float32: another rounding, not an error)."""
    if value.dtype != ref.dtype:
        return f"DIFFERS: {value.dtype}, not {ref.dtype}"
    if np.array_equal(ref, value):
        return ""
    apart = int(np.count_nonzero(ref != value))
    if unrounded is not None and np.array_equal(value, unrounded):
        return f"{apart} FLOAT16 elements are the chain in float32 rounded to half once (no rounding between nodes)"
    return f"DIFFERS: {apart} elements, by up to {float(np.max(np.abs(ref.astype(np.float64) - value)))}"


# Timing.


@dataclass
class Timing:
    seconds: list[float]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.seconds) * 1e3


def time_cpu(ctx: Context, impls: dict[str, Impl], floor_bytes: int) -> tuple[dict[str, Timing], Timing]:
    """The implementations and both copies taking turns; the floor is the faster copy."""
    half = max(floor_bytes // 2, 1)
    source, target = np.full(half, 1, np.uint8), np.empty(half, np.uint8)  # written: no shared zero page
    fns: dict[str, Callable[[], object]] = {name: impl.run for name, impl in impls.items()}
    fns["copy"] = threaded_copy(source, target, ctx.threads)
    fast = numba_copy(source, target, ctx.threads)
    if fast is not None:
        fns["copy-numba"] = fast
    times = {name: Timing(t) for name, t in timed_together(fns, ctx.repeats).items()}
    copies = [times.pop(name) for name in ("copy", "copy-numba") if name in times]
    return times, min(copies, key=lambda t: t.median_ms)


def time_cuda(ctx: Context, impls: dict[str, Impl], floor_bytes: int) -> tuple[dict[str, Timing], Timing]:
    """The implementations and the copy taking turns, one sample each per round (as benchmarks/gpu.py): a drift
    of the GPU's clocks during a row weighs on all of them alike, the floor included."""
    import cupy as cp

    half = max(floor_bytes // 2, 1)
    source, target = cp.ones(half, cp.uint8), cp.empty(half, cp.uint8)
    fns: dict[str, Callable[[], object]] = {name: impl.run for name, impl in impls.items()}
    fns["copy"] = lambda: cp.copyto(target, source)
    samplers = {name: wall_sample if name in impls and impls[name].wall_clock else event_sample for name in fns}
    for fn in fns.values():
        for _ in range(3):
            fn()
    cp.cuda.Device().synchronize()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(ctx.repeats):
        for name, fn in fns.items():
            samples[name].append(samplers[name](fn))
    floor = Timing(samples.pop("copy"))
    return {name: Timing(t) for name, t in samples.items()}, floor


def event_sample(fn: Callable[[], object], back_to_back: int = 5) -> float:
    """Seconds per call, from CUDA events around ``back_to_back`` calls in a row (as benchmarks/gpu.py)."""
    import cupy as cp

    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(back_to_back):
        fn()
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) / back_to_back / 1e3


def wall_sample(fn: Callable[[], object]) -> float:
    """Seconds of one call by the host's clock, for a call that waits for its GPU work before returning."""
    import cupy as cp

    cp.cuda.Device().synchronize()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


# Targets (issue 14).

CPU_PEERS = ("numpy", "onnxruntime", "torch", "torch.compile")


@dataclass
class Verdict:
    text: str
    value: str
    passed: bool | None  # None: an implementation it needs did not run

    def __str__(self) -> str:
        state = "n/a" if self.passed is None else ("PASS" if self.passed else "FAIL")
        return f"{state} {self.text} ({self.value})"


def faster(ms: dict[str, float], peer: str, at_least: float) -> Verdict:
    text = f">= {at_least:g}x faster than {peer}" if at_least != 1 else f"ahead of {peer}"
    if peer not in ms:
        return Verdict(text, "not run", None)
    ratio = ms[peer] / ms["fused"]
    return Verdict(text, f"{ratio:.2f}x", ratio >= at_least if at_least != 1 else ratio > 1)


def of_floor(ms: dict[str, float], floor: float, most: float) -> Verdict:
    return Verdict(f"<= {most:g}x the floor", f"{ms['fused'] / floor:.2f}x", ms["fused"] <= most * floor)


def targets(kind: str, row: Row, ms: dict[str, float], floor: float) -> list[Verdict]:
    if "fused" not in ms:
        return []
    key = row.key
    if kind == "cpu":
        verdicts = []
        if key == "1":
            verdicts = [faster(ms, "onnxruntime", 10), faster(ms, "unfused", 5), of_floor(ms, floor, 3)]
        peers = {p: t for p, t in ms.items() if p in CPU_PEERS}
        best = min(peers, key=peers.__getitem__) if peers else None
        verdicts.append(Verdict("ahead of every CPU peer", "none ran", None) if best is None
                        else Verdict(f"ahead of every CPU peer (fastest: {best})", f"{ms[best] / ms['fused']:.2f}x",
                                     ms[best] > ms["fused"]))
        return verdicts
    if key == "1":
        return [Verdict("<= 0.12 ms", f"{ms['fused']:.3f} ms", ms["fused"] <= 0.12), of_floor(ms, floor, 1.35),
                faster(ms, "torch.compile", 4)]
    if key in ("2", "3a", "3b"):
        return [of_floor(ms, floor, 1.5), faster(ms, "torch.compile", 1), faster(ms, "torch.argmin (ready)", 1)]
    if key in ("4a", "4b"):
        share = floor / ms["fused"]
        return [Verdict(">= 0.90x copy bandwidth", f"{share:.2f}x", share >= 0.90)]
    return [of_floor(ms, floor, 1.2)]


# One row, then the files and the table.


@dataclass
class Result:
    row: Row
    floor_bytes: int
    floor: Timing
    times: dict[str, Timing]
    checks: dict[str, str]  # every implementation's, skipped ones too
    kernels: dict[str, int]
    verdicts: list[Verdict]


def opendml_impls(ctx: Context, row: Row, inputs: Inputs) -> tuple[dict[str, Impl], list[Any]]:
    """The graph compiled fused and unfused (from one GraphDesc), and the chain node by node."""
    desc = graph_desc(ctx.device, row)
    start = time.perf_counter()
    with fusion(True):
        fused = ctx.device.compile_graph(desc)
    compile_s = time.perf_counter() - start
    with fusion(False):
        unfused = ctx.device.compile_graph(desc)
    if len(unfused.plan.steps) != len(desc.nodes):
        raise SystemExit(f"row {row.key}: OPENDML_FUSION=0 left {len(unfused.plan.steps)} steps for "
                         f"{len(desc.nodes)} nodes")
    impls = {"fused": compiled_impl(ctx.device, ctx.xp, row, inputs, fused),
             "unfused": compiled_impl(ctx.device, ctx.xp, row, inputs, unfused)}
    impls["node-by-node"], values = node_by_node(ctx.device, ctx.xp, row, inputs)
    print(f"  plan fused {impls['fused'].plan} (compiled in {compile_s:.2f} s), unfused {impls['unfused'].plan}",
          flush=True)
    return impls, values


def bench_row(ctx: Context, row: Row, seed: int) -> Result:
    print(f"row {row.label}", flush=True)
    inputs = make_inputs(ctx.xp, row, seed)
    impls, values = opendml_impls(ctx, row, inputs)
    outputs = impls["fused"].answer()
    reference = Reference(row, outputs, {}, {})
    checks = {"fused": "reference"}
    for name in OPENDML[1:]:
        checks[name] = compare(reference, impls[name].answer(), same_bytes=True)
    reference = reference_of(row, outputs, inputs, values)  # node by node has filled ``values``
    if ctx.torch is not None:
        import torch._dynamo

        torch._dynamo.reset()  # each row's torch.compile starts afresh: no recompile limit, no dynamic shapes
    for name, build in peer_builders(ctx, row, inputs, values).items():
        if name in ctx.skip:
            checks[name] = "skipped: --skip"
            continue
        try:
            impl = build()
            got = impl.answer()  # also the warm-up: torch.compile compiles here, outside the timed runs
        except Exception as error:  # a peer that cannot run this row is skipped, with the reason
            checks[name] = f"skipped: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            print(f"  {name:<22} {checks[name]}", flush=True)
            continue
        checks[name] = compare(reference, got, same_bytes=False)
        impls[name] = impl
    for name, check in checks.items():
        print(f"  check {name:<22} {check}", flush=True)
    floor_bytes = inputs.nbytes + sum(int(r.nbytes) for r in outputs)
    print(f"  timing {len(impls)} implementations and the copy ...", flush=True)
    timer = time_cpu if ctx.kind == "cpu" else time_cuda
    times, floor = timer(ctx, impls, floor_bytes)
    for name, t in times.items():
        print(f"  {name:<22} {t.median_ms:9.3f} ms  (min {min(t.seconds) * 1e3:.3f}, max {max(t.seconds) * 1e3:.3f},"
              f" n={len(t.seconds)}, {t.median_ms / floor.median_ms:.2f}x floor)", flush=True)
    print(f"  {'floor':<22} {floor.median_ms:9.3f} ms  ({floor_bytes / 2**20:.1f} MiB at "
          f"{floor_bytes / floor.median_ms / 1e6:.1f} GB/s)", flush=True)
    ms = {name: t.median_ms for name, t in times.items()}
    verdicts = targets(ctx.kind, row, ms, floor.median_ms)
    for verdict in verdicts:
        print(f"  target {verdict}", flush=True)
    kernel_counts = {name: impl.kernels for name, impl in impls.items() if impl.kernels is not None}
    return Result(row, floor_bytes, floor, times, checks, kernel_counts, verdicts)


COLUMNS = ["row", "title", "shape", "implementation", "median_ms", "min_ms", "max_ms", "runs", "x_floor", "kernels",
           "check"]


def write_csv(results: list[Result], header: dict[str, str], path: Path) -> None:
    harness.write_csv(path, header, COLUMNS, [row for r in results for row in _csv_rows(r)])


def _csv_rows(r: Result) -> list[list[Any]]:
    shape = "x".join(map(str, r.row.shape))
    floor = r.floor.median_ms
    rows = []
    for name, check in r.checks.items():
        t = r.times.get(name)
        cells = ([f"{t.median_ms:.4f}", f"{min(t.seconds) * 1e3:.4f}", f"{max(t.seconds) * 1e3:.4f}",
                  len(t.seconds), f"{t.median_ms / floor:.3f}"] if t else ["", "", "", "", ""])
        rows.append([r.row.key, r.row.title, shape, name, *cells, r.kernels.get(name, ""), check])
    rows.append([r.row.key, r.row.title, shape, "floor", f"{floor:.4f}", f"{min(r.floor.seconds) * 1e3:.4f}",
                 f"{max(r.floor.seconds) * 1e3:.4f}", len(r.floor.seconds), "1.000", "",
                 f"{r.floor_bytes} bytes at {r.floor_bytes / floor / 1e6:.1f} GB/s"])
    rows += [[r.row.key, r.row.title, shape, "target", "", "", "", "", "", "", str(verdict)] for verdict in r.verdicts]
    return rows


def plot(results: list[Result], header: dict[str, str], path: Path) -> None:
    plt = harness.pyplot(print)
    if plt is None:
        return
    names = list(dict.fromkeys(name for r in results for name in r.times))
    fig, ax = plt.subplots(figsize=(max(8, 1.6 * len(results)), 6))
    width = 0.8 / max(len(names), 1)
    for k, name in enumerate(names):
        xs = [i + (k - (len(names) - 1) / 2) * width for i, r in enumerate(results) if name in r.times]
        ys = [r.times[name].median_ms / r.floor.median_ms for r in results if name in r.times]
        ax.bar(xs, ys, width, label=name)
    ax.axhline(1.0, color="black", linewidth=1, label="floor (inputs read, outputs written once, at copy speed)")
    ax.set_yscale("log")
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels([f"{r.row.key}\n{'x'.join(map(str, r.row.shape))}" for r in results], fontsize=8)
    ax.set_ylabel("median time / floor (log)")
    ax.set_title(f"compiled graphs, issue 14 rows: {header['machine']}", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    harness.save(plt, fig, path, dpi=110)


def summary(results: list[Result]) -> str:
    names = list(dict.fromkeys(name for r in results for name in r.checks))
    widths = [max(9, len(n) + 2) for n in names]
    lines = [f"{'row':4} {'shape':>12} {'floor':>9}" + "".join(f"{n:>{w}}" for n, w in zip(names, widths))
             + "   (median ms)"]
    for r in results:
        cells = "".join(f"{r.times[n].median_ms:>{w}.3f}" if n in r.times else f"{'-':>{w}}"
                        for n, w in zip(names, widths))
        lines.append(f"{r.row.key:4} {'x'.join(map(str, r.row.shape)):>12} {r.floor.median_ms:9.3f}{cells}")
    lines.append("")
    for r in results:
        if "fused" in r.times:
            lines.append(f"{r.row.key:4} fused {r.times['fused'].median_ms / r.floor.median_ms:.2f}x floor; "
                         + "; ".join(map(str, r.verdicts)))
        differing = [f"{n}: {c}" for n, c in r.checks.items() if c.startswith("DIFFERS")]
        lines.extend(f"{r.row.key:4} {d}" for d in differing)
    return "\n".join(lines)


# The machine, the peers, main.


def machine_header(ctx: Context, sizes: str) -> dict[str, str]:
    from opendml.thread_count import available_cores

    model = harness.cpu_model()
    header = {"device": ctx.kind, "cpu": model, "cores": str(available_cores())}
    if ctx.kind == "cpu":
        header["threads"] = str(ctx.threads)
        header["kernels"] = kernels().__name__.rsplit(".", 1)[-1]
        header["machine"] = f"{model}, {ctx.threads} threads, {header['kernels']} kernels"
    else:
        import cupy as cp

        gpu = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        header["gpu"] = gpu
        header["cuda runtime"] = str(cp.cuda.runtime.runtimeGetVersion())
        header["cupy"] = cp.__version__
        header["machine"] = gpu
    header["sizes"] = {"issue": "the issue's", "quick": "quick: rows 3 and 4 shrunk on the CPU",
                       "tiny": "tiny: a smoke test, every row shrunk"}[sizes]
    header["load average at start"] = harness.load_average()
    header["numpy"] = np.__version__
    header["onnxruntime"] = ctx.ort.__version__ if ctx.ort is not None else "not installed"
    header["torch"] = ctx.torch.__version__ if ctx.torch is not None else "not installed"
    header["python"] = sys.version.split()[0]
    header["commit"] = harness.commit()
    return header


def load_peers(ctx: Context) -> None:
    """PyTorch and ONNX Runtime where installed (and usable on the device); a printed line where not."""
    try:
        import torch

        if ctx.kind == "cuda" and not torch.cuda.is_available():
            print("PyTorch has no CUDA here: torch, torch.compile and torch.argmin skipped", flush=True)
        else:
            if ctx.kind == "cpu":
                torch.set_num_threads(ctx.threads)
            ctx.torch = torch
    except ImportError:
        print("PyTorch is not installed: torch, torch.compile and torch.argmin skipped", flush=True)
    try:
        import onnx  # noqa: F401  (the models are built with it)
        import onnxruntime

        ctx.ort = onnxruntime
    except ImportError as error:
        print(f"{error.name} is not installed: ONNX Runtime skipped", flush=True)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = harness.parser(__doc__)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads (default: all cores)")
    parser.add_argument("--quick", action="store_true", help="shrink the CPU's rows 3 and 4, fewer runs")
    parser.add_argument("--sizes", choices=["issue", "quick", "tiny"], default=None,
                        help="row sizes (default: issue, or quick with --quick); tiny is a smoke test")
    harness.add_repeats(parser, "timed runs (CPU) or samples (GPU) per implementation (default 9 / 30, quick 3 / 10)")
    harness.add_skip(parser, "comma-separated peers not to run (e.g. torch.compile)")
    parser.add_argument("--rows", default="", help="comma-separated row keys to run (1,2,3a,3b,4a,4b,5)")
    harness.add_out(parser)
    return parser.parse_args(argv)


def make_context(args: argparse.Namespace) -> Context:
    quick = args.quick or args.sizes in ("quick", "tiny")
    if args.device == "cuda":
        try:
            import cupy as cp
        except ImportError:
            raise SystemExit("CuPy is not installed: --device cuda cannot run") from None
        try:
            device = dml.Device("cuda")
        except dml.OpenDMLError as error:
            raise SystemExit(f"--device cuda cannot run: {error}") from None
        return Context("cuda", device, cp, 1, args.repeats or (10 if quick else 30))
    device = dml.Device("cpu", threads=args.threads)
    return Context("cpu", device, np, device.threads, args.repeats or (3 if quick else 9))


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    sizes = args.sizes or ("quick" if args.quick else "issue")
    ctx = make_context(args)
    ctx.skip = harness.names(args.skip)
    if ctx.skip:
        print(f"left out by --skip: {', '.join(sorted(ctx.skip))}", flush=True)
    load_peers(ctx)
    header = machine_header(ctx, sizes)
    print(", ".join(f"{k}: {v}" for k, v in header.items() if k != "machine"), flush=True)
    wanted = harness.names(args.rows)
    rows = [row for row in issue_rows(ctx.kind, sizes) if not wanted or row.key in wanted]
    results = []
    for k, row in enumerate(rows):
        results.append(bench_row(ctx, row, seed=k))
        gc.collect()
        if ctx.kind == "cuda":
            import cupy as cp

            cp.get_default_memory_pool().free_all_blocks()
            if ctx.torch is not None:
                ctx.torch.cuda.empty_cache()
    header["load average at end"] = harness.load_average()
    stem = "graphs-cpu" if ctx.kind == "cpu" else "graphs-" + header["gpu"].lower().replace("nvidia", "").strip() \
        .replace(" ", "-")
    stem += "" if sizes == "issue" else f"-{sizes}"
    args.out.mkdir(parents=True, exist_ok=True)
    write_csv(results, header, args.out / f"{stem}.csv")
    plot(results, header, args.out / f"{stem}.png")
    print(f"\nwrote {args.out / stem}.csv and .png ({header['sizes']} sizes)\n")
    print(summary(results))
    return 1 if any(c.startswith("DIFFERS") for r in results for c in r.checks.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
