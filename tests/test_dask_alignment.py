"""Dask operands chunked otherwise than the input, beside NumPy arrays and numbers, and zero-length chunks:
every call gives the whole arrays' answer, the bits of the same call on the computed NumPy arrays, and the
values of a NumPy formula written here."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from tests.helpers import edge_values, same_values

da = pytest.importorskip("dask.array", reason="Dask is not installed (pip install 'opendml[dask]')")
import dask  # noqa: E402 (after the skip: only where dask.array imported)

from tests.test_dask import _cuts  # noqa: E402

EXAMPLES = max(1, settings.default.max_examples // 2)  # each builds and runs a graph: 30 under the ci profile
FORMS = ("python", "numpy scalar", "0-d", "numpy", "dask")  # how an operand is given
OPERAND_FIELDS = {"dequantize_linear": ("x", "scale", "zero_point"), "quantize_linear": ("x", "scale", "zero_point"),
                  "clip": ("x",), "threshold": ("x",)}  # clip's and threshold's bounds are numbers only


def _compute(*arrays: Any) -> tuple[Any, ...]:
    return dask.compute(*arrays, scheduler="sync")


# --- NumPy formulas (DirectML's definitions, element by element) --------------------------------------------


def _dequantized(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None) -> np.ndarray:
    """(x - zero_point) * scale: the difference exact, to FLOAT32, one FLOAT32 product."""
    zero = 0 if zero_point is None else zero_point.astype(np.int64)
    with np.errstate(invalid="ignore"):  # 0 * inf: NaN
        return (x.astype(np.int64) - zero).astype(np.float32) * scale.astype(np.float32)


def _quantized(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray | None, dtype: np.dtype) -> np.ndarray:
    """clamp(round_half_even(x / scale) + zero_point): one FLOAT32 division; NaN gives the zero point, the
    infinities saturate."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        quotient = (x.astype(np.float32) / scale.astype(np.float32)).astype(np.float64)
    zero = np.zeros((), np.float64) if zero_point is None else zero_point.astype(np.float64)
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore"):
        saturated = np.clip(np.rint(quotient) + zero, info.min, info.max)
    return np.where(np.isnan(quotient), zero, saturated).astype(dtype)


def _clipped(x: np.ndarray, low: float, high: float) -> np.ndarray:
    """A bound replaces an element only when the element is strictly beyond it (NaN stays, -0.0 stays)."""
    above = np.where(x > np.float32(high), np.float32(high), x)
    return np.where(above < np.float32(low), np.float32(low), above)


def _thresholded(x: np.ndarray, low: float) -> np.ndarray:
    return np.where(x < np.float32(low), np.float32(low), x)


# --- cases --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Operand:
    """One operand's values (a NumPy array, of its broadcast shape) and how the call is given it."""

    values: np.ndarray
    form: str
    chunks: tuple[tuple[int, ...], ...] | None = None  # a Dask operand's

    def given(self) -> Any:
        """The operand as the Dask call takes it."""
        if self.form == "dask":
            return da.from_array(self.values, chunks=self.chunks)
        return self.eager()

    def eager(self) -> Any:
        """The operand as the NumPy call takes it: the computed array, or the number as it is."""
        if self.form == "python":
            return self.values.item()
        if self.form == "numpy scalar":
            return self.values[()]
        return self.values


def _operand_shape(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts to ``shape``: leading dimensions dropped, some others of size 1."""
    kept = shape[draw(st.integers(0, len(shape))):]
    return tuple(1 if draw(st.booleans()) else n for n in kept)


@st.composite
def elementwise_cases(draw: st.DrawFn) -> dict[str, Any]:
    """An operator, a result shape of rank 0-3 (some sizes 0), each array operand of a shape broadcasting to
    it, given as a Python number, a NumPy scalar, a 0-d array (the scalar forms where its shape is ()), a NumPy
    array or a Dask array of random chunks (zero-length ones among them); at least one Dask array."""
    op = draw(st.sampled_from(sorted(OPERAND_FIELDS)))
    rank = draw(st.integers(0, 3))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=rank, max_size=rank)))
    fields = OPERAND_FIELDS[op]
    if op.endswith("quantize_linear") and draw(st.booleans()):
        fields = fields[:2]  # no zero point
    shapes = {f: _operand_shape(draw, shape) if len(fields) > 1 else shape for f in fields}
    forms = {}
    for field, operand_shape in shapes.items():
        choices = [f for f in FORMS if f in ("numpy", "dask") or not operand_shape]
        if field == "x":
            choices = ["numpy", "dask"] if len(fields) > 1 else ["dask"]
        forms[field] = draw(st.sampled_from(choices))
    if "dask" not in forms.values():
        forms["x"] = "dask"
    chunks = {f: tuple(_cuts(draw, n) for n in shapes[f]) for f in fields if forms[f] == "dask"}
    return {"op": op, "shapes": shapes, "forms": forms, "chunks": chunks,
            "output_type": draw(st.sampled_from(["INT8", "UINT8"])),
            "bounds": sorted(draw(st.sampled_from([-2.0, -0.0, 0.0, 0.5, 3.0])) for _ in range(2)),
            "seed": draw(st.integers(0, 2**32 - 1))}


def _values(case: dict[str, Any], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Each operand's values, by field: the input's with edge cases (NaN, infinities, -0.0, limits)."""
    shapes, op = case["shapes"], case["op"]
    if op == "dequantize_linear":
        values = {"x": rng.integers(0, 256, shapes["x"]).astype(np.uint8),
                  "scale": rng.choice(np.array([0.5, -0.25, 1.5, 3e-3, np.inf, np.nan], np.float32), shapes["scale"]),
                  "zero_point": rng.integers(0, 256, shapes.get("zero_point", ())).astype(np.uint8)}
    else:
        zero_type = dml.DataType[case["output_type"]]
        zero_shape = shapes.get("zero_point", ())
        values = {"x": edge_values(dml.DataType.FLOAT32, math.prod(shapes["x"]), rng).reshape(shapes["x"]),
                  "scale": rng.choice(np.array([0.5, -0.25, 1.5, 3e-3, 0.0], np.float32), shapes.get("scale", ())),
                  "zero_point": edge_values(zero_type, math.prod(zero_shape), rng).reshape(zero_shape)}
    return {f: values[f] for f in shapes}


def _calls(case: dict[str, Any]) -> tuple[Callable[..., Any], Callable[..., np.ndarray]]:
    """The opendml call on the operands (in field order; no zero point where there are two), and the NumPy
    formula on their values."""
    op, (low, high) = case["op"], case["bounds"]
    if op == "clip":
        return (lambda x: dml.clip(x, low, high)), (lambda x: _clipped(x, low, high))
    if op == "threshold":
        return (lambda x: dml.threshold(x, low)), (lambda x: _thresholded(x, low))
    if op == "dequantize_linear":
        return ((lambda x, s, z=None: dml.dequantize_linear(x, s, z)),
                (lambda x, s, z=None: _dequantized(x, s, z)))
    output_type = case["output_type"]
    dtype = dml.DataType[output_type].numpy
    return ((lambda x, s, z=None: dml.quantize_linear(x, s, z, output_type=output_type)),
            (lambda x, s, z=None: _quantized(x, s, z, dtype)))


@settings(max_examples=EXAMPLES, deadline=None)
@given(elementwise_cases())
def test_operands_of_any_form_and_chunking_give_the_whole_arrays_answer(case: dict[str, Any]) -> None:
    """dequantize_linear, quantize_linear, clip and threshold with every mix of Python numbers, NumPy scalars
    and arrays and Dask arrays, each Dask array chunked its own way (zero-length chunks included),
    broadcasting NumPy-style (lower ranks, sizes of 1, a result larger than the input): the bits of the same
    call on the NumPy arrays, and the NumPy formula's values."""
    values = _values(case, np.random.default_rng(case["seed"]))
    operands = [Operand(values[f], case["forms"][f], case["chunks"].get(f)) for f in case["shapes"]]
    call, formula = _calls(case)
    lazy = call(*(o.given() for o in operands))
    expected = call(*(o.eager() for o in operands))
    assert dml.dask.is_dask_array(lazy) and lazy.shape == expected.shape and lazy.dtype == expected.dtype
    (got,) = _compute(lazy)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    assert same_values(got, expected), (got, expected)
    assert same_values(got, formula(*np.broadcast_arrays(*values.values()))), (got, expected)


# --- regressions: operands chunked otherwise ----------------------------------------------------------------


def test_a_zero_point_chunked_otherwise_than_the_input_is_aligned_with_it() -> None:
    """Dask paired the zero point's 6 blocks with the input's one block, whole: a (2, 36) result. Other
    chunkings gave broadcast errors or an IndexError."""
    xv = np.arange(12, dtype=np.uint8).reshape(2, 6)
    scale = np.full(6, 0.5, np.float32)
    zv = np.arange(6, dtype=np.uint8)
    expected = (xv.astype(np.int64) - zv).astype(np.float32) * scale
    assert same_values(dml.dequantize_linear(xv, scale, zv), expected)
    for x_chunks, z_chunks, scale_chunks in [(((2,), (6,)), ((1,) * 6,), None), (((1, 1), (2, 4)), (6,), None),
                                             (((1, 1), (2, 4)), ((1,) * 6,), (4, 2)), ((2, 3), (5, 1), (1, 2, 3))]:
        x = da.from_array(xv, chunks=x_chunks)
        zp = da.from_array(zv, chunks=z_chunks)
        s = scale if scale_chunks is None else da.from_array(scale, chunks=(scale_chunks,))
        lazy = dml.dequantize_linear(x, s, zp)
        (got,) = _compute(lazy)
        assert lazy.shape == got.shape == (2, 6) and same_values(got, expected), (x_chunks, z_chunks, scale_chunks)
        quantized = dml.quantize_linear(lazy, s, zp)
        (codes,) = _compute(quantized)
        assert quantized.shape == (2, 6) and np.array_equal(codes, dml.quantize_linear(expected, scale, zv))


def test_a_numpy_operand_that_grows_the_result_gives_the_result_its_chunks() -> None:
    """A scale of shape (5, 1) beside an input of shape (1, 6): the lazy result's shape was (1, 6), its
    blocks (5, 3) each."""
    rng = np.random.default_rng(7)
    xv = rng.integers(0, 256, (1, 6), dtype=np.uint8)
    scale = rng.uniform(0.5, 2, (5, 1)).astype(np.float32)
    zv = rng.integers(0, 256, 6, dtype=np.uint8)
    lazy = dml.dequantize_linear(da.from_array(xv, chunks=(1, 3)), scale, zv)  # zv: whole, scale: by blocks
    assert lazy.shape == (5, 6) and lazy.chunks == ((5,), (3, 3))
    (got,) = _compute(lazy)
    assert same_values(got, _dequantized(xv, scale, zv))


@dml.compile
def _dequantized_clipped(x: Any, scale: Any, zero_point: Any) -> Any:
    return dml.clip(dml.dequantize_linear(x, scale, zero_point), -60.0, 60.0)


@dml.compile
def _clipped_and_index(x: Any, scale: Any, zero_point: Any, axes: tuple[int, ...]) -> Any:
    """An element-wise result and an argmin of it (merged across blocks)."""
    clipped = dml.clip(dml.dequantize_linear(x, scale, zero_point), -60.0, 60.0)
    return clipped, dml.argmin(clipped, axes)


def test_a_compiled_function_on_several_dask_arrays_chunked_otherwise() -> None:
    rng = np.random.default_rng(8)
    xv = rng.integers(0, 256, (1, 6), dtype=np.uint8)
    scale = rng.uniform(0.5, 2, (5, 1)).astype(np.float32)
    zv = rng.integers(0, 256, 6, dtype=np.uint8)
    expected = np.clip(_dequantized(xv, scale, zv), -60, 60)
    for args in [(da.from_array(xv, chunks=(1, 3)), scale, zv),
                 (da.from_array(xv, chunks=(1, 3)), da.from_array(scale, chunks=2), da.from_array(zv, chunks=4)),
                 (da.from_array(xv, chunks=((1,), (2, 0, 4))), scale, da.from_array(zv, chunks=((1,) * 6,)))]:
        lazy = _dequantized_clipped(*args)
        (got,) = _compute(lazy)
        assert lazy.shape == got.shape == (5, 6) and same_values(got, expected)
        assert same_values(got, _dequantized_clipped(xv, scale, zv))


@st.composite
def compiled_cases(draw: st.DrawFn) -> dict[str, Any]:
    """A result shape of rank 1-3, an input, scale and zero point broadcasting to it, each a NumPy array or a
    Dask array of its own random chunks (zero-length ones among them), the input always Dask; reduced axes."""
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    shapes = {"x": shape, **{f: _operand_shape(draw, shape) for f in ("scale", "zero_point")}}
    forms = {"x": "dask", **{f: draw(st.sampled_from(["numpy", "dask"])) for f in ("scale", "zero_point")}}
    return {"shapes": shapes, "forms": forms,
            "chunks": {f: tuple(_cuts(draw, n) for n in shapes[f]) for f in shapes if forms[f] == "dask"},
            "axes": tuple(sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1)))),
            "seed": draw(st.integers(0, 2**32 - 1))}


def _first_minimum(values: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The index of the first minimum over ``axes`` (flattened row-major), the rank kept: NumPy's argmin of
    the reduced axes moved last (no NaN here; -0.0 == +0.0, a tie)."""
    kept = [a for a in range(values.ndim) if a not in axes]
    moved = values.transpose(*kept, *axes).reshape(*(values.shape[a] for a in kept), -1)
    found = np.argmin(moved, axis=-1)
    return found.reshape(tuple(1 if a in axes else n for a, n in enumerate(values.shape)))


@settings(max_examples=max(1, settings.default.max_examples // 4), deadline=None)  # compiles per block shape
@given(compiled_cases())
def test_a_compiled_function_on_arguments_of_any_chunking_gives_the_whole_arrays_answer(case: dict[str, Any]) -> None:
    rng = np.random.default_rng(case["seed"])
    shapes = case["shapes"]
    values = {"x": rng.integers(0, 256, shapes["x"]).astype(np.uint8),
              "scale": rng.choice(np.array([0.5, -0.25, 1.5, 0.0], np.float32), shapes["scale"]),
              "zero_point": rng.integers(0, 256, shapes["zero_point"]).astype(np.uint8)}
    operands = [Operand(values[f], case["forms"][f], case["chunks"].get(f)) for f in shapes]
    lazy = _clipped_and_index(*(o.given() for o in operands), case["axes"])
    clipped, index = _compute(*lazy)
    expected = _clipped_and_index(*values.values(), case["axes"])
    assert lazy[0].shape == clipped.shape and lazy[1].shape == index.shape
    assert same_values(clipped, expected[0]) and same_values(index, expected[1])
    formula = _clipped(_dequantized(*np.broadcast_arrays(*values.values())), -60.0, 60.0)
    assert same_values(clipped, formula) and np.array_equal(index, _first_minimum(formula, case["axes"]))


# --- zero-length chunks -------------------------------------------------------------------------------------


def _selected() -> tuple[np.ndarray, Any]:
    """FLOAT32 values and a Dask array of those above 6 after boolean indexing: chunks (0, 3), the first of
    which holds nothing."""
    values = np.array([5, 1, 4, 0, 2, 9, 7, 8, 7, 3], np.float32)
    lazy = da.from_array(values, chunks=5)
    selected = lazy[lazy > 6].compute_chunk_sizes()
    assert selected.chunks == ((0, 4),)
    return values[values > 6], selected


def test_argmin_and_argmax_skip_zero_length_chunks() -> None:
    """A block of a zero-length chunk along a reduced axis holds no candidate (its reduction, over a size
    of 0, used to fail at compute time); along a kept axis it gives an empty block of the result."""
    values, selected = _selected()
    for function, expected in [(dml.argmin, 1), (dml.argmax, 0)]:
        indices, found = _compute(*function(selected, return_values=True))
        assert indices.tolist() == [expected] and found.tolist() == [values[expected]]
        assert np.array_equal(indices, function(values))
    rng = np.random.default_rng(9)
    x = rng.integers(-3, 4, (3, 7)).astype(np.float32)
    lazy = da.from_array(x, chunks=((0, 2, 0, 1), (3, 0, 4)))
    for axes in [0, 1, (0, 1)]:
        for direction in ["INCREASING", "DECREASING"]:
            got = _compute(*dml.argmax(lazy, axes, axis_direction=direction, return_values=True))
            expected = dml.argmax(x, axes, axis_direction=direction, return_values=True)
            assert all(same_values(g, e) for g, e in zip(got, expected)), (axes, direction)
    assert np.array_equal(_compute(dml.argmin(lazy, 1))[0].ravel(), np.argmin(x, axis=1))


def test_a_reduction_over_a_length_of_zero_fails_when_called() -> None:
    """An axis of total length 0, in zero-length chunks, is refused when the call is made, with the NumPy
    path's message; a result with no elements is empty, as there."""
    x = np.zeros((3, 0), np.float32)
    for chunks in [((3,), (0,)), ((2, 1), (0, 0)), ((1, 0, 2), (0, 0, 0))]:
        lazy = da.from_array(x, chunks=chunks)
        for axes in [1, None]:
            with pytest.raises(dml.OpenDMLError) as on_numpy:
                dml.argmin(x, axes)
            with pytest.raises(type(on_numpy.value), match=f"^{re.escape(str(on_numpy.value))}$"):
                dml.argmin(lazy, axes)
        (empty,) = _compute(dml.argmax(lazy, 0))
        assert empty.shape == (1, 0) and empty.dtype == dml.argmax(x, 0).dtype


def test_elementwise_blocks_of_zero_length_chunks_are_empty_blocks() -> None:
    values, selected = _selected()
    lazy = dml.clip(selected, 7.5, 8.0)
    assert lazy.chunks == ((0, 4),)
    assert same_values(_compute(lazy)[0], _clipped(values, 7.5, 8.0))
    codes = dml.quantize_linear(selected, np.float32(0.5), np.uint8(3))
    assert np.array_equal(_compute(codes)[0], _quantized(values, np.float32(0.5), np.uint8(3), np.dtype(np.uint8)))


def test_a_compiled_function_skips_zero_length_chunks() -> None:
    """The function is traced on the first block that holds elements, and an empty block is not run (a
    compiled function refuses empty arguments): its element-wise results are empty blocks, its reductions'
    partials hold no candidate."""
    rng = np.random.default_rng(10)
    xv = rng.integers(0, 256, (4, 7), dtype=np.uint8)
    scale = rng.uniform(0.5, 2, 7).astype(np.float32)
    zv = rng.integers(0, 256, 7, dtype=np.uint8)
    x = da.from_array(xv, chunks=((0, 3, 0, 1), (0, 4, 0, 3)))
    for axes in [(0,), (1,), (0, 1)]:
        lazy = _clipped_and_index(x, scale, da.from_array(zv, chunks=((2, 0, 5),)), axes)
        got = _compute(*lazy)
        expected = _clipped_and_index(xv, scale, zv, axes)
        assert all(g.shape == e.shape and same_values(g, e) for g, e in zip(got, expected)), axes
    with pytest.raises(dml.OpenDMLError) as on_numpy:  # no element at all: refused when called, as on NumPy
        _dequantized_clipped(xv[:, :0], scale[:0], zv[:0])
    with pytest.raises(type(on_numpy.value), match=f"^{re.escape(str(on_numpy.value))}$"):
        _dequantized_clipped(da.from_array(xv[:, :0], chunks=((2, 2), (0, 0))), scale[:0], zv[:0])
