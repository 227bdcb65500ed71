"""Running a model on a device: buffers, operators, then the commands in order with state kept."""

from __future__ import annotations

import io
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np

from .. import Buffer, BufferBinding, CompiledOperator, Device, FeatureLevel, OpenDMLError
from .commands import DispatchCommand, PrintCommand, WriteFileCommand
from .errors import ModelError, locate
from .formatting import format_values, format_verbose
from .model import Model
from .operators import Field
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
    operators: dict[str, CompiledOperator] = field(default_factory=dict)
    _pending: dict[Path, tuple[str, bytes]] = field(default_factory=dict)  # target -> (resource, bytes)

    def run(self) -> None:
        self.create_buffers()
        self.create_operators()
        for command in self.model.commands:
            if self.print_commands:
                self._print(f"Command {command.index}: {command.source}")
            if isinstance(command, DispatchCommand):
                self.dispatch(command)
            elif isinstance(command, PrintCommand):
                self.print_resource(command)
            else:
                self.write_file(command)
        self.commit_files()

    def create_buffers(self) -> None:
        for name, resource in self.model.resources.items():
            self.buffers[name] = self.device.buffer_from(resource.initial_bytes())

    def create_operators(self) -> None:
        """Create (validate) and compile every dispatchable before any command runs."""
        for name, dispatchable in self.model.dispatchables.items():
            start = time.perf_counter()
            try:
                operator = self.device.create_operator(dispatchable.desc)
                self.operators[name] = self.device.compile_operator(operator, dispatchable.execution_flags)
            except OpenDMLError as error:
                raise locate(error, dispatchable.desc_path, dispatchable.desc_json) from None
            if self.timing.verbosity >= 1:
                self._print(f"Initialize '{name}': {1000 * (time.perf_counter() - start):.4f} ms")

    def dispatch(self, command: DispatchCommand) -> None:
        dispatchable = self.model.dispatchables[command.dispatchable]
        operator = self.operators[command.dispatchable]
        inputs = self._bindings(command, dispatchable.operator.inputs)
        outputs = self._bindings(command, dispatchable.operator.outputs)

        def run_once() -> None:
            operator.execute(inputs, outputs)

        progress = Progress(f"Dispatch '{command.dispatchable}'", self.progress_stream)
        try:
            samples = measure(run_once, self.timing, self.device.backend.name == "cuda", progress)
        except OpenDMLError as error:  # a binding rule: checked before the operator touches any buffer
            raise locate(error, command.bindings_path, command.bindings_json) from None
        report(command.dispatchable, samples, self.timing, self._out)

    def _bindings(self, command: DispatchCommand, fields: tuple[Field, ...]) -> list[BufferBinding | None]:
        """One binding per tensor, in DirectML's order; None for an absent optional tensor."""
        result: list[BufferBinding | None] = []
        for f in fields:
            binding = command.bindings.get(f.name)
            result.append(None if binding is None else BufferBinding(self.buffers[binding.resource], binding.offset))
        return result

    def print_resource(self, command: PrintCommand) -> None:
        resource = self.model.resources[command.resource]
        values = resource.elements(self.buffers[command.resource].to_numpy())
        if command.verbose:
            self._print(f"Resource '{command.resource}':")
            for line in format_verbose(values, resource.data_type):
                self._print(line)
        else:
            self._print(f"Resource '{command.resource}': {format_values(values, resource.data_type)}")

    def write_file(self, command: WriteFileCommand) -> None:
        """Keep the file's bytes; they are written by ``commit_files`` once the whole model has run."""
        resource = self.model.resources[command.resource]
        data = self.buffers[command.resource].to_numpy()
        if command.target.suffix.lower() == ".npy":
            count = None if command.dimensions is None else int(np.prod(command.dimensions))
            values = resource.elements(data, count)
            shape = command.dimensions or values.shape
            payload = _npy_bytes(values.reshape(shape))
        else:
            payload = data.tobytes()
        self._pending[command.target] = (command.resource, payload)

    def commit_files(self) -> None:
        for target, (resource, payload) in self._pending.items():
            _write_atomically(target, payload)
            self._print(f"Resource '{resource}' written to '{target}'")
        self._pending.clear()

    @property
    def _out(self) -> TextIO:
        return self.out if self.out is not None else sys.stdout

    def _print(self, line: str) -> None:
        print(line, file=self._out, flush=True)


def _npy_bytes(array: np.ndarray) -> bytes:
    stream = io.BytesIO()
    np.save(stream, array, allow_pickle=False)
    return stream.getvalue()


def _write_atomically(target: Path, payload: bytes) -> None:
    """Write beside the target, then rename: a reader never sees a half-written file."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(payload)
            os.replace(temporary, target)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as error:
        raise ModelError(str(target), f"cannot write the file: {error.strerror or error}.") from None
