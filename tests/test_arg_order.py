"""ARGMIN's and ARGMAX's order, stated once (``opendml.ops.arg_order``), and its two lowerings.

``ArgOrder.better`` is checked against the independent oracle (tests/elementwise_oracle.py) on pairs of
candidates and, as a property, on whole reductions merged in any grouping. The CPU engines' integer keys and
CUDA's ``Order`` are then checked against ``better`` itself, pair by pair over values with NaN of several
payloads and signs, -0.0 and +0.0, infinities, denormals, type limits and many ties, for every operator,
NaN policy and direction: the keys' order with its index rule (the merges' ``replaces``, a scan's
``takes``, the column fold's) and the raw keys of the lane reductions; CUDA's generated decisions (``take``,
``scan_take``, ``take_vector`` and which values take part) compiled for the host with g++, the PTX helpers
replaced by host C++ of the same IEEE meaning (tests/cuda_emulation.py), for float values and each integer
type the engine holds values in.
"""

from __future__ import annotations

import functools
import itertools
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from opendml import DataType as T
from opendml.enums import AxisDirection, NanPolicy
from opendml.kernels.spec import ReductionKind
from opendml.ops.arg_order import LARGER_WINS, LATER_WINS, NAN_WINS, ArgOrder, tie_winner
from tests.elementwise_oracle import arg_of

KINDS = [ReductionKind.ARGMIN, ReductionKind.ARGMAX]
ORDERS = [ArgOrder(kind, policy, direction)
          for kind, policy, direction in itertools.product(KINDS, NanPolicy, AxisDirection)]
ORDER_IDS = [f"{o.kind.name}-{o.nan_policy.name}-{o.direction.name}" for o in ORDERS]
PAIRS = 3000
# FLOAT32 bits: NaN of several payloads and both signs, the zeros, infinities, denormals, limits, ties.
FLOAT_BITS = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x7FBFFFFF, 0x00000000, 0x80000000,
                       0x7F800000, 0xFF800000, 0x3F800000, 0xBF800000, 0x40000000, 0x00000001, 0x80000001,
                       0x7F7FFFFF, 0xFF7FFFFF, 0x3F000000, 0x3F000000], np.uint32)
INTEGER_TYPES = [T.INT8, T.UINT8, T.INT16, T.UINT16, T.INT32, T.UINT32, T.INT64, T.UINT64]


def pool(data_type: T) -> np.ndarray:
    """Few distinct values (so that most pairs tie or meet an edge value) of ``data_type``."""
    if data_type is T.FLOAT32:
        return FLOAT_BITS.view(np.float32)
    if data_type is T.FLOAT16:
        halves = np.array([0x7E00, 0xFE00, 0x7C01, 0xFFFF, 0x0000, 0x8000, 0x7C00, 0xFC00, 0x3C00, 0xBC00,
                           0x0001, 0x8001, 0x7BFF, 0xFBFF, 0x3800, 0x3800], np.uint16)
        return halves.view(np.float16)
    low, high = data_type.integer_range
    return np.array([low, low + 1, high, high - 1, 0, 1, 1, 2, (low + high) // 2], data_type.numpy)


def pairs(data_type: T, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``PAIRS`` pairs of candidates (values of ``data_type``, distinct indices)."""
    rng = np.random.default_rng(seed)
    values = pool(data_type)
    a, b = rng.choice(values, PAIRS), rng.choice(values, PAIRS)
    a_index = rng.integers(0, 40, PAIRS).astype(np.int64)
    b_index = (a_index + rng.integers(1, 40, PAIRS)) % 41  # never a's
    return a, a_index, b, b_index


# --- better, against the oracle ------------------------------------------------------------------------------

@pytest.mark.parametrize("order", ORDERS, ids=ORDER_IDS)
@pytest.mark.parametrize("data_type", [T.FLOAT32, T.FLOAT16, T.INT8, T.UINT64])
def test_better_is_the_oracles_choice_between_two_candidates(order: ArgOrder, data_type: T) -> None:
    """Two candidates at indices i < j are the reduction [value at i, value at j]: the first wins where the
    oracle answers 0."""
    a, a_index, b, b_index = pairs(data_type)
    got = order.better(a, a_index, b, b_index)
    largest, propagate = order.kind is ReductionKind.ARGMAX, order.nan_policy is NanPolicy.PROPAGATE
    for k in range(PAIRS):
        first, second = (a[k], b[k]) if a_index[k] < b_index[k] else (b[k], a[k])
        pick = arg_of([first.item(), second.item()], order.direction.name, largest, propagate)
        assert got[k] == ((pick == 0) == (a_index[k] < b_index[k])), (order, a[k], a_index[k], b[k], b_index[k])


def test_the_tables_state_the_order() -> None:
    """The order's three choices, as data."""
    assert LARGER_WINS == {ReductionKind.ARGMIN: False, ReductionKind.ARGMAX: True}
    assert NAN_WINS == {NanPolicy.IGNORE: False, NanPolicy.PROPAGATE: True}
    assert LATER_WINS == {AxisDirection.INCREASING: False, AxisDirection.DECREASING: True}
    assert [tie_winner(d, 7) for d in AxisDirection] == [0, 6]


@st.composite
def reductions(draw: st.DrawFn) -> tuple[ArgOrder, list[float], list[int]]:
    """An order, a reduction's values (from FLOAT32's edge values: ties and NaN frequent) and an order of
    merging its candidates."""
    order = draw(st.sampled_from(ORDERS))
    values = draw(st.lists(st.sampled_from(pool(T.FLOAT32).tolist()), min_size=1, max_size=12))
    merged = draw(st.permutations(range(len(values))))
    return order, values, merged


@given(reductions())
def test_candidates_merged_in_any_order_give_the_oracles_index(case: tuple[ArgOrder, list[float], list[int]]) -> None:
    """``better`` orders candidates totally: a reduction's candidates merged one by one, in any order, leave
    the oracle's answer (a reduction of NaN only, ignored, included)."""
    order, values, merged = case
    x = np.array(values, np.float32)

    def winner(held: int, other: int) -> int:
        wins = order.better(x[held:held + 1], np.array([held]), x[other:other + 1], np.array([other]))
        return held if bool(wins[0]) else other

    got = functools.reduce(winner, merged)
    want = arg_of(values, order.direction.name, order.kind is ReductionKind.ARGMAX,
                  order.nan_policy is NanPolicy.PROPAGATE)
    assert got == want, (order, values, merged)


# --- the CPU engines' keys ---------------------------------------------------------------------------------------

def _engine_bits(values: np.ndarray) -> np.ndarray:
    """Elements as the engines read them: FLOAT32 as int32 bits, FLOAT16 as uint16 bits, integers as they are."""
    if values.dtype == np.float32:
        return values.view(np.int32)
    if values.dtype == np.float16:
        return values.view(np.uint16)
    return values


@functools.cache
def _key_decisions():  # type: ignore[no-untyped-def]
    """A compiled function of pairs of elements: each one's key, and whether ``a`` wins over ``b`` by the
    merges' rule (``replaces``), by a scan's (``takes``, ``a`` met after ``b``) and by the column fold's."""
    numba = pytest.importorskip("numba")
    from opendml.backends.cpu_kernels.argmin.keys import fold_result, fold_takes, fold_value, key_of, replaces, takes

    @numba.njit
    def decisions(a, a_index, b, b_index, kind, order):  # type: ignore[no-untyped-def]
        n = a.size
        merged, scanned, folded = np.empty(n, np.bool_), np.empty(n, np.bool_), np.empty(n, np.bool_)
        keys, refolded = np.empty((2, n), np.int64), np.empty(n, np.int64)
        for k in range(n):
            ka, kb = key_of(a[k], kind), key_of(b[k], kind)
            keys[0, k], keys[1, k] = ka, kb
            merged[k] = replaces(ka, a_index[k], kb, b_index[k], order)
            scanned[k] = takes(ka, kb, order)
            folded[k] = fold_takes(fold_value(a[k], kind), fold_value(b[k], kind), kind, order)
            refolded[k] = fold_result(fold_value(a[k], kind), kind)
        return merged, scanned, folded, keys, refolded

    return decisions


def _cpu_lowering(order: ArgOrder, data_type: T) -> tuple[object, object]:
    """The engines' ``kind`` and ``order`` markers for ``order`` over ``data_type`` (as a call makes them)."""
    from opendml.backends.cpu_kernels.argmin.keys import kind_of, order_of
    from opendml.ops.arg_reduction import ArgReductionParams

    params = ArgReductionParams((0,), order.direction, T.INT64, order.kind, order.nan_policy)
    return kind_of(data_type.numpy, params), order_of(params)


@pytest.mark.parametrize("order", ORDERS, ids=ORDER_IDS)
@pytest.mark.parametrize("data_type", [T.FLOAT32, T.FLOAT16, *INTEGER_TYPES], ids=lambda t: t.name)
@pytest.mark.thin("order", "data_type")
def test_the_cpu_keys_order_candidates_as_better_does(order: ArgOrder, data_type: T) -> None:
    """Keys (ARGMAX's of order-reversed elements, every NaN one key) compared, then indices: the merges'
    decision is ``better``'s on every pair; a scan's and the column fold's, on pairs met in index order."""
    a, a_index, b, b_index = pairs(data_type, seed=data_type.value)
    kind, marker = _cpu_lowering(order, data_type)
    merged, scanned, folded, keys, refolded = _key_decisions()(_engine_bits(a), a_index, _engine_bits(b), b_index,
                                                               kind, marker)
    want = order.better(a, a_index, b, b_index)
    assert (merged == want).all(), np.flatnonzero(merged != want)[:5]
    later = a_index > b_index  # a scan meets a after b
    assert (scanned[later] == want[later]).all() and (folded[later] == want[later]).all()
    assert (refolded == keys[0]).all()  # the fold's values are turned back into the keys


@pytest.mark.parametrize("order", ORDERS, ids=ORDER_IDS)
def test_the_cpu_raw_keys_keep_the_keys_order(order: ArgOrder) -> None:
    """The lane reductions' raw FLOAT32 keys (three instructions an element): turned back into keys
    (``unflip``) they are the keys, and a smaller raw key never has a larger key."""
    numba = pytest.importorskip("numba")
    from opendml.backends.cpu_kernels.argmin.keys import key_of, raw_key, unflip

    @numba.njit
    def raw(bits, kind):  # type: ignore[no-untyped-def]
        out = np.empty((3, bits.size), np.int64)
        for k in range(bits.size):
            r = raw_key(bits[k], kind)
            out[0, k], out[1, k], out[2, k] = r, unflip(r, kind), key_of(bits[k], kind)
        return out

    values = pool(T.FLOAT32)
    kind, _ = _cpu_lowering(order, T.FLOAT32)
    raws, back, keys = raw(values.view(np.int32), kind)
    assert (back == keys).all()
    smaller = raws[:, None] < raws[None, :]
    assert not (smaller & (keys[:, None] > keys[None, :])).any()


def test_the_cpu_markers_come_from_the_tables() -> None:
    """Which comparison the engines compile (the ``kind`` marker's dimensions) and which index rule (the
    ``order`` marker) follow the order's tables."""
    from opendml.backends.cpu_kernels.argmin.keys import DECREASING, LARGEST, PROPAGATE, missing_index

    for order in ORDERS:
        kind, marker = _cpu_lowering(order, T.FLOAT32)
        assert kind is not None and kind.ndim - 1 == LARGEST * order.larger_wins + PROPAGATE * order.nan_wins
        assert (marker is DECREASING) == order.later_wins
        assert missing_index(marker, 7) == tie_winner(order.direction, 7)  # a reduction of NaN only, ignored


# --- CUDA's Order ------------------------------------------------------------------------------------------------

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")
# The types the engine holds values in: floats (FLOAT32, FLOAT16) and integers by width and signedness.
HELD = {"float": T.FLOAT32, "int": T.INT32, "unsigned int": T.UINT32, "ll": T.INT64, "ull": T.UINT64}


def _bit_list(values: np.ndarray) -> str:
    return ", ".join(f"{int(v)}ull" for v in values.view(f"u{values.itemsize}").astype(np.uint64))


def _host_order_program(cases: list[tuple[str, ArgOrder]], data: dict[str, tuple[np.ndarray, ...]]) -> str:
    """For each (held type, order): its ``take``, ``scan_take``, ``take_vector`` and ``valid`` run on that
    type's pairs, each decision printed as a digit (1: ``a`` taken over the held ``b``)."""
    from opendml.backends.cuda.argmin_c import ballot, comparison, scan
    from tests.cuda_emulation import HOST_BEATS_HELPERS, HOST_BEST_HELPERS, HOST_EQ_HELPERS
    from tests.test_cuda_lowering import HOST_PRELUDE

    def host(text: str) -> str:
        for device, replaced in [(comparison.BEATS_HELPERS, HOST_BEATS_HELPERS),
                                 (comparison.BEST_HELPERS, HOST_BEST_HELPERS), (comparison.EQ_HELPERS, HOST_EQ_HELPERS)]:
            for key, function in device.items():
                text = text.replace(function, replaced[key])
        return text

    parts = [HOST_PRELUDE, "#define INVALID_INDEX 0xFFFFFFFFFFFFFFFFull\n"]
    for held, (a, a_index, b, b_index) in data.items():
        name = held.replace(" ", "_")
        parts.append(f"static const ull {name}_a[] = {{{_bit_list(a)}}}; static const ull {name}_b[] = "
                     f"{{{_bit_list(b)}}};\nstatic const ull {name}_ai[] = {{{_bit_list(a_index)}}}; "
                     f"static const ull {name}_bi[] = {{{_bit_list(b_index)}}};\n")
    runs = []
    for n, (held, order) in enumerate(cases):
        rule = comparison.Order.of(order, held == "float")
        name = held.replace(" ", "_")
        parts.append(f"""namespace v{n} {{
namespace t {{ {host(scan._take_function(held, order.direction, rule))} }}
namespace q {{ {host(ballot._ballot_helpers(held, order.direction, rule))} }}
static bool valid({held} v) {{ return {rule.valid('v')}; }}
static void run() {{
    for (int i = 0; i < {PAIRS}; ++i) {{
        const {held} a = from_bits<{held}>({name}_a[i]), b = from_bits<{held}>({name}_b[i]);
        {held} bv = b; ull bi = {name}_bi[i];
        t::take(bv, bi, a, {name}_ai[i]);
        {held} sv = b; ull si = {name}_bi[i];
        t::scan_take(sv, si, a, {name}_ai[i]);
        {held} qv = b; unsigned int bq = (unsigned int){name}_bi[i];
        q::take_vector(qv, bq, a, (unsigned int){name}_ai[i]);
        printf("%d%d%d%d", bi == {name}_ai[i], si == {name}_ai[i], bq == (unsigned int){name}_ai[i], valid(a));
    }}
    printf("\\n");
}}
}}
""")
        runs.append(f"v{n}::run();")
    parts.append("int main() { " + " ".join(runs) + " return 0; }\n")
    return "".join(parts)


@needs_gxx
def test_cudas_generated_decisions_order_candidates_as_better_does(tmp_path: Path) -> None:
    """``take`` (merges), ``scan_take`` (a thread's scan, ``a`` met after ``b``) and ``take_vector`` (the
    ballot scan's positions) take ``a`` over a held ``b`` exactly where ``better`` prefers it; ``valid`` lets
    every value take part but NaN under IGNORE, which loses to every number and is never held (a reduction
    of NaN only answers ``empty_index``, the index ``better`` leaves among tied NaN)."""
    from opendml.backends.cuda.argmin_c import comparison
    from tests.cuda_emulation import run_host_program

    data = {held: pairs(t, seed=t.value) for held, t in HELD.items()}
    cases = [(held, order) for held in HELD for order in ORDERS]
    lines = run_host_program(_host_order_program(cases, data), tmp_path)
    assert len(lines) == len(cases)
    for (held, order), line in zip(cases, lines):
        a, a_index, b, b_index = data[held]
        got = np.array([int(c) for c in line], np.int8).reshape(PAIRS, 4).astype(bool)
        take, scan_take, take_vector, valid = got.T
        want = order.better(a, a_index, b, b_index)
        skipped = np.isnan(a) if a.dtype.kind == "f" and not order.nan_wins else np.zeros(PAIRS, bool)
        assert (valid == ~skipped).all(), (held, order)
        held_b = ~(np.isnan(b) if a.dtype.kind == "f" and not order.nan_wins else np.zeros(PAIRS, bool))
        both = ~skipped & held_b  # pairs the kernels compare
        assert (take[both] == want[both]).all(), (held, order, np.flatnonzero(take[both] != want[both])[:5])
        assert (take_vector[both] == want[both]).all(), (held, order)
        later = both & (a_index > b_index)
        assert (scan_take[later] == want[later]).all(), (held, order)
        assert (skipped[~held_b] | want[~held_b]).all()  # a number wins over a NaN that is never held
    nans = np.full(5, np.nan, np.float32)
    for order in ORDERS:
        best = functools.reduce(lambda i, j: i if order.better(nans[i:i + 1], np.array([i]), nans[j:j + 1],
                                                                  np.array([j]))[0] else j, range(5))
        assert comparison.empty_index(order.direction, 5) == best


def test_cudas_order_is_built_from_the_tables() -> None:
    """Which comparison CUDA's ``Order`` writes (the larger or smaller value ahead, NaN skipped or winning)
    and which tie rule the templates write come from the order's tables."""
    from opendml.backends.cuda.argmin_c import INDEX_REDUCTIONS, comparison

    assert INDEX_REDUCTIONS is LARGER_WINS
    for order in ORDERS:
        rule = comparison.Order.of(order, floats=True)
        assert (rule.largest, rule.propagates) == (order.larger_wins, order.nan_wins)
        assert rule.valid("v") == ("true" if order.nan_wins else "is_number(v)")
        assert rule.beats("a", "b") == ("beats(a, b)" if order.nan_wins else "lt(b, a)" if order.larger_wins
                                        else "lt(a, b)")
        assert comparison.index_wins(order.direction, "i", "j") == ("i > j" if order.later_wins else "i < j")
        integers = comparison.Order.of(order, floats=False)
        assert integers.nan is None and integers.valid("v") == "true" and not integers.propagates
