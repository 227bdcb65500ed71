"""GPU bandwidth of opendml's CUDA backend against PyTorch eager, torch.compile, CuPy and a plain copy.

Effective bandwidth = (bytes read + bytes written, each once) / time, the median of many CUDA-event-timed
samples after warm-up, each sample five calls in a row. In the main table the contenders of a row (the copy,
opendml and each peer) take turns, one sample each per round, so that a drift of the GPU's clocks or
temperature during a row weighs on all of them alike instead of on whichever ran during it. Inputs of 2^28
elements dwarf the L2 cache; the size sweep rotates among several input sets so small sizes are not timed out
of the cache either.

Besides the hand-written rows, every operator declared with a functional function gets a row derived from its
declaration (``declared_makers``: FLOAT32 where it takes it; a binary operator full-size and with BTensor
broadcast), timed through that function with ``out=`` against PyTorch's function of the same meaning.

    python benchmarks/gpu.py                 # everything: table, size sweep, host cost, CSV and PNG
    python benchmarks/gpu.py --quick         # no torch.compile, fewer repetitions
"""

from __future__ import annotations

import argparse
import csv
import inspect
import math
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import cupy as cp
import numpy as np

import opendml as dml

try:
    import torch
except ImportError:  # the PyTorch columns are left empty
    torch = None

RESULTS = Path(__file__).parent / "results"
N = 2**28


def event_time_ms(fn: Callable[[], object], repeat: int, warmup: int = 3, back_to_back: int = 5) -> float:
    """Median milliseconds of one ``fn`` call, from CUDA events around ``back_to_back`` calls in a row.

    Calls in a row measure the steady state that a pipeline of operators sees: each call's host work
    overlaps the previous call's GPU work, for every implementation alike.
    """
    return turns_ms({"fn": fn}, repeat, warmup, back_to_back)["fn"]


def sample_ms(fn: Callable[[], object], back_to_back: int) -> float:
    """Milliseconds of one call of ``fn``, averaged over ``back_to_back`` calls in a row between two events."""
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(back_to_back):
        fn()
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) / back_to_back


def turns_ms(contenders: dict[str, Callable[[], object]], repeat: int, warmup: int = 3, back_to_back: int = 5
             ) -> dict[str, float]:
    """Median milliseconds of one call of each contender, sampled in turns: each round takes one sample of
    every contender, so all of them see the same GPU state (clocks, temperature) over the measurement."""
    for fn in contenders.values():
        for _ in range(warmup):
            fn()
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(repeat):
        for name, fn in contenders.items():
            times[name].append(sample_ms(fn, back_to_back))
    return {name: statistics.median(samples) for name, samples in times.items()}


@dataclass
class Row:
    name: str
    bytes_moved: int
    opendml: Callable[[], object]
    peers: dict[str, Callable[[], object] | None]


def as_torch(array: cp.ndarray) -> object:
    return torch.from_dlpack(array) if torch is not None else None


def compiled_operator(device: dml.Device, desc: object) -> dml.CompiledOperator:
    return device.compile_operator(device.create_operator(desc))


def buffer_of(device: dml.Device, array: cp.ndarray, size: int | None = None) -> dml.Buffer:
    """A buffer over a CuPy array's memory (rounded up to 16 bytes), so peers and opendml read the same bytes."""
    size = size or -(-array.nbytes // 16) * 16
    return device.backend.wrap(device, cp.ndarray((size,), cp.uint8, memptr=array.data))


def elementwise_row(device: dml.Device, name: str, data_type: str, desc_of: Callable, torch_fn: Callable | None,
                    cupy_fn: Callable, shape: tuple[int, ...] = (N,)) -> Row:
    dtype = dml.DataType.parse(data_type).numpy
    rng = cp.random.default_rng(0)
    if np.dtype(dtype).kind == "f":
        x = (rng.standard_normal(shape, dtype=cp.float32) * 2).astype(dtype)
    else:
        x = rng.integers(-128, 127, shape, dtype=cp.int64).astype(dtype)
    y = cp.empty_like(x)
    t = dml.TensorDesc(data_type, shape)
    op = compiled_operator(device, desc_of(t))
    bx, by = buffer_of(device, x), buffer_of(device, y)
    tx = as_torch(x)
    peers = {"torch": (lambda: torch_fn(tx)) if torch_fn and tx is not None else None,
             "torch.compile": torch.compile(torch_fn) if torch_fn and tx is not None else None,
             "cupy": lambda: cupy_fn(x)}
    if peers["torch.compile"] is not None:
        compiled = peers["torch.compile"]
        peers["torch.compile"] = lambda: compiled(tx)
    return Row(name, 2 * x.nbytes, lambda: op.execute([bx], [by]), peers)


def dequantize_row(device: dml.Device, name: str, shape: tuple[int, ...], per_channel: bool) -> Row:
    rng = cp.random.default_rng(1)
    x = rng.integers(0, 256, shape, dtype=cp.int32).astype(cp.uint8)
    channels = shape[-1] if per_channel else 1
    # Allocated with room to spare: a bound range is at least 16-byte granular, a tensor at least 4 bytes.
    scale = (rng.random(channels + 16, dtype=cp.float32) + 0.01)[:channels]
    zero_point = rng.integers(0, 256, channels + 16, dtype=cp.int32).astype(cp.uint8)[:channels]
    y = cp.empty(shape, cp.float32)
    rank = len(shape)
    bcast = [0] * (rank - 1) + ([1] if per_channel else [0])
    desc = dml.ElementWiseDequantizeLinearDesc(
        dml.TensorDesc("UINT8", shape), dml.TensorDesc("FLOAT32", shape, bcast),
        dml.TensorDesc("UINT8", shape, bcast), dml.TensorDesc("FLOAT32", shape))
    op = compiled_operator(device, desc)
    buffers = [buffer_of(device, a) for a in (x, scale, zero_point)]
    out = buffer_of(device, y)
    tx, ts, tz = (as_torch(a) for a in (x, scale, zero_point))

    def torch_fn(a, s, z):
        return (a.to(torch.int32) - z.to(torch.int32)).to(torch.float32) * s

    peers: dict[str, Callable[[], object] | None] = {
        "torch": (lambda: torch_fn(tx, ts, tz)) if torch is not None else None,
        "torch.compile": None,
        "cupy": lambda: (x.astype(cp.int32) - zero_point.astype(cp.int32)).astype(cp.float32) * scale,
    }
    if torch is not None:
        compiled = torch.compile(torch_fn)
        peers["torch.compile"] = lambda: compiled(tx, ts, tz)
    return Row(name, x.nbytes + y.nbytes, lambda: op.execute(buffers, [out]), peers)


def quantize_row(device: dml.Device, name: str, shape: tuple[int, ...], per_channel: bool) -> Row:
    """ELEMENT_WISE_QUANTIZE_LINEAR FLOAT32 -> UINT8, the scale and zero point per tensor or per column."""
    rng = cp.random.default_rng(3)
    x = rng.standard_normal(shape, dtype=cp.float32) * 40
    channels = shape[-1] if per_channel else 1
    scale = (rng.random(channels + 16, dtype=cp.float32) * 0.5 + 0.1)[:channels]
    zero_point = rng.integers(0, 256, channels + 16, dtype=cp.int32).astype(cp.uint8)[:channels]
    y = cp.empty(shape, cp.uint8)
    bcast = [0] * (len(shape) - 1) + ([1] if per_channel else [0])
    desc = dml.ElementWiseQuantizeLinearDesc(
        dml.TensorDesc("FLOAT32", shape), dml.TensorDesc("FLOAT32", shape, bcast),
        dml.TensorDesc("UINT8", shape, bcast), dml.TensorDesc("UINT8", shape))
    op = compiled_operator(device, desc)
    buffers = [buffer_of(device, a) for a in (x, scale, zero_point)]
    out = buffer_of(device, y)
    tx, ts, tz = (as_torch(a) for a in (x, scale, zero_point))

    def torch_fn(a, s, z):  # torch.round rounds half to even, as opendml does
        return torch.clamp(torch.round(a / s) + z.to(torch.float32), 0, 255).to(torch.uint8)

    peers: dict[str, Callable[[], object] | None] = {
        "torch": (lambda: torch_fn(tx, ts, tz)) if torch is not None else None,
        "torch.compile": None,
        "cupy": lambda: cp.clip(cp.rint(x / scale) + zero_point.astype(cp.float32), 0, 255).astype(cp.uint8),
    }
    if torch is not None:
        compiled = torch.compile(torch_fn)
        peers["torch.compile"] = lambda: compiled(tx, ts, tz)
    return Row(name, x.nbytes + y.nbytes, lambda: op.execute(buffers, [out]), peers)


def arg_row(device: dml.Device, name: str, shape: tuple[int, ...], axes: list[int], data_type: str = "FLOAT32",
            direction: str = "INCREASING", largest: bool = False) -> Row:
    """ARGMIN (ARGMAX with ``largest``) over ``axes``; the peers are torch's and CuPy's argmin (argmax)."""
    dtype = dml.DataType.parse(data_type).numpy
    x = cp.random.default_rng(2).standard_normal(shape, dtype=cp.float32).astype(dtype)
    out_shape = tuple(1 if k in axes else n for k, n in enumerate(shape))
    y = cp.empty(out_shape, cp.int64)
    desc_type = dml.ArgMaxDesc if largest else dml.ArgMinDesc
    desc = desc_type(dml.TensorDesc(data_type, shape), dml.TensorDesc("INT64", out_shape), axes, direction)
    op = compiled_operator(device, desc)
    bx, by = buffer_of(device, x), buffer_of(device, y)
    tx = as_torch(x)
    kept = [k for k in range(len(shape)) if k not in axes]
    torch_arg = (torch.argmax if largest else torch.argmin) if torch is not None else None
    cupy_arg = cp.argmax if largest else cp.argmin

    def torch_fn(a):
        if len(axes) == len(shape):
            return torch_arg(a)
        if len(axes) == 1:
            return torch_arg(a, dim=axes[0], keepdim=True)
        return torch_arg(a.permute(*kept, *axes).reshape(*(shape[k] for k in kept), -1), -1)

    def cupy_fn():
        if len(axes) == len(shape):
            return cupy_arg(x)
        if len(axes) == 1:
            return cupy_arg(x, axis=axes[0])
        return cupy_arg(x.transpose(*kept, *axes).reshape(*(shape[k] for k in kept), -1), -1)

    peers: dict[str, Callable[[], object] | None] = {
        "torch": (lambda: torch_fn(tx)) if tx is not None else None, "torch.compile": None, "cupy": cupy_fn}
    if tx is not None:
        compiled = torch.compile(torch_fn)
        peers["torch.compile"] = lambda: compiled(tx)
    return Row(name, x.nbytes + y.nbytes, lambda: op.execute([bx], [by]), peers)


def rows(device: dml.Device, only: str = "") -> Iterator[Row]:
    """The table's rows; with ``only``, those whose name contains one of its comma-separated parts (each row
    is built when it is timed, so the rows left out allocate nothing)."""
    parts = [part.strip().lower() for part in only.split(",")]
    return (make() for name, make in row_makers(device) if any(part in name.lower() for part in parts))


def lazy(make: Callable[..., Row], device: dml.Device, name: str, *args: object, **kwargs: object
         ) -> tuple[str, Callable[[], Row]]:
    return name, lambda: make(device, name, *args, **kwargs)


def row_makers(device: dml.Device) -> list[tuple[str, Callable[[], Row]]]:
    def clip(lo: float, hi: float, sb: tuple | None = None) -> Callable:
        return lambda t: dml.ElementWiseClipDesc(t, t, lo, hi, sb)

    return [
        lazy(elementwise_row, device, "CLIP FLOAT32", "FLOAT32", clip(-1, 1),
             lambda a: torch.clamp(a, -1, 1), lambda a: cp.clip(a, -1, 1)),
        lazy(elementwise_row, device, "CLIP FLOAT32 ScaleBias", "FLOAT32", clip(-1, 1, (0.5, 0.25)),
             lambda a: torch.clamp(a * 0.5 + 0.25, -1, 1), lambda a: cp.clip(a * 0.5 + 0.25, -1, 1)),
        lazy(elementwise_row, device, "CLIP FLOAT16", "FLOAT16", clip(-1, 1),
             lambda a: torch.clamp(a, -1, 1), lambda a: cp.clip(a, -1, 1)),
        lazy(elementwise_row, device, "CLIP INT8", "INT8", clip(-20, 20),
             lambda a: torch.clamp(a, -20, 20), lambda a: cp.clip(a, -20, 20)),
        lazy(elementwise_row, device, "THRESHOLD FLOAT32", "FLOAT32", lambda t: dml.ElementWiseThresholdDesc(t, t, 0.0),
             lambda a: torch.clamp_min(a, 0.0), lambda a: cp.maximum(a, 0)),
        lazy(dequantize_row, device, "DEQUANTIZE_LINEAR UINT8->FLOAT32 per-tensor", (N,), per_channel=False),
        lazy(dequantize_row, device, "DEQUANTIZE_LINEAR UINT8->FLOAT32 per-channel [65536,4096]", (65536, 4096), True),
        lazy(arg_row, device, "ARGMIN FLOAT32 all axes", (N,), [0]),
        lazy(arg_row, device, "ARGMIN FLOAT32 last axis [16384,16384]", (16384, 16384), [1]),
        lazy(arg_row, device, "ARGMIN FLOAT32 first axis [16384,16384]", (16384, 16384), [0]),
        lazy(arg_row, device, "ARGMIN FLOAT32 last axis [1048576,256]", (1048576, 256), [1]),
        lazy(arg_row, device, "ARGMIN FLOAT32 DECREASING last axis [16384,16384]", (16384, 16384), [1],
             direction="DECREASING"),
        lazy(arg_row, device, "ARGMIN FLOAT16 last axis [16384,16384]", (16384, 16384), [1], data_type="FLOAT16"),
        lazy(arg_row, device, "ARGMIN FLOAT32 axes {0,2} [512,1024,512]", (512, 1024, 512), [0, 2]),
        lazy(arg_row, device, "ARGMAX FLOAT32 all axes", (N,), [0], largest=True),
        lazy(arg_row, device, "ARGMAX FLOAT32 last axis [16384,16384]", (16384, 16384), [1], largest=True),
        lazy(arg_row, device, "ARGMAX FLOAT16 last axis [16384,16384]", (16384, 16384), [1], data_type="FLOAT16",
             largest=True),
        lazy(arg_row, device, "ARGMAX FLOAT32 first axis [16384,16384]", (16384, 16384), [0], largest=True),
        lazy(arg_row, device, "ARGMAX FLOAT32 last axis [1048576,256]", (1048576, 256), [1], largest=True),
        lazy(quantize_row, device, "QUANTIZE_LINEAR FLOAT32->UINT8 per-tensor", (N,), per_channel=False),
        lazy(quantize_row, device, "QUANTIZE_LINEAR FLOAT32->UINT8 per-channel [65536,4096]", (65536, 4096),
             True),
        *declared_makers(device),
    ]


# PyTorch's function for each declared operator's functional name, where it computes the same thing (the
# peers of the declared rows; an operator without one is timed against the copy and CuPy alone).
TORCH_OF = {
    "abs": "abs", "negate": "neg", "ceil": "ceil", "floor": "floor", "sqrt": "sqrt", "recip": "reciprocal",
    "relu": "relu", "sign": "sign", "round": "round", "is_nan": "isnan", "identity": "clone",
    "activation_identity": "clone", "bit_not": "bitwise_not", "logical_not": "logical_not",
    "add": "add", "subtract": "sub", "multiply": "mul", "divide": "div",
}
HAND_WRITTEN = {"ELEMENT_WISE_CLIP", "ELEMENT_WISE_THRESHOLD"}  # their rows above (with ScaleBias, INT8)
BROADCAST_SHAPE = (65536, 4096)  # a binary operator's rows: BTensor full-size, or one row broadcast down


def declared_type(definition: object) -> str:
    """The type a declared operator's row runs: FLOAT32 where its InputTensor (ATensor) takes it, else the
    widest type it takes."""
    first = definition.api.tensors[0]  # type: ignore[attr-defined]
    types = {t for row in definition.schema.rows for t in row.types.get(first, ())}  # type: ignore[attr-defined]
    if dml.DataType.FLOAT32 in types:
        return "FLOAT32"
    return max(types, key=lambda t: (t.size, t.name)).name


def declared_row(device: dml.Device, name: str, definition: object, broadcast: bool = False) -> Row:
    """A declared operator through its functional function on CuPy arrays (``out=``: no allocation; its host
    cost is under 2 % of a call of these sizes), its required scalars 0.5."""
    api = definition.api  # type: ignore[attr-defined]
    fn = getattr(dml, api.python)
    data_type = declared_type(definition)
    dtype = dml.DataType.parse(data_type).numpy
    rng = cp.random.default_rng(2)
    shapes = [BROADCAST_SHAPE if len(api.tensors) > 1 else (N,)] * len(api.tensors)
    if broadcast:
        shapes[-1] = BROADCAST_SHAPE[-1:]
    if np.dtype(dtype).kind == "f":
        arrays = [(rng.standard_normal(s, dtype=cp.float32) * 2).astype(dtype) for s in shapes]
    else:
        info = np.iinfo(dtype)
        arrays = [rng.integers(max(info.min, -1000), min(info.max, 1000), s, dtype=cp.int64).astype(dtype)
                  for s in shapes]
    scalars = [0.5 for p in inspect.signature(fn).parameters.values()
               if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty][len(arrays):]
    out = fn(*arrays, *scalars, device=device)
    moved = sum(a.nbytes for a in arrays) + out.nbytes
    peers: dict[str, Callable[[], object] | None] = {"torch": None, "torch.compile": None, "cupy": None}
    name_in_torch = TORCH_OF.get(api.python)
    if torch is not None and name_in_torch is not None:
        torch_fn = getattr(torch, name_in_torch)
        tensors = [as_torch(a) for a in arrays]
        compiled = torch.compile(torch_fn)
        peers["torch"] = lambda: torch_fn(*tensors)
        peers["torch.compile"] = lambda: compiled(*tensors)
    return Row(name, moved, lambda: fn(*arrays, *scalars, out=out, device=device), peers)


def declared_makers(device: dml.Device) -> list[tuple[str, Callable[[], Row]]]:
    """A row for each operator declared with a functional function (but those with rows of their own), and
    for a binary operator a second row with BTensor broadcast: derived from the declarations, so a new
    operator is benchmarked without a line here."""
    from opendml.ops import BY_NAME

    makers = []
    for op_name, definition in sorted(BY_NAME.items()):
        if definition.api is None or op_name in HAND_WRITTEN:
            continue
        label = f"{op_name.removeprefix('ELEMENT_WISE_')} {declared_type(definition)}"
        if len(definition.api.tensors) > 1:
            makers.append(lazy(declared_row, device, f"{label} {list(BROADCAST_SHAPE)}", definition))
            makers.append(lazy(declared_row, device, f"{label} BTensor broadcast [{BROADCAST_SHAPE[-1]}]", definition,
                               broadcast=True))
        else:
            makers.append(lazy(declared_row, device, label, definition))
    return makers


def copy_of(bytes_moved: int) -> Callable[[], object]:
    """A device-to-device copy moving ``bytes_moved`` bytes (half read, half written)."""
    src = cp.empty(max(bytes_moved // 2, 1), cp.uint8)
    dst = cp.empty_like(src)
    return lambda: cp.copyto(dst, src)


def main_table(device: dml.Device, repeat: int, quick: bool, only: str = "") -> list[dict]:
    results = []
    for row in rows(device, only):
        print(f"  {row.name} ...", file=sys.stderr, flush=True)
        entry = {"row": row.name, "bytes": row.bytes_moved}
        contenders = {"copy": copy_of(row.bytes_moved), "opendml": row.opendml}
        for peer, fn in row.peers.items():
            entry[peer] = math.nan
            if fn is None or (quick and peer == "torch.compile"):
                continue
            try:
                fn()  # compiles torch.compile's kernel; a peer that cannot run this row leaves its cell empty
                contenders[peer] = fn
            except Exception as error:
                print(f"    {peer} failed: {type(error).__name__}: {error}", file=sys.stderr)
        for name, ms in turns_ms(contenders, repeat).items():
            entry[name] = row.bytes_moved / ms / 1e6
        del contenders
        cp.get_default_memory_pool().free_all_blocks()
        if torch is not None:
            torch.cuda.empty_cache()
            # Rows share their peers' code objects: without a reset, torch.compile stops recompiling after
            # its limit (8) and runs the later rows eagerly.
            torch._dynamo.reset()
        results.append(entry)
    return results


def rotating(fn: Callable, argument_sets: list) -> Callable[[], object]:
    """A call of ``fn`` on the next of several argument sets each time, to keep the cache cold."""
    state = {"k": 0}

    def call() -> object:
        state["k"] = (state["k"] + 1) % len(argument_sets)
        return fn(*argument_sets[state["k"]])

    return call


def sweep(device: dml.Device, repeat: int) -> list[dict]:
    """CLIP FLOAT32 and ARGMIN over the last axis (rows of 512) from 2^12 to 2^28 elements."""
    l2 = cp.cuda.Device().attributes["L2CacheSize"]
    points = []
    for exponent in range(12, 29, 2):
        n = 2**exponent
        copies = max(1, math.ceil(4 * l2 / (8 * n)))  # rotate so the working set is 4x the L2
        for kind in ("CLIP FLOAT32", "ARGMIN last axis"):
            shape = (n,) if kind.startswith("CLIP") else (n // 512, 512)
            xs = [cp.random.default_rng(k).standard_normal(shape, dtype=cp.float32) for k in range(copies)]
            if kind.startswith("CLIP"):
                t = dml.TensorDesc("FLOAT32", shape)
                op = compiled_operator(device, dml.ElementWiseClipDesc(t, t, -1, 1))
                outs = [cp.empty_like(x) for x in xs]
                moved = 8 * n
                torch_fn = lambda a: torch.clamp(a, -1, 1)  # noqa: E731
            else:
                op = compiled_operator(device, dml.ArgMinDesc(dml.TensorDesc("FLOAT32", shape),
                                                              dml.TensorDesc("INT64", (shape[0], 1)), [1]))
                outs = [cp.empty((shape[0], 1), cp.int64) for _ in xs]
                moved = 4 * n + 8 * shape[0]
                torch_fn = lambda a: torch.argmin(a, dim=1)  # noqa: E731
            bound = [([buffer_of(device, x)], [buffer_of(device, y)]) for x, y in zip(xs, outs)]
            point = {"kind": kind, "elements": n,
                     "opendml": moved / event_time_ms(rotating(op.execute, bound), repeat) / 1e6}
            if torch is not None:
                txs = [(as_torch(x),) for x in xs]
                point["torch"] = moved / event_time_ms(rotating(torch_fn, txs), repeat) / 1e6
            points.append(point)
    return points


def host_cost(device: dml.Device, calls: int = 20000) -> dict:
    """Microseconds of host time per execute of a compiled 1024-element CLIP, next to PyTorch eager's."""
    t = dml.TensorDesc("FLOAT32", [1024])
    op = compiled_operator(device, dml.ElementWiseClipDesc(t, t, -1, 1))
    x = cp.random.default_rng(0).standard_normal(1024, dtype=cp.float32)
    y = cp.empty_like(x)
    bindings = ([dml.BufferBinding(buffer_of(device, x))], [dml.BufferBinding(buffer_of(device, y))])

    def per_call(fn: Callable[[], object]) -> float:
        for _ in range(200):
            fn()
        cp.cuda.get_current_stream().synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        elapsed = time.perf_counter() - start
        cp.cuda.get_current_stream().synchronize()
        return elapsed / calls * 1e6

    result = {"opendml_us": per_call(lambda: op.execute(*bindings))}
    if torch is not None:
        tx = as_torch(x)
        result["torch_us"] = per_call(lambda: torch.clamp(tx, -1, 1))
    return result


def check_correctness(device: dml.Device) -> None:
    """opendml on the GPU against PyTorch, on data where the two must agree exactly."""
    x = cp.random.default_rng(5).standard_normal((4096, 1000), dtype=cp.float32)
    assert cp.array_equal(dml.clip(x, -0.5, 0.5, device=device), cp.clip(x, -0.5, 0.5))
    assert cp.array_equal(dml.argmin(x, 1, device=device).reshape(-1), cp.argmin(x, 1))
    assert cp.array_equal(dml.argmin(x, 0, device=device).reshape(-1), cp.argmin(x, 0))
    assert cp.array_equal(dml.argmax(x, 1, device=device).reshape(-1), cp.argmax(x, 1))
    assert cp.array_equal(dml.argmax(x, 0, device=device).reshape(-1), cp.argmax(x, 0))
    scale, zero_point = cp.float32(0.0173), cp.uint8(117)
    expected = cp.clip(cp.rint(x / scale) + 117, 0, 255).astype(cp.uint8)
    assert cp.array_equal(dml.quantize_linear(x, scale, zero_point, device=device), expected)


def plot(table: list[dict], points: list[dict], path: Path, gpu_name: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(15, 6))
    names = [r["row"] for r in table]
    peers = ["opendml", "torch", "torch.compile", "cupy", "copy"]
    width = 0.16
    for k, peer in enumerate(peers):
        left.barh([i + k * width for i in range(len(names))], [r.get(peer, math.nan) for r in table], width,
                  label=peer)
    left.set_yticks([i + 2 * width for i in range(len(names))], names, fontsize=7)
    left.invert_yaxis()
    left.set_xlabel("GB/s (bytes read + written)")
    left.legend(fontsize=8)
    left.set_title(f"2^28 elements, {gpu_name}")
    for kind in ("CLIP FLOAT32", "ARGMIN last axis"):
        pts = [p for p in points if p["kind"] == kind]
        for peer, style in (("opendml", "-o"), ("torch", "--x")):
            if all(peer in p for p in pts):
                right.plot([p["elements"] for p in pts], [p[peer] for p in pts], style, label=f"{kind}: {peer}")
    right.set_xscale("log", base=2)
    right.set_xlabel("elements")
    right.set_ylabel("GB/s")
    right.legend(fontsize=8)
    right.set_title("size sweep")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def print_table(table: list[dict]) -> None:
    print(f"\n{'row':58} {'opendml':>8} {'torch':>8} {'compile':>8} {'cupy':>8} {'copy':>8} {'/copy':>6} {'/peer':>6}")
    for r in table:
        best = max((r[p] for p in ("torch", "torch.compile", "cupy") if not math.isnan(r[p])), default=math.nan)
        print(f"{r['row']:58} {r['opendml']:8.0f} {r['torch']:8.0f} {r['torch.compile']:8.0f} {r['cupy']:8.0f} "
              f"{r['copy']:8.0f} {r['opendml'] / r['copy']:6.2f} {r['opendml'] / best:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="skip torch.compile, fewer repetitions")
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--only", default="",
                        help="only the rows naming one of these comma-separated parts (no sweep, no files)")
    args = parser.parse_args()
    repeat = args.repeat or (10 if args.quick else 30)
    device = dml.Device("cuda")
    gpu_name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    slug = gpu_name.lower().replace("nvidia", "").strip().replace(" ", "-")
    check_correctness(device)
    print(f"opendml on {gpu_name}: main table", file=sys.stderr)
    table = main_table(device, repeat, args.quick, args.only)
    if args.only:
        print_table(table)
        return
    print("size sweep", file=sys.stderr)
    points = sweep(device, repeat)
    cost = host_cost(device)
    args.out.mkdir(parents=True, exist_ok=True)
    columns = ["row", "bytes", "opendml", "torch", "torch.compile", "cupy", "copy"]
    with open(args.out / f"gpu-{slug}.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns + ["opendml/copy", "opendml/best peer"])
        for r in table:
            best = max((r[p] for p in ("torch", "torch.compile", "cupy") if not math.isnan(r[p])), default=math.nan)
            writer.writerow([r[c] if isinstance(r[c], (str, int)) else f"{r[c]:.1f}" for c in columns]
                            + [f"{r['opendml'] / r['copy']:.3f}", f"{r['opendml'] / best:.3f}"])
    with open(args.out / f"gpu-{slug}-sweep.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["kind", "elements", "opendml", "torch"])
        writer.writeheader()
        writer.writerows(points)
    plot(table, points, args.out / f"gpu-{slug}.png", gpu_name)
    print_table(table)
    print(f"host cost per execute (1024-element CLIP): opendml {cost['opendml_us']:.1f} us, "
          f"PyTorch eager {cost.get('torch_us', math.nan):.1f} us")


if __name__ == "__main__":
    main()
