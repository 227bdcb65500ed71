"""Binding rules (SPEC 2-3): alignment, sizes, ranges, counts, overlaps, in place; and the lifecycle."""

from __future__ import annotations

import gc
import pickle
import weakref

import numpy as np
import pytest

import opendml as dml
from opendml import BufferBinding, TensorDesc, operator

T8 = TensorDesc("FLOAT32", [8])


def compiled(device: dml.Device, desc: object) -> dml.CompiledOperator:
    return device.compile_operator(device.create_operator(desc))


def clip_op(device: dml.Device, t: TensorDesc = T8) -> dml.CompiledOperator:
    return compiled(device, dml.ElementWiseClipDesc(t, t, -1.0, 1.0))


def floats(device: dml.Device, values: np.ndarray) -> dml.Buffer:
    return device.buffer_from(np.asarray(values, np.float32))


@pytest.mark.parametrize(("binding", "message"), [
    (lambda b: BufferBinding(b, offset=8), r"ELEMENT_WISE_CLIP: InputTensor.Offset must be a non-negative multiple of 16; got 8\."),
    (lambda b: BufferBinding(b, offset=-16), r"InputTensor.Offset must be a non-negative multiple of 16; got -16\."),
    (lambda b: BufferBinding(b, offset=16), r"InputTensor.SizeInBytes must be at least TotalTensorSizeInBytes \(32\); got 24\."),
    (lambda b: BufferBinding(b, size_in_bytes=28), r"InputTensor.SizeInBytes must be at least TotalTensorSizeInBytes \(32\); got 28\."),
    (lambda b: BufferBinding(b, offset=16, size_in_bytes=32), r"InputTensor binding must lie inside its buffer of 40 bytes; got bytes \[16, 48\)\."),
    (lambda b: "buffer", r"InputTensor must be a BufferBinding; got 'buffer'\."),
    (lambda b: None, r"InputTensor must be a BufferBinding; got None\."),
])
def test_bad_input_binding(device: dml.Device, binding, message: str) -> None:
    op = clip_op(device)
    buffer = device.create_buffer(40)
    out = device.create_buffer(32)
    with pytest.raises(dml.BindingError, match=message):
        op.execute([binding(buffer)], [BufferBinding(out)])


def test_guaranteed_alignment_raises_the_offset_rule(device: dml.Device) -> None:
    t = TensorDesc("FLOAT32", [4], guaranteed_base_offset_alignment=64)
    op = clip_op(device, t)
    buffer = device.create_buffer(256)
    with pytest.raises(dml.BindingError, match=r"Offset must be a non-negative multiple of 64; got 32\."):
        op.execute([BufferBinding(buffer, 32)], [BufferBinding(buffer, 128)])
    op.execute([BufferBinding(buffer, 64)], [BufferBinding(buffer, 128)])


@pytest.mark.parametrize(("inputs", "outputs", "message"), [
    (2, 1, r"ELEMENT_WISE_CLIP: inputs must hold 1 binding\(s\), one per tensor \(InputTensor\); got 2\."),
    (0, 1, r"inputs must hold 1 binding\(s\)"),
    (1, 0, r"outputs must hold 1 binding\(s\), one per tensor \(OutputTensor\); got 0\."),
])
def test_binding_counts(device: dml.Device, inputs: int, outputs: int, message: str) -> None:
    op = clip_op(device)
    buffer = device.create_buffer(32)
    with pytest.raises(dml.BindingError, match=message):
        op.execute([BufferBinding(buffer)] * inputs, [BufferBinding(device.create_buffer(32))] * outputs)


def test_bindings_must_be_a_list(device: dml.Device) -> None:
    with pytest.raises(dml.BindingError, match=r"inputs must be a list of bindings; got CpuBuffer|inputs must be"):
        clip_op(device).execute(device.create_buffer(32), [device.create_buffer(32)])  # type: ignore[arg-type]


def test_absent_optional_tensor_binds_as_none(device: dml.Device) -> None:
    t = TensorDesc("UINT8", [4])
    f = TensorDesc("FLOAT32", [4])
    op = compiled(device, dml.ElementWiseDequantizeLinearDesc(t, f, None, f))
    x, scale, out = device.create_buffer(4), floats(device, [1, 1, 1, 1]), device.create_buffer(16)
    with pytest.raises(dml.BindingError, match=r"ZeroPointTensor must be bound as None \(the tensor is absent\)"):
        op.execute([x, scale, x], [out])
    op.execute([x, scale, None], [out])
    with_zero_point = compiled(device, dml.ElementWiseDequantizeLinearDesc(t, f, t, f))
    with pytest.raises(dml.BindingError, match=r"ZeroPointTensor must be a BufferBinding; got None"):
        with_zero_point.execute([x, scale, None], [out])


def test_in_place_clip_and_threshold(device: dml.Device) -> None:
    buffer = floats(device, [-3, -0.5, 0, 0.5, 3, 7, -7, 1])
    clip_op(device).execute([BufferBinding(buffer)], [BufferBinding(buffer)])
    assert buffer.to_numpy().view(np.float32).tolist() == [-1, -0.5, 0, 0.5, 1, 1, -1, 1]
    threshold = compiled(device, dml.ElementWiseThresholdDesc(T8, T8, 0.25))
    threshold.execute([buffer], [buffer])
    assert buffer.to_numpy().view(np.float32).tolist() == [0.25, 0.25, 0.25, 0.5, 1, 1, 0.25, 1]


def test_in_place_needs_an_exact_alias(device: dml.Device) -> None:
    buffer = device.create_buffer(64)
    op = clip_op(device)
    with pytest.raises(dml.BindingError, match=r"OutputTensor binding may alias InputTensor only exactly"):
        op.execute([BufferBinding(buffer, 0)], [BufferBinding(buffer, 16)])
    reversed_layout = TensorDesc("FLOAT32", [2, 4], [1, 2])
    packed = TensorDesc("FLOAT32", [2, 4])
    transpose = compiled(device, dml.ElementWiseClipDesc(packed, reversed_layout, 0.0, 1.0))
    with pytest.raises(dml.BindingError, match=r"may alias InputTensor only exactly"):
        transpose.execute([buffer], [buffer])


@pytest.mark.parametrize("kind", ["argmin", "dequantize"])
def test_no_in_place_for_argmin_and_dequantize(device: dml.Device, kind: str) -> None:
    buffer = device.create_buffer(64)
    if kind == "argmin":
        op = compiled(device, dml.ArgMinDesc(TensorDesc("UINT32", [4]), TensorDesc("UINT32", [1]), [0]))
        inputs = [BufferBinding(buffer)]
    else:
        t = TensorDesc("FLOAT32", [4])
        op = compiled(device, dml.ElementWiseDequantizeLinearDesc(TensorDesc("INT32", [4]), t, None, t))
        inputs = [BufferBinding(buffer), BufferBinding(buffer), None]  # inputs may share memory
    with pytest.raises(dml.BindingError, match=r"OutputTensor binding must not overlap InputTensor"):
        op.execute(inputs, [BufferBinding(buffer)])


def test_disjoint_ranges_of_one_buffer_are_fine(device: dml.Device) -> None:
    buffer = device.buffer_from(np.array([5, -5, 0.5, 9] + [0] * 4, np.float32))
    t = TensorDesc("FLOAT32", [4])
    clip_op(device, t).execute([BufferBinding(buffer, 0, 16)], [BufferBinding(buffer, 16)])
    assert buffer.to_numpy().view(np.float32).tolist() == [5, -5, 0.5, 9, 1, -1, 0.5, 1]


def test_output_padding_and_surroundings_are_never_written(device: dml.Device) -> None:
    x = TensorDesc("INT16", [2, 3])
    out = TensorDesc("INT16", [2, 3], [8, 2], total_tensor_size_in_bytes=64)  # padded rows and columns
    op = compiled(device, dml.ElementWiseClipDesc(x, out, -100, 100))
    src = device.buffer_from(np.array([1, -200, 3, 400, 5, 6, 0, 0], np.int16))
    dst = device.buffer_from(np.full(128, 0xAB, np.uint8))
    op.execute([src], [BufferBinding(dst, 32, 64)])
    raw = dst.to_numpy()
    elements = raw[32:96].view(np.int16)
    addressed = [0, 2, 4, 8, 10, 12]
    assert elements[addressed].tolist() == [1, -100, 3, 100, 5, 6]
    untouched = np.ones(128, bool)
    for k in addressed:
        untouched[32 + 2 * k: 32 + 2 * k + 2] = False
    assert (raw[untouched] == 0xAB).all()


def test_strided_and_broadcast_inputs(device: dml.Device) -> None:
    # Input read with a zero stride on rows and stride 2 on columns: every row sees [0, 2, 4] of the data.
    x = TensorDesc("FLOAT32", [3, 3], [0, 2])
    out = TensorDesc("FLOAT32", [3, 3])
    op = compiled(device, dml.ElementWiseThresholdDesc(x, out, 1.5))
    src = floats(device, [1, 100, 2, 100, 3, 100])
    dst = device.create_buffer(36)
    op.execute([src], [dst])
    assert dst.to_numpy().view(np.float32).tolist() == [1.5, 2, 3] * 3


def test_buffers_of_another_backend_are_rejected(device: dml.Device) -> None:
    class Foreign(dml.Buffer):
        address = 0

    op = clip_op(device)
    with pytest.raises(dml.BindingError, match=r"InputTensor.Buffer must be a buffer of Device"):
        op.execute([BufferBinding(Foreign(object(), 64))], [device.create_buffer(32)])  # type: ignore[arg-type]


def _other_cpu_devices(device: dml.Device) -> list[dml.Device]:
    """CPU devices other than ``device``: one made alike (backend, level, threads), and others of other thread
    counts and feature levels, whose buffers lie in the same memory but are not this device's."""
    return [dml.Device("cpu", device.feature_level, threads=device.threads),
            dml.Device("cpu", device.feature_level, threads=device.threads + 1), dml.Device("cpu", "5_0")]


@pytest.mark.parametrize("which", range(3))
def test_a_buffer_of_another_cpu_device_is_refused_and_nothing_changes(which: int) -> None:
    """A buffer made by another CPU Device bound and ran (the check compared backends only)."""
    device = dml.Device("cpu")
    other = _other_cpu_devices(device)[which]
    op = clip_op(device)
    values = np.array([-3, -0.5, 0, 0.5, 3, 7, -7, 1], np.float32)
    pattern = np.full(8, 42.0, np.float32)
    mine_in, mine_out = floats(device, values), floats(device, pattern)
    theirs_in, theirs_out = floats(other, values), floats(other, pattern)
    cases: list[tuple[list[dml.Buffer | BufferBinding], list[dml.Buffer | BufferBinding], str, dml.Buffer]] = [
        ([theirs_in], [mine_out], "InputTensor", theirs_in), ([mine_in], [theirs_out], "OutputTensor", theirs_out),
        ([BufferBinding(theirs_in, 0, 32)], [BufferBinding(theirs_out)], "InputTensor", theirs_in)]
    for inputs, outputs, field, foreign in cases:
        with pytest.raises(dml.BindingError) as e:
            op.execute(inputs, outputs)
        text = str(e.value)
        assert text.startswith(f"ELEMENT_WISE_CLIP: {field}.Buffer must be a buffer of {device!r}, the device it "
                               "is bound on (made by its create_buffer or buffer_from); got ")
        assert repr(foreign) in text
        assert ("another Device object" in text) if repr(other) == repr(device) else (f"on {other!r}>." in text)
        for buffer in (mine_out, theirs_out):
            assert buffer.to_numpy().view(np.float32).tolist() == pattern.tolist()
    assert "(3 threads)" in _refusal(device, dml.Device("cpu", device.feature_level, threads=3))
    op.execute([mine_in], [mine_out])  # its own buffers still run
    assert mine_out.to_numpy().view(np.float32).tolist() == np.clip(values, -1, 1).tolist()


def _refusal(device: dml.Device, other: dml.Device) -> str:
    with pytest.raises(dml.BindingError) as e:
        clip_op(device).execute([other.create_buffer(32)], [device.create_buffer(32)])
    return str(e.value)


def test_binding_tables_and_graphs_refuse_another_cpu_device_s_buffers() -> None:
    device, other = dml.Device("cpu"), dml.Device("cpu")
    op = clip_op(device)
    x, y = floats(device, np.arange(8) - 4.0), device.create_buffer(32)
    made = device.create_binding_table(op)
    made.bind_inputs([x])
    made.bind_outputs([y])
    with pytest.raises(dml.BindingError, match=r"^ELEMENT_WISE_CLIP: InputTensor\.Buffer must be a buffer of "):
        made.bind_inputs([other.create_buffer(32)])
    with pytest.raises(dml.BindingError, match=r"^ELEMENT_WISE_CLIP: OutputTensor\.Buffer must be a buffer of "):
        made.bind_outputs([other.create_buffer(32)])
    recorder, work = device.create_command_recorder(), device.create_command_list()
    recorder.record_dispatch(work, op, made)  # the table kept its own buffers
    work.close()
    device.create_command_queue().execute_command_lists([work])
    assert y.to_numpy().view(np.float32).tolist() == [-1, -1, -1, -1, 0, 1, 1, 1]
    graph = dml.Graph(device)
    compiled_graph = graph.compile([dml.graph.clip(graph.input(0, T8), -1.0, 1.0)])
    with pytest.raises(dml.BindingError, match=r"^GRAPH: Inputs\[0\]\.Buffer must be a buffer of "):
        compiled_graph.execute([other.create_buffer(32)], [y])
    with pytest.raises(dml.BindingError, match=r"^GRAPH: Outputs\[0\]\.Buffer must be a buffer of "):
        compiled_graph.execute([x], [other.create_buffer(32)])
    graph_table = device.create_binding_table(compiled_graph)
    with pytest.raises(dml.BindingError, match=r"^GRAPH: TemporaryResource\.Buffer must be a buffer of "):
        graph_table.bind_temporary_resource(other.create_buffer(4096))


def test_a_compiled_operator_pickled_with_its_device_binds_that_device_s_buffers() -> None:
    """Pickling keeps one device for a task: the operator and the device sent together unpickle to one
    device object, whose buffers bind; a buffer of another device made alike is refused."""
    device = dml.Device("cpu", "6_1", threads=1)
    op, sent_device = pickle.loads(pickle.dumps((clip_op(device), device)))
    assert op.operator.device is sent_device
    x = floats(sent_device, np.arange(8) - 4.0)
    y = sent_device.create_buffer(32)
    op.execute([x], [y])
    assert y.to_numpy().view(np.float32).tolist() == [-1, -1, -1, -1, 0, 1, 1, 1]
    with pytest.raises(dml.BindingError, match="a buffer of another Device object"):
        op.execute([x], [dml.Device("cpu", "6_1", threads=1).create_buffer(32)])


def test_initialization_happens_once_before_the_first_execution(device: dml.Device) -> None:
    op = clip_op(device)
    assert not op.initialized
    buffer = device.create_buffer(32)
    op.execute([buffer], [buffer])
    assert op.initialized
    op.execute([buffer], [buffer])
    assert op.initialized


def test_a_failed_binding_changes_nothing(device: dml.Device) -> None:
    op = clip_op(device)
    src = floats(device, [9] * 8)
    dst = device.buffer_from(np.full(32, 7, np.uint8))
    with pytest.raises(dml.BindingError):
        op.execute([BufferBinding(src, 16)], [dst])
    assert (dst.to_numpy() == 7).all() and not op.initialized


def test_compile_rejects_foreign_objects(device: dml.Device) -> None:
    with pytest.raises(dml.InvalidArgumentError, match=r"Device: operator must be an operator created on"):
        device.compile_operator("clip")  # type: ignore[arg-type]
    with pytest.raises(dml.InvalidArgumentError, match=r"ExecutionFlags must be one of"):
        device.compile_operator(device.create_operator(dml.ElementWiseClipDesc(T8, T8, 0, 1)), flags="FAST")


def test_buffers(device: dml.Device) -> None:
    buffer = device.create_buffer(10)
    assert buffer.size_in_bytes == 10 and buffer.to_numpy().tolist() == [0] * 10
    copied = device.buffer_from(np.array([[1, 2], [3, 4]], np.uint16).T)  # row-major copy of the view
    assert copied.to_numpy().view(np.uint16).tolist() == [1, 3, 2, 4]
    with pytest.raises(dml.InvalidArgumentError, match=r"size_in_bytes must be a non-negative integer; got -1\."):
        device.create_buffer(-1)


def test_repeated_executions_recheck_what_changed(device: dml.Device) -> None:
    op = clip_op(device)
    src, dst = floats(device, [5] * 16), device.create_buffer(32)
    for _ in range(3):
        op.execute([BufferBinding(src)], [BufferBinding(dst)])
    assert dst.to_numpy().view(np.float32).tolist() == [1] * 8
    with pytest.raises(dml.BindingError, match=r"Offset must be a non-negative multiple of 16; got 16\.0"):
        op.execute([BufferBinding(src, 16.0)], [BufferBinding(dst)])  # type: ignore[arg-type]
    with pytest.raises(dml.BindingError, match=r"OutputTensor binding may alias InputTensor only exactly"):
        op.execute([BufferBinding(src)], [BufferBinding(src, 16, 32)])


def test_remembered_bindings_keep_no_buffer_alive(device: dml.Device) -> None:
    op = clip_op(device)
    src, dst = floats(device, [5] * 8), device.create_buffer(32)
    op.execute([BufferBinding(src)], [dst])
    refs = [weakref.ref(src), weakref.ref(dst)]
    del src, dst
    gc.collect()
    assert [ref() for ref in refs] == [None, None]


def test_the_same_buffers_are_checked_once_and_new_ones_again(device: dml.Device,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real_bind = operator.bind
    monkeypatch.setattr(operator, "bind", lambda *args: calls.append(len(args)) or real_bind(*args))
    op = clip_op(device)
    src, dst = floats(device, [5, -5, 0.5, 0, 2, -2, 1, -1]), device.create_buffer(32)
    for _ in range(3):
        op.execute([BufferBinding(src)], [BufferBinding(dst)])
    assert len(calls) == 1
    assert dst.to_numpy().view(np.float32).tolist() == [1, -1, 0.5, 0, 1, -1, 1, -1]
    other = device.create_buffer(32)
    op.execute([BufferBinding(src)], [BufferBinding(other)])
    op.execute([BufferBinding(src)], [BufferBinding(dst)])  # still remembered beside the new one
    assert len(calls) == 2
    assert other.to_numpy().view(np.float32).tolist() == [1, -1, 0.5, 0, 1, -1, 1, -1]


def test_bindings_executed_again_run_the_prepared_call(device: dml.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second execution of the same buffers prepares the kernel's call over them, as a recorded dispatch
    does; later ones run it (new data in the same buffers included), and other bindings do not."""
    op = clip_op(device)
    kernel = op.kernel
    prepared, executed = [], []
    real_prepare, real_execute = kernel.prepare, kernel.execute  # type: ignore[attr-defined]
    monkeypatch.setattr(kernel, "prepare", lambda *args: prepared.append(1) or real_prepare(*args))
    monkeypatch.setattr(kernel, "execute", lambda *args: executed.append(1) or real_execute(*args))
    src, dst = floats(device, [5, -5, 0.5, 0, 2, -2, 1, -1]), device.create_buffer(32)
    for k in range(5):
        src.data[:] = device.backend.xp.asarray(np.full(8, k - 2.5, np.float32).view(np.uint8))  # type: ignore[attr-defined]
        op.execute([BufferBinding(src)], [BufferBinding(dst)])
        assert dst.to_numpy().view(np.float32).tolist() == [max(-1.0, min(1.0, k - 2.5))] * 8
    assert (len(executed), len(prepared)) == (2, 1)
    other = device.create_buffer(32)
    op.execute([BufferBinding(src)], [other])
    assert (len(executed), len(prepared)) == (3, 1)
    assert other.to_numpy().view(np.float32).tolist() == [1] * 8


def test_prepared_executions_keep_no_buffer_or_memory_alive(device: dml.Device) -> None:
    op = clip_op(device)
    src, dst = floats(device, [5] * 8), device.create_buffer(32)
    for _ in range(3):  # the third runs the prepared call, which holds views of both buffers' memory
        op.execute([BufferBinding(src)], [dst])
    refs = [weakref.ref(src), weakref.ref(dst)]
    if device.backend.name == "cpu":
        refs += [weakref.ref(src.data), weakref.ref(dst.data)]  # type: ignore[attr-defined]
    del src, dst
    gc.collect()
    assert [ref() for ref in refs] == [None] * len(refs)


def test_a_buffer_made_where_a_freed_one_lay_is_bound_anew(device: dml.Device) -> None:
    """A prepared call goes with its buffers: a new buffer of the freed one's id is checked and used."""
    op = clip_op(device)
    src, dst = floats(device, [5] * 8), device.create_buffer(32)
    for _ in range(3):
        op.execute([src], [dst])
    ids = id(src), id(dst)
    del src, dst
    made = [device.create_buffer(32) for _ in range(64)]  # CPython hands freed slots out again: some land there
    found = {id(buffer): buffer for buffer in made}
    if not set(ids) <= set(found):
        pytest.skip("the allocator placed no new buffers where the freed ones were")
    new_src, new_dst = found[ids[0]], found[ids[1]]
    new_src.data[:] = device.backend.xp.asarray(  # type: ignore[attr-defined]
        np.array([-5, 0.5, 5, 0, -0.25, 3, -3, 1], np.float32).view(np.uint8))
    op.execute([new_src], [new_dst])
    assert new_dst.to_numpy().view(np.float32).tolist() == [-1, 0.5, 1, 0, -0.25, 1, -1, 1]
    with pytest.raises(dml.BindingError, match=r"OutputTensor.Offset must be a non-negative multiple of 16; got 8"):
        op.execute([new_src], [BufferBinding(new_dst, 8)])


@pytest.mark.parametrize("call", [
    lambda x: dml.argmin(x, 0),
    lambda x: dml.dequantize_linear(x.astype(np.uint8), np.float32(0.5), np.uint8(3)),
    lambda x: dml.clip(x, -1.0, 1.0),
], ids=["argmin", "dequantize_linear", "clip"])
def test_a_functional_result_is_freed_with_its_last_reference(call) -> None:  # type: ignore[no-untyped-def]
    """The default device lives as long as the process and keeps its compiled operators: the memory of each
    call's result (and a copied input's) must go with the caller's last reference, not stay bound."""
    x = np.arange(48, dtype=np.float32).reshape(6, 8)
    refs = []
    for _ in range(3):
        result = call(x)
        while isinstance(result.base, np.ndarray):  # the raw bytes under the result
            result = result.base
        refs.append(weakref.ref(result))
        del result
    gc.collect()
    assert [ref() for ref in refs] == [None] * 3
