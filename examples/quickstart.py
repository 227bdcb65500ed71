"""A tour of opendml: each operator through the functional API, then through DirectML's lifecycle.

Run it with ``python examples/quickstart.py``.
"""

from __future__ import annotations

import numpy as np

import opendml as dml


def functional_tour() -> None:
    print("== Functional API (arrays in, arrays out)")
    x = np.array([-4, -3, -2, -1, 0, 1, 2, 3, 4], dtype=np.float32)
    print("clip(x, -2.5, 2.5)                 ", dml.clip(x, -2.5, 2.5))
    print("clip(x, 0, 1, scale_bias=(0.5, 1))  ", dml.clip(x, 0, 1, scale_bias=(0.5, 1.0)))
    print("threshold(x, 0)                    ", dml.threshold(x, 0.0))
    q = np.array([[0, 128, 255], [10, 20, 30]], dtype=np.uint8)
    scale = np.array([0.1, 0.2, 0.5], dtype=np.float32)  # per column: a zero-stride description
    print("dequantize_linear(q, scale, 128)   ", dml.dequantize_linear(q, scale, 128))
    m = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], dtype=np.float32)
    print("argmin(m, 0)                       ", dml.argmin(m, 0).tolist())
    print("argmin(m, 1)                       ", dml.argmin(m, 1).tolist())
    print("argmin(m)  (all axes, rank kept)   ", dml.argmin(m).tolist())
    print("argmin([1,2,3,2,1], DECREASING)    ", dml.argmin([1, 2, 3, 2, 1], axis_direction="DECREASING"))


def lifecycle_tour() -> None:
    print("== DirectML lifecycle: describe, create, compile, bind, execute")
    device = dml.Device("cpu", feature_level="6_4")
    tensor = dml.TensorDesc("FLOAT32", [9])
    clip = device.compile_operator(device.create_operator(dml.ElementWiseClipDesc(tensor, tensor, -2.5, 2.5)))
    a = device.buffer_from(np.arange(-4, 5, dtype=np.float32))
    clip.execute([dml.BufferBinding(a)], [dml.BufferBinding(a)])  # in place
    print("ELEMENT_WISE_CLIP in place         ", a.to_numpy().view(np.float32))

    # ARGMIN over the columns of a 3x3 matrix, writing UINT32 indices.
    m = dml.TensorDesc("FLOAT32", [3, 3])
    idx = dml.TensorDesc("UINT32", [1, 3])
    argmin = device.compile_operator(device.create_operator(dml.ArgMinDesc(m, idx, axes=[0])))
    src = device.buffer_from(np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32))
    dst = device.create_buffer(16)
    argmin.execute([dml.BufferBinding(src)], [dml.BufferBinding(dst)])
    print("ARGMIN axes {0}                    ", dst.to_numpy()[:12].view(np.uint32))

    # A per-channel DEQUANTIZE_LINEAR: scale and zero point broadcast through zero strides.
    x = dml.TensorDesc("UINT8", [2, 3])
    per_column = dml.TensorDesc("FLOAT32", [2, 3], strides=[0, 1])
    zero_point = dml.TensorDesc("UINT8", [2, 3], strides=[0, 0])
    out = dml.TensorDesc("FLOAT32", [2, 3])
    dq = device.compile_operator(device.create_operator(
        dml.ElementWiseDequantizeLinearDesc(x, per_column, zero_point, out)))
    # Bound sizes are at least TotalTensorSizeInBytes, which DirectML rounds up to 4 bytes: 6 -> 8.
    buffers = [device.buffer_from(np.array([0, 128, 255, 10, 20, 30, 0, 0], np.uint8)),
               device.buffer_from(np.array([0.1, 0.2, 0.5], np.float32)),
               device.buffer_from(np.array([128, 0, 0, 0], np.uint8))]
    result = device.create_buffer(out.total_tensor_size_in_bytes)
    dq.execute([dml.BufferBinding(b) for b in buffers], [dml.BufferBinding(result)])
    print("ELEMENT_WISE_DEQUANTIZE_LINEAR     ", result.to_numpy().view(np.float32).reshape(2, 3))

    # Validation happens at creation, with DirectML's names and the feature level that would accept it.
    old = dml.Device("cpu", feature_level="2_1")
    try:
        old.create_operator(dml.ArgMinDesc(m, idx, axes=[0]))
    except dml.OpenDMLError as error:
        print("At feature level 2_1:              ", error)


if __name__ == "__main__":
    functional_tour()
    lifecycle_tour()
