"""Running a model on a device: buffers, operators, then the commands in order with state kept."""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import BinaryIO, TextIO

import numpy as np

from .. import Buffer, BufferBinding, CompiledOperator, Device, FeatureLevel, OpenDMLError
from ..graphs import CompiledGraph
from ..operator import Operator
from ..recording import CommandList, CommandQueue, CommandRecorder
from .commands import Command, DispatchCommand, PrintCommand, WriteFileCommand
from .dispatchables import COMPILE_GRAPH, Dispatchable
from .errors import ModelError, child, guard, locate
from .formatting import format_chunks, format_verbose
from .graphs import AnyDispatchable, GraphDispatchable, one_node_graph
from .model import Model
from .outputs import StagedFiles
from .progress import Progress
from .timing import TimingOptions, measure, report


def make_device(backend: str, feature_level: FeatureLevel | str) -> Device:
    """``backend`` "auto" is CUDA when a CUDA device can be created, else the CPU."""
    if backend == "auto":
        try:
            return Device("cuda", feature_level)
        except OpenDMLError:
            return Device("cpu", feature_level)
    return Device(backend, feature_level)


@dataclass
class Runner:
    """Runs one model; files written by writeFile appear only once every command has succeeded."""

    model: Model
    device: Device
    timing: TimingOptions = field(default_factory=TimingOptions)
    out: TextIO | None = None
    print_commands: bool = False
    progress_stream: TextIO | None = None
    buffers: dict[str, Buffer] = field(default_factory=dict)
    operators: dict[str, CompiledOperator | CompiledGraph] = field(default_factory=dict)
    files: StagedFiles = field(default_factory=StagedFiles)
    _recorder: CommandRecorder | None = field(default=None, init=False, repr=False)
    _command_queue: CommandQueue | None = field(default=None, init=False, repr=False)

    def run(self) -> None:
        try:
            self.create_operators()  # the rest of the model's errors, before any large allocation
            self.create_buffers()
            for command in self.model.commands:
                if self.print_commands:
                    self._print(f"Command {command.index}: {command.source}")
                with guard(command.path):
                    self.run_command(command)
            for resource, target in self.files.commit():
                self._print(f"Resource '{resource}' written to '{target}'")
        finally:
            self.files.discard()  # what is left after a failure: nothing once committed

    def run_command(self, command: Command) -> None:
        if isinstance(command, DispatchCommand):
            self.dispatch(command)
        elif isinstance(command, PrintCommand):
            self.print_resource(command)
        else:
            self.write_file(command)

    def create_buffers(self) -> None:
        """Each buffer made in one allocation and filled in place (a CPU buffer takes that memory as it is)."""
        on_host = self.device.backend.name == "cpu"
        for name, resource in self.model.resources.items():
            with guard(resource.path):
                data = resource.initial_bytes()
                self.buffers[name] = (self.device.backend.wrap(self.device, data) if on_host
                                      else self.device.buffer_from(data))

    def create_operators(self) -> None:
        """Create (validate) and compile every dispatchable before any command runs; graphs come last, as
        their nodes are the operators created for the operator dispatchables they name."""
        created: dict[str, Operator] = {}
        dispatchables = self.model.dispatchables.values()
        for dispatchable in [d for d in dispatchables if isinstance(d, Dispatchable)]:
            with self._initializing(dispatchable.name):
                created[dispatchable.name] = operator = self._create(dispatchable)
                self.operators[dispatchable.name] = self._compile(dispatchable, operator)
        for graph in [d for d in dispatchables if isinstance(d, GraphDispatchable)]:
            with self._initializing(graph.name):
                self.operators[graph.name] = self._compile_graph(graph, created)

    @contextmanager
    def _initializing(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        if self.timing.verbosity >= 1:
            self._print(f"Initialize '{name}': {1000 * (time.perf_counter() - start):.4f} ms")

    def _create(self, dispatchable: Dispatchable) -> Operator:
        try:
            return self.device.create_operator(dispatchable.desc)
        except OpenDMLError as error:
            raise locate(error, dispatchable.desc_path, dispatchable.desc_json) from None

    def _compile(self, dispatchable: Dispatchable, operator: Operator) -> CompiledOperator | CompiledGraph:
        """DmlCompileOp compiles the operator; DmlCompileGraph compiles it as the one node of a graph."""
        flags = dispatchable.execution_flags
        if dispatchable.compile_type != COMPILE_GRAPH:
            try:
                return self.device.compile_operator(operator, flags)
            except OpenDMLError as error:
                raise locate(error, dispatchable.desc_path, dispatchable.desc_json) from None
        try:
            return self.device.compile_graph(one_node_graph(operator, dispatchable.name), flags)
        except OpenDMLError as error:  # the description was valid: what failed is compiling it as a graph
            raise locate(error, child(dispatchable.path, "dmlCompileType"), dispatchable.compile_type) from None

    def _compile_graph(self, graph: GraphDispatchable, created: dict[str, Operator]) -> CompiledGraph:
        try:
            return self.device.compile_graph(graph.graph_desc(created), graph.execution_flags)
        except OpenDMLError as error:  # GraphDesc's fields are the JSON's: "IntermediateEdges[2].ToNodeIndex"
            raise locate(error, graph.desc_path, graph.desc_json) from None

    def dispatch(self, command: DispatchCommand) -> None:
        """Bind the command's resources into a binding table and record ``repeat`` dispatches into one command
        list, then time executions of that list (one per iteration), as DxDispatch records its dispatches."""
        dispatchable = self.model.dispatchables[command.dispatchable]
        operator = self.operators[command.dispatchable]
        queue = self._queue()
        progress = Progress(f"Dispatch '{command.dispatchable}'", self.progress_stream)
        try:
            work = self._record(command, dispatchable, operator)

            def iteration() -> None:
                queue.execute_command_lists([work])
                queue.wait()

            samples = measure(iteration, self.timing, self.device.backend.name == "cuda", progress, queue.stream)
        except OpenDMLError as error:  # a binding rule: checked when bound, before the operator touches a buffer
            if isinstance(operator, CompiledGraph):
                error = _graph_binding_error(error, dispatchable)
            raise self._binding_error(command, locate(error, command.bindings_path, command.bindings_json)) from None
        report(command.dispatchable, samples, self.timing, self._out)

    def _record(self, command: DispatchCommand, dispatchable: AnyDispatchable,
                operator: CompiledOperator | CompiledGraph) -> CommandList:
        """A closed list of ``timing.repeat`` dispatches of ``operator`` over one table of the command's
        bindings (every binding rule is checked here, when they are bound)."""
        table = self.device.create_binding_table(operator)
        table.bind_inputs(self._bindings(command, dispatchable.input_names))
        table.bind_outputs(self._bindings(command, dispatchable.output_names))
        if self._recorder is None:
            self._recorder = self.device.create_command_recorder()
        work = self.device.create_command_list()
        for _ in range(self.timing.repeat):
            self._recorder.record_dispatch(work, operator, table)
        work.close()
        return work

    def _queue(self) -> CommandQueue:
        if self._command_queue is None:
            self._command_queue = self.device.create_command_queue()
        return self._command_queue

    def _binding_error(self, command: DispatchCommand, error: ModelError) -> ModelError:
        """The error, naming the resource bound where it points (the JSON names only the binding)."""
        for tensor, binding in command.bindings.items():
            at = child(command.bindings_path, tensor)
            if error.path == at or error.path.startswith((f"{at}.", f"{at}[")):
                size = self.model.resources[binding.resource].size_in_bytes
                return ModelError(error.path, f"resource '{binding.resource}' ({size} bytes) from byte "
                                              f"{binding.offset}: {error.problem}")
        return error

    def _bindings(self, command: DispatchCommand, names: tuple[str | None, ...]) -> list[BufferBinding | None]:
        """One binding per input or output of the compiled object, in order; None where ``names`` has None."""
        result: list[BufferBinding | None] = []
        for name in names:
            binding = None if name is None else command.bindings.get(name)
            result.append(None if binding is None else BufferBinding(self.buffers[binding.resource], binding.offset))
        return result

    def print_resource(self, command: PrintCommand) -> None:
        """Values are formatted and written a chunk at a time: a large resource never becomes one string."""
        resource = self.model.resources[command.resource]
        values = resource.elements(self._host_bytes(command.resource))
        out = self._out
        if command.verbose:
            out.write(f"Resource '{command.resource}':\n")
            for line in format_verbose(values, resource.data_type):
                out.write(f"{line}\n")
        else:
            out.write(f"Resource '{command.resource}': ")
            for k, text in enumerate(format_chunks(values, resource.data_type)):
                out.write(f", {text}" if k else text)
            out.write("\n")
        out.flush()

    def write_file(self, command: WriteFileCommand) -> None:
        """Write the resource as it is now to a temporary file; ``files.commit`` puts it in place at the end."""
        resource = self.model.resources[command.resource]
        data = self._host_bytes(command.resource)

        def write(file: BinaryIO) -> None:
            if command.target.suffix.lower() == ".npy":
                count = None if command.dimensions is None else int(np.prod(command.dimensions))
                values = resource.elements(data, count)
                np.lib.format.write_array(file, values.reshape(command.dimensions or values.shape),
                                          allow_pickle=False)
            else:
                data.tofile(file)

        self.files.stage(command.target, child(command.path, "targetPath"), command.resource, write)

    def _host_bytes(self, name: str) -> np.ndarray:
        """A buffer's bytes on the host: a CPU buffer's own memory (no copy), else a copy."""
        buffer = self.buffers[name]
        data = getattr(buffer, "data", None)
        return data if isinstance(data, np.ndarray) else buffer.to_numpy()

    @property
    def _out(self) -> TextIO:
        return self.out if self.out is not None else sys.stdout

    def _print(self, line: str) -> None:
        print(line, file=self._out, flush=True)


_GRAPH_BINDING = re.compile(r"\b(Inputs|Outputs)\[(\d+)\]")


def _graph_binding_error(error: OpenDMLError, dispatchable: AnyDispatchable) -> OpenDMLError:
    """A compiled graph's binding error names ``Inputs[k]`` and ``Outputs[k]``: name them as the model does.

    >>> from types import SimpleNamespace
    >>> from opendml.errors import binding_error
    >>> graph = SimpleNamespace(input_names=("X",), output_names=("Y",))
    >>> str(_graph_binding_error(binding_error("GRAPH", "Outputs[0] binding", "must not overlap Inputs[0]", "x"),
    ...                          graph))
    'GRAPH: Y binding must not overlap X; got x.'
    """
    names = {"Inputs": dispatchable.input_names, "Outputs": dispatchable.output_names}

    def name(match: re.Match[str]) -> str:
        group = names[match[1]]
        k = int(match[2])
        return (group[k] or match[0]) if k < len(group) else match[0]

    renamed = OpenDMLError(_GRAPH_BINDING.sub(name, str(error)))  # read by ``locate`` for its text only
    renamed.__cause__ = error
    return renamed
