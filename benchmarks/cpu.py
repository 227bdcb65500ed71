"""CPU benchmark: opendml against ONNX Runtime, NumPy and a plain copy of the same bytes.

Run ``python benchmarks/cpu.py`` (needs the ``bench`` extra: onnx, onnxruntime, matplotlib, numba). Every
row uses 2^26-element tensors and the same inputs for every implementation; each time is the median of
several timed runs after one warm-up, the implementations of a row taking turns. ONNX Runtime runs with
intra-op threads = all cores, opendml with its default (all cores), and the copy is the faster of two
plain copies over the same threads and shares: ``np.copyto`` on Python threads, and a Numba-parallel
loop. Writes ``cpu.csv`` and ``cpu.png`` into ``benchmarks/results`` (or ``--out``).

The header of the CSV also gives the cost of one call on a 1024-element CLIP next to ``np.clip``'s.

Bandwidth counts the bytes an operator must move (inputs read once, output written once); the copy moves
the input's bytes twice (read and write). ``ratio`` is the fastest peer's time over opendml's (>= 1.0 means
opendml is at least as fast); ``of_copy`` is opendml's bandwidth over the copy's.

The binary operators (ELEMENT_WISE_ADD, SUBTRACT, MULTIPLY, DIVIDE) run with a full-size second operand
(two streams read, one written) and with a bias row broadcast over [16384, 4096] (zero strides, never
materialised). The fused chain DEQUANTIZE -> ADD -> RELU -> QUANTIZE runs as one compiled graph (one kernel)
against the same four operators called one by one into existing arrays: ``node_by_node_ms`` and
``of_node_by_node`` (node by node's time over the fused graph's) are filled on that row only.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import opendml as dml
from opendml.backends.cpu_kernels import kernels
from opendml.backends.cpu_kernels.threads import run_tasks
from opendml.backends.cpu_kernels.views import shares
from opendml.thread_count import available_cores

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for harness.py: what the benchmark scripts share
import harness

# Compiled kernels from the first timed call, never the NumPy path standing in while they compile (tiered
# execution, docs/cpu-backend.md), unless the environment says otherwise.
os.environ.setdefault("OPENDML_TIERED", "0")

RESULTS = Path(__file__).parent / "results"
N = 1 << 26


# Untimed runs first: a kernel shared out to the threads compiles its Numba driver on its fourth threaded
# call (``cpu_kernels.drivers.PROMOTE_AFTER``), which is the code a program's loop runs.
WARM_UP = 4


def timed_together(fns: dict[str, Callable[[], object]], repeats: int, budget_s: float = 6.0) -> dict[str, list[float]]:
    """Seconds of each timed run of each implementation, after its warm-up; fewer runs of a slow one.

    The implementations take turns, run by run, so that a change in the machine's load (it is shared)
    falls on all of them alike instead of on whichever was being timed at that moment. Each turn starts
    with the next implementation, so that each follows every other equally often and whatever a run
    leaves behind does not always fall on the same one. Runs follow each other without a pause: after
    an idle moment the first run on this virtual machine is slower (ARGMIN [8192, 8192] over the last
    axis: 17.4 ms after 50 ms of sleep, 11.1 ms back to back).
    """
    counts = {}
    for who, fn in fns.items():
        for _ in range(WARM_UP):  # compiles, allocates, faults pages in
            fn()
        start = time.perf_counter()
        fn()  # the count of timed runs follows from this run's time, not the warm-up's
        second = time.perf_counter() - start
        counts[who] = max(3, min(repeats, int(budget_s / max(second, 1e-9))))
    times: dict[str, list[float]] = {who: [] for who in fns}
    names = list(fns)
    for turn in range(max(counts.values())):
        for who in names[turn % len(names):] + names[:turn % len(names)]:
            fn = fns[who]
            if turn < counts[who]:
                start = time.perf_counter()
                fn()
                times[who].append(time.perf_counter() - start)
    return times


def threaded_copy(src: np.ndarray, dst: np.ndarray, threads: int) -> Callable[[], None]:
    """``np.copyto`` over the shares opendml's kernels get (up to four per thread), on Python threads."""
    a, b = src.reshape(-1), dst.reshape(-1)
    parts = [(b[i:j], a[i:j]) for i, j in shares(a.size, threads)]
    return lambda: run_tasks(np.copyto, parts, threads) and None


def numba_copy(src: np.ndarray, dst: np.ndarray, threads: int) -> Callable[[], None] | None:
    """The same copy as a Numba-parallel loop over the same shares (started from native code, as the fast
    kernels are: Python threads pay about 0.3 ms a call to wake on 16 cores); None without Numba."""
    try:
        import numba

        from opendml.backends.cpu_kernels.drivers import bounds_of
    except ImportError:
        return None

    @numba.njit(nogil=True, parallel=True)
    def copy(a: np.ndarray, b: np.ndarray, bounds: np.ndarray) -> None:  # pragma: no cover - compiled
        for k in numba.prange(bounds.size - 1):
            b[bounds[k]:bounds[k + 1]] = a[bounds[k]:bounds[k + 1]]

    bits = np.dtype(f"u{src.itemsize}")  # Numba has no float16: the same bytes as unsigned integers
    a, b = src.reshape(-1).view(bits), dst.reshape(-1).view(bits)
    bounds = bounds_of(shares(a.size, threads))
    workers = min(threads, numba.config.NUMBA_NUM_THREADS)

    def run() -> None:
        numba.set_num_threads(workers)
        copy(a, b, bounds)

    return run


def per_call_us(repeats: int = 7, calls: int = 20000) -> dict[str, float]:
    """Microseconds per call of a 1024-element FLOAT32 CLIP into an existing output: opendml's functional
    ``clip`` (description, cached compiled operator, binding, execution) against ``np.clip``; the median of
    ``repeats`` batches of ``calls``, the two taking turns batch by batch."""
    x = np.random.default_rng(1).standard_normal(1024).astype(np.float32)
    out = np.empty_like(x)
    fns = {"opendml": lambda: dml.clip(x, -1.0, 1.0, out=out), "numpy": lambda: np.clip(x, -1.0, 1.0, out=out)}
    times: dict[str, list[float]] = {who: [] for who in fns}
    for fn in fns.values():
        fn()
    for _ in range(repeats):
        for who, fn in fns.items():
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            times[who].append((time.perf_counter() - start) / calls * 1e6)
    return {who: statistics.median(t) for who, t in times.items()}


# ONNX Runtime sessions, one small graph per row.


def ort_session(nodes: list, inputs: list, outputs: list, initializers: list | None = None):  # type: ignore
    return harness.ort_session(nodes, inputs, outputs, initializers, threads=available_cores())


def ort_unary(op: str, x: np.ndarray, attrs: dict | None = None, extra: list | None = None,  # type: ignore
              pre: list | None = None, out_type: int | None = None, out_shape: list | None = None,
              constants: list | None = None):
    """A one-operator session (after the ``pre`` nodes); ``extra`` are the operator's constant inputs."""
    from onnx import TensorProto, helper

    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    first = "t" if pre else "x"
    nodes = (pre or []) + [helper.make_node(op, [first] + [e.name for e in (extra or [])], ["y"], **(attrs or {}))]
    session = ort_session(nodes, [helper.make_tensor_value_info("x", elem, list(x.shape))],
                          [helper.make_tensor_value_info("y", out_type or elem, out_shape or list(x.shape))],
                          (extra or []) + (constants or []))
    del TensorProto
    return lambda: session.run(None, {"x": x})[0]


def ort_binary(op: str, a: np.ndarray, b: np.ndarray):  # type: ignore[no-untyped-def]
    """A one-operator session of two graph inputs, ``b`` broadcast by ONNX's (NumPy's) rule."""
    from onnx import helper

    elem = helper.np_dtype_to_tensor_dtype(a.dtype)
    session = ort_session([helper.make_node(op, ["a", "b"], ["y"])],
                          [helper.make_tensor_value_info("a", elem, list(a.shape)),
                           helper.make_tensor_value_info("b", elem, list(b.shape))],
                          [helper.make_tensor_value_info("y", elem, list(a.shape))])
    return lambda: session.run(None, {"a": a, "b": b})[0]


@dataclass
class Row:
    name: str
    shape: str
    moved_bytes: int  # what the operator reads and writes
    copy_bytes: int  # what the copy of the input moves
    times: dict[str, list[float]]

    def median_ms(self, who: str) -> float | None:
        """Milliseconds, the median of the timed runs; for ``copy`` the faster of the two copies."""
        if who == "copy":
            return min(statistics.median(t) * 1e3 for k, t in self.times.items() if k.startswith("copy"))
        return statistics.median(self.times[who]) * 1e3 if who in self.times else None


def bench(repeats: int, only: str = "") -> list[Row]:
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    threads = dml.Device().threads
    rows: list[Row] = []

    def add(name: str, shape: str, x: np.ndarray, out_nbytes: int, impls: dict[str, Callable[[], object]],
            check: Callable[[], bool] | None = None) -> None:
        if only.lower() not in name.lower():
            return
        copy_dst = np.empty_like(x)
        impls = {**impls, "copy": threaded_copy(x, copy_dst, threads)}
        fast_copy = numba_copy(x, copy_dst, threads)
        if fast_copy is not None:
            impls["copy-numba"] = fast_copy
        print(f"  {name} ...", flush=True)
        times = timed_together(impls, repeats)
        for who in impls:
            print(f"  {name:<36} {who:<12}{statistics.median(times[who]) * 1e3:9.2f} ms  (min "
                  f"{min(times[who]) * 1e3:.2f}, max {max(times[who]) * 1e3:.2f}, n={len(times[who])})")
        if check is not None and not check():
            raise SystemExit(f"{name}: opendml's result differs from a peer's on the same input")
        rows.append(Row(name, shape, x.nbytes + out_nbytes, 2 * x.nbytes, times))

    x = (rng.standard_normal(N) * 2).astype(np.float32)
    out = np.empty_like(x)
    ort_clip = ort_unary("Clip", x, extra=[numpy_helper.from_array(np.float32(-1), "lo"),
                                           numpy_helper.from_array(np.float32(1), "hi")])
    add("CLIP FLOAT32", "[2^26]", x, x.nbytes, {
        "opendml": lambda: dml.clip(x, -1.0, 1.0, out=out),
        "onnxruntime": ort_clip,
        "numpy": lambda: np.clip(x, -1.0, 1.0, out=out),
    }, lambda: np.array_equal(dml.clip(x, -1.0, 1.0), ort_clip()))

    scale, bias = np.float32(1.5), np.float32(0.25)
    mul_add = [helper.make_node("Mul", ["x", "s"], ["m"]), helper.make_node("Add", ["m", "b"], ["t"])]
    ort_sb = ort_unary("Clip", x, pre=mul_add, extra=[numpy_helper.from_array(np.float32(-1), "lo"),
                                                      numpy_helper.from_array(np.float32(1), "hi")],
                       constants=[numpy_helper.from_array(scale, "s"), numpy_helper.from_array(bias, "b")])

    def numpy_scale_bias() -> None:
        np.multiply(x, scale, out=out)
        np.add(out, bias, out=out)
        np.clip(out, -1.0, 1.0, out=out)

    add("CLIP FLOAT32 with ScaleBias", "[2^26]", x, x.nbytes, {
        "opendml": lambda: dml.clip(x, -1.0, 1.0, scale_bias=(1.5, 0.25), out=out),
        "onnxruntime": ort_sb,
        "numpy": numpy_scale_bias,
    }, lambda: np.array_equal(dml.clip(x, -1.0, 1.0, scale_bias=(1.5, 0.25)), ort_sb()))

    xi = rng.integers(-128, 128, N, dtype=np.int8)
    oi = np.empty_like(xi)
    ort_i8 = ort_unary("Clip", xi, extra=[numpy_helper.from_array(np.int8(-50), "lo"),
                                          numpy_helper.from_array(np.int8(50), "hi")])
    add("CLIP INT8", "[2^26]", xi, xi.nbytes, {
        "opendml": lambda: dml.clip(xi, -50, 50, out=oi),
        "onnxruntime": ort_i8,
        "numpy": lambda: np.clip(xi, -50, 50, out=oi),
    }, lambda: np.array_equal(dml.clip(xi, -50, 50), ort_i8()))

    ort_relu = ort_unary("Relu", x)
    add("THRESHOLD FLOAT32 (Min = 0)", "[2^26]", x, x.nbytes, {
        "opendml": lambda: dml.threshold(x, 0.0, out=out),
        "onnxruntime": ort_relu,
        "numpy": lambda: np.maximum(x, np.float32(0), out=out),
    }, lambda: np.array_equal(dml.threshold(x, 0.0), ort_relu()))

    q = rng.integers(0, 256, N, dtype=np.uint8)
    s_t, z_t = np.float32(0.0371), np.uint8(131)
    ort_dq = ort_unary("DequantizeLinear", q, extra=[numpy_helper.from_array(s_t, "s"),
                                                     numpy_helper.from_array(z_t, "z")],
                       out_type=TensorProto.FLOAT)
    add("DEQUANTIZE_LINEAR UINT8->FLOAT32 per-tensor", "[2^26]", q, 4 * q.nbytes, {
        "opendml": lambda: dml.dequantize_linear(q, s_t, z_t, out=out),
        "onnxruntime": ort_dq,
        "numpy": lambda: np.multiply((q.astype(np.int32) - np.int32(z_t)).astype(np.float32), s_t, out=out),
    }, lambda: np.array_equal(dml.dequantize_linear(q, s_t, z_t), ort_dq()))

    q2 = q.reshape(16384, 4096)
    s_c = (rng.random(4096, dtype=np.float32) * 0.1).astype(np.float32)
    z_c = rng.integers(0, 256, 4096, dtype=np.uint8)
    out2 = out.reshape(16384, 4096)
    ort_dqc = ort_unary("DequantizeLinear", q2, attrs={"axis": 1},
                        extra=[numpy_helper.from_array(s_c, "s"), numpy_helper.from_array(z_c, "z")],
                        out_type=TensorProto.FLOAT)
    add("DEQUANTIZE_LINEAR UINT8->FLOAT32 per-channel", "[16384, 4096] axis 1", q2, 4 * q2.nbytes, {
        "opendml": lambda: dml.dequantize_linear(q2, s_c, z_c, out=out2),
        "onnxruntime": ort_dqc,
        "numpy": lambda: np.multiply((q2.astype(np.int32) - z_c.astype(np.int32)).astype(np.float32), s_c,
                                     out=out2),
    }, lambda: np.array_equal(dml.dequantize_linear(q2, s_c, z_c), ort_dqc()))

    def arg_row(name: str, shape: tuple[int, ...], axis: int | None, largest: bool = False,
                values: np.ndarray = x) -> None:
        """ARGMIN (ARGMAX with ``largest``) over one axis or all of them, against ONNX Runtime and NumPy."""
        m = values.reshape(shape)
        onnx_op, np_arg, ours_fn = ("ArgMax", np.argmax, dml.argmax) if largest else ("ArgMin", np.argmin, dml.argmin)
        kept = [1 if axis in (None, k) else n for k, n in enumerate(shape)]  # the output's shape (keepdims)
        if axis is None:
            flat_pre = [helper.make_node("Reshape", ["x", "shape"], ["t"])]
            ort = ort_unary(onnx_op, m, attrs={"axis": 0, "keepdims": 1}, pre=flat_pre,
                            constants=[numpy_helper.from_array(np.array([-1], np.int64), "shape")],
                            out_type=TensorProto.INT64, out_shape=[1])
            np_fn: Callable[[], object] = lambda: np_arg(m)  # noqa: E731
        else:
            ort = ort_unary(onnx_op, m, attrs={"axis": axis, "keepdims": 1}, out_type=TensorProto.INT64,
                            out_shape=kept)
            np_out = np.empty(kept, np.intp)
            np_fn = lambda: np_arg(m, axis=axis, out=np_out, keepdims=True)  # noqa: E731
        # Into existing outputs where the library allows it, as the element-wise rows do: the time of the
        # operator, not of first touching a new output (2 MiB of int64 cost 1.2 ms in page faults here).
        dml_out = np.empty(kept, np.int64)
        ours = lambda: ours_fn(m, axes=axis, out=dml_out)  # noqa: E731
        add(name, str(list(shape)), m, 8 * math.prod(kept), {"opendml": ours, "onnxruntime": ort, "numpy": np_fn},
            lambda: np.array_equal(np.asarray(ours()).reshape(-1).copy(), np.asarray(ort()).reshape(-1)))

    arg_row("ARGMIN FLOAT32 last axis", (8192, 8192), 1)
    arg_row("ARGMIN FLOAT32 first axis", (8192, 8192), 0)
    arg_row("ARGMIN FLOAT32 last axis (short rows)", (262144, 256), 1)
    arg_row("ARGMIN FLOAT32 all axes", (8192, 8192), None)
    arg_row("ARGMAX FLOAT32 last axis", (8192, 8192), 1, largest=True)
    arg_row("ARGMAX FLOAT16 last axis", (8192, 8192), 1, largest=True, values=x.astype(np.float16))
    arg_row("ARGMAX FLOAT32 first axis", (8192, 8192), 0, largest=True)
    arg_row("ARGMAX FLOAT32 last axis (short rows)", (262144, 256), 1, largest=True)
    arg_row("ARGMAX FLOAT32 all axes", (8192, 8192), None, largest=True)

    def quantize_row(name: str, shape: tuple[int, ...], scale: np.ndarray, zero_point: np.ndarray,
                     axis: int | None) -> None:
        """QUANTIZE_LINEAR FLOAT32 -> UINT8 into an existing output; NumPy's is the formula, half to even."""
        m = (x * 40).reshape(shape)
        q_out = np.empty(shape, np.uint8)
        attrs = {} if axis is None else {"axis": axis}
        ort = ort_unary("QuantizeLinear", m, attrs=attrs, out_type=TensorProto.UINT8,
                        extra=[numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zero_point, "z")])
        work = np.empty(shape, np.float32)

        def numpy_quantize() -> None:
            np.divide(m, scale, out=work)
            np.rint(work, out=work)
            np.add(work, zero_point, out=work)
            np.clip(work, 0, 255, out=work)
            q_out[...] = work

        ours = lambda: dml.quantize_linear(m, scale, zero_point, out=q_out)  # noqa: E731
        add(name, str(list(shape)), m, q_out.nbytes, {"opendml": ours, "onnxruntime": ort, "numpy": numpy_quantize},
            lambda: np.array_equal(dml.quantize_linear(m, scale, zero_point), ort()))

    quantize_row("QUANTIZE_LINEAR FLOAT32->UINT8 per-tensor", (N,), np.float32(0.173), np.uint8(117), None)
    quantize_row("QUANTIZE_LINEAR FLOAT32->UINT8 per-channel", (16384, 4096),
                 (rng.random(4096, dtype=np.float32) * 0.5 + 0.1).astype(np.float32),
                 rng.integers(0, 256, 4096, dtype=np.uint8), 1)

    y = (rng.standard_normal(N) * 2 + 0.5).astype(np.float32)  # no zero: DIVIDE's row divides by it too
    row_bias = (rng.standard_normal(4096) * 2 + 0.5).astype(np.float32)
    for name, ours_fn, np_fn, onnx_op in BINARY:
        def binary_row(label: str, shape: tuple[int, ...], b: np.ndarray, f: Callable[..., Any] = ours_fn,
                       g: Callable[..., Any] = np_fn, op: str = onnx_op) -> None:
            a, o = x.reshape(shape), out.reshape(shape)
            ort = ort_binary(op, a, b)
            add(label, f"{list(shape)} and {list(b.shape)}", a, o.nbytes + b.nbytes, {
                "opendml": lambda: f(a, b, out=o),
                "onnxruntime": ort,
                "numpy": lambda: g(a, b, out=o),
            }, lambda: np.array_equal(f(a, b), ort()))

        binary_row(f"{name} FLOAT32", (N,), y)  # BTensor full-size: two streams read, one written
        binary_row(f"{name} FLOAT32 broadcast row", (16384, 4096), row_bias)  # BTensor's strides [0, 1]

    fused_chain_row(add, q2, rng)
    return rows


# The binary operators: DirectML's name, opendml's function, NumPy's ufunc, ONNX's operator.
BINARY: list[tuple[str, Callable[..., Any], Callable[..., Any], str]] = [
    ("ELEMENT_WISE_ADD", dml.add, np.add, "Add"),  # type: ignore[attr-defined]
    ("ELEMENT_WISE_SUBTRACT", dml.subtract, np.subtract, "Sub"),  # type: ignore[attr-defined]
    ("ELEMENT_WISE_MULTIPLY", dml.multiply, np.multiply, "Mul"),  # type: ignore[attr-defined]
    ("ELEMENT_WISE_DIVIDE", dml.divide, np.divide, "Div"),  # type: ignore[attr-defined]
]

CHAIN = "DEQUANTIZE -> ADD -> RELU -> QUANTIZE"


def padded(shape: tuple[int, ...], dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """An array and the raw bytes under it, rounded up to 16 bytes (a bound range's sizes fit)."""
    nbytes = math.prod(shape) * np.dtype(dtype).itemsize
    raw = np.zeros(-(-nbytes // 16) * 16, np.uint8)
    return raw[:nbytes].view(dtype).reshape(shape), raw


def fused_chain_row(add: Callable[..., None], q2: np.ndarray, rng: np.random.Generator) -> None:
    """UINT8 [16384, 4096] dequantized (per tensor), a FLOAT32 bias row added, RELU, quantized to UINT8 (per
    tensor): opendml's compiled graph (one kernel) against the same operators called one by one into
    existing arrays ("node by node", the target's baseline), ONNX Runtime running the same four nodes and
    NumPy's expression."""
    from onnx import TensorProto, helper, numpy_helper

    from opendml import graph as g

    shape = q2.shape
    s_in, z_in, s_out, z_out = np.float32(0.05), np.uint8(128), np.float32(0.04), np.uint8(3)
    bias = (rng.standard_normal((shape[1],)) * 2).astype(np.float32)
    device = dml.Device()
    graph = dml.Graph(device)
    full = list(shape)

    def broadcast(k: int, data_type: str, n: int = 1) -> g.Expression:  # a scalar, or a row of n
        return g.reinterpret(graph.input(k, dml.TensorDesc(data_type, [n])), sizes=full, strides=[0, int(n > 1)])

    x = graph.input(0, dml.TensorDesc("UINT8", full))
    scale, zero, b = broadcast(1, "FLOAT32"), broadcast(2, "UINT8"), broadcast(3, "FLOAT32", shape[1])
    scale_out, zero_out = broadcast(4, "FLOAT32"), broadcast(5, "UINT8")
    y = g.quantize_linear(g.relu(g.add(g.dequantize_linear(x, scale, zero), b)), scale_out, zero_out)  # type: ignore[attr-defined]
    compiled = device.compile_graph(graph.graph_desc([y]))
    if len(compiled.plan.steps) != 1:
        raise SystemExit(f"{CHAIN}: the plan runs {len(compiled.plan.steps)} kernels, not one")
    held = [padded(a.shape, a.dtype) for a in (q2, np.array([s_in]), np.array([z_in]), bias, np.array([s_out]),
                                               np.array([z_out]))]
    for (array, _), source in zip(held, (q2, [s_in], [z_in], bias, [s_out], [z_out])):
        array[...] = source
    result, result_raw = padded(shape, np.uint8)
    wrap = device.backend.wrap
    in_buffers, out_buffers = [wrap(device, raw) for _, raw in held], [wrap(device, result_raw)]

    f1, f2, f3 = (np.empty(shape, np.float32) for _ in range(3))
    by_node = np.empty(shape, np.uint8)

    def node_by_node() -> None:
        dml.dequantize_linear(q2, s_in, z_in, out=f1)
        dml.add(f1, bias, out=f2)  # type: ignore[attr-defined]
        dml.relu(f2, out=f3)  # type: ignore[attr-defined]
        dml.quantize_linear(f3, s_out, z_out, out=by_node)

    work = np.empty(shape, np.float32)
    np_out = np.empty(shape, np.uint8)

    def numpy_chain() -> None:
        np.subtract(q2, z_in, out=work, dtype=np.float32)  # exact: integers below 2^24
        np.multiply(work, s_in, out=work)
        np.add(work, bias, out=work)
        np.maximum(work, np.float32(0), out=work)
        np.divide(work, s_out, out=work)
        np.rint(work, out=work)
        np.add(work, z_out, out=work)
        np.clip(work, 0, 255, out=work)
        np_out[...] = work

    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["f"]), helper.make_node("Add", ["f", "b"], ["t"]),
             helper.make_node("Relu", ["t"], ["r"]), helper.make_node("QuantizeLinear", ["r", "s2", "z2"], ["y"])]
    constants = [numpy_helper.from_array(np.array(v), n) for v, n in ((s_in, "s"), (z_in, "z"), (bias, "b"),
                                                                     (s_out, "s2"), (z_out, "z2"))]
    session = ort_session(nodes, [helper.make_tensor_value_info("x", TensorProto.UINT8, list(shape))],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, list(shape))], constants)

    def ort() -> np.ndarray:
        return session.run(None, {"x": q2})[0]

    def same() -> bool:
        compiled.execute(in_buffers, out_buffers)
        node_by_node()
        numpy_chain()
        return all(np.array_equal(result, other) for other in (by_node, ort(), np_out))

    add(f"{CHAIN} fused", f"{list(shape)} and bias [{shape[1]}]", q2, result.nbytes + bias.nbytes, {
        "opendml": lambda: compiled.execute(in_buffers, out_buffers),
        "node by node": node_by_node,
        "onnxruntime": ort,
        "numpy": numpy_chain,
    }, same)


def write(rows: list[Row], header: dict[str, str], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "cpu.csv", "w", newline="") as f:
        for k, v in header.items():
            f.write(f"# {k}: {v}\n")
        w = csv.writer(f)
        w.writerow(["operator", "shape", "opendml_ms", "opendml_min_ms", "opendml_max_ms", "onnxruntime_ms",
                    "numpy_ms", "copy_ms", "ratio", "opendml_GBps", "copy_GBps", "of_copy", "node_by_node_ms",
                    "of_node_by_node"])
        for r in rows:
            ours = r.median_ms("opendml")
            peers = [t for t in (r.median_ms("onnxruntime"), r.median_ms("numpy")) if t is not None]
            ours_bw = r.moved_bytes / ours / 1e6
            copy_bw = r.copy_bytes / r.median_ms("copy") / 1e6  # type: ignore[operator]
            w.writerow([r.name, r.shape, f"{ours:.2f}", f"{min(r.times['opendml']) * 1e3:.2f}",
                        f"{max(r.times['opendml']) * 1e3:.2f}", f"{r.median_ms('onnxruntime'):.2f}",
                        f"{r.median_ms('numpy'):.2f}", f"{r.median_ms('copy'):.2f}", f"{min(peers) / ours:.2f}",
                        f"{ours_bw:.1f}", f"{copy_bw:.1f}", f"{ours_bw / copy_bw:.2f}",
                        *node_by_node_cells(r, ours)])


def node_by_node_cells(r: Row, ours: float | None) -> list[str]:
    """A fused row's node-by-node time and its speed-up (node by node over fused); blank on other rows."""
    alone = r.median_ms("node by node")
    return ["", ""] if alone is None or ours is None else [f"{alone:.2f}", f"{alone / ours:.2f}"]


def plot(rows: list[Row], header: dict[str, str], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    who = ["opendml", "onnxruntime", "numpy"]
    fig, ax = plt.subplots(figsize=(12, 6))
    width = 0.27
    for k, name in enumerate(who):
        bw = [r.moved_bytes / r.median_ms(name) / 1e6 for r in rows]  # type: ignore[operator]
        ax.bar([i + (k - 1) * width for i in range(len(rows))], bw, width, label=name)
    copy = [r.copy_bytes / r.median_ms("copy") / 1e6 for r in rows]  # type: ignore[operator]
    ax.scatter(range(len(rows)), copy, marker="_", s=900, color="black", label="copy (same threads)", zorder=3)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([r.name.replace("DEQUANTIZE_LINEAR", "DEQUANT") for r in rows], rotation=30, ha="right",
                       fontsize=8)
    ax.set_ylabel("GB/s (bytes the operator must move / median time)")
    ax.set_title(f"opendml CPU backend, 2^26 elements: {header['cores']} cores, {header['kernels']} kernels")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "cpu.png", dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9, help="timed runs per implementation (median reported)")
    parser.add_argument("--only", default="", help="run only the rows whose name contains this (no files written)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for cpu.csv and cpu.png")
    args = parser.parse_args()
    import onnxruntime

    header = {
        "cores": str(available_cores()),
        "threads": str(dml.Device().threads),
        "kernels": kernels().__name__.rsplit(".", 1)[-1],
        "load average at start": " ".join(f"{v:.2f}" for v in os.getloadavg()),
        "numpy": np.__version__,
        "onnxruntime": onnxruntime.__version__,
        "python": sys.version.split()[0],
    }
    print(", ".join(f"{k}: {v}" for k, v in header.items()))
    rows = bench(args.repeats, args.only)
    if args.only:
        return
    call = per_call_us()
    header["per call, 1024-element CLIP FLOAT32"] = (f"opendml {call['opendml']:.2f} us, np.clip "
                                                      f"{call['numpy']:.2f} us, {call['opendml'] / call['numpy']:.2f}x")
    print(f"  per call, 1024-element CLIP FLOAT32: {header['per call, 1024-element CLIP FLOAT32']}")
    header["load average at end"] = " ".join(f"{v:.2f}" for v in os.getloadavg())
    write(rows, header, args.out)
    plot(rows, header, args.out)
    print((args.out / "cpu.csv").read_text())


if __name__ == "__main__":
    main()
