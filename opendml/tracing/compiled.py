"""``opendml.compile`` and the function it makes: traced once per signature into one compiled graph, cached, and
run on the arrays of each call.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import front_ends
from .. import functional as fn_api
from ..buffer import BufferBinding
from ..dask.detect import any_dask
from ..device import Device
from ..dtypes import ALL_TYPES
from ..errors import invalid
from ..graphs.compiled import CompiledGraph
from ..shared import Registry, new_token
from .functions import TracedGraph
from .tracer import OWNER, Tracer


def compile(fn: Callable[..., Any] | None = None, *, device: Device | str | None = None) -> Any:
    """Decorate ``fn``, a function of arrays calling the functional API, to run as one compiled graph.

    Array arguments (NumPy, CuPy, PyTorch) are traced; every other argument must be hashable and is part of
    the signature a graph is compiled and cached for. ``device`` defaults to the first array's. Called with
    Dask arrays, it returns Dask arrays, the graph run on each block (``opendml.dask.compiled``, docs/dask.md).

    >>> import numpy as np, opendml
    >>> @opendml.compile
    ... def relu6(x):
    ...     return opendml.clip(x, 0.0, 6.0)
    >>> relu6(np.array([-1.0, 3.0, 9.0], np.float32))
    array([0., 3., 6.], dtype=float32)
    """
    if fn is None:
        return functools.partial(compile, device=device)
    return CompiledFunction(fn, device)


@dataclass
class _Traced:
    """A graph compiled for one signature: where its inputs come from and what its outputs are."""

    compiled: CompiledGraph
    used: frozenset[int]  # graph inputs some edge reads (the others are bound as None)
    outputs: list[tuple[tuple[int, ...], tuple[int, ...], np.dtype]]  # shape, sizes, dtype
    single: bool
    held: dict[int, BufferBinding]  # graph inputs bound to the values the function holds


class CompiledFunction:
    """``fn`` compiled per signature; call it like ``fn``.

    It pickles by reference where it is a module's attribute (a decorated module-level function), else as
    ``fn`` (by reference where importable; a lambda or a nested function needs cloudpickle, which Dask uses
    for what pickle cannot take) and ``device``, never as its compiled graphs: a process receiving it traces
    and compiles again, once however many copies it receives.
    """

    def __init__(self, fn: Callable[..., Any], device: Device | str | None) -> None:
        self.fn = fn
        self.device = device
        self._cache: dict[Any, _Traced] = {}
        self._lock = threading.Lock()  # one trace and compile per signature, whichever thread comes first
        self._token: str | None = None  # the name its pickles carry (opendml.shared), given when first pickled
        functools.update_wrapper(self, fn)

    def __reduce__(self) -> str | tuple[Any, ...]:
        if _importable(self):  # pickle saves a reference to the module's attribute, as for a function
            return str(self.__qualname__)  # type: ignore[attr-defined]
        if self._token is None:
            self._token = new_token()
        _rebuilt.remember(self._token, self)  # in this process it unpickles to itself
        return _recompiled_function, (self._token, self.fn, self.device)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if any_dask(*args, *kwargs.values()):
            return front_ends.load(front_ends.DASK).compiled(self, args, kwargs)
        named = [(f"argument {k}", a) for k, a in enumerate(args)] + [(f"argument {n!r}", a) for n, a in kwargs.items()]
        first = next((a for _, a in named if _is_array(a)), None)
        device = fn_api._resolve_device(self.device, first, OWNER)
        # Every whole-byte type, FLOAT64 too: each traced operator's own table takes or refuses it, by name.
        arrays = [fn_api._as_array(device, a, OWNER, name, ALL_TYPES) if _is_array(a) else None for name, a in named]
        key = (device, len(args), tuple(kwargs), tuple(
            _array_key(a, arr) if arr is not None else _value_key(name, a) for (name, a), arr in zip(named, arrays)))
        traced = self._cache.get(key)
        if traced is None:
            with self._lock:
                traced = self._cache.get(key)
                if traced is None:
                    traced = self._cache[key] = self._trace(device, args, kwargs, arrays)
        return _execute(device, traced, [a for a in arrays if a is not None], first)

    def _trace(self, device: Device, args: tuple[Any, ...], kwargs: dict[str, Any], arrays: list[Any]) -> _Traced:
        results, single = self.build(device, args, kwargs, arrays)
        graph = results[0].expr.graph
        assert isinstance(graph, TracedGraph)
        compiled = graph.compile([r.expr for r in results])
        used = frozenset(e.graph_input_index for e in compiled.graph_desc.input_edges)
        outputs = [(r.shape, tuple(r.expr.desc.sizes), r.dtype) for r in results]
        held = {index: _held_binding(device, values) for index, values in graph.held if index in used}
        return _Traced(compiled, used, outputs, single, held)

    def build(self, device: Device, args: tuple[Any, ...], kwargs: dict[str, Any], arrays: list[Any]
              ) -> tuple[list[Tracer], bool]:
        """The function traced into a Graph on ``device`` (not compiled): its results, and whether it returned
        one array rather than a tuple. ``arrays``: each argument (positional, then keyword) as an array, or
        None where it is passed as it is."""
        graph = TracedGraph(device, sum(a is not None for a in arrays))
        index = 0
        values = list(args) + list(kwargs.values())
        for k, array in enumerate(arrays):
            if array is None:
                continue
            if array.size == 0:
                raise invalid(OWNER, f"argument {k}", "must have at least one element", array.shape)
            desc = fn_api._place_input(device, _at_least_1d(array)).desc
            values[k] = Tracer(graph.input(index, desc), tuple(array.shape), array.dtype)
            index += 1
        result = self.fn(*values[:len(args)], **dict(zip(kwargs, values[len(args):])))
        single = isinstance(result, Tracer)
        results = [result] if single else result
        if not isinstance(results, (tuple, list)) or not results or not all(isinstance(r, Tracer) for r in results):
            raise invalid(OWNER, "result", "must be an array computed by the functional API, or a tuple of them",
                          repr(result))
        return list(results), single


# Compiled functions unpickled in this process (and those pickled from it), by the name their pickles carry.
_rebuilt: Registry[CompiledFunction] = Registry(limit=256)


def _recompiled_function(token: str, fn: Callable[..., Any], device: Device | str | None) -> CompiledFunction:
    def make() -> CompiledFunction:
        compiled = CompiledFunction(fn, device)
        compiled._token = token  # so that a copy pickled again here (a scheduler relaying it) keeps the name
        return compiled

    return _rebuilt.get(token, make)


def _importable(compiled: CompiledFunction) -> bool:
    """Whether ``compiled`` is what its module's attribute of its qualified name holds, in a module another
    process can import: a script's ``__main__`` is not one (a Dask worker's ``__main__`` is another)."""
    name = getattr(compiled, "__module__", None) or "__main__"
    module = None if name == "__main__" else sys.modules.get(name)
    target: Any = module
    for part in getattr(compiled, "__qualname__", "<locals>").split("."):
        target = getattr(target, part, None)
    return target is compiled


def _is_array(value: Any) -> bool:
    if isinstance(value, (np.generic, Tracer)):
        return False
    return any(hasattr(value, a) for a in ("__array_interface__", "__cuda_array_interface__", "__dlpack__"))


def _array_key(value: Any, array: Any) -> Any:
    """What the compiled graph depends on: the layout, and how the result is handed back (the kind)."""
    return (type(value), array.dtype, tuple(array.shape), tuple(array.strides), fn_api._plain(array))


def _value_key(name: str, value: Any) -> Any:
    """A non-array argument by exact value (-0.0 is not 0.0, 1 is not 1.0 or True); it must be hashable."""
    if isinstance(value, tuple):
        return (tuple, tuple(_value_key(f"{name}[{k}]", v) for k, v in enumerate(value)))
    try:
        hash(value)
    except TypeError:
        raise invalid(OWNER, name, "must be an array or a hashable value (a number, a string, a tuple, None)",
                      type(value).__name__) from None
    return (type(value), repr(value), value)


def _at_least_1d(array: Any) -> Any:
    """A 0-d array as one element of 1 dimension (a view, as the functional API reads it)."""
    return fn_api._view_as(array, array.shape or (1,))


def _held_binding(device: Device, values: np.ndarray) -> BufferBinding:
    """A buffer holding ``values`` for the graph input that reads them (16-byte rounded, as bound ranges are)."""
    raw = np.zeros(-(-max(values.nbytes, 4) // 16) * 16, np.uint8)
    raw[:values.nbytes] = values.reshape(-1).view(np.uint8)
    return BufferBinding(device.buffer_from(raw))


def _execute(device: Device, traced: _Traced, arrays: list[Any], like: Any) -> Any:
    placed = [fn_api._place_input(device, _at_least_1d(a)) if k in traced.used else None for k, a in enumerate(arrays)]
    results = [fn_api._padded_empty(device, sizes, dtype) for _, sizes, dtype in traced.outputs]
    bindings = [fn_api.BufferBinding(device.backend.wrap(device, raw)) for _, raw in results]
    inputs: list[BufferBinding | None] = [None if p is None else p.binding for p in placed]
    inputs += [traced.held.get(k) for k in range(len(inputs), traced.compiled.graph_desc.input_count)]
    traced.compiled.execute(inputs, bindings)
    backend = device.backend
    arrays_out = tuple(backend.to_caller(array.reshape(shape), like)
                       for (array, _), (shape, _, _) in zip(results, traced.outputs))
    return arrays_out[0] if traced.single else arrays_out
