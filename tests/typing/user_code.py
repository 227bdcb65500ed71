"""Code a user writes against opendml's public API: ``tests/test_typing.py`` runs ``mypy --strict`` on it (every
call here is valid and must type-check as it is) and runs it (each call must work as typed)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

import opendml as dml
import opendml.onnx
from opendml.functional import leaky_relu
from opendml.typing import ArrayInput, Axes, DataTypeLike


def normalized(x: npt.NDArray[np.float32]) -> npt.NDArray[Any]:
    """A NumPy array in gives a NumPy array out: no cast needed under warn_return_any."""
    clipped = dml.clip(x, np.float32(-1.0), np.float32(1.0))  # NumPy scalars as bounds
    return dml.relu(clipped)


def biased(x: npt.NDArray[np.float32], bias: npt.NDArray[np.float32]) -> npt.NDArray[Any]:
    """Two arrays in (the bias broadcast along the rows), a NumPy array out."""
    summed: npt.NDArray[np.float32] = dml.add(x, bias)
    return dml.relu(summed)


def bounded(x: ArrayInput, low: float | np.floating[Any] | None = None) -> Any:
    return dml.clip(x, min=low)  # one bound only, by keyword


def activations(x: npt.NDArray[np.float32]) -> list[npt.NDArray[Any]]:
    return [
        dml.leaky_relu(x, 0.1),
        leaky_relu(x, alpha=np.float16(0.2)),
        dml.hard_sigmoid(x, alpha=0.2, beta=np.float64(0.5)),
        dml.linear(x, 2, 1),
        dml.threshold(x, np.int64(0)),
        dml.identity(x, scale_bias=(2.0, 1.0)),
        dml.identity(x, scale_bias=dml.ScaleBias(2.0, 1.0)),
        dml.round(x, rounding_mode="HALVES_TO_NEAREST_EVEN"),
        dml.round(x, rounding_mode=dml.RoundingMode.TOWARD_ZERO),
        dml.is_nan(x),
        dml.abs(x, out=np.empty_like(x)),
    ]


def smallest(x: npt.NDArray[np.float32], axis: Axes = None) -> tuple[Any, Any]:
    first = dml.argmin(x, np.int64(1), output_type=np.int32)  # a NumPy axis and output type
    second = dml.argmax(x, axis=[np.int32(0), 1], keepdims=False, output_type=dml.DataType.INT64)
    third = dml.argmin(x, axis, output_type=np.dtype("uint32"), nan_policy="PROPAGATE")
    return first, dml.unravel_index(second, x.shape, (0, 1)) + (third,)


def quantized(x: npt.NDArray[np.float32], output_type: DataTypeLike = np.uint8) -> Any:
    q = dml.quantize_linear(x, np.float32(0.5), output_type=output_type)
    return dml.dequantize_linear(q, 0.5, np.uint8(3))


def on_lists() -> Any:
    return dml.clip([[3, -2]], 0, 1, device="cpu")  # a list and a device name


def on_a_device(x: npt.NDArray[np.float32]) -> Any:
    return dml.sqrt(x, device=dml.Device("cpu"))


def onnx_session(path: str) -> list[Any]:
    session = opendml.onnx.InferenceSession(path)
    names = [i.name for i in session.get_inputs()]
    return session.run(None, {names[0]: np.zeros(3, np.float32)})


def run() -> None:
    """Every call above, on the CPU."""
    x = np.array([[-2.0, 0.25], [3.0, -0.5]], np.float32)
    normalized(x)
    biased(x, np.array([0.5, -1.0], np.float32))
    bounded(x, np.float32(0.0))
    activations(x)
    smallest(x)
    quantized(np.abs(x))
    on_lists()
    on_a_device(np.abs(x))


if __name__ == "__main__":
    run()
