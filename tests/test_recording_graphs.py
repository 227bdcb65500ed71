"""Compiled graphs in the recording model: their binding rules at bind time, a temporary resource holding
their intermediates, a persistent resource holding their constants (written by an operator initializer)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import opendml as dml
from opendml import BufferBinding
from tests.recording_helpers import (
    INDEX,
    ROWS,
    clipped,
    floats,
    read,
    record,
    row_argmins,
    run,
    table,
    thresholded,
    write,
)

X = [-3.0, -0.5, 0.0, 0.5, 3.0, 7.0, -7.0, 0.75]
X2 = [0.5, 0.3, 0.9, 0.1, -5.0, 2.0, 0.2, 0.4]


def exact(text: str) -> str:
    return f"^{re.escape(text)}$"


def chain(device: dml.Device) -> dml.GraphDesc:
    """CLIP -> THRESHOLD -> ARGMIN over FLOAT32 [2, 4], one graph input and one graph output."""
    nodes = [dml.OperatorNode(device.create_operator(dml.ElementWiseClipDesc(ROWS, ROWS, -1.0, 1.0))),
             dml.OperatorNode(device.create_operator(dml.ElementWiseThresholdDesc(ROWS, ROWS, 0.25))),
             dml.OperatorNode(device.create_operator(dml.ArgMinDesc(ROWS, INDEX, [1])))]
    return dml.GraphDesc(1, 1, nodes, [dml.InputEdge(0, 0, 0)], [dml.OutputEdge(2, 0, 0)],
                         [dml.IntermediateEdge(0, 0, 1, 0), dml.IntermediateEdge(1, 0, 2, 0)])


@pytest.fixture
def unfused(device: dml.Device, monkeypatch: pytest.MonkeyPatch) -> dml.CompiledGraph:
    """The chain with each node its own step: its two intermediates live in the temporary memory."""
    monkeypatch.setenv("OPENDML_FUSION", "0")
    return device.compile_graph(chain(device))


def with_constant(device: dml.Device, values: list[float], flags: str = "NONE") -> dml.CompiledGraph:
    """A constant FLOAT32 [2, 4] -> CLIP -> graph output 0."""
    clip = device.create_operator(dml.ElementWiseClipDesc(ROWS, ROWS, -1.0, 1.0))
    desc = dml.GraphDesc(0, 1, [dml.ConstantNode(floats(values)), dml.OperatorNode(clip)],
                         output_edges=[dml.OutputEdge(1, 0, 0)], intermediate_edges=[dml.IntermediateEdge(0, 0, 1, 0)])
    return device.compile_graph(desc, flags)


def test_graph_bindings_are_checked_at_bind_time(device: dml.Device, unfused: dml.CompiledGraph) -> None:
    made = device.create_binding_table(unfused)
    x, out = device.create_buffer(32), device.create_buffer(16)
    with pytest.raises(dml.BindingError, match=exact("GRAPH: inputs must hold 1 binding(s), one per graph input; "
                                                     "got 2.")):
        made.bind_inputs([x, x])
    with pytest.raises(dml.BindingError, match=exact("GRAPH: Outputs[0].SizeInBytes must be at least "
                                                     "TotalTensorSizeInBytes (16); got 8.")):
        made.bind_outputs([BufferBinding(out, 0, 8)])
    made.bind_inputs([x])
    with pytest.raises(dml.BindingError, match=exact("GRAPH: Outputs[0] binding must not overlap Inputs[0]; got "
                                                     "bytes [16, 32) against [0, 32).")):
        made.bind_outputs([BufferBinding(x, 16, 16)])


def test_graph_binding_properties(device: dml.Device, unfused: dml.CompiledGraph) -> None:
    # Two FLOAT32 [2, 4] intermediates of 32 bytes, one after the other on 16-byte boundaries; no constants.
    assert unfused.binding_properties == dml.BindingProperties(64, 0)
    assert with_constant(device, X).binding_properties == dml.BindingProperties(0, 32)


def test_a_graph_recorded_over_its_own_arena(device: dml.Device, unfused: dml.CompiledGraph) -> None:
    x, out = device.buffer_from(floats(X)), device.create_buffer(16)
    run(device, record(device, (unfused, table(device, unfused, [x], [out]))))
    assert read(out, np.int64, 2).tolist() == row_argmins(thresholded(clipped(X)))


def test_a_temporary_resource_holds_the_intermediates(device: dml.Device, unfused: dml.CompiledGraph) -> None:
    x, out = device.create_buffer(32), device.create_buffer(16)
    temporary = device.buffer_from(np.full(512, 0xAB, np.uint8))
    made = table(device, unfused, [x], [out])
    made.bind_temporary_resource(BufferBinding(temporary, 256))
    command_list = record(device, (unfused, made))
    first, second = (256 + region.offset for region in unfused.plan.intermediates)
    for values in (X, X2):
        write(device, x, floats(values))
        run(device, command_list)
        assert read(temporary, np.float32, 8, first).tolist() == clipped(values)
        assert read(temporary, np.float32, 8, second).tolist() == thresholded(clipped(values))
        assert read(out, np.int64, 2).tolist() == row_argmins(thresholded(clipped(values)))
    raw = temporary.to_numpy()
    assert (raw[:256] == 0xAB).all() and (raw[256 + 64:] == 0xAB).all()  # nothing outside the resource


def test_temporary_resource_rules(device: dml.Device, unfused: dml.CompiledGraph) -> None:
    class Foreign(dml.Buffer):
        address = 0

    shared = device.create_buffer(512)
    made = table(device, unfused, [BufferBinding(shared, 0, 32)], [device.create_buffer(16)])
    refusals = [
        (BufferBinding(shared, 256, 32),
         "GRAPH: TemporaryResource.SizeInBytes must be at least TemporaryResourceSize (64); got 32."),
        (BufferBinding(shared, 16), "GRAPH: TemporaryResource.Offset must be a non-negative multiple of 256; got 16."),
        (BufferBinding(shared, 0), "GRAPH: TemporaryResource binding must not overlap Inputs[0]; got bytes [0, 64) "
                                   "against [0, 32)."),
        (BufferBinding(shared, 256, 1 << 20), "GRAPH: TemporaryResource binding must lie inside its buffer of 512 "
                                              "bytes; got bytes [256, 1048832)."),
    ]
    for binding, message in refusals:
        with pytest.raises(dml.BindingError, match=exact(message)):
            made.bind_temporary_resource(binding)
    with pytest.raises(dml.BindingError, match=r"^GRAPH: TemporaryResource.Buffer must be a buffer of Device"):
        made.bind_temporary_resource(Foreign(object(), 4096))  # type: ignore[arg-type]
    made.bind_temporary_resource(BufferBinding(shared, 256))
    with pytest.raises(dml.BindingError, match=exact("GRAPH: TemporaryResource binding must not overlap Inputs[0]; "
                                                     "got bytes [256, 320) against [256, 288).")):
        made.bind_inputs([BufferBinding(shared, 256, 32)])  # inputs moved onto the resource: refused too


def test_an_initializer_writes_the_constants_a_persistent_resource_holds(device: dml.Device) -> None:
    graph = with_constant(device, X)
    persistent, out = device.create_buffer(512), device.create_buffer(32)
    initializer = device.create_operator_initializer([graph])
    init_table = table(device, initializer, outputs=[BufferBinding(persistent, 256)])
    graph_table = table(device, graph, [], [out])
    graph_table.bind_persistent_resource(BufferBinding(persistent, 256))
    run(device, record(device, (initializer, init_table), (graph, graph_table)))
    assert read(persistent, np.float32, 8, 256).tolist() == X
    assert read(out, np.float32, 8).tolist() == clipped(X)
    write(device, persistent, floats(X2), 256)  # the graph reads its constants there, not from its own copy
    run(device, record(device, (graph, graph_table)))
    assert read(out, np.float32, 8).tolist() == clipped(X2)


def test_constants_must_be_written_before_they_are_read(device: dml.Device) -> None:
    graph = with_constant(device, X)
    persistent, out = device.create_buffer(256), device.create_buffer(32)
    graph_table = table(device, graph, [], [out])
    graph_table.bind_persistent_resource(persistent)
    dispatch = record(device, (graph, graph_table))
    initializer = device.create_operator_initializer([graph])
    initialize = record(device, (initializer, table(device, initializer, outputs=[persistent])))
    queue = device.create_command_queue()
    with pytest.raises(dml.InvalidArgumentError, match=r"^CommandQueue: lists\[0\] must not read a graph's "
                       r"constants from a persistent resource before an operator initializer dispatch wrote them "
                       r"there .*; got dispatch 0 of GRAPH of 2 nodes reading bytes at 0 of <"):
        queue.execute_command_lists([dispatch, initialize])
    assert read(out, np.float32, 8).tolist() == [0.0] * 8  # nothing ran
    queue.execute_command_lists([initialize, dispatch])  # written earlier in the same call
    queue.execute_command_lists([dispatch])  # and from now on
    queue.wait()
    assert read(out, np.float32, 8).tolist() == clipped(X)


def test_persistent_resource_rules(device: dml.Device) -> None:
    first, second = with_constant(device, X), with_constant(device, X2)
    shared = device.create_buffer(512)
    with pytest.raises(dml.BindingError, match=exact("GRAPH: PersistentResource.SizeInBytes must be at least "
                                                     "PersistentResourceSize (32); got 16.")):
        device.create_binding_table(first).bind_persistent_resource(BufferBinding(shared, 0, 16))
    made = device.create_binding_table(device.create_operator_initializer([first, second]))
    with pytest.raises(dml.BindingError, match=exact("OperatorInitializer: Outputs[1] binding must not overlap "
                                                     "Outputs[0]; got bytes [0, 32) against [0, 32).")):
        made.bind_outputs([shared, shared])
    made.bind_outputs([BufferBinding(shared, 0), BufferBinding(shared, 256)])


def test_a_volatile_graph_reads_its_table_when_executed(device: dml.Device) -> None:
    graph = with_constant(device, X, "DESCRIPTORS_VOLATILE")
    first, second = device.create_buffer(32), device.create_buffer(32)
    made = table(device, graph, [], [first])
    command_list = record(device, (graph, made))
    made.bind_outputs([second])
    run(device, command_list)
    assert read(second, np.float32, 8).tolist() == clipped(X) and read(first, np.float32, 8).tolist() == [0.0] * 8
