"""ARGMIN on tensors large enough to cross every threshold of the CPU engines, against the independent oracle.

The other ARGMIN tests compare large tensors only with opendml's own NumPy reference, and the oracle
(``tests/elementwise_oracle.py``) sees a few dozen elements. Here each case is built to take one path of
the engines' plan (threads, split runs, split columns, split rows) or to cross one of their block sizes
(ROW_BLOCK, ROW_BATCH, COLUMN_TILE, ROW_CHUNK) or the kept-state limit (STATE_KEPT_BYTES), on devices of
2 and 4 threads so that the work is shared even on a machine of two cores. A case first checks that it
takes the path it names, so a change of threshold cannot leave it testing something else.

ARGMAX and NanPolicy PROPAGATE take the same cases. Expected indices come from the oracle's ``arg_of``, run
on each distinct reduced row (rows repeat a
lot in the short-row cases: their values come from small sets, to make ties).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import opendml as dml
from opendml.backends import cpu_kernels
from opendml.ops import BY_NAME
from tests.elementwise_oracle import arg_of

pytestmark = pytest.mark.skipif(not cpu_kernels.numba_available(),
                                reason="Numba is not installed: the thresholds tested are the fast kernels'")

if cpu_kernels.numba_available():
    from opendml.backends.cpu_kernels.argmin import call as argmin_engine
    from opendml.backends.cpu_kernels.argmin.engines.columns import COLUMN_TILE, ROW_BY_ROW, ROW_CHUNK, ROW_GROUP
    from opendml.backends.cpu_kernels.argmin.engines.rows import ROW_BATCH, ROW_BLOCK
    from opendml.backends.cpu_kernels.argmin.plan import Plan, ReducedLayout, plan, reduced_layout
    STATE_KEPT_BYTES = argmin_engine.STATE_KEPT_BYTES
else:  # the module is skipped: only the names must exist
    COLUMN_TILE, ROW_CHUNK, ROW_GROUP, ROW_BATCH, ROW_BLOCK, STATE_KEPT_BYTES = 8192, 1 << 20, 8, 16, 256, 16 << 20
    ROW_BY_ROW = (96, 1024)

Check = Callable[["ReducedLayout", "Plan"], bool]


@dataclass(frozen=True)
class Case:
    shape: tuple[int, ...]
    axes: tuple[int, ...]
    threads: int
    layout: str  # packed, strided (every other element of the last axis), sliced (axis 1 cut from a longer one)
    takes: Check  # the path this case is for, on the layout and plan the engines see


def _outer_shared(red: ReducedLayout, p: Plan) -> bool:
    return len(p.tasks) > 1 and p.pieces == 1 and all(t.sizes == red.sizes for t in p.tasks)


def _split(rows: bool, dim: int) -> Check:
    """Pieces with states of their own, cut along dimension ``dim`` of the merged layout."""
    return lambda red, p: p.rows == rows and p.pieces > 1 and {t.sizes[dim] for t in p.tasks} != {red.sizes[dim]}


CASES = {
    # Short rows (at most ROW_BLOCK), output rows shared out to the threads.
    "short rows on threads": Case((4096, 100), (1,), 4, "packed",
                                  lambda red, p: _outer_shared(red, p) and red.sizes[-1] <= ROW_BLOCK),
    # Rows longer than ROW_BLOCK (whole blocks and a rest), shared out.
    "long rows on threads": Case((300, 1000), (1,), 2, "packed",
                                 lambda red, p: _outer_shared(red, p) and red.sizes[-1] % ROW_BLOCK != 0),
    # Fewer output rows than threads: each run cut into pieces, merged afterwards.
    "split runs": Case((2, 200_000), (1,), 4, "packed", _split(True, -1)),
    "split run of every axis": Case((600, 500), (0, 1), 2, "packed",
                                    lambda red, p: len(red.sizes) == 1 and _split(True, -1)(red, p)),
    # First-axis reductions: wide rows cut by columns, or tall ones by rows (ROW_GROUP and a rest each, or
    # one row at a time for tiles of ROW_BY_ROW columns).
    "split columns": Case((40, 8200), (0,), 4, "packed", lambda red, p: p.pieces == 1 and len(p.tasks) > 1
                          and all(t.sizes[-1] < red.sizes[-1] for t in p.tasks)),
    "split rows": Case((3500, 90), (0,), 4, "packed",
                       lambda red, p: _split(False, -2)(red, p) and red.sizes[-1] < ROW_BY_ROW[0]
                       and any((t.sizes[-2] - 1) % ROW_GROUP for t in p.tasks)),
    "split rows, row by row": Case((2406, 130), (0,), 4, "packed",
                                   lambda red, p: _split(False, -2)(red, p)
                                   and ROW_BY_ROW[0] <= red.sizes[-1] <= ROW_BY_ROW[1]),
    "split rows, strided columns": Case((700, 500), (0,), 4, "strided",
                                        lambda red, p: _split(False, -2)(red, p) and red.strides[-1] != 1),
    # Kept columns wider than one COLUMN_TILE in every task.
    "column tiles": Case((4, 40, COLUMN_TILE + 108), (1,), 2, "packed",
                         lambda red, p: _outer_shared(red, p) and red.sizes[-1] > COLUMN_TILE),
    # More reduced rows than ROW_CHUNK in one task (one thread: any split would shorten them).
    "row chunks": Case((ROW_CHUNK + 3, 2), (0,), 1, "packed",
                       lambda red, p: len(p.tasks) == 1 and red.sizes[-2] > ROW_CHUNK),
    # Rows found ROW_BATCH at a time through three unmerged dimensions (the odometer), shared out.
    "row batches": Case((50, 20, 300), (2,), 4, "sliced",
                        lambda red, p: _outer_shared(red, p) and len(red.sizes) == 3
                        and any((t.stop - t.start) % ROW_BATCH for t in p.tasks)),
    # Strided runs, compared element by element.
    "strided rows": Case((1200, 300), (1,), 2, "strided",
                         lambda red, p: _outer_shared(red, p) and red.strides[-1] != 1),
    # Reduced axes on both sides of a kept one: one large task, indices weighted over two axes.
    "axes around a kept one": Case((3, 350, 300), (0, 2), 2, "packed",
                                   lambda red, p: len(p.tasks) == 1 and red.reduced == [True, False, True]),
    # More slots than the kept per-thread state holds (of 10 or 12 bytes a slot): a fresh state.
    "state past the kept bytes": Case((STATE_KEPT_BYTES // 10 + 1000, 2), (1,), 2, "packed",
                                      lambda red, p: _outer_shared(red, p) and red.slots * 10 > STATE_KEPT_BYTES),
}


def _rows_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[list[int], int, int]:
    """The axes in row order (kept ones, then reduced ones, each increasing), rows and their length."""
    order = [k for k in range(len(shape)) if k not in axes] + sorted(axes)
    length = math.prod(shape[k] for k in axes)
    return order, math.prod(shape) // length, length


def _values(data_type: str, case: Case, rng: np.random.Generator, largest: bool = False,
            propagate: bool = False) -> np.ndarray:
    """The logical input, made row by row: values from a small set (many ties; floats with NaN, -0.0 and
    +0.0, integers with their type's limits), a row of one repeated value (floats: NaN only) and a row left
    as it is where there are enough rows, and in about half the others (all of few rows) one or three copies
    of a winning value at random places, the last of three at the row's end. Winning: smaller for ARGMIN;
    with ``propagate`` a NaN (of several payloads, the set then holding none) for floats; ``largest``
    (ARGMAX): the values made for ARGMIN, order-reversed (floats negated, integers complemented)."""
    order, rows, length = _rows_shape(case.shape, case.axes)
    dtype = np.dtype(data_type.lower())
    if dtype.kind == "f":
        base = np.array([np.nan, 0.0, -0.0, 1.5, 2.0, np.inf], dtype)
        smaller = np.array([-3.0, -1e-45, -np.inf], dtype)
        if propagate:  # numbers only, and NaN of either sign and other payloads to win
            base[0] = -np.inf
            smaller = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF], np.uint32).view(np.float32)
            smaller = smaller.astype(dtype)
        same = dtype.type(np.nan)
    else:
        info = np.iinfo(dtype)
        low = 0 if info.min == 0 else -5
        base = np.array([*range(low + 2, low + 13), info.max], dtype)
        smaller = np.array([info.min, info.min + 1, low + 1], dtype)
        same = dtype.type(7)
    r = rng.choice(base, (rows, length))
    special = 2 if rows >= 3 else (1 if rows == 2 else 0)
    planted = np.flatnonzero(rng.random(rows) < (0.5 if rows > 8 else 1.0))
    planted = planted[planted >= special]
    copies = np.full(planted.size, 3) if rows <= 8 else rng.choice([1, 3], planted.size)
    at_rows = np.repeat(planted, copies)
    at = rng.integers(0, length, at_rows.size)
    at[(np.cumsum(copies) - 1)[copies == 3]] = length - 1  # of three copies, one is last: in the last piece
    r[at_rows, at] = np.repeat(rng.choice(smaller, planted.size), copies) if not propagate else \
        rng.choice(smaller, at_rows.size)  # NaN of several payloads tie
    if special == 2:
        r[0] = same
    if largest:
        r = -r if dtype.kind == "f" else ~r
    permuted = r.reshape([case.shape[k] for k in order])
    return np.transpose(permuted, np.argsort(order))


def _laid_out(v: np.ndarray, layout: str) -> np.ndarray:
    if layout == "strided":
        buf = np.zeros((*v.shape[:-1], v.shape[-1] * 2), v.dtype)
        buf[..., ::2] = v
        return buf[..., ::2]
    if layout == "sliced":
        buf = np.zeros((v.shape[0], v.shape[1] * 2, *v.shape[2:]), v.dtype)
        buf[:, :v.shape[1]] = v
        return buf[:, :v.shape[1]]
    return np.ascontiguousarray(v)


def oracle_argmin(x: np.ndarray, axes: tuple[int, ...], direction: str, largest: bool = False,
                  propagate: bool = False) -> np.ndarray:
    """The oracle's ``arg_of`` of every reduced row (the index runs row-major over the reduced axes, in
    increasing axis order, SPEC 7), computed once per distinct row (compared by their bits) where rows are
    short. ``largest``: ARGMAX; ``propagate``: NanPolicy PROPAGATE."""
    order, rows, length = _rows_shape(x.shape, axes)
    r = np.ascontiguousarray(np.transpose(x, order)).reshape(rows, length)
    if length > 64:  # few rows: each its own (no gain in finding the distinct ones)
        distinct, back = r, np.arange(rows)
    else:
        whole = r.view(np.dtype((np.void, r.itemsize * length))).reshape(-1)  # a row's bytes as one value
        distinct, back = np.unique(whole, return_inverse=True)
        distinct = distinct.view(r.dtype).reshape(-1, length)
    found = np.array([arg_of(row, direction, largest, propagate) for row in distinct.tolist()], np.int64)
    out_shape = tuple(1 if k in axes else n for k, n in enumerate(x.shape))
    return found[back.reshape(-1)].reshape(out_shape)


@pytest.mark.thin("name", "data_type")  # each path, each type; every pair under --slow
@pytest.mark.parametrize("data_type", ["FLOAT32", "FLOAT32-integer-keys", "INT16"])
@pytest.mark.parametrize("name", list(CASES))
def test_large_argmin_matches_the_oracle(name: str, data_type: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """FLOAT32 with its rows compared as floats where that is exact, and with integer keys only."""
    case = CASES[name]
    if data_type.endswith("integer-keys"):
        monkeypatch.setattr(argmin_engine, "FLOAT_COMPARISONS", False)
        data_type = "FLOAT32"
    x = _laid_out(_values(data_type, case, np.random.default_rng(sorted(CASES).index(name))), case.layout)
    assert case.takes(reduced_layout(x, case.axes), plan(reduced_layout(x, case.axes), case.threads)), name
    device = dml.Device("cpu", threads=case.threads)
    for direction in ("INCREASING", "DECREASING"):
        expected = oracle_argmin(x, case.axes, direction)
        got = np.asarray(dml.argmin(x, case.axes, axis_direction=direction, device=device))
        assert got.dtype == np.int64 and np.array_equal(got, expected), (name, data_type, direction)


# ARGMAX and NanPolicy PROPAGATE on the same paths: (type, operator, NanPolicy, directions). Each run
# compiles the engines again for its kind (type, operator, policy and direction), so the runs are those
# that cover the transforms together: FLOAT32 ARGMAX (rows compared as floats and as integer keys),
# FLOAT16 ARGMAX with NaN winning (its own keys and lanes, the order reversed and NaN's key first), and
# ARGMAX of INT64 and UINT64 at their limits, one direction each (no NaN: PROPAGATE is IGNORE for
# integers). FLOAT32 under PROPAGATE takes tests/test_cpu_fast.py's and tests/test_cpu_prologue.py's cases.
BOTH = ("INCREASING", "DECREASING")
VARIANTS = {
    "FLOAT32-ARGMAX": ("FLOAT32", "ARGMAX", "IGNORE", BOTH),
    "FLOAT32-integer-keys-ARGMAX": ("FLOAT32", "ARGMAX", "IGNORE", BOTH),
    "FLOAT16-ARGMAX-PROPAGATE": ("FLOAT16", "ARGMAX", "PROPAGATE", BOTH),
    "INT64-ARGMAX": ("INT64", "ARGMAX", "IGNORE", ("INCREASING",)),
    "UINT64-ARGMAX": ("UINT64", "ARGMAX", "IGNORE", ("DECREASING",)),
}


@pytest.mark.thin("name", "variant")  # each path, each variant; every pair under --slow
@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("name", list(CASES))
def test_large_argmax_and_propagate_match_the_oracle(name: str, variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES[name]
    data_type, operator, nan_policy, directions = VARIANTS[variant]
    if "integer-keys" in variant:
        monkeypatch.setattr(argmin_engine, "FLOAT_COMPARISONS", False)
    largest, propagate = operator == "ARGMAX", nan_policy == "PROPAGATE"
    rng = np.random.default_rng(sorted(CASES).index(name) + 100)
    x = _laid_out(_values(data_type, case, rng, largest, propagate), case.layout)
    assert case.takes(reduced_layout(x, case.axes), plan(reduced_layout(x, case.axes), case.threads)), name
    desc = dml.ArgMaxDesc if largest else dml.ArgMinDesc
    out_shape = tuple(1 if k in case.axes else n for k, n in enumerate(x.shape))
    for direction in directions:
        params = BY_NAME[operator].prepare(desc(dml.TensorDesc(data_type, x.shape), dml.TensorDesc("INT64", out_shape),
                                                  case.axes, direction, nan_policy))
        got = np.full(out_shape, 77, np.int64)
        argmin_engine.argmin(params)(x, got, case.threads)
        expected = oracle_argmin(x, case.axes, direction, largest, propagate)
        assert np.array_equal(got, expected), (name, variant, direction)
