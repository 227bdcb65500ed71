"""Helpers of the recording tests: operators, buffers written and read in place, and expected values from the
independent oracle (tests/elementwise_oracle.py)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import opendml as dml
from opendml import TensorDesc
from tests.elementwise_oracle import argmin_tensor, clamp_element, float_field_bound, indices

F8 = TensorDesc("FLOAT32", [8])
ROWS = TensorDesc("FLOAT32", [2, 4])  # the same 32 bytes as F8, seen as two rows for ARGMIN
INDEX = TensorDesc("INT64", [2, 1])


def compiled(device: dml.Device, desc: object, flags: object = "NONE") -> dml.CompiledOperator:
    return device.compile_operator(device.create_operator(desc), flags)  # type: ignore[arg-type]


def clip(device: dml.Device, lo: float = -1.0, hi: float = 1.0, t: TensorDesc = F8, flags: object = "NONE"
         ) -> dml.CompiledOperator:
    return compiled(device, dml.ElementWiseClipDesc(t, t, lo, hi), flags)


def threshold(device: dml.Device, lo: float = 0.25, t: TensorDesc = F8, flags: object = "NONE"
              ) -> dml.CompiledOperator:
    return compiled(device, dml.ElementWiseThresholdDesc(t, t, lo), flags)


def argmin_rows(device: dml.Device) -> dml.CompiledOperator:
    return compiled(device, dml.ArgMinDesc(ROWS, INDEX, [1]))


def write(device: dml.Device, buffer: dml.Buffer, values: np.ndarray, offset: int = 0) -> None:
    """Put ``values``' bytes at ``offset`` in ``buffer`` itself (the buffer a table holds keeps its address)."""
    raw = np.frombuffer(np.ascontiguousarray(values).tobytes(), np.uint8)
    buffer.data[offset:offset + raw.size] = device.backend.xp.asarray(raw)  # type: ignore[attr-defined]


def read(buffer: dml.Buffer, dtype: object, count: int, offset: int = 0) -> np.ndarray:
    size = np.dtype(dtype).itemsize * count  # type: ignore[call-overload]
    return buffer.to_numpy()[offset:offset + size].view(dtype)  # type: ignore[arg-type]


def record(device: dml.Device, *dispatches: tuple[object, dml.BindingTable]) -> dml.CommandList:
    """A closed list of these (dispatchable, table) dispatches, in order."""
    recorder, command_list = device.create_command_recorder(), device.create_command_list()
    for dispatchable, table in dispatches:
        recorder.record_dispatch(command_list, dispatchable, table)
    command_list.close()
    return command_list


def table(device: dml.Device, dispatchable: object, inputs: Sequence[object] | None = None,
          outputs: Sequence[object] | None = None) -> dml.BindingTable:
    made = device.create_binding_table(dispatchable)
    if inputs is not None:
        made.bind_inputs(list(inputs))
    if outputs is not None:
        made.bind_outputs(list(outputs))
    return made


def run(device: dml.Device, *lists: dml.CommandList) -> None:
    queue = device.create_command_queue()
    queue.execute_command_lists(list(lists))
    queue.wait()


# --- the oracle's values -----------------------------------------------------------------------------------

def clipped(values: Sequence[float], lo: float = -1.0, hi: float = 1.0) -> list[float]:
    low, high = float_field_bound(lo, "FLOAT32"), float_field_bound(hi, "FLOAT32")
    return [clamp_element(float(v), "FLOAT32", None, low, high) for v in values]  # type: ignore[misc]


def thresholded(values: Sequence[float], lo: float = 0.25) -> list[float]:
    low = float_field_bound(lo, "FLOAT32")
    return [clamp_element(float(v), "FLOAT32", None, low, None) for v in values]  # type: ignore[misc]


def row_argmins(values: Sequence[float]) -> list[int]:
    """ARGMIN over axis 1 of the FLOAT32 [2, 4] tensor holding ``values`` in row-major order."""
    by_index = {index: float(values[k]) for k, index in enumerate(indices([2, 4]))}
    result = argmin_tensor(by_index, [2, 4], [1], "INCREASING")  # type: ignore[arg-type]
    return [result[(row, 0)] for row in range(2)]


def floats(values: Sequence[float]) -> np.ndarray:
    return np.asarray(values, np.float32)
