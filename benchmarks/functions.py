"""The correctly rounded functions (ELEMENT_WISE_EXP ... ERF): time per call and accuracy, against NumPy's float32
functions, PyTorch and ONNX Runtime (where installed), on the CPU or on the GPU (``--device cuda``: CuPy arrays,
PyTorch's CUDA functions, and a device-to-device copy of the same bytes as the floor).

Each row is one function over ``--elements`` FLOAT32 values drawn from its domain (seeded): the median time of
``--repeats`` calls of each implementation (opendml's functional call with ``out=``), and each peer's accuracy on
the same inputs against opendml's results (correctly rounded: ``benchmarks/rounding.py --verify`` proves them on
every input): the share of its results that are not correctly rounded, and its largest error in ulps. opendml's
own error is at most 0.5 ulp, its wrong roundings 0.

    python benchmarks/functions.py                       # CPU, 2**22 elements a row
    python benchmarks/functions.py --device cuda --elements 268435456

Writes ``functions-<device>.csv`` and ``.png`` into ``benchmarks/results`` (or ``--out``).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness

sys.path.pop(0)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import opendml as dml
from opendml.rounded import FUNCTIONS

NUMPY_NAMES = {"ASIN": "arcsin", "ACOS": "arccos", "ATAN": "arctan", "ASINH": "arcsinh", "ACOSH": "arccosh",
               "ATANH": "arctanh"}
TORCH_NAMES = {"ASIN": "asin", "ACOS": "acos", "ATAN": "atan", "ASINH": "asinh", "ACOSH": "acosh", "ATANH": "atanh"}
ONNX_NAMES = {"EXP": "Exp", "LOG": "Log", "SIN": "Sin", "COS": "Cos", "TAN": "Tan", "ASIN": "Asin", "ACOS": "Acos",
              "ATAN": "Atan", "SINH": "Sinh", "COSH": "Cosh", "TANH": "Tanh", "ASINH": "Asinh", "ACOSH": "Acosh",
              "ATANH": "Atanh", "ERF": "Erf", "SIGMOID": "Sigmoid", "SOFTPLUS": "Softplus", "SOFTSIGN": "Softsign"}


def domain(name: str, count: int, rng: np.random.Generator) -> np.ndarray:
    """Inputs where the function is finite and nontrivial."""
    u = rng.uniform(-1, 1, count)
    values = {"EXP": 85 * u, "LOG": np.exp(80 * u), "ASIN": u, "ACOS": u, "ATANH": u, "ACOSH": 1 + np.exp(20 * u),
              "SINH": 85 * u, "COSH": 85 * u, "ERF": 5 * u, "TANH": 10 * u}.get(name, 100 * u)
    return values.astype(np.float32)


def ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    def ordered(v: np.ndarray) -> np.ndarray:
        i = v.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    same_nan = np.isnan(a) & np.isnan(b)
    return np.where(same_nan, 0, np.abs(ordered(a) - ordered(b)))


def median_us(fn: Callable[[], object], repeats: int, sync: Callable[[], None]) -> float:
    fn()
    sync()
    samples = []
    for _ in range(repeats):
        began = time.perf_counter()
        fn()
        sync()
        samples.append((time.perf_counter() - began) * 1e6)
    return statistics.median(samples)


def onnx_runner(name: str, x: np.ndarray) -> Callable[[], object] | None:
    try:
        import onnxruntime
        from onnx import TensorProto, helper
    except ImportError:
        return None
    if name not in ONNX_NAMES:  # GELU: opset 20's, which ONNX Runtime's CPU provider may not run
        return None
    node = helper.make_node(ONNX_NAMES[name], ["x"], ["y"])
    graph = helper.make_graph([node], "f", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(x)])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [len(x)])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    options = onnxruntime.SessionOptions()
    # Its worker threads would otherwise spin on the cores after each run, slowing the rows timed after it
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return lambda: session.run(None, {"x": x})[0]


def row(name: str, elements: int, repeats: int, device: str, xp: Any, torch: Any) -> dict[str, object]:
    host = domain(name, elements, np.random.default_rng(sum(map(ord, name))))
    x = xp.asarray(host)
    fn = getattr(dml, name.lower())
    out = fn(x)
    sync = (lambda: xp.cuda.Device().synchronize()) if device == "cuda" else (lambda: None)
    truth = np.asarray(out.get() if device == "cuda" else out)
    peers: dict[str, Callable[[], object]] = {"opendml": lambda: fn(x, out=out)}
    if device == "cuda":
        peers["copy"] = lambda: xp.copyto(out, x)
    else:
        numpy_fn = getattr(np, NUMPY_NAMES.get(name, name.lower()), None)
        if numpy_fn is not None:
            peers["numpy"] = lambda: numpy_fn(host)
        runner = onnx_runner(name, host)
        if runner is not None:
            peers["onnxruntime"] = runner
    if torch is not None:
        t = torch.as_tensor(x, device=device)
        torch_fn = getattr(torch, TORCH_NAMES.get(name, name.lower()))
        peers["torch"] = lambda: torch_fn(t)
    result: dict[str, object] = {"function": name, "elements": elements}
    for peer, call in peers.items():
        result[f"{peer}_us"] = round(median_us(call, repeats, sync), 1)
        if peer in ("opendml", "copy"):
            continue
        got = call()
        got = np.asarray(got.cpu() if hasattr(got, "cpu") else got)
        error = ulps(got, truth)
        result[f"{peer}_wrong_%"] = round(100 * float(np.mean(error > 0)), 3)
        result[f"{peer}_max_ulp"] = int(error.max())
    return result


def main() -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--elements", type=int, default=None)
    parser.add_argument("--functions", default=",".join(f for f in FUNCTIONS if hasattr(dml, f.lower())),
                        help="comma-separated names (default: every correctly rounded function with an operator of "
                             "its own: EXPM1 has none)")
    harness.add_repeats(parser, "timed calls a row (default 7)", 7)
    harness.add_out(parser)
    args = parser.parse_args()
    if args.device == "cuda":
        import cupy as xp
        elements = args.elements or 1 << 28
    else:
        xp, elements = np, args.elements or 1 << 22
    try:
        import torch
    except ImportError:
        torch = None
    rows = []
    for name in args.functions.split(","):
        print(f"  {name} ...", file=sys.stderr, flush=True)
        rows.append(row(name.strip().upper(), elements, args.repeats, args.device, xp, torch))
        print(rows[-1], flush=True)
    columns = sorted({k for r in rows for k in r}, key=lambda k: (k not in ("function", "elements"), k))
    path = Path(args.out) / f"functions-{args.device}.csv"
    harness.write_csv(path, {"device": args.device, "cpu": harness.cpu_model(), "commit": harness.commit()}, columns,
                      ([r.get(c, "") for c in columns] for r in rows))
    plt = harness.pyplot(lambda text: print(text, file=sys.stderr))
    if plt is not None:
        fig, ax = plt.subplots(figsize=(10, 4))
        peers = [c.removesuffix("_us") for c in columns if c.endswith("_us")]
        for k, peer in enumerate(peers):
            ax.bar([i + 0.8 * k / len(peers) for i in range(len(rows))], [r.get(f"{peer}_us", 0) for r in rows],
                   width=0.8 / len(peers), label=peer)
        ax.set_xticks(range(len(rows)), [str(r["function"]) for r in rows], rotation=45)
        ax.set_ylabel("us per call (lower is better)")
        ax.legend()
        harness.save(plt, fig, path.with_suffix(".png"), 120)


if __name__ == "__main__":
    main()
