"""Correct rounding, proven on every input: the hard-case tables of ``opendml.rounded`` built, and each function
checked against an independent reference on all 2**32 FLOAT32 inputs (and so all 2**16 FLOAT16 ones).

``--build`` sweeps every FLOAT32 input of each function: its double-precision value (CUDA's functions through
CuPy where a GPU is present, else NumPy's) and that value's distance to the nearest midpoint of FLOAT32 and of
FLOAT16 (``opendml.rounded.method``); every input within ``BUILD`` ulps of one is evaluated again by mpmath at
320 and 400 bits, rounded exactly (both must agree), and stored with its correctly rounded results in
``opendml/rounded/tables/NAME.npz`` (``f32_in``/``f32_out``, ``f16_in``/``f16_out``: input bits sorted, result
bits; a FLOAT16 result is stored as the FLOAT32 that holds it).

``--verify`` runs opendml's operator (the functional API on CuPy arrays where a GPU is present, else NumPy ones)
on every input and compares it with a reference computed apart: the double value, rounded, where it is farther
than ``REFERENCE_NEAR`` (1024) ulps from a midpoint, else mpmath's (at 320 bits, rounded exactly). It prints,
per function and precision, the inputs compared, the wrong roundings (the target is 0) and the largest error in
ulps, and writes ``rounding-<device>.csv``.

    python benchmarks/rounding.py --build [--functions EXP,LOG]
    python benchmarks/rounding.py --verify [--functions EXP] [--limit 2**24]
    python benchmarks/rounding.py --pairs 10**9

``--against-exact`` compares, on every input, opendml's operator on the CPU (the compiled kernels: the vector-code
evaluations of ``cpu_kernels.fast_functions`` where a function has one) with its exact path
(``opendml.rounded.evaluate``: NumPy's double function, the rounding test and the table), bit for bit: minutes
per function on a CPU, where ``--verify``'s independent reference takes twenty.

    python benchmarks/rounding.py --against-exact --functions SINH,COSH

``--pairs N`` checks the binary functions (POW, ATAN_YX: ``opendml.rounded.binary``, no table) on N random
FLOAT32 pairs each, at both precisions, and the known exact midpoints: opendml's operator against the double
function rounded, or, within REFERENCE_NEAR ulps of a midpoint, the mpmath model of tests/rounding_oracle.py.

mpmath is needed (``pip install mpmath``); CuPy for the GPU. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# The compiled kernels are what is verified: never the NumPy path a first call runs on while they compile.
os.environ.setdefault("OPENDML_TIERED", "0")

from opendml.rounded import BUILD, FUNCTIONS, PRECISIONS, Precision  # noqa: E402
from opendml.rounded.method import midpoint_distances  # noqa: E402

TABLES = ROOT / "opendml" / "rounded" / "tables"
RESULTS = ROOT / "benchmarks" / "results"
CHUNK = 1 << 26
REFERENCE_NEAR = 1024
PRECISION_BITS = {"FLOAT32": (24, -149), "FLOAT16": (11, -24)}  # significant bits, exponent of the least ulp


def gpu() -> Any:
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception:  # no CuPy, no driver or no device: the CPU sweeps
        return None


def double_function(name: str, xp: Any) -> Callable[[Any], Any]:
    """The function in double precision on ``xp``'s arrays (CUDA's functions through CuPy, or NumPy's)."""
    entry = FUNCTIONS[name]
    if xp is np:
        return entry.numpy
    if entry.c_source:  # a formula of the catalog's own: its CUDA device function, as the kernels run it
        kernel = xp.ElementwiseKernel("float64 x", "float64 y", f"y = {entry.c}(x)", f"opendml_{name.lower()}",
                                      preamble=entry.c_source)
        return kernel  # type: ignore[no-any-return]
    if name == "ERF":
        from cupyx.scipy.special import erf
        return erf  # type: ignore[no-any-return]
    return getattr(xp, {"ASIN": "arcsin", "ACOS": "arccos", "ATAN": "arctan", "ASINH": "arcsinh",
                        "ACOSH": "arccosh", "ATANH": "arctanh"}.get(name, name.lower()))  # type: ignore[no-any-return]


FIRST = 0  # the first input bit pattern swept (``--first``)
ONLY = frozenset(PRECISIONS)  # the precisions verified (``--precision``)


def chunks(limit: int) -> Iterator[tuple[int, int]]:
    """Ranges of input bit patterns: ``limit`` of them from FIRST (wrapping past 2**32)."""
    for start in range(0, limit, CHUNK):
        yield FIRST + start, FIRST + min(start + CHUNK, limit)


def inputs(xp: Any, start: int, stop: int) -> Any:
    return (xp.arange(start, stop, dtype=xp.uint64) & 0xFFFFFFFF).astype(xp.uint32).view(xp.float32)


def numba_sweep(name: str) -> Callable[[int, int, int], np.ndarray]:
    """Without a GPU: a Numba kernel over a range of input bits giving, per input, bit 0 set where its double
    value (the C library's) is finite and within ``within`` ulps of a FLOAT32 midpoint, bit 1 of a FLOAT16 one."""
    import math

    from numba import njit, prange

    from opendml.backends.cpu_kernels.rounded import _distance, _double_bits

    f = FUNCTIONS[name].scalar
    base32, lowest32, top32 = PRECISIONS["FLOAT32"].base, PRECISIONS["FLOAT32"].lowest, PRECISIONS["FLOAT32"].top
    base16, lowest16, top16 = PRECISIONS["FLOAT16"].base, PRECISIONS["FLOAT16"].lowest, PRECISIONS["FLOAT16"].top

    @njit(parallel=True)
    def sweep(start, stop, within):  # type: ignore[no-untyped-def]
        flags = np.zeros(stop - start, np.uint8)
        bits = np.arange(start, stop).astype(np.uint32).view(np.float32)
        for i in prange(stop - start):
            y = f(np.float64(bits[i]))
            if math.isfinite(y):
                b = _double_bits(y)
                flags[i] = (_distance(b, base32, lowest32, top32) <= within) | (
                    (_distance(b, base16, lowest16, top16) <= within) << 1)
        return flags

    return sweep  # type: ignore[no-any-return]


def candidates(name: str, xp: Any, limit: int, within: int) -> dict[str, np.ndarray]:
    """For each precision, the input bits (uint32) whose double value is finite and within ``within`` ulps of
    one of its midpoints (one evaluation of the function for both)."""
    found: dict[str, list[Any]] = {p: [] for p in PRECISIONS}
    if xp is np:
        sweep = numba_sweep(name)
        for start, stop in chunks(limit):
            flags = sweep(start, stop, within)
            for bit, p in enumerate(PRECISIONS):
                found[p].append(np.flatnonzero(flags & (1 << bit)).astype(np.uint64) + start)
            progress(name, "sweep", stop - FIRST, limit)
        return {p: np.concatenate(parts).astype(np.uint32) for p, parts in found.items()}
    f = double_function(name, xp)
    for start, stop in chunks(limit):
        x = inputs(xp, start, stop)
        with np.errstate(all="ignore"):
            y = f(x.astype(xp.float64))
            finite = xp.isfinite(y)
            y = xp.where(finite, y, 0.0)
            for p, grid in PRECISIONS.items():
                near = finite & (midpoint_distances(y, grid) <= within)
                found[p].append(xp.nonzero(near)[0].astype(xp.uint64) + start)
        progress(name, "sweep", stop - FIRST, limit)
    return {p: np.concatenate([a.get() if xp is not np else a for a in parts]).astype(np.uint32)
            for p, parts in found.items()}


def progress(name: str, precision: str, done: int, limit: int) -> None:
    print(f"\r  {name} {precision}: {done / limit:6.1%}", end="" if done < limit else "\n", file=sys.stderr,
          flush=True)


def exact(name: str, x: float, precision: str, bits: int) -> float:
    """``f(x)`` rounded once to the format, from mpmath's value at ``bits`` bits (a float; the format's largest
    value exceeded: infinity)."""
    import mpmath

    significant, least = PRECISION_BITS[precision]
    with mpmath.workprec(bits):
        mp = FUNCTIONS[name].mp
        value = (mp if callable(mp) else getattr(mpmath, mp))(mpmath.mpf(float(x)))
        if not isinstance(value, mpmath.mpf) or not mpmath.isfinite(value) or value == 0:
            return float(value) if isinstance(value, mpmath.mpf) else float("nan")
        sign, man, exp, _ = value._mpf_
        top = exp + man.bit_length() - 1  # value in [2**top, 2**(top + 1))
        ulp = max(top - significant + 1, least)
        shift = ulp - exp
        if shift <= 0:
            kept = man << -shift
        else:
            kept, low = man >> shift, man & ((1 << shift) - 1)
            half = 1 << (shift - 1)
            if low > half or (low == half and kept & 1):
                kept += 1
        try:
            magnitude = float(mpmath.ldexp(kept, ulp))
        except OverflowError:
            magnitude = float("inf")
        if magnitude >= PRECISIONS[precision].top:  # rounded to the format's 2**emax or beyond: infinity
            magnitude = float("inf")
    return -magnitude if sign else magnitude


def resolve(name: str, bits: np.ndarray, precision: str) -> np.ndarray:
    """The correctly rounded results' FLOAT32 bits of these inputs (two precisions of mpmath must agree)."""
    out = np.empty(len(bits), np.float32)
    for i, x in enumerate(bits.view(np.float32)):
        if i % 4096 == 0 and len(bits) > 4096:
            progress(name, f"{precision} hard cases", i, len(bits))
        a, b = exact(name, float(x), precision, 320), exact(name, float(x), precision, 400)
        if not (a == b or (a != a and b != b)):
            raise SystemExit(f"{name}({x!r}): mpmath at 320 and 400 bits round apart ({a!r}, {b!r})")
        with np.errstate(over="ignore"):
            out[i] = np.float32(a)  # exact: a holds the format's value (or infinity)
    return out.view(np.uint32)


def build(names: list[str], limit: int) -> None:
    xp = gpu() or np
    TABLES.mkdir(parents=True, exist_ok=True)
    for name in names:
        began = time.perf_counter()
        arrays = {}
        for precision, bits in candidates(name, xp, limit, BUILD).items():
            key = {"FLOAT32": "f32", "FLOAT16": "f16"}[precision]
            bits = np.sort(bits)
            arrays[f"{key}_in"], arrays[f"{key}_out"] = bits, resolve(name, bits, precision)
        np.savez_compressed(TABLES / f"{name}.npz", **arrays)
        print(f"{name}: {len(arrays['f32_in'])} FLOAT32 and {len(arrays['f16_in'])} FLOAT16 hard cases "
              f"({time.perf_counter() - began:.0f} s)", flush=True)


# The reference's double functions for the catalog's own formulas, built apart from the catalog's (CuPy's or NumPy's
# functions; their error stays far inside REFERENCE_NEAR's ulps, the mpmath model decides the rest).
FORMULAS: dict[str, Callable[[Any, Any], Any]] = {
    "SIGMOID": lambda xp, x: 1.0 / (1.0 + xp.exp(-x)),
    "SOFTSIGN": lambda xp, x: xp.where(xp.isinf(x), xp.sign(x), x / (1.0 + xp.abs(x))),  # the limits at +-inf
    "EXPM1": lambda xp, x: xp.expm1(x),
    "SOFTPLUS": lambda xp, x: xp.logaddexp(0.0, x),
    "GELU": lambda xp, x: xp.where(xp.isinf(x), xp.where(x > 0, x, -0.0), x * 0.5 * _erfc(xp)(-x / np.sqrt(2.0))),
}


# Where a function is its leading term plus a tail of known sign below half a double ulp of it (GELU's large and tiny
# inputs, SOFTPLUS's large ones: the math, not the catalog's code), the exact value lies just off the leading term
# on the tail's side: rounded from the leading term moved one double ulp that way, with no mpmath call (GELU's odd
# subnormal inputs alone would be millions of ties). Each: the inputs, the leading term, the tail's sign.
TAILS: dict[str, list[tuple[Callable[[Any, Any], Any], Callable[[Any], Any], float]]] = {
    "GELU": [(lambda xp, x: (x >= 10.0) & ~xp.isinf(x), lambda x: x, -1.0),
             (lambda xp, x: (xp.abs(x) <= 2.0**-60) & (x != 0), lambda x: x * 0.5, 1.0)],
    "SOFTPLUS": [(lambda xp, x: (x >= 40.0) & ~xp.isinf(x), lambda x: x, 1.0)],
}


def _erfc(xp: Any) -> Callable[[Any], Any]:
    if xp is np:
        import math
        return np.frompyfunc(math.erfc, 1, 1)  # type: ignore[no-any-return]
    from cupyx.scipy.special import erfc
    return erfc  # type: ignore[no-any-return]


def reference(name: str, x: Any, precision: Precision, xp: Any) -> Any:
    """Correctly rounded values of ``x`` (a chunk of inputs, on ``xp``), computed apart from opendml's kernels."""
    from opendml.rounded.method import rounds_to

    with np.errstate(all="ignore"):
        f = FORMULAS.get(name)
        y = (f(xp, x.astype(xp.float64)) if f else double_function(name, xp)(x.astype(xp.float64))).astype(xp.float64)
        finite = xp.isfinite(y)
        safe = xp.where(finite, y, 0.0)
        near = finite & (midpoint_distances(safe, precision) <= REFERENCE_NEAR)
        for where, lead, side in TAILS.get(name, ()):
            inside = where(xp, x.astype(xp.float64))
            moved = xp.nextafter(lead(x.astype(xp.float64)), side * np.inf)
            safe, near = xp.where(inside, moved, safe), near & ~inside
        rounded = xp.where(finite, rounds_to(safe, precision), y).astype(xp.float32)
    hard = xp.nonzero(near)[0]
    if len(hard):
        x_host = x[hard].get() if xp is not np else x[hard]
        rounded[hard] = xp.asarray(resolve(name, x_host.view(np.uint32), precision.name).view(np.float32))
    return rounded


def ulps(xp: Any, a: Any, b: Any) -> Any:
    """Distance in FLOAT32 ulps by the ordered bit patterns (NaN against NaN: 0)."""
    def ordered(v: Any) -> Any:
        i = v.view(xp.int32).astype(xp.int64)
        return xp.where(i < 0, -(i & 0x7FFFFFFF), i)
    both_nan = xp.isnan(a) & xp.isnan(b)
    return xp.where(both_nan, 0, xp.abs(ordered(a) - ordered(b)))


def verify(names: list[str], limit: int) -> list[dict[str, object]]:
    import opendml as dml

    xp = gpu() or np
    rows = []
    for name in names:
        fn = getattr(dml, name.lower(), None)
        if fn is None:  # a function no operator computes alone (EXPM1): its operators' tests check it
            print(f"{name}: no operator of its own, not verified here", flush=True)
            continue
        for precision in PRECISIONS.values():
            if precision.name not in ONLY:
                continue
            wrong, worst, began = 0, 0, time.perf_counter()
            count = limit if precision.name == "FLOAT32" else 1 << 16
            for start, stop in chunks(count):
                if precision.name == "FLOAT32":
                    x = inputs(xp, start, stop)
                    got = fn(x)
                else:  # every FLOAT16 input
                    x = xp.arange(start, stop, dtype=xp.uint32).astype(xp.uint16).view(xp.float16)
                    got, x = fn(x).astype(xp.float32), x.astype(xp.float32)
                want = reference(name, x, precision, xp)
                differ = (got.view(xp.uint32) != want.view(xp.uint32)) & ~(xp.isnan(got) & xp.isnan(want))
                wrong += int(differ.sum())
                worst = max(worst, int(ulps(xp, got, want).max()))
                progress(name, precision.name, stop - FIRST, count)
            rows.append({"function": name, "precision": precision.name, "inputs": count, "wrong": wrong,
                         "max_ulp": worst, "seconds": round(time.perf_counter() - began, 1)})
            print(f"{name:6} {precision.name:8} wrong {wrong:>6}  max error {worst} ulp", flush=True)
    return rows


def against_exact(names: list[str], limit: int) -> None:
    """Every input (``--first``, ``--limit``) of each function at each precision through opendml's operator on
    NumPy arrays against ``opendml.rounded.evaluate``, bits (NaN as NaN: payloads are the library's)."""
    import opendml as dml
    from opendml.rounded.evaluate import evaluate

    for name in names:
        fn = getattr(dml, name.lower(), None)
        if fn is None:
            print(f"{name}: no operator of its own, not compared here", flush=True)
            continue
        for precision in (p for p in PRECISIONS.values() if p.name in ONLY):
            wrong, began = 0, time.perf_counter()
            count = limit if precision.name == "FLOAT32" else 1 << 16
            for start, stop in chunks(count):
                if precision.name == "FLOAT32":
                    x = inputs(np, start, stop)
                    got = np.asarray(fn(x))
                else:
                    x = np.arange(start, stop, dtype=np.uint32).astype(np.uint16).view(np.float16)
                    got, x = np.asarray(fn(x)).astype(np.float32), x.astype(np.float32)
                want = evaluate(name, x, precision.name)
                differ = (got.view(np.uint32) != want.view(np.uint32)) & ~(np.isnan(got) & np.isnan(want))
                wrong += int(differ.sum())
                progress(name, precision.name, stop - FIRST, count)
            print(f"{name:6} {precision.name:8} differ from the exact path {wrong:>6}  "
                  f"({time.perf_counter() - began:.0f} s)", flush=True)


def random_pairs(name: str, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``count`` random FLOAT32 pairs: ATAN_YX's of random bit patterns (every finite value alike); POW's bases of
    random positive bit patterns (a third negative, with an integral exponent) and exponents that put the power
    anywhere in FLOAT32's range and a little beyond (a random pair of bit patterns overflows or underflows)."""
    bits = rng.integers(0, 0x7F800000, (2, count), dtype=np.uint32)
    a, b = bits.view(np.float32)
    if name == "ATAN_YX":
        signs = rng.integers(0, 4, count, dtype=np.uint32)
        return (a.view(np.uint32) | ((signs & 1) << 31)).view(np.float32), \
            (b.view(np.uint32) | ((signs >> 1) << 31)).view(np.float32)
    with np.errstate(all="ignore"):
        target = rng.uniform(-152.0, 130.0, count)
        e = (target / np.log2(a.astype(np.float64))).astype(np.float32)
    integral = rng.integers(0, 3, count) == 0
    e = np.where(integral, np.round(e), e).astype(np.float32)
    a = np.where(integral, -a, a).astype(np.float32)
    return a, e


def pairs(count: int) -> list[dict[str, Any]]:
    """POW and ATAN_YX (``opendml.rounded.binary``) on ``count`` random pairs each and the known exact cases:
    opendml's operator against the double function rounded where it lies farther than REFERENCE_NEAR ulps from
    a midpoint, else the mpmath model of tests/rounding_oracle.py (300 bits, exact midpoints found)."""
    import opendml as dml
    from opendml.rounded.binary import BINARY_FUNCTIONS
    from tests.rounding_oracle import correctly_rounded_pair

    xp = gpu() or np
    rng = np.random.default_rng(2024)
    exact = [(1 + 2**-12, 2.0), (1 + 2**-8, 3.0), (1 + 2**-10 + 2**-22, 0.5), (9.0, 0.5), (2.0, -150.0),
             (-(1 + 2**-8), 3.0), (1 - 2**-12, 2.0), (2.0, -149.0)]
    rows = []
    for name in BINARY_FUNCTIONS:
        function = {"POW": dml.pow, "ATAN_YX": dml.atan_yx}[name]
        double = {"POW": np.power, "ATAN_YX": np.arctan2}[name]
        for precision in PRECISIONS.values():
            fmt = np.float32 if precision.name == "FLOAT32" else np.float16
            compared = wrong = near = 0
            started = time.perf_counter()
            for first in range(0, count + len(exact), CHUNK):
                size = min(CHUNK, count - first)
                a, b = random_pairs(name, max(size, 0), rng)
                if first == 0 and name == "POW":
                    a = np.concatenate([a, np.float32([x for x, _ in exact])])
                    b = np.concatenate([b, np.float32([y for _, y in exact])])
                if len(a) == 0:
                    break
                with np.errstate(over="ignore"):  # FLOAT16 inputs: the casts overflow to infinity, as meant
                    got = function(xp.asarray(a.astype(fmt)), xp.asarray(b.astype(fmt)))
                got = np.asarray(got.get() if hasattr(got, "get") else got).astype(np.float32)
                if fmt is np.float16:
                    with np.errstate(over="ignore"):
                        a, b = a.astype(np.float16).astype(np.float32), b.astype(np.float16).astype(np.float32)
                with np.errstate(all="ignore"):
                    y = double(a.astype(np.float64), b.astype(np.float64))
                    want = y.astype(fmt).astype(np.float32)
                    finite = np.isfinite(y)
                    close = finite & (midpoint_distances(np.where(finite, y, 0.0), precision) <= REFERENCE_NEAR)
                for k in np.flatnonzero(close):
                    want[k] = correctly_rounded_pair(name, float(a[k]), float(b[k]), precision.name)
                same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
                compared, wrong, near = compared + len(a), wrong + int((~same).sum()), near + int(close.sum())
                for k in np.flatnonzero(~same)[:5]:
                    print(f"  {name} {precision.name} ({a[k]!r}, {b[k]!r}): {got[k]!r}, expected {want[k]!r}",
                          file=sys.stderr)
            seconds = time.perf_counter() - started
            rows.append({"function": name, "precision": precision.name, "pairs": compared, "near": near,
                         "wrong": wrong, "seconds": round(seconds, 1)})
            print(f"{name:7} {precision.name:8} pairs {compared:>12} near a midpoint {near:>8} wrong {wrong:>4}"
                  f"  {seconds:.1f} s", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", action="store_true", help="build the hard-case tables")
    parser.add_argument("--verify", action="store_true", help="check opendml against the reference")
    parser.add_argument("--functions", default=",".join(FUNCTIONS), help="comma-separated names (EXP,LOG,...)")
    parser.add_argument("--limit", type=lambda s: int(eval(s, {})), default=1 << 32,
                        help="inputs swept (default every one: 2**32)")
    parser.add_argument("--first", type=lambda s: int(eval(s, {})), default=0, help="the first bit pattern swept")
    parser.add_argument("--precision", choices=sorted(PRECISIONS), default=None,
                        help="verify one precision only (FLOAT16: every one of the 2**16 inputs, seconds on a CPU)")
    parser.add_argument("--against-exact", action="store_true",
                        help="compare the CPU's compiled kernels with the exact path on every input")
    parser.add_argument("--pairs", type=lambda s: int(eval(s, {})), default=0,
                        help="check POW and ATAN_YX on this many random pairs each (and the known exact cases)")
    args = parser.parse_args()
    names = [n.strip().upper() for n in args.functions.split(",") if n.strip()]
    global FIRST, ONLY
    FIRST = args.first
    ONLY = frozenset([args.precision]) if args.precision else frozenset(PRECISIONS)
    if args.build:
        build(names, args.limit)
    if args.verify:
        verify(names, args.limit)
    if args.against_exact:
        against_exact(names, args.limit)
    if args.pairs:
        pairs(args.pairs)


if __name__ == "__main__":
    main()
