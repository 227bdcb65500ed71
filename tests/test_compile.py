"""opendml.compile: functions of arrays traced once per signature into one compiled graph."""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml.errors import OpenDMLError
from opendml.graphs.desc import ConstantNode
from tests.conftest import CUDA_MISSING


def _chain(q: Any, scale: Any, zero_point: Any) -> Any:
    y = dml.dequantize_linear(q, scale, zero_point)
    return dml.argmin(dml.clip(y, -1.0, 2.5), 1)


def _chain_both(q: Any, scale: Any, zero_point: Any) -> Any:
    y = dml.clip(dml.dequantize_linear(q, scale, zero_point), -1.0, 2.5)
    return dml.argmin(y, 1), y


@pytest.fixture
def compile_count(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many graphs Device.compile_graph compiled during the test."""
    calls: list[int] = []
    original = dml.Device.compile_graph

    def counted(self: dml.Device, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(dml.Device, "compile_graph", counted)
    return calls


def _quantized(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def test_chain_equals_eager_bit_for_bit() -> None:
    q = _quantized((6, 7))
    scale = np.float32(0.03)
    compiled = dml.compile(_chain_both)
    for args in [(q, np.array(0.03, np.float32), 100), (q, 0.03, 100),
                 (q[:, ::2], np.array([0.1, 0.02, 0.3, 0.04], np.float32), np.uint8(3)),
                 (q.T, scale, np.full((6,), 7, np.uint8))]:
        got_index, got_values = compiled(*args)
        want_index, want_values = _chain_both(*args)
        assert type(got_index) is np.ndarray and got_index.dtype == np.int64
        assert got_index.shape == want_index.shape and np.array_equal(got_index, want_index)
        assert got_values.dtype == want_values.dtype and got_values.shape == want_values.shape
        assert got_values.tobytes() == want_values.tobytes()


def test_chain_hand_checked() -> None:
    # (q - 10) * 0.5 clipped to [-1, 2.5]: row 0 -> [-1, 2.5, 0], row 1 -> [2.5, -1, -1]
    q = np.array([[0, 20, 10], [30, 8, 0]], np.uint8)
    index, values = dml.compile(_chain_both)(q, 0.5, 10)
    assert index.tolist() == [[0], [1]]
    assert values.tolist() == [[-1.0, 2.5, 0.0], [2.5, -1.0, -1.0]]


def test_integer_clip_and_threshold_match_eager() -> None:
    def f(x: Any) -> Any:
        return dml.threshold(dml.clip(x, -3, 4.7), 1)

    x = np.arange(-6, 6, dtype=np.int16).reshape(3, 4)
    got = dml.compile(f)(x)
    assert got.dtype == np.int16 and got.tolist() == [[1, 1, 1, 1], [1, 1, 1, 1], [2, 3, 4, 4]]
    assert got.tobytes() == f(x).tobytes()


def test_zero_dimensional_input() -> None:
    got = dml.compile(lambda x: dml.threshold(x, 1.5))(np.array(-3.0, np.float32))
    assert type(got) is np.ndarray and got.shape == () and got.item() == 1.5


def test_compiles_once_per_signature(compile_count: list[int]) -> None:
    compiled = dml.compile(_chain)
    q = _quantized((4, 5))
    for seed in range(3):
        compiled(_quantized((4, 5), seed), 0.25, 3)
    assert len(compile_count) == 1
    compiled(_quantized((5, 5)), 0.25, 3)  # a new shape
    assert len(compile_count) == 2
    compiled(q.astype(np.int8), 0.25, 3)  # a new dtype
    assert len(compile_count) == 3
    compiled(q, 0.25, 4)  # a new scalar argument
    assert len(compile_count) == 4
    compiled(q, 0.25, 4.0)  # the same value of another type: another signature
    assert len(compile_count) == 5
    compiled(q[:, ::2], 0.25, 3)  # new strides
    assert len(compile_count) == 6
    compiled(q, 0.25, 3)
    compiled(q, 0.25, zero_point=3)  # a keyword argument is a different call shape
    assert len(compile_count) == 7
    compiled(q, 0.25, zero_point=3)
    assert len(compile_count) == 7


def test_cached_graph_gives_fresh_results() -> None:
    compiled = dml.compile(lambda x: dml.clip(x, 0.0, 1.0))
    first = compiled(np.array([-1.0, 0.5, 2.0], np.float32))
    second = compiled(np.array([0.25, 3.0, -2.0], np.float32))
    assert first.tolist() == [0.0, 0.5, 1.0] and second.tolist() == [0.25, 1.0, 0.0]


def test_several_outputs_as_a_tuple() -> None:
    def f(x: Any) -> Any:
        return dml.clip(x, 0.0, 1.0), dml.threshold(x, 0.5), dml.argmin(x, 0)

    x = np.array([[0.75, -2.0], [3.0, 0.25]], np.float32)
    got = dml.compile(f)(x)
    assert isinstance(got, tuple) and len(got) == 3
    assert got[0].tolist() == [[0.75, 0.0], [1.0, 0.25]]
    assert got[1].tolist() == [[0.75, 0.5], [3.0, 0.5]]
    assert got[2].tolist() == [[0, 0]]


def test_non_array_arguments_are_values() -> None:
    def f(x: Any, bounds: tuple[float, float], *, axis: int | None = None) -> Any:
        return dml.argmin(dml.clip(x, *bounds), axis)

    x = np.array([[3.0, -1.0, 2.0], [0.0, 5.0, -4.0]], np.float32)
    compiled = dml.compile(f)
    assert compiled(x, (-2.0, 2.0), axis=1).tolist() == [[1], [2]]
    assert compiled(x, (0.5, 2.0), axis=1).tolist() == [[1], [0]]
    assert compiled(x, (-2.0, 2.0)).tolist() == [[5]]  # all axes: -2.0 at flat index 5


def test_array_constant_from_the_closure() -> None:
    scale = np.array([0.5, 2.0], np.float32)
    compiled = dml.compile(lambda q: dml.dequantize_linear(q, scale, 1))
    q = np.array([[1, 3], [5, 2]], np.uint8)
    assert compiled(q).tolist() == [[0.0, 4.0], [2.0, 2.0]]


def test_broadcast_operands_match_eager() -> None:
    q = np.array([[0], [3], [250]], np.uint8)  # (3, 1) against a (4,) scale: the input is broadcast too
    scale = np.array([0.5, 1.0, 2.0, 4.0], np.float32)
    zero_point = np.array([1, 2, 0, 1], np.uint8)
    compiled = dml.compile(dml.dequantize_linear)
    got = compiled(q, scale, zero_point)
    assert got.shape == (3, 4) and got[1].tolist() == [1.0, 1.0, 6.0, 8.0]
    assert got.tobytes() == dml.dequantize_linear(q, scale, zero_point).tobytes()


def test_layouts_a_description_cannot_state_are_copied() -> None:
    x = np.array([[-3.0, 0.5], [2.0, 9.0]], np.float32)[::-1, ::-1]  # negative strides
    got = dml.compile(lambda a: dml.clip(a, -1.0, 1.0))(x)
    assert got.tolist() == [[1.0, 1.0], [0.5, -1.0]]


def test_computed_operand_is_not_broadcast() -> None:
    def f(q: Any, scale: Any) -> Any:
        return dml.dequantize_linear(dml.clip(q, 0, 1), scale)

    with pytest.raises(OpenDMLError, match=r"^ELEMENT_WISE_DEQUANTIZE_LINEAR: InputTensor shape must be the "
                       r"broadcast shape \(3, 4\) when it is computed in the traced function"):
        dml.compile(f)(np.zeros((3, 1), np.uint8), np.ones(4, np.float32))


@pytest.mark.parametrize("body, phrase", [
    (lambda x: dml.clip(x, 0.0, 1.0) if dml.clip(x, 0.0, 1.0) else x, "bool()"),
    (lambda x: np.exp(dml.clip(x, 0.0, 1.0)), "NumPy's exp"),
    (lambda x: np.asarray(x), "conversion"),
    (lambda x: math.exp(dml.clip(x, 0.0, 1.0)), "float()"),
    (lambda x: len(x), "len()"),
    (lambda x: dml.clip(x, 0.0, 1.0) + 1, "operator + (__add__)"),
])
def test_untraceable_code_errors_at_first_call(body: Any, phrase: str) -> None:
    with pytest.raises(OpenDMLError, match=r"^opendml\.compile: traced array supports only the functional API") as e:
        dml.compile(body)(np.ones(3, np.float32))
    assert phrase in str(e.value)


def _first_is_largest(x: Any) -> Any:
    if dml.argmax(x, None) == 0:
        return dml.clip(x, 0.0, 1.0)
    return dml.clip(x, -1.0, 0.0)


def _first_is_not_largest(x: Any) -> Any:
    if dml.argmax(x, None) != 0:
        return dml.clip(x, -1.0, 0.0)
    return dml.clip(x, 0.0, 1.0)


@pytest.mark.parametrize("body, symbol", [(_first_is_largest, "=="), (_first_is_not_largest, "!=")])
def test_comparing_a_traced_array_errors_at_first_call(body: Any, symbol: str) -> None:
    """``==`` and ``!=`` compared the traced array's identity (always unequal): the compiled function took the
    same branch whatever the input, where calling ``body`` directly branches on the values."""
    x = np.array([[3.0, -2.0], [0.5, 1.0]], np.float32)
    assert body(x).tolist() == [[1.0, 0.0], [0.5, 1.0]]  # eager: argmax is 0, the first branch
    with pytest.raises(OpenDMLError, match=rf"^opendml\.compile: traced array supports only the functional API.*"
                       rf"; got the operator {symbol} \(__(eq|ne)__\) of Tracer\(shape=\(1, 1\), dtype=int64\)\.$"):
        dml.compile(body)(x)


@pytest.mark.parametrize("body", [lambda x: 1.5, lambda x: (dml.clip(x, 0.0, 1.0), 2), lambda x: None])
def test_returning_non_arrays_errors(body: Any) -> None:
    with pytest.raises(OpenDMLError, match=r"^opendml\.compile: result must be an array computed by the "
                       r"functional API, or a tuple of them; got "):
        dml.compile(body)(np.ones(3, np.float32))


def test_returning_an_input_errors() -> None:
    with pytest.raises(OpenDMLError, match="must be computed by an operator"):
        dml.compile(lambda x: x)(np.ones(3, np.float32))


@pytest.mark.parametrize("bad, name", [([1, 2], "list"), ({"a": 1}, "dict"), ((1, [2]), "list")])
def test_unhashable_arguments_error(bad: Any, name: str) -> None:
    compiled = dml.compile(lambda x, extra: dml.clip(x, 0.0, 1.0))
    with pytest.raises(OpenDMLError, match=rf"^opendml\.compile: argument 1.* must be an array or a hashable "
                       rf"value \(a number, a string, a tuple, None\); got {name}\.$"):
        compiled(np.ones(3, np.float32), bad)


def test_out_is_refused_while_tracing() -> None:
    out = np.empty(3, np.float32)
    with pytest.raises(OpenDMLError, match=r"^ELEMENT_WISE_THRESHOLD: out must be None while tracing"):
        dml.compile(lambda x: dml.threshold(x, 0.0, out=out))(np.ones(3, np.float32))


@pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
def test_chain_on_cupy_equals_eager() -> None:
    cupy = pytest.importorskip("cupy")
    q = cupy.asarray(_quantized((6, 7)))
    scale = cupy.asarray(np.float32(0.03))
    got_index, got_values = dml.compile(_chain_both)(q, scale, 100)
    want_index, want_values = _chain_both(q, scale, 100)
    assert isinstance(got_values, cupy.ndarray)
    assert cupy.array_equal(got_index, want_index)
    assert got_values.tobytes() == want_values.tobytes()



@pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")
def test_chain_on_pytorch_cuda_tensors_equals_eager() -> None:
    torch = pytest.importorskip("torch")
    q = torch.from_numpy(_quantized((6, 7))).cuda()
    scale = torch.tensor(0.03, dtype=torch.float32, device="cuda")
    got_index, got_values = dml.compile(_chain_both)(q, scale, 100)
    want_index, want_values = _chain_both(q, scale, 100)
    assert isinstance(got_values, torch.Tensor) and got_values.is_cuda
    assert torch.equal(got_index, want_index)
    assert got_values.cpu().numpy().tobytes() == want_values.cpu().numpy().tobytes()

def test_traced_zero_point_of_another_type_errors() -> None:
    with pytest.raises(OpenDMLError, match=r"^ELEMENT_WISE_DEQUANTIZE_LINEAR: ZeroPointTensor must hold values of "
                       r"the input's type uint8 while tracing"):
        dml.compile(dml.dequantize_linear)(np.ones(3, np.uint8), np.ones(3, np.float32), np.ones(3, np.int32))


def test_numpy_array_plus_traced_array_errors() -> None:
    with pytest.raises(OpenDMLError, match="NumPy's add"):
        dml.compile(lambda x: np.ones(3, np.float32) + dml.clip(x, 0.0, 1.0))(np.ones(3, np.float32))


def test_threads_sharing_a_compiled_function_trace_once_and_get_their_own_results(
        compile_count: list[int]) -> None:
    # The chain's intermediate lives in the compiled graph's one temporary arena: executions that
    # overlapped would read each other's values.
    compiled = dml.compile(lambda x: dml.argmin(dml.clip(x, -0.5, 0.5), 1))
    rng = np.random.default_rng(7)
    inputs = [rng.standard_normal((256, 512)).astype(np.float32) for _ in range(8)]
    expected = [np.argmin(np.clip(x, -0.5, 0.5), axis=1) for x in inputs]
    failures: list[int] = []

    def work(k: int) -> None:
        for _ in range(20):
            got = compiled(inputs[k]).reshape(-1)
            if not np.array_equal(got, expected[k]):
                failures.append(k)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert len(compile_count) == 1


def _quantize_round_trip(x: Any, scale: Any, zero_point: Any) -> Any:
    q = dml.quantize_linear(x, scale, zero_point)
    y = dml.dequantize_linear(q, scale, zero_point)
    return q, dml.argmax(y, 1, nan_policy="PROPAGATE"), dml.argmin(x, 0, axis_direction="DECREASING",
                                                                    nan_policy="PROPAGATE")


def test_argmax_quantize_and_nan_policy_trace_like_eager() -> None:
    x = np.array([[0.3, -1.2, 0.75, np.nan], [2.0, 0.49, -0.26, 0.26], [-4.0, 9.0, 0.0, 0.1]], np.float32)
    scale = np.array([0.5, 0.25, 0.5, 0.25], np.float32)  # per column
    compiled = dml.compile(_quantize_round_trip)
    for zero_point in (np.int8(-3), np.array([[0], [1], [2]], np.int8), 5):
        got = compiled(x, scale, zero_point)
        want = _quantize_round_trip(x, scale, zero_point)
        assert [g.dtype for g in got] == [w.dtype for w in want]
        assert all(g.shape == w.shape and g.tobytes() == w.tobytes() for g, w in zip(got, want))
    q, index, first_nan = compiled(x, scale, np.int8(-3))
    # x / scale: [0.6, -4.8, 1.5, nan], [4, 1.96, -0.52, 1.04], [-8, 36, 0, 0.4]; rounded to even, plus -3
    assert q.tolist() == [[-2, -8, -1, -3], [1, -1, -4, -2], [-11, 33, -3, -3]]
    assert index.tolist() == [[2], [0], [1]]  # of [0.5, -1.25, 1, 0], [2, 0.5, -0.5, 0.25], [-4, 9, 0, 0]
    assert first_nan.tolist() == [[2, 0, 1, 0]]  # column 3 holds a NaN: PROPAGATE returns its index


def test_traced_quantize_output_type_and_threshold_on_int64() -> None:
    traced_zero_point = dml.compile(lambda x, z: dml.quantize_linear(x, 1.0, z, output_type="UINT8"))
    with pytest.raises(OpenDMLError, match=r"^ELEMENT_WISE_QUANTIZE_LINEAR: output_type must equal "
                       r"ZeroPointTensor.DataType \(INT8\)"):
        traced_zero_point(np.ones(3, np.float32), np.zeros(3, np.int8))
    signed = dml.compile(lambda x: dml.quantize_linear(x, 0.5, output_type="INT8"))(np.array([-1.0, 70.0], np.float32))
    assert signed.dtype == np.int8 and signed.tolist() == [-2, 127]
    big = np.array([-(2**62), 3, 2**62], np.int64)
    got = dml.compile(lambda x: dml.threshold(x, -2.5))(big)
    assert got.dtype == np.int64 and got.tolist() == [-2, 3, 2**62] == dml.threshold(big, -2.5).tolist()


def test_a_number_operand_stays_one_value_whatever_the_size_it_broadcasts_over() -> None:
    """A scale and zero point given as numbers are graph inputs of one element read through zero strides,
    not ConstantNodes holding the broadcast copy; so they need no ConstantNode's feature level (6_2)."""
    compiled = dml.compile(lambda q: dml.dequantize_linear(q, 0.5, 3), device=dml.Device("cpu", "5_0"))
    q = np.arange(4096, dtype=np.uint8).reshape(64, 64)
    got = compiled(q)
    assert got.tobytes() == ((q.astype(np.float32) - 3) * np.float32(0.5)).tobytes()
    (traced,) = compiled._cache.values()
    desc = traced.compiled.graph_desc
    assert not any(isinstance(node, ConstantNode) for node in desc.nodes)
    assert desc.input_count == 3 and sorted(traced.held) == [1, 2]
    for binding in traced.held.values():
        assert binding.buffer.size_in_bytes == 16
