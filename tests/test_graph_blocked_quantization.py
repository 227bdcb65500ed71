"""The graph builder's ``dequantize`` (DirectMLX's Dequantize) and ``quantize``: 4-bit blocked data through a
compiled graph, values worked out by hand, and the builder's refusals."""

from __future__ import annotations

import numpy as np
import pytest

import opendml as dml
from opendml import graph as g

# 2 x 4 UINT4 values; a scale and a zero point per block of 2 along the last axis.
Q = np.array([[0, 8, 15, 1], [3, 3, 9, 2]], np.uint8)
SCALE = np.float32([[1, 0.5], [2, 1]])
ZERO = np.array([[8, 0], [1, 2]], np.uint8)
# (q - zero point) * scale, block by block
DEQUANTIZED = np.float32([[-8, 0, 7.5, 0.5], [4, 4, 7, 0]])


def _packed(values: np.ndarray, data_type: str) -> np.ndarray:
    data = dml.pack4(values, data_type)
    return np.concatenate([data, np.zeros(-data.size % 4, np.uint8)])


@pytest.mark.parametrize("fusion", [True, False])
def test_a_blocked_4_bit_dequantize_feeds_argmax_and_quantize(fusion: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENDML_FUSION", "1" if fusion else "0")
    device = dml.Device()
    graph = dml.Graph(device)
    q = graph.input(0, dml.TensorDesc("UINT4", [2, 4]))
    scale = graph.input(1, dml.TensorDesc("FLOAT32", [2, 2]))
    zero = graph.input(2, dml.TensorDesc("UINT4", [2, 2]))
    values = g.dequantize(q, [scale, zero], "SCALE_ZERO_POINT")
    assert (values.desc.data_type, values.desc.sizes) == (dml.DataType.FLOAT32, (2, 4))
    requantized = g.quantize(values, [scale, zero], "SCALE_ZERO_POINT")
    assert requantized.desc.data_type is dml.DataType.UINT4  # the zero point's type
    compiled = graph.compile([values, g.argmax(values, [1]), requantized])
    outs = [device.create_buffer(32), device.create_buffer(16), device.create_buffer(4)]
    compiled.execute([device.buffer_from(_packed(Q, "UINT4")), device.buffer_from(SCALE),
                      device.buffer_from(_packed(ZERO, "UINT4"))], outs)
    np.testing.assert_array_equal(outs[0].to_numpy().view(np.float32).reshape(2, 4), DEQUANTIZED)
    assert outs[1].to_numpy().view(np.int64).tolist() == [2, 2]
    np.testing.assert_array_equal(dml.unpack4(outs[2].to_numpy(), "UINT4", 8).reshape(2, 4), Q)


def test_quantize_without_a_zero_point_takes_the_output_type_given() -> None:
    device = dml.Device()
    graph = dml.Graph(device)
    x = graph.input(0, dml.TensorDesc("FLOAT32", [1, 4]))
    scale = graph.input(1, dml.TensorDesc("FLOAT32", [1, 1]))
    y = g.quantize(x, [scale], "SCALE", output_type="INT4")
    out = device.create_buffer(4)
    graph.compile([y]).execute([device.buffer_from(np.float32([[-20, -1.4, 1.5, 2.5]])),
                                device.buffer_from(np.float32([[0.5]]))], [out])
    # x / 0.5 rounded half to even, plus INT4's midpoint 0, saturated to [-8, 7]
    assert dml.unpack4(out.to_numpy(), "INT4", 4).tolist() == [-8, -3, 3, 5]


def test_the_builder_refuses_what_is_not_a_sequence_of_expressions() -> None:
    graph = dml.Graph(dml.Device())
    q = graph.input(0, dml.TensorDesc("INT8", [4]))
    with pytest.raises(dml.InvalidArgumentError, match="quantization_tensors must be a sequence of Expressions"):
        g.dequantize(q, q, "SCALE")  # type: ignore[arg-type]
    with pytest.raises(dml.InvalidArgumentError, match=r"quantization_tensors\[0\] must be an Expression"):
        g.dequantize(q, [np.float32(1)], "SCALE")  # type: ignore[list-item]
    with pytest.raises(dml.InvalidArgumentError, match="QuantizationTensorCount must be 1"):
        g.dequantize(q, [], "SCALE")
