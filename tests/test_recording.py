"""The recording model (docs/recording.md): binding tables, recorded command lists, queues, initializers.

Every test runs on every backend this machine has (the ``device`` fixture); expected values come from the
oracle (tests/elementwise_oracle.py) through tests/recording_helpers.py.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import opendml as dml
from opendml import BufferBinding, TensorDesc
from tests.elementwise_oracle import clamp_element, float_field_bound
from tests.recording_helpers import (
    F8,
    argmin_rows,
    clip,
    clipped,
    floats,
    read,
    record,
    row_argmins,
    run,
    table,
    threshold,
    thresholded,
    write,
)

X = [-3.0, -0.5, 0.0, 0.5, 3.0, 7.0, -7.0, 0.75]


def exact(text: str) -> str:
    return f"^{re.escape(text)}$"


# --- binding tables: every rule of execute, at bind time, with its message ---------------------------------

@pytest.mark.parametrize(("make", "message"), [
    (lambda b: BufferBinding(b, offset=8),
     "ELEMENT_WISE_CLIP: InputTensor.Offset must be a non-negative multiple of 16; got 8."),
    (lambda b: BufferBinding(b, offset=16),
     "ELEMENT_WISE_CLIP: InputTensor.SizeInBytes must be at least TotalTensorSizeInBytes (32); got 24."),
    (lambda b: BufferBinding(b, offset=16, size_in_bytes=32),
     "ELEMENT_WISE_CLIP: InputTensor binding must lie inside its buffer of 40 bytes; got bytes [16, 48)."),
    (lambda b: "buffer", "ELEMENT_WISE_CLIP: InputTensor must be a BufferBinding; got 'buffer'."),
    (lambda b: None, "ELEMENT_WISE_CLIP: InputTensor must be a BufferBinding; got None."),
])
def test_bind_inputs_checks_what_execute_checks(device: dml.Device, make, message: str) -> None:
    op = clip(device)
    buffer, out = device.create_buffer(40), device.create_buffer(32)
    with pytest.raises(dml.BindingError, match=exact(message)):
        op.execute([make(buffer)], [out])
    with pytest.raises(dml.BindingError, match=exact(message)):
        device.create_binding_table(op).bind_inputs([make(buffer)])


def test_bind_counts_and_lists(device: dml.Device) -> None:
    made = device.create_binding_table(clip(device))
    buffer = device.create_buffer(32)
    with pytest.raises(dml.BindingError, match=exact("ELEMENT_WISE_CLIP: inputs must hold 1 binding(s), one per "
                                                     "tensor (InputTensor); got 2.")):
        made.bind_inputs([buffer, buffer])
    with pytest.raises(dml.BindingError, match=exact("ELEMENT_WISE_CLIP: outputs must hold 1 binding(s), one per "
                                                     "tensor (OutputTensor); got 0.")):
        made.bind_outputs([])
    with pytest.raises(dml.BindingError, match=r"^ELEMENT_WISE_CLIP: inputs must be a list of bindings; got "):
        made.bind_inputs(buffer)


def test_absent_tensor_binds_as_none(device: dml.Device) -> None:
    u8, f = TensorDesc("UINT8", [4]), TensorDesc("FLOAT32", [4])
    op = device.compile_operator(device.create_operator(dml.ElementWiseDequantizeLinearDesc(u8, f, None, f)))
    made = device.create_binding_table(op)
    x = device.create_buffer(16)
    with pytest.raises(dml.BindingError, match=r"ZeroPointTensor must be bound as None \(the tensor is absent\)"):
        made.bind_inputs([x, x, x])
    made.bind_inputs([x, x, None])


def test_overlaps_are_checked_whichever_group_is_bound_last(device: dml.Device) -> None:
    op = argmin_rows(device)
    buffer = device.create_buffer(64)
    refused = exact("ARGMIN: OutputTensor binding must not overlap InputTensor; got bytes [16, 32) against [0, 32).")
    first = device.create_binding_table(op)
    first.bind_inputs([BufferBinding(buffer, 0, 32)])
    with pytest.raises(dml.BindingError, match=refused):
        first.bind_outputs([BufferBinding(buffer, 16, 16)])
    second = device.create_binding_table(op)
    second.bind_outputs([BufferBinding(buffer, 16, 16)])
    with pytest.raises(dml.BindingError, match=refused):
        second.bind_inputs([BufferBinding(buffer, 0, 32)])


def test_in_place_needs_an_exact_alias_at_bind_time(device: dml.Device) -> None:
    buffer = device.create_buffer(64)
    made = table(device, clip(device), [BufferBinding(buffer, 0)])
    with pytest.raises(dml.BindingError, match=r"OutputTensor binding may alias InputTensor only exactly"):
        made.bind_outputs([BufferBinding(buffer, 16)])
    made.bind_outputs([BufferBinding(buffer, 0)])  # the exact alias


def test_foreign_buffers_and_dispatchables_are_refused(device: dml.Device) -> None:
    class Foreign(dml.Buffer):
        address = 0

    made = device.create_binding_table(clip(device))
    with pytest.raises(dml.BindingError, match=r"^ELEMENT_WISE_CLIP: InputTensor.Buffer must be a buffer of Device"):
        made.bind_inputs([BufferBinding(Foreign(object(), 64))])  # type: ignore[arg-type]
    with pytest.raises(dml.InvalidArgumentError, match=r"^Device: dispatchable must be a compiled operator, a "
                       r"compiled graph or an operator initializer; got 'clip'\.$"):
        device.create_binding_table("clip")


def test_a_failed_bind_keeps_the_bindings_and_the_recorded_list(device: dml.Device) -> None:
    op = clip(device)
    x, y = device.buffer_from(floats(X)), device.create_buffer(32)
    made = table(device, op, [x], [y])
    command_list = record(device, (op, made))
    with pytest.raises(dml.BindingError):
        made.bind_inputs([BufferBinding(x, 8)])
    with pytest.raises(dml.BindingError):
        made.bind_outputs([x, x])
    with pytest.raises(dml.BindingError, match=exact("ELEMENT_WISE_CLIP: TemporaryResource.Offset must be a "
                                                     "non-negative multiple of 256; got 16.")):
        made.bind_temporary_resource(BufferBinding(x, 16))
    run(device, command_list)  # not stale: nothing changed
    assert read(y, np.float32, 8).tolist() == clipped(X)
    again = record(device, (op, made))  # the table still holds x and y
    write(device, y, floats([0] * 8))
    run(device, again)
    assert read(y, np.float32, 8).tolist() == clipped(X)


def test_recording_needs_the_table_of_the_dispatchable_and_every_binding(device: dml.Device) -> None:
    op, other = clip(device), threshold(device)
    x = device.create_buffer(32)
    recorder, command_list = device.create_command_recorder(), device.create_command_list()
    with pytest.raises(dml.InvalidArgumentError, match=r"^CommandRecorder: binding_table must be a binding table "
                       r"of the dispatchable \(ELEMENT_WISE_THRESHOLD\); got BindingTable #\d+, a table of "
                       r"ELEMENT_WISE_CLIP\.$"):
        recorder.record_dispatch(command_list, other, table(device, op, [x], [x]))
    half = table(device, op, [x])
    with pytest.raises(dml.InvalidArgumentError, match=rf"^CommandRecorder: {half.name} outputs must be bound "
                       r"\(bind_outputs\) before ELEMENT_WISE_CLIP is dispatched; got none bound\.$"):
        recorder.record_dispatch(command_list, op, half)
    assert command_list.dispatch_count == 0


def test_reset_empties_the_table_for_another_dispatchable(device: dml.Device) -> None:
    op, other = clip(device), threshold(device)
    x = device.buffer_from(floats(X))
    made = table(device, op, [x], [x])
    made.reset(other)
    assert made.dispatchable is other
    with pytest.raises(dml.InvalidArgumentError, match=r"inputs must be bound \(bind_inputs\) before "
                       r"ELEMENT_WISE_THRESHOLD is dispatched"):
        record(device, (other, made))
    made.bind_inputs([x])
    made.bind_outputs([x])
    run(device, record(device, (other, made)))
    assert read(x, np.float32, 8).tolist() == thresholded(X)


def test_binding_properties(device: dml.Device) -> None:
    assert clip(device).binding_properties == dml.BindingProperties(0, 0)
    assert device.create_operator_initializer([clip(device)]).binding_properties == dml.BindingProperties(0, 0)


# --- recorded lists: order, replay, re-recording ---------------------------------------------------------

def test_in_place_dispatches_see_each_others_writes(device: dml.Device) -> None:
    first, second = clip(device), threshold(device)
    x = device.buffer_from(floats(X))
    command_list = record(device, (first, table(device, first, [x], [x])), (second, table(device, second, [x], [x])))
    run(device, command_list)
    assert read(x, np.float32, 8).tolist() == thresholded(clipped(X))


def test_a_chain_through_intermediates_replays_on_new_data(device: dml.Device) -> None:
    """CLIP -> THRESHOLD -> ARGMIN through buffers written and read by the list, replayed after new data is
    written into its input buffer: the same table, new results."""
    c, t, a = clip(device), threshold(device), argmin_rows(device)
    x, clipped_buffer, thresholded_buffer, out = (device.create_buffer(32) for _ in range(4))
    command_list = record(device, (c, table(device, c, [x], [clipped_buffer])),
                          (t, table(device, t, [clipped_buffer], [thresholded_buffer])),
                          (a, table(device, a, [thresholded_buffer], [out])))
    queue = device.create_command_queue()
    for values in (X, [0.5, 0.3, 0.9, 0.1, -5.0, 2.0, 0.2, 0.4], [1.0, 1.0, 1.0, 1.0, 9.0, 8.0, 7.0, -9.0]):
        write(device, x, floats(values))
        queue.execute_command_lists([command_list])
        queue.wait()
        expected = thresholded(clipped(values))
        assert read(thresholded_buffer, np.float32, 8).tolist() == expected
        assert read(out, np.int64, 2).tolist() == row_argmins(expected)


def test_one_table_recorded_many_times_runs_each_dispatch_in_turn(device: dml.Device) -> None:
    """A CLIP in place with ScaleBias (1.5, 1): each of the five recordings applies it to what the one before
    wrote."""
    step = device.compile_operator(device.create_operator(
        dml.ElementWiseClipDesc(F8, F8, -100.0, 100.0, dml.ScaleBias(1.5, 1.0))))
    x = device.buffer_from(floats(X))
    made = table(device, step, [x], [x])
    command_list = record(device, *[(step, made)] * 5)
    assert command_list.dispatch_count == 5 and len(command_list.runs) == 5
    run(device, command_list)
    expected = [float(v) for v in X]
    for _ in range(5):
        expected = [clamp_element(v, "FLOAT32", (1.5, 1.0), float_field_bound(-100.0, "FLOAT32"),
                                  float_field_bound(100.0, "FLOAT32")) for v in expected]  # type: ignore[misc]
    assert read(x, np.float32, 8).tolist() == expected


def test_lists_run_in_order_in_one_call(device: dml.Device) -> None:
    c, t = clip(device), threshold(device)
    x, y = device.buffer_from(floats(X)), device.create_buffer(32)
    writes = record(device, (c, table(device, c, [x], [y])))
    reads = record(device, (t, table(device, t, [y], [y])))
    run(device, writes, reads)
    assert read(y, np.float32, 8).tolist() == thresholded(clipped(X))


def test_a_changed_table_makes_its_list_stale_until_recorded_again(device: dml.Device) -> None:
    op = clip(device)
    x, y, z = device.buffer_from(floats(X)), device.create_buffer(32), device.create_buffer(32)
    made = table(device, op, [x], [y])
    recorder, command_list = device.create_command_recorder(), device.create_command_list()
    recorder.record_dispatch(command_list, op, made)
    command_list.close()
    made.bind_outputs([z])
    queue = device.create_command_queue()
    with pytest.raises(dml.InvalidArgumentError, match=exact(
            "CommandQueue: lists[0] must run the bindings its dispatches were recorded with: a binding table may "
            "not change after a dispatch is recorded with it unless the dispatchable was compiled with "
            f"DESCRIPTORS_VOLATILE (record the dispatch again); got {made.name}, changed by bind_outputs after "
            "dispatch 0 (ELEMENT_WISE_CLIP) was recorded with it.")):
        queue.execute_command_lists([command_list])
    assert read(z, np.float32, 8).tolist() == [0.0] * 8  # nothing ran
    command_list.reset()
    recorder.record_dispatch(command_list, op, made)
    command_list.close()
    queue.execute_command_lists([command_list])
    queue.wait()
    assert read(z, np.float32, 8).tolist() == clipped(X) and read(y, np.float32, 8).tolist() == [0.0] * 8


def test_an_error_in_any_list_runs_none(device: dml.Device) -> None:
    op = clip(device)
    x = device.buffer_from(floats(X))
    good = record(device, (op, table(device, op, [x], [x])))
    still_open = device.create_command_list()
    with pytest.raises(dml.InvalidArgumentError, match=exact("CommandQueue: lists[1] must be closed "
                                                             "(CommandList.close()) before it is executed; got an "
                                                             "open command list.")):
        device.create_command_queue().execute_command_lists([good, still_open])
    assert read(x, np.float32, 8).tolist() == X


def test_command_list_lifecycle(device: dml.Device) -> None:
    op = clip(device)
    x = device.create_buffer(32)
    command_list = record(device, (op, table(device, op, [x], [x])))
    assert command_list.closed and command_list.dispatch_count == 1
    with pytest.raises(dml.InvalidArgumentError, match=r"^CommandRecorder: command_list must be open \(recording "
                       r"into a closed list is an error, as in D3D12"):
        device.create_command_recorder().record_dispatch(command_list, op, table(device, op, [x], [x]))
    with pytest.raises(dml.InvalidArgumentError, match=r"^CommandList: close must be called on an open command "
                       r"list"):
        command_list.close()
    with pytest.raises(dml.InvalidArgumentError, match=r"^CommandQueue: lists\[0\] must be a command list of "):
        device.create_command_queue().execute_command_lists(["list"])  # type: ignore[list-item]
    with pytest.raises(dml.InvalidArgumentError, match=r"^CommandQueue: lists must be a list of command lists"):
        device.create_command_queue().execute_command_lists(command_list)  # type: ignore[arg-type]
    empty = device.create_command_list()
    empty.close()
    run(device, empty)


def test_replays_check_no_binding(device: dml.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """A recorded dispatch is prepared once: executing it (a volatile one's table unchanged included) checks
    and places no binding."""
    op = clip(device)
    x, y = device.buffer_from(floats(X)), device.create_buffer(32)
    command_list = record(device, (op, table(device, op, [x], [y])))

    def refuse(*args: object) -> None:
        raise AssertionError("a binding was checked")

    monkeypatch.setattr("opendml.binding._place", refuse)
    run(device, command_list)
    assert read(y, np.float32, 8).tolist() == clipped(X)


# --- DESCRIPTORS_VOLATILE -----------------------------------------------------------------------------------

def test_a_volatile_dispatch_reads_the_bindings_at_execution(device: dml.Device) -> None:
    op = clip(device, flags="DESCRIPTORS_VOLATILE")
    x, y, z = device.buffer_from(floats(X)), device.create_buffer(32), device.create_buffer(32)
    made = table(device, op, [x], [y])
    command_list = record(device, (op, made))
    made.bind_outputs([z])
    run(device, command_list)
    assert read(z, np.float32, 8).tolist() == clipped(X) and read(y, np.float32, 8).tolist() == [0.0] * 8


def test_a_volatile_dispatch_may_be_recorded_before_its_bindings(device: dml.Device) -> None:
    op = clip(device, flags=dml.ExecutionFlags.DESCRIPTORS_VOLATILE)
    x = device.buffer_from(floats(X))
    made = device.create_binding_table(op)
    command_list = record(device, (op, made))
    queue = device.create_command_queue()
    with pytest.raises(dml.InvalidArgumentError, match=exact(f"CommandQueue: {made.name} inputs must be bound "
                                                             "(bind_inputs) before ELEMENT_WISE_CLIP is dispatched; "
                                                             "got none bound.")):
        queue.execute_command_lists([command_list])
    made.bind_inputs([x])
    made.bind_outputs([x])
    queue.execute_command_lists([command_list])
    queue.wait()
    assert read(x, np.float32, 8).tolist() == clipped(X)


def test_a_volatile_table_reset_for_another_dispatchable_is_refused(device: dml.Device) -> None:
    op = clip(device, flags="DESCRIPTORS_VOLATILE")
    x = device.create_buffer(32)
    made = table(device, op, [x], [x])
    command_list = record(device, (op, made))
    other = threshold(device)
    made.reset(other)
    with pytest.raises(dml.InvalidArgumentError, match=r"^CommandQueue: binding_table must be a binding table of "
                       r"the dispatchable \(ELEMENT_WISE_CLIP\); got BindingTable #\d+, a table of "
                       r"ELEMENT_WISE_THRESHOLD\.$"):
        run(device, command_list)


# --- the operator initializer ------------------------------------------------------------------------------

def test_an_initializer_dispatch_initializes_its_operators(device: dml.Device) -> None:
    first, second = clip(device), threshold(device)
    initializer = device.create_operator_initializer([first, second])
    made = device.create_binding_table(initializer)  # nothing to bind: all None
    command_list = record(device, (initializer, made))
    assert not first.initialized and not second.initialized
    run(device, command_list)
    assert first.initialized and second.initialized


def test_initializer_bindings(device: dml.Device) -> None:
    initializer = device.create_operator_initializer([clip(device)])
    made = device.create_binding_table(initializer)
    x = device.create_buffer(256)
    with pytest.raises(dml.BindingError, match=exact("OperatorInitializer: Inputs[0] must be bound as None "
                                                     "(ELEMENT_WISE_CLIP has no OWNED_BY_DML tensor to "
                                                     "initialize); got CpuBuffer.".replace(
                                                         "CpuBuffer", type(x).__name__))):
        made.bind_inputs([x])
    with pytest.raises(dml.BindingError, match=exact("OperatorInitializer: outputs must hold 1 binding(s), one per "
                                                     "compiled operator; got 2.")):
        made.bind_outputs([None, None])
    made.bind_inputs([None])
    initializer.reset([clip(device), threshold(device)])
    with pytest.raises(dml.InvalidArgumentError, match=r"^BindingTable: dispatchable must not have been reset "):
        made.bind_outputs([None, None])
    with pytest.raises(dml.InvalidArgumentError, match=r"must not have been reset"):
        record(device, (initializer, made))
    made.reset(initializer)
    run(device, record(device, (initializer, made)))
    assert all(op.initialized for op in initializer.compiled_ops)
    with pytest.raises(dml.InvalidArgumentError, match=r"^OperatorInitializer: compiled_ops\[0\] must be a "
                       r"compiled operator or graph of Device"):
        initializer.reset(["clip"])
    assert len(initializer.compiled_ops) == 2  # a bad list changed nothing


@pytest.mark.parametrize(("shape", "axes", "direction", "largest", "dtype"), [
    ((3, 300_000), [1], "INCREASING", False, np.float32),  # few long rows: split into pieces, merged
    ((4096, 64), [0], "DECREASING", True, np.float32),     # columns
    ((1000, 999), [0, 1], "INCREASING", False, np.uint8),  # everything into one slot
    ((64, 2048), [1], "DECREASING", False, np.float16),
])
def test_a_recorded_arg_reduction_replays_its_layout_over_new_data(device: dml.Device, shape, axes, direction,
                                                                    largest: bool, dtype) -> None:
    """The replayed list runs the reduction prepared once for its bindings (plan, kernel, views): new values
    written into the same buffers give NumPy's answers each time (ties included: few distinct values)."""
    data_type = {np.float32: "FLOAT32", np.float16: "FLOAT16", np.uint8: "UINT8"}[dtype]
    out_shape = [1 if k in axes else n for k, n in enumerate(shape)]
    desc_type = dml.ArgMaxDesc if largest else dml.ArgMinDesc
    op = device.compile_operator(device.create_operator(desc_type(
        TensorDesc(data_type, list(shape)), TensorDesc("INT64", out_shape), axes, direction)))
    x = device.create_buffer(int(np.prod(shape)) * np.dtype(dtype).itemsize)
    out = device.create_buffer(int(np.prod(out_shape)) * 8)
    work = record(device, (op, table(device, op, [x], [out])))
    rng = np.random.default_rng(7)
    for _ in range(3):
        values = rng.integers(0, 5, shape).astype(dtype)
        write(device, x, values)
        run(device, work)
        moved = np.moveaxis(values, axes, list(range(len(shape) - len(axes), len(shape))))
        flat = moved.reshape(moved.shape[:len(shape) - len(axes)] + (-1,)).astype(np.float64)
        if largest:
            flat = -flat
        if direction == "DECREASING":
            expected = flat.shape[-1] - 1 - np.argmin(flat[..., ::-1], axis=-1)
        else:
            expected = np.argmin(flat, axis=-1)
        assert np.array_equal(read(out, np.int64, expected.size), expected.reshape(-1))


def test_objects_of_another_device_object_are_refused() -> None:
    """Everything a device makes is that one Device object's, as in DirectML: a look-alike device (same
    backend and feature level, printed alike) is another device, for operators, tables, lists and queues."""
    mine, twin = dml.Device("cpu"), dml.Device("cpu", threads=1)
    x = mine.buffer_from(np.array(X, np.float32))
    op, their_op = clip(mine), clip(twin)
    another = "another Device object (1 thread)"
    with pytest.raises(dml.InvalidArgumentError, match=re.escape(f"Device: operator must be an operator created on "
                                                                 f"{mine!r}; got an operator created on {another}.")):
        mine.compile_operator(twin.create_operator(dml.ElementWiseClipDesc(F8, F8, -1.0, 1.0)))
    with pytest.raises(dml.InvalidArgumentError, match=re.escape(f"Device: dispatchable must be made on {mine!r}; got ") + ".*, made on " + re.escape(another)):
        mine.create_binding_table(their_op)
    their_table = twin.create_binding_table(their_op)
    with pytest.raises(dml.InvalidArgumentError, match=r"^CommandRecorder: command_list must be a command list of"):
        mine.create_command_recorder().record_dispatch(twin.create_command_list(), op, table(mine, op, [x], [x]))
    with pytest.raises(dml.InvalidArgumentError, match=r"^CommandRecorder: binding_table must be a binding table"):
        mine.create_command_recorder().record_dispatch(mine.create_command_list(), op, their_table)
    theirs = twin.create_command_list()
    theirs.close()
    with pytest.raises(dml.InvalidArgumentError, match=r"^CommandQueue: lists\[0\] must be a command list of "):
        mine.create_command_queue().execute_command_lists([theirs])
    assert read(x, np.float32, 8).tolist() == X  # nothing ran
    run(mine, record(mine, (op, table(mine, op, [x], [x]))))
    assert read(x, np.float32, 8).tolist() == clipped(X)
