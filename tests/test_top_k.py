"""TOP_K and TOP_K1 against the oracle of tests/top_k_oracle.py: Python's ``sorted`` over (NaN last, value, index) keys."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml.backends.cpu_kernels import selection
from opendml.ops.top_k import TOP_K, TOP_K1
from tests.helpers import packed_bytes
from tests.top_k_oracle import TYPES, assert_same, oracle, random_values


def run_top_k(x: np.ndarray, axis: int, k: int, largest: bool | None, index_type: str = "UINT32",
              x_desc: dml.TensorDesc | None = None, device: dml.Device | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """TOP_K (``largest`` None) or TOP_K1 through create -> compile -> execute on the CPU."""
    device = device or dml.Device()
    data_type = dml.DataType.parse(np.dtype(x.dtype).name.upper())
    sizes = list(x.shape)
    out_sizes = sizes.copy()
    out_sizes[axis] = k
    values_desc = dml.TensorDesc(data_type, out_sizes)
    index_desc = dml.TensorDesc(index_type, out_sizes)
    x_desc = x_desc or dml.TensorDesc(data_type, sizes)
    if largest is None:
        desc: object = dml.TopKDesc(x_desc, values_desc, index_desc, axis, k)
    else:
        desc = dml.TopK1Desc(x_desc, values_desc, index_desc, axis, k, "DECREASING" if largest else "INCREASING")
    op = device.compile_operator(device.create_operator(desc))
    x_buffer = device.buffer_from(packed_bytes(x, x_desc.total_tensor_size_in_bytes))
    values = device.create_buffer(values_desc.total_tensor_size_in_bytes)
    indices = device.create_buffer(index_desc.total_tensor_size_in_bytes)
    op.execute([x_buffer], [values, indices])
    index_dtype = index_desc.data_type.numpy
    count = values_desc.element_count
    return (values.to_numpy()[:count * x.dtype.itemsize].view(x.dtype).reshape(out_sizes),
            indices.to_numpy()[:count * index_dtype.itemsize].view(index_dtype).reshape(out_sizes))


@pytest.mark.parametrize("type_name", TYPES)
@pytest.mark.parametrize("largest", [None, True, False])
def test_every_type_and_direction(type_name: str, largest: bool | None) -> None:
    rng = np.random.default_rng(len(type_name) * 7 + (largest is None) * 3 + bool(largest))
    x = random_values(rng, type_name, (3, 5, 9), spread=4)
    for axis in range(3):
        n = x.shape[axis]
        for k in sorted({1, max(1, n // 2), n}):
            index_type = "UINT64" if type_name.endswith("64") else "UINT32"
            got = run_top_k(x, axis, k, largest, index_type)
            assert_same(got, oracle(x, axis, k, largest is not False))


def test_directml_examples() -> None:
    """The pages' examples: ties in the result by ascending index, whatever the direction."""
    x = np.array([[1, 2, 2, 3], [3, 4, 5, 5], [6, 6, 6, 6]], np.float32).reshape(1, 1, 3, 4)
    values, indices = run_top_k(x, 3, 3, None)
    np.testing.assert_array_equal(values[0, 0], [[3, 2, 2], [5, 5, 4], [6, 6, 6]])
    np.testing.assert_array_equal(indices[0, 0], [[3, 1, 2], [2, 3, 1], [0, 1, 2]])
    values, indices = run_top_k(x, 3, 3, False)
    np.testing.assert_array_equal(values[0, 0], [[1, 2, 2], [3, 4, 5], [6, 6, 6]])
    np.testing.assert_array_equal(indices[0, 0], [[0, 1, 2], [0, 1, 2], [0, 1, 2]])


def test_boundary_ties_keep_the_lowest_indices() -> None:
    """Of tied elements at the K boundary the lowest indices survive, both directions: K = 1 is ARGMAX's
    (ARGMIN's) first index, NaN ignored."""
    x = np.array([[5, 1, 5, 5, 1, 1]], np.float32)
    assert run_top_k(x, 1, 2, True)[1].tolist() == [[0, 2]]
    assert run_top_k(x, 1, 2, False)[1].tolist() == [[1, 4]]
    x = np.array([[np.nan, 3, np.nan, 3, -np.inf]], np.float32)
    assert run_top_k(x, 1, 1, True)[1].tolist() == [[1]]
    assert run_top_k(x, 1, 1, False)[1].tolist() == [[4]]
    assert run_top_k(x, 1, 5, True)[1].tolist() == [[1, 3, 4, 0, 2]]  # NaN last, by ascending index
    assert run_top_k(x, 1, 5, False)[1].tolist() == [[4, 1, 3, 0, 2]]


def test_signed_zeros_tie_and_keep_their_sign() -> None:
    x = np.array([[0.0, -0.0, 0.0, -0.0]], np.float32)
    values, indices = run_top_k(x, 1, 3, True)
    assert indices.tolist() == [[0, 1, 2]]
    assert np.signbit(values).tolist() == [[False, True, False]]


def test_strided_and_offset_input() -> None:
    """An input read through strides (a transposed, padded layout) and from an offset in its buffer."""
    rng = np.random.default_rng(5)
    base = random_values(rng, "FLOAT32", (40,), spread=6)
    sizes, strides = [3, 4], [1, 9]  # column-major with a gap: element (i, j) at i + 9 j
    x = np.lib.stride_tricks.as_strided(base, shape=sizes, strides=[4, 36])
    desc = dml.TensorDesc("FLOAT32", sizes, strides=strides, total_tensor_size_in_bytes=160)
    device = dml.Device()
    values_desc = dml.TensorDesc("FLOAT32", [3, 2])
    index_desc = dml.TensorDesc("UINT32", [3, 2])
    op = device.compile_operator(device.create_operator(dml.TopK1Desc(desc, values_desc, index_desc, 1, 2,
                                                                      "INCREASING")))
    buffer = device.buffer_from(np.concatenate([np.zeros(4, np.float32), base]))
    values, indices = device.create_buffer(24), device.create_buffer(24)
    op.execute([dml.BufferBinding(buffer, 16)], [values, indices])
    want = oracle(np.ascontiguousarray(x), 1, 2, False)
    assert_same((values.to_numpy().view(np.float32).reshape(3, 2), indices.to_numpy().view(np.uint32).reshape(3, 2)),
                 want)


@pytest.mark.parametrize("type_name", ["FLOAT16", "FLOAT32"])
def test_rows_past_the_threading_threshold(type_name: str) -> None:
    """Batches whose rows are shared among threads, each K from one to past the partition's share."""
    rng = np.random.default_rng(11)
    n = selection.MIN_TASK_ELEMENTS // 4 + 3
    x = random_values(rng, type_name, (9, n), spread=50)
    device = dml.Device()
    for k in (1, 7, 64, n // selection.FULL_SORT_SHARE + 1):
        for largest in (True, False):
            assert_same(run_top_k(x, 1, k, largest, device=device), oracle(x, 1, k, largest))


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_property_against_oracle(data: st.DataObject) -> None:
    type_name = data.draw(st.sampled_from(TYPES))
    rank = data.draw(st.integers(1, 4))
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    axis = data.draw(st.integers(0, rank - 1))
    k = data.draw(st.integers(1, shape[axis]))
    largest = data.draw(st.sampled_from([None, True, False]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = random_values(rng, type_name, shape, spread=data.draw(st.integers(1, 8)))
    index_type = "UINT64" if type_name.endswith("64") else "UINT32"
    assert_same(run_top_k(x, axis, k, largest, index_type), oracle(x, axis, k, largest is not False))


@pytest.mark.parametrize(("change", "field"), [
    ({"axis": 2}, "Axis"),
    ({"k": 0}, "K"),
    ({"k": 5}, "K"),
    ({"values": [2, 3]}, "OutputValueTensor.Sizes[1]"),
    ({"indices": [3, 3]}, "OutputIndexTensor.Sizes[0]"),
    ({"values_type": "FLOAT16"}, "OutputValueTensor.DataType"),
    ({"index_type": "INT32"}, "OutputIndexTensor.DataType"),
    ({"index_type": "UINT8"}, "OutputIndexTensor.DataType"),
])
def test_creation_checks(change: dict, field: str) -> None:
    """Each rule refused at creation, its message naming the operator and the field."""
    x = dml.TensorDesc("FLOAT32", [2, 4])
    values = dml.TensorDesc(change.get("values_type", "FLOAT32"), change.get("values", [2, 3]))
    indices = dml.TensorDesc(change.get("index_type", "UINT32"), change.get("indices", [2, 3]))
    if "values" in change:
        values = dml.TensorDesc("FLOAT32", [2, 2])
    desc = dml.TopKDesc(x, values, indices, change.get("axis", 1), change.get("k", 3))
    with pytest.raises(dml.OpenDMLError) as caught:
        dml.Device().create_operator(desc)
    assert "TOP_K" in str(caught.value) and field in str(caught.value)


def test_feature_levels() -> None:
    """TOP_K1 from 2_1; 64-bit values and UINT64 indices from 5_0; any rank from 3_1 (4-D before)."""
    x, out = dml.TensorDesc("INT64", [2, 4]), dml.TensorDesc("INT64", [2, 1])
    desc = dml.TopK1Desc(x, out, dml.TensorDesc("UINT64", [2, 1]), 1, 1, "DECREASING")
    with pytest.raises(dml.UnsupportedFeatureLevelError) as caught:
        dml.Device(feature_level="4_1").create_operator(desc)
    assert caught.value.required_level == dml.FeatureLevel.FL_5_0  # type: ignore[attr-defined]
    f2 = dml.TensorDesc("FLOAT32", [1, 1, 2, 4])
    f2_out = dml.TensorDesc("FLOAT32", [1, 1, 2, 1])
    dml.Device(feature_level="2_0").create_operator(
        dml.TopKDesc(f2, f2_out, dml.TensorDesc("UINT32", [1, 1, 2, 1]), 3, 1))
    with pytest.raises(dml.UnsupportedFeatureLevelError):
        dml.Device(feature_level="2_0").create_operator(
            dml.TopK1Desc(f2, f2_out, dml.TensorDesc("UINT32", [1, 1, 2, 1]), 3, 1, "INCREASING"))


@pytest.mark.parametrize("row", [pytest.param((op, row), id=f"{op.schema.name}-{row.level.label}")
                                 for op in (TOP_K, TOP_K1) for row in op.schema.rows])
def test_every_type_of_every_support_row(row: tuple) -> None:
    """Each row of DirectML's tables at its own level: every value type with every index type, against the
    oracle, in the row's fewest dimensions."""
    op, support = row
    device = dml.Device("cpu", support.level)
    rng = np.random.default_rng(3)
    shape = (2, 5) if support.dimensions[0] <= 2 else (1,) * (support.dimensions[0] - 2) + (2, 5)
    axis = len(shape) - 1
    for value_type in sorted(support.types["InputTensor"], key=lambda t: t.value):
        for index_type in sorted(support.types["OutputIndexTensor"], key=lambda t: t.value):
            x = random_values(rng, value_type.name, shape, spread=3)
            largest = None if op is TOP_K else False
            got = run_top_k(x, axis, 3, largest, index_type.name, device=device)
            assert got[1].dtype == index_type.numpy
            assert_same(got, oracle(x, axis, 3, largest is not False))


def test_functional_matches_the_oracle() -> None:
    """``opendml.top_k``: a strided view, a negative axis, both spellings of the direction."""
    rng = np.random.default_rng(17)
    x = random_values(rng, "FLOAT16", (6, 11), spread=5)[:, ::2]  # a strided view, read where it lies
    values, indices = dml.top_k(x, 3, axis=-1)
    assert indices.dtype == np.uint32
    assert_same((values, indices), oracle(x, 1, 3, True))
    assert_same(dml.top_k(x, 2, axis=0, largest=False), oracle(x, 0, 2, False))
    assert_same(dml.top_k(x, 2, 0, axis_direction="INCREASING"), oracle(x, 0, 2, False))
    assert dml.top_k(x, 2, index_type="UINT64")[1].dtype == np.uint64


def test_functional_k_of_one_is_argmax_and_argmin() -> None:
    """K = 1 is ARGMAX's (ARGMIN's) index, NaN ignored and ties to the first index, with its value."""
    rng = np.random.default_rng(23)
    x = random_values(rng, "FLOAT32", (40, 13), spread=3)
    for largest, arg in ((True, dml.argmax), (False, dml.argmin)):
        values, indices = dml.top_k(x, 1, largest=largest)
        want = arg(x, axis=1)
        np.testing.assert_array_equal(indices.astype(np.int64), want)
        assert_same((values, indices), (np.take_along_axis(x, want, axis=1), want))


@pytest.mark.parametrize(("call", "field"), [
    (lambda x: dml.top_k(x, 5), "K"),
    (lambda x: dml.top_k(x, 0), "K"),
    (lambda x: dml.top_k(x, 1, axis=2), "axis"),
    (lambda x: dml.top_k(x, 1, largest=True, axis_direction="INCREASING"), "largest"),
    (lambda x: dml.top_k(x, 1.5), "k"),
])
def test_functional_refusals(call: object, field: str) -> None:
    with pytest.raises(dml.OpenDMLError) as caught:
        call(np.zeros((2, 4), np.float32))  # type: ignore[operator]
    assert field in str(caught.value)


def test_graph_builder_gives_both_outputs() -> None:
    """DirectMLX's TopK in a graph behind an element-wise node: both outputs as graph outputs."""
    from opendml import graph as g

    device = dml.Device()
    graph = dml.Graph(device)
    x = graph.input(0, dml.TensorDesc("FLOAT32", [3, 6]))
    values, indices = g.top_k(g.relu(x), 1, 4, "INCREASING")
    compiled = graph.compile([indices, values])
    data = np.random.default_rng(2).integers(-3, 4, (3, 6)).astype(np.float32)  # ties; no -0.0 or NaN
    out_indices, out_values = device.create_buffer(48), device.create_buffer(48)
    compiled.execute([device.buffer_from(data)], [out_indices, out_values])
    got = (out_values.to_numpy().view(np.float32).reshape(3, 4), out_indices.to_numpy().view(np.uint32).reshape(3, 4))
    assert_same(got, oracle(np.maximum(data, np.float32(0)), 1, 4, False))


def test_dispatch_model(tmp_path) -> None:
    """``opendml dispatch``: TOP_K and TOP_K1 read from DxDispatch JSON (DirectML's field names), both outputs
    bound and printed."""
    from tests.dispatch_helpers import run_dispatch, write_model

    x = {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 4]}
    out = {"DataType": "FLOAT32", "Sizes": [1, 1, 3, 2]}
    index = {"DataType": "UINT32", "Sizes": [1, 1, 3, 2]}
    model = {
        "resources": {
            "x": {"initialValuesDataType": "FLOAT32",
                  "initialValues": [0, 1, 10, 11, 3, 2, 9, 8, 4, 5, 6, 7]},
            "v": {"initialValuesDataType": "FLOAT32", "initialValues": {"valueCount": 6, "value": 0}},
            "i": {"initialValuesDataType": "UINT32", "initialValues": {"valueCount": 6, "value": 0}},
        },
        "dispatchables": {
            "top": {"type": "DML_OPERATOR_TOP_K", "desc": {
                "InputTensor": x, "OutputValueTensor": out, "OutputIndexTensor": index, "Axis": 3, "K": 2}},
            "bottom": {"type": "TOP_K1", "desc": {
                "InputTensor": x, "OutputValueTensor": out, "OutputIndexTensor": index, "Axis": 3, "K": 2,
                "AxisDirection": "DML_AXIS_DIRECTION_INCREASING"}},
        },
        "commands": [
            {"type": "dispatch", "dispatchable": "top",
             "bindings": {"InputTensor": "x", "OutputValueTensor": "v", "OutputIndexTensor": "i"}},
            {"type": "print", "resource": "v"}, {"type": "print", "resource": "i"},
            {"type": "dispatch", "dispatchable": "bottom",
             "bindings": {"InputTensor": "x", "OutputValueTensor": "v", "OutputIndexTensor": "i"}},
            {"type": "print", "resource": "v"}, {"type": "print", "resource": "i"},
        ],
    }
    result = run_dispatch(write_model(tmp_path / "top_k.json", model), "--backend", "cpu")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "Resource 'v': 11, 10, 9, 8, 7, 6" in lines and "Resource 'i': 3, 2, 2, 3, 3, 2" in lines
    assert "Resource 'v': 0, 1, 2, 3, 4, 5" in lines and "Resource 'i': 0, 1, 1, 0, 0, 1" in lines


@pytest.mark.parametrize("type_name", ["FLOAT32", "FLOAT16", "INT8", "UINT64"])
def test_partition_path_with_ties_at_the_boundary(type_name: str) -> None:
    """Rows long enough for the partition (K a small part of them) whose K-th key is tied many times, NaN among
    them: the lowest indices of the tie are kept whatever the partition picked."""
    rng = np.random.default_rng(29)
    x = random_values(rng, type_name, (6, 200), spread=1)  # a dozen distinct values: every key tied often
    if type_name.startswith("FLOAT"):
        x[0] = np.nan  # a row of NaN only: the threshold is NaN
        x[1, :190] = np.nan  # ten numbers, then the NaN threshold tied 190 times
    for k in (1, 5, 12, 40):
        for largest in (True, False):
            chosen = selection.select_rows(x, k, largest)  # the partition itself, whichever kernels are in force
            assert_same((np.take_along_axis(x, chosen, axis=-1), chosen), oracle(x, 1, k, largest))
            assert_same(run_top_k(x, 1, k, largest, "UINT64" if type_name.endswith("64") else "UINT32"),
                        oracle(x, 1, k, largest))


# The Numba kernel (backends/cpu_kernels/top_k.py): one compile per input type, so the default run takes four.
_HEAP_TYPES = [t if t in ("FLOAT32", "FLOAT16", "INT8", "INT64") else pytest.param(t, marks=pytest.mark.slow)
               for t in TYPES if t != "UINT64"]


def _heap(x: np.ndarray, axis: int, k: int, largest: bool, threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """The Numba kernel's answer in the input's layout (K along ``axis``)."""
    values, indices = selection.heap_select(x, axis, k, largest, threads)
    shape = np.moveaxis(x, axis, -1).shape[:-1] + (k,)
    return (np.moveaxis(values.reshape(shape), -1, axis), np.moveaxis(indices.reshape(shape), -1, axis))


@pytest.mark.parametrize("type_name", _HEAP_TYPES)
def test_numba_kernel_over_layouts(type_name: str) -> None:
    """Rows along the innermost axis, a strided axis and a middle one, and a view with an offset and steps; ties
    everywhere (few distinct values), NaN, -0.0; K from 1 to the kernel's largest."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(41)
    base = random_values(rng, type_name, (5, 1200, 3), spread=6)
    views = [(base[:, :, 0], 1), (base[:, :, 1].T, 1), (base[:, :, 2].T.copy(), 0), (base, 1),
             (base[1:, 3::2, :], 1)]
    for x, axis in views:
        for k in (1, 8, 64, selection.HEAP_MAX_K):
            if k * selection.FULL_SORT_SHARE >= x.shape[axis]:
                continue
            for largest in (True, False):
                assert_same(_heap(x, axis, k, largest), oracle(x, axis, k, largest))


@pytest.mark.parametrize("type_name", ["FLOAT32", "FLOAT16"])
def test_numba_kernel_cuts_long_rows_among_threads(type_name: str) -> None:
    """Fewer rows than threads: each row cut into segments whose K first are merged; the boundary ties and NaN
    fall across segments."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(43)
    n = 2 * selection.SEGMENT_MIN + 5
    x = random_values(rng, type_name, (2, n), spread=3)
    x[1, : n // 2] = np.nan  # the first segments hold only NaN
    for k in (1, 8, 64):
        for largest in (True, False):
            assert_same(_heap(x, 1, k, largest, threads=4), oracle(x, 1, k, largest))


def test_the_operator_runs_the_numba_kernel_where_it_applies(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the Numba kernels, a row long beside K goes through the kernel; K a large part of it, the partition."""
    from opendml.backends import cpu_kernels

    if cpu_kernels.choice() != "numba":
        pytest.skip("the Numba kernels are not in force")
    from opendml.backends.cpu_kernels import top_k

    calls = []
    kernel = top_k.select_rows
    monkeypatch.setattr(top_k, "select_rows", lambda *a: (calls.append(a[5]), kernel(*a))[1])
    x = random_values(np.random.default_rng(47), "FLOAT16", (3, 500), spread=40)
    assert_same(run_top_k(x, 1, 8, True), oracle(x, 1, 8, True))
    assert calls and calls[-1] == 500
    calls.clear()
    assert_same(run_top_k(x, 1, 200, False), oracle(x, 1, 200, False))
    assert not calls
