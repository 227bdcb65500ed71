"""Device: a backend at a feature level; creates operators (all validation), compiles them, makes buffers."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

import numpy as np

from . import backends
from .binding import other_device
from .buffer import MAX_BUFFER_BYTES, Buffer
from .dtypes import DataType
from .enums import ExecutionFlags
from .errors import UnsupportedFeatureLevelError, invalid, out_of_memory
from .feature_levels import NEWEST, FeatureLevel
from .graphs.compiled import CompiledGraph, compile_graph
from .graphs.desc import GraphDesc
from .kernels import notices
from .kernels.staged import staged_kernel
from .operator import CompiledOperator, Operator
from .ops import BY_DESC_TYPE
from .recording import BindingTable, CommandList, CommandQueue, CommandRecorder, OperatorInitializer
from .shared import Registry
from .tensor import TensorDesc
from .thread_count import resolve_threads
from .validate import check_no_owned_by_dml, check_output_writable, check_support

_COMPILE_CACHE_LIMIT = 256

# The devices of this process by (backend name, feature level label, thread setting): what a pickled device
# unpickles to (opendml.shared), and the functional API's default devices.
_shared: Registry[Device] = Registry()


def shared_device(backend: str, feature_level: str, threads: int | None) -> Device:
    """The one device of this process for a backend, a feature level and a thread setting (None: the
    default, resolved here: OPENDML_NUM_THREADS, a Dask worker's share of the cores, or every core)."""
    return _shared.get((backend, feature_level, threads), lambda: Device(backend, feature_level, threads=threads))


class Device:
    """A device (IDMLDevice) on a backend, created at a feature level.

    >>> Device("cpu", "5_0").check_feature_levels(["4_1", "6_0"])
    <FeatureLevel.FL_4_1: 16640>
    """

    def __init__(self, backend: str = "cpu", feature_level: FeatureLevel | str | int = NEWEST, *,
                 threads: int | None = None) -> None:
        """``threads``: CPU threads an operator may use (default: OPENDML_NUM_THREADS, else every core)."""
        self.feature_level = FeatureLevel.parse(feature_level, owner="Device", field="feature_level")
        self.threads = resolve_threads(threads)
        # What a pickled copy carries: an explicit count, or None so that the process receiving it resolves
        # its own default (its environment, its share of a Dask worker's cores).
        self._threads_setting = None if threads is None else self.threads
        self.backend = backends.load(backend)
        self._compiled: dict[Any, CompiledOperator] = {}
        self._compile_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Device({self.backend.name!r}, {self.feature_level.label!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its backend name, feature level and thread setting; unpickled to the one device of
        the receiving process for them (``shared_device``), whose compile cache every task there shares."""
        key = (self.backend.name, self.feature_level.label, self._threads_setting)
        _shared.remember(key, self)  # in this process it unpickles to itself
        return shared_device, key

    def check_feature_levels(self, levels: Iterable[FeatureLevel | str | int]) -> FeatureLevel:
        """The highest of ``levels`` (DirectML's RequestedFeatureLevels, a list) that this device supports."""
        if isinstance(levels, (str, bytes)) or not isinstance(levels, Iterable) \
                or (isinstance(levels, np.ndarray) and levels.ndim != 1):
            raise invalid("Device", "feature_levels", "must be a list of feature levels", repr(levels))
        asked = [FeatureLevel.parse(level, owner="Device", field=f"feature_levels[{k}]")
                 for k, level in enumerate(levels)]
        supported = [level for level in asked if level <= self.feature_level]
        if not supported:
            wanted = ", ".join(level.label for level in asked) or "none"
            raise UnsupportedFeatureLevelError(
                f"Device: feature_levels must include one at or below {self.feature_level}; got {wanted}.")
        return max(supported)

    def supports_data_type(self, data_type: DataType | str) -> bool:
        """Whether tensors of the type can be used on this device: its backend holds them, and the device's
        feature level has the type (UINT4 and INT4 from 6_3)."""
        parsed = DataType.parse(data_type, owner="Device")
        if parsed.is_sub_byte:  # staged one element a byte on every backend (opendml.kernels.staged)
            return parsed.introduced <= self.feature_level
        return self.backend.supports_data_type(parsed)

    def create_operator(self, desc: object) -> Operator:
        """Validate a description against every rule and this device's feature level."""
        definition = BY_DESC_TYPE.get(type(desc))
        if definition is None:
            known = ", ".join(t.__name__ for t in BY_DESC_TYPE)
            raise invalid("Device", "desc", f"must be one of {known}", type(desc).__name__)
        schema = definition.schema
        for field in schema.tensors:
            value = field.value(desc)
            if not isinstance(value, TensorDesc) and not (field.optional and value is None):
                raise invalid(schema.name, field.name, "must be a TensorDesc", repr(value))
        # Rules that hold at every level come before the support table, so that an
        # UnsupportedFeatureLevelError's "lowest level that accepts it" is never a level that would refuse it.
        params = definition.prepare(desc)
        tensors = definition.tensors(desc)
        check_no_owned_by_dml(schema, tensors)
        for field in schema.outputs:
            check_output_writable(schema.name, field.name, tensors[field.name])  # type: ignore[arg-type]
        check_support(definition.support_schema(params), tensors, self.feature_level)
        return Operator(self, definition, desc, params)

    def compile_operator(self, operator: Operator, flags: ExecutionFlags | int | str = ExecutionFlags.NONE
                         ) -> CompiledOperator:
        if not isinstance(operator, Operator) or operator.device is not self:
            raise invalid("Device", "operator", f"must be an operator created on {self}", repr(operator)
                          if not isinstance(operator, Operator) else
                          f"an operator created on {other_device(operator.device, self)}")
        flags = ExecutionFlags.parse(flags, owner=operator.name, field="ExecutionFlags")
        with notices.compiling(lambda: notices.describe(operator.name, operator.kernel_tensors[0][0])):
            if operator.definition.layout is not None:  # QUANTIZE, DEQUANTIZE, QUANTIZED_LINEAR_ADD: their own
                return CompiledOperator(operator, flags, staged_kernel(self, operator))
            return CompiledOperator(operator, flags, self.backend.compile(operator))

    def compile_graph(self, graph_desc: GraphDesc, flags: ExecutionFlags | int | str = ExecutionFlags.NONE
                      ) -> CompiledGraph:
        """IDMLDevice1::CompileGraph (feature level 2_1): check every graph rule, plan, allocate (docs/graphs.md)."""
        return compile_graph(self, graph_desc, flags)

    def create_operator_initializer(self, compiled_ops: Iterable[CompiledOperator | CompiledGraph] = ()
                                    ) -> OperatorInitializer:
        """IDMLDevice::CreateOperatorInitializer: a dispatchable initializing ``compiled_ops`` (docs/recording.md)."""
        return OperatorInitializer(self, compiled_ops)

    def create_binding_table(self, dispatchable: CompiledOperator | CompiledGraph | OperatorInitializer
                             ) -> BindingTable:
        """IDMLDevice::CreateBindingTable: bindings for ``dispatchable``, checked as they are bound."""
        return BindingTable(self, dispatchable)

    def create_command_recorder(self) -> CommandRecorder:
        """IDMLDevice::CreateCommandRecorder."""
        return CommandRecorder(self)

    def create_command_list(self) -> CommandList:
        """An open command list to record dispatches into."""
        return CommandList(self)

    def create_command_queue(self, *, cuda_graphs: bool | None = None) -> CommandQueue:
        """A command queue executing closed command lists; on CUDA each list is captured once into a CUDA graph
        unless ``cuda_graphs`` is False (None: OPENDML_CUDA_GRAPHS, default 1)."""
        return CommandQueue(self, cuda_graphs)

    def create_buffer(self, size_in_bytes: int) -> Buffer:
        """A new zero-filled buffer.

        A size the device cannot hold raises OutOfMemoryError (DirectML's E_OUTOFMEMORY): one beyond
        what an array can index is refused up front, and a failed allocation is reported as such.
        """
        if isinstance(size_in_bytes, (bool, np.bool_)) or not isinstance(size_in_bytes, (int, np.integer)) \
                or size_in_bytes < 0:
            raise invalid("Device", "size_in_bytes", "must be a non-negative integer", repr(size_in_bytes))
        size_in_bytes = int(size_in_bytes)
        if size_in_bytes > MAX_BUFFER_BYTES:
            raise out_of_memory("Device", "size_in_bytes",
                                f"must be at most {MAX_BUFFER_BYTES}, the most bytes a buffer can address "
                                "(out of memory, E_OUTOFMEMORY)", size_in_bytes)
        return self.backend.allocate(self, size_in_bytes)

    def buffer_from(self, array: Any) -> Buffer:
        """A new buffer holding a copy of the array's bytes, in row-major order.

        ``array``: bytes, or an array (or nested list) of numbers of a DirectML data type; on a cuda
        device also a GPU array (CuPy, or any DLPack producer).
        """
        return self.backend.upload(self, array)

    def compiled(self, desc: Any, flags: ExecutionFlags | int | str = ExecutionFlags.NONE) -> CompiledOperator:
        """Create and compile ``desc`` once, then reuse it (the functional API's cache, and what a pickled
        compiled operator unpickles through).

        Descriptions are looked up by their repr, not by ==, which would take -0.0 for 0.0 (a different
        bound bit for bit) and never find one holding a NaN.
        """
        key = _compiled_key(desc, flags)
        compiled = self._compiled.get(key)
        if compiled is None:
            with self._compile_lock:  # tasks on several threads of a worker compile it once between them
                compiled = self._compiled.get(key)
                if compiled is None:
                    compiled = self.compile_operator(self.create_operator(desc), flags)
                    self._cache_compiled(key, compiled)
        return compiled

    def remember_compiled(self, compiled: CompiledOperator) -> None:
        """Make ``compiled`` (an operator compiled on this device) the one ``compiled`` returns for its
        description and flags, unless one is cached already."""
        key = _compiled_key(compiled.operator.desc, compiled.flags)
        if key not in self._compiled:
            with self._compile_lock:
                if key not in self._compiled:
                    self._cache_compiled(key, compiled)

    def _cache_compiled(self, key: Any, compiled: CompiledOperator) -> None:
        if len(self._compiled) >= _COMPILE_CACHE_LIMIT:
            self._compiled.clear()
        self._compiled[key] = compiled


def _compiled_key(desc: Any, flags: ExecutionFlags | int | str) -> tuple[Any, ...]:
    if flags is not ExecutionFlags.NONE:  # the functional API's every call passes the default: no parsing
        flags = ExecutionFlags.parse(flags, owner="Device", field="ExecutionFlags")
    return type(desc), repr(desc), flags
