"""opendml's ONNX front end against ONNX Runtime's CPU kernels, where ONNX Runtime is installed: the same
outputs for ArgMin, ArgMax and QuantizeLinear, and the documented differences (docs/semantics.md) pinned
where the two part: a NaN after a row's first element (ONNX Runtime passes over it, opendml's PROPAGATE
returns it, as ONNX's reference does) and a NaN to quantize (ONNX Runtime gives the type's minimum,
opendml the zero point)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnx", reason="the ONNX front end needs the onnx extra (pip install 'opendml[onnx]')")
pytest.importorskip("onnxruntime", reason="the comparison needs onnxruntime (the bench extra)")

import onnxruntime
from onnx import ModelProto, TensorProto, helper
from onnx_models import feeds, reference, single

from opendml.onnx import run

RNG = np.random.default_rng(1532)


def onnx_runtime(model: ModelProto, arrays: dict[str, Any]) -> np.ndarray:
    """ONNX Runtime's output, the model stamped with the lowest IR version its opsets need: an ONNX Runtime
    older than the onnx package refuses the newer IR versions onnx writes by default."""
    stamped = ModelProto()
    stamped.CopyFrom(model)
    stamped.ir_version = helper.find_min_ir_version_for(list(stamped.opset_import))
    session = onnxruntime.InferenceSession(stamped.SerializeToString(), providers=["CPUExecutionProvider"])
    (out,) = session.run(None, {name: np.asarray(value) for name, value in feeds(model, arrays).items()})
    return out


def same_as_onnx_runtime(model: ModelProto, arrays: dict[str, Any]) -> np.ndarray:
    got = run(model, feeds(model, arrays))["y"]
    want = onnx_runtime(model, arrays)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    return got


# ------------------------------------------------------------------------------------ ArgMin and ArgMax

@pytest.mark.parametrize("op", ["ArgMin", "ArgMax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8])
@pytest.mark.parametrize("opset", [11, 13])
def test_arg_reductions_match(op: str, dtype: type, opset: int) -> None:
    data = RNG.integers(0, 4, (3, 4, 5)).astype(dtype)  # few values: ties decide
    for axis in (0, 1, -1):
        for keepdims in (0, 1):
            for last in (0, 1) if opset >= 12 else (None,):  # select_last_index comes with 12
                attributes = {"axis": axis, "keepdims": keepdims}
                if last is not None:
                    attributes["select_last_index"] = last
                same_as_onnx_runtime(single(op, opset, {"data": data}, **attributes), {"data": data})


NAN_ROWS = np.array([[1, np.nan, 3, np.nan, 0],
                     [np.nan, 5, np.nan, 1, 2],
                     [5, 1, 2, 3, np.nan],
                     [np.nan] * 5,
                     [3, 3, -np.inf, 3, np.inf]], np.float32)


@pytest.mark.parametrize("op", ["ArgMin", "ArgMax"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_arg_reductions_with_nan_match_where_the_nan_comes_first(op: str, dtype: type) -> None:
    # A NaN first in its row (every one, or none at all) wins in both.
    arrays = {"data": NAN_ROWS[[1, 3, 4]].astype(dtype)}
    model = single(op, 13, arrays, axis=1, keepdims=0)
    assert same_as_onnx_runtime(model, arrays).tolist() == [0, 0, 2 if op == "ArgMin" else 4]


@pytest.mark.parametrize(("op", "propagated", "passed_over"), [
    ("ArgMin", [1, 0, 4, 0, 2], [4, 0, 1, 0, 2]),
    ("ArgMax", [1, 0, 4, 0, 4], [2, 0, 0, 0, 4]),
])
def test_onnx_runtime_passes_over_a_nan_after_the_first_element(op: str, propagated: list[int],
                                                                passed_over: list[int]) -> None:
    # ONNX Runtime compares each element with the best so far, starting from the first: a later NaN
    # never compares smaller or larger. opendml returns the first NaN, as ONNX's reference does.
    arrays = {"data": NAN_ROWS}
    model = single(op, 13, arrays, axis=1, keepdims=0)
    assert run(model, arrays)["y"].tolist() == propagated == reference(model, arrays)["y"].tolist()
    assert onnx_runtime(model, arrays).tolist() == passed_over


# ------------------------------------------------------------------------------------ QuantizeLinear

HALVES = np.array([0.5, 1.5, -2.5, 2.5, -0.5, 127.5, 300, -300, np.inf, -np.inf, -237.2832, 1e30], np.float32)


@pytest.mark.parametrize("opset", [10, 13, 19, 21, 23])
@pytest.mark.parametrize("zero_point", [np.int8(0), np.int8(-3), np.uint8(0), np.uint8(128), None])
def test_quantize_hand_cases_match(opset: int, zero_point: Any) -> None:
    for scale in (1.0, 1.9529482, 0.0, -0.5):
        arrays = {"x": HALVES, "s": np.float32(scale), "zp": zero_point}
        same_as_onnx_runtime(single("QuantizeLinear", opset, arrays, constants={"s", "zp"}), arrays)


def _near_halves(shape: tuple[int, ...], scale: np.ndarray) -> np.ndarray:
    """Elements whose quotients by ``scale`` (broadcast to ``shape``) land on a half or one float next to it."""
    k = RNG.integers(-140, 140, shape)
    x = ((k + 0.5) * np.broadcast_to(scale, shape).astype(np.float64)).astype(np.float32)
    nudge = RNG.integers(-1, 2, shape)
    return np.where(nudge > 0, np.nextafter(x, np.float32(np.inf)),
                    np.where(nudge < 0, np.nextafter(x, np.float32(-np.inf)), x)).astype(np.float32)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_quantize_per_axis_and_blocked_near_halves_match(dtype: type) -> None:
    info = np.iinfo(dtype)
    scale = RNG.uniform(0.01, 3, 64).astype(np.float32)
    arrays = {"x": _near_halves((16, 64), scale), "s": scale,
              "zp": RNG.integers(info.min, info.max, 64, dtype=dtype, endpoint=True)}
    same_as_onnx_runtime(single("QuantizeLinear", 13, arrays, constants={"s", "zp"}, axis=1), arrays)
    blocked = RNG.uniform(0.01, 3, (16, 8)).astype(np.float32)
    arrays = {"x": _near_halves((16, 64), np.repeat(blocked, 8, axis=1)), "s": blocked,
              "zp": RNG.integers(info.min, info.max, (16, 8), dtype=dtype, endpoint=True)}
    same_as_onnx_runtime(single("QuantizeLinear", 21, arrays, constants={"s", "zp"}, axis=1, block_size=8), arrays)


@pytest.mark.parametrize(("opset", "attributes"), [(19, {}), (21, {}), (23, {"precision": TensorProto.FLOAT})])
def test_quantize_float16_divides_in_float32_as_onnx_runtime(opset: int, attributes: dict[str, int]) -> None:
    x = RNG.uniform(-100, 100, 4096).astype(np.float16)
    scale = RNG.uniform(0.5, 3, 4096).astype(np.float16)
    arrays = {"x": x, "s": scale, "zp": np.zeros(4096, np.int8)}
    model = single("QuantizeLinear", opset, arrays, constants={"s", "zp"}, axis=0, **attributes)
    got = same_as_onnx_runtime(model, arrays)
    halved = np.rint((x / scale).astype(np.float32))  # a float16 division first: what opendml does not do
    assert np.count_nonzero(got != np.clip(halved, -128, 127)) > 0


@pytest.mark.parametrize(("dtype", "zero_point", "minimum"), [(np.int8, 7, -128), (np.uint8, 128, 0)])
def test_nan_quantizes_to_the_zero_point_unlike_onnx_runtime(dtype: type, zero_point: int, minimum: int) -> None:
    # ONNX Runtime converts NaN to the most negative int32 before adding the zero point: the type's minimum.
    arrays = {"x": np.array([np.nan, 1.0], np.float32), "s": np.float32(1), "zp": dtype(zero_point)}
    model = single("QuantizeLinear", 21, arrays, constants={"s", "zp"})
    assert run(model, {"x": arrays["x"]})["y"].tolist() == [zero_point, zero_point + 1]
    assert onnx_runtime(model, arrays).tolist() == [minimum, zero_point + 1]
