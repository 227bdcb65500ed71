"""The traced array: what ``opendml.compile`` hands the function it traces in place of each array argument.

It holds an expression of the graph being built, with the shape and dtype of the eager result; the functional
API's functions take it (``functions``), and everything else NumPy arrays offer, which would need values that
are not known while tracing, is refused with an OpenDMLError naming what was asked.
"""

from __future__ import annotations

import math
from typing import Any, NoReturn

import numpy as np

from ..errors import invalid
from ..graphs.builder import Expression

OWNER = "opendml.compile"


# What a traced array offers beyond the functional API: facts fixed by the signature a graph is traced for
# (the same for every call that runs it), so exact. Everything else NumPy arrays offer is refused.
STATIC_ATTRIBUTES = ("shape", "ndim", "size", "dtype")

# NumPy array attributes a traced array keeps from ``object`` (or its own): Python's object machinery, none of
# which reads or changes values. Setting and deleting attributes are refused (``x.shape = ...`` reshapes a NumPy
# array in place); repr, str and ``format`` with an empty spec show the traced array, not values.
KEPT_ATTRIBUTES = frozenset({
    "__class__", "__class_getitem__", "__dir__", "__doc__", "__getattribute__", "__init__", "__init_subclass__",
    "__new__", "__repr__", "__sizeof__", "__str__", "__subclasshook__",
})

# Python's own protocols NumPy arrays do not define as such but that would read a value (round(), math.trunc,
# math.floor, math.ceil, the buffer protocol in Python 3.12), refused too.
EXTRA_REFUSED = ("__round__", "__trunc__", "__floor__", "__ceil__", "__buffer__", "__release_buffer__")

_OPERATORS = {
    "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "add": "+", "sub": "-", "mul": "*",
    "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**", "matmul": "@", "and": "&", "or": "|", "xor": "^",
    "lshift": "<<", "rshift": ">>", "divmod": "divmod()", "neg": "unary -", "pos": "unary +", "abs": "abs()",
    "invert": "~",
}

_PROTOCOLS = {
    "__bool__": "bool() (an if, while, and, or, not)", "__len__": "len()", "__iter__": "iteration",
    "__contains__": "the in operator", "__getitem__": "indexing", "__setitem__": "item assignment",
    "__delitem__": "item deletion", "__index__": "use as an index (operator.index, range, slicing)",
    "__int__": "int()", "__float__": "float()", "__complex__": "complex()", "__round__": "round()",
    "__trunc__": "math.trunc()", "__floor__": "math.floor()", "__ceil__": "math.ceil()",
    "__copy__": "copy.copy()", "__deepcopy__": "copy.deepcopy()", "__reduce__": "pickling",
    "__reduce_ex__": "pickling", "__getstate__": "pickling", "__setstate__": "unpickling",
    "__array__": "conversion to a NumPy array", "__array_interface__": "conversion to a NumPy array",
    "__array_struct__": "conversion to a NumPy array", "__buffer__": "the buffer protocol (memoryview, bytes)",
    "__release_buffer__": "the buffer protocol", "__dlpack__": "DLPack export", "__dlpack_device__": "DLPack export",
    "__array_namespace__": "the array API namespace",
}


def _untraceable(what: str) -> NoReturn:
    raise invalid(OWNER, "traced array", "supports only the functional API (opendml.clip, threshold, "
                  "dequantize_linear, quantize_linear, argmin, argmax, reduce, top_k, softmax, log_softmax, hardmax, "
                  "the declared operators' functions such as relu) and the static attributes " + ", ".join(
                      f".{a}" for a in STATIC_ATTRIBUTES) + ": its values are not known while tracing, so "
                  "do this outside the compiled function (on the arrays it is given or returns)", what)


def _describe(name: str) -> str:
    """What using NumPy array attribute ``name`` is, in words, for the error."""
    if name in _PROTOCOLS:
        return _PROTOCOLS[name]
    core = name.strip("_")
    for prefix, kind in (("", ""), ("r", "reflected "), ("i", "in-place ")):
        if core.startswith(prefix) and core[len(prefix):] in _OPERATORS:
            symbol = _OPERATORS[core[len(prefix):]]
            return f"the {kind}operator {symbol}{'=' if prefix == 'i' else ''} ({name})"
    return name if name.startswith("__") else f"the attribute .{name}"


class Tracer:
    """A traced array: an expression of the graph being built, with the shape and dtype of the eager result.

    It offers ``STATIC_ATTRIBUTES``; every other attribute and operation of NumPy arrays raises OpenDMLError
    (a comparison would otherwise compare identities, an attribute raise a bare AttributeError). Hashed by
    identity."""

    _opendml_traced = True

    def __init__(self, expr: Expression, shape: tuple[int, ...], dtype: np.dtype) -> None:
        object.__setattr__(self, "expr", expr)
        object.__setattr__(self, "_shape", tuple(shape))
        object.__setattr__(self, "_dtype", np.dtype(dtype))

    expr: Expression
    _shape: tuple[int, ...]
    _dtype: np.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __repr__(self) -> str:
        return f"Tracer(shape={self.shape}, dtype={self.dtype})"

    __hash__ = object.__hash__  # by identity (defining __eq__ would otherwise remove it)

    def __format__(self, spec: str) -> str:
        if spec:
            _untraceable(f"format() with spec {spec!r} of {self!r}")
        return repr(self)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        _untraceable(f"setting the attribute {name} of {self!r}")

    def __delattr__(self, name: str) -> NoReturn:
        _untraceable(f"deleting the attribute {name} of {self!r}")

    def __getattr__(self, name: str) -> NoReturn:
        # Only names not found otherwise reach this: NumPy's (refused), or none at all (hasattr's probes of
        # other protocols, __dask_graph__ or __cuda_array_interface__, still answer False).
        if name in _NDARRAY_ATTRIBUTES:
            _untraceable(f"{_describe(name)} of {self!r}")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __array_ufunc__(self, ufunc: Any, method: str, *args: object, **kwargs: object) -> NoReturn:
        _untraceable(f"NumPy's {ufunc.__name__} on {self!r}")

    def __array_function__(self, func: Any, types: object, args: object, kwargs: object) -> NoReturn:
        _untraceable(f"NumPy's {func.__name__} on {self!r}")


_NDARRAY_ATTRIBUTES = frozenset(dir(np.ndarray)) - KEPT_ATTRIBUTES - set(STATIC_ATTRIBUTES)


def _refusal(name: str) -> Any:
    """A refusing method (or, for an attribute NumPy has as a value, property) for ``name``."""
    def refuse(self: Tracer, *args: object, **kwargs: object) -> NoReturn:
        _untraceable(f"{_describe(name)} of {self!r}")

    refuse.__name__ = name
    return refuse if callable(getattr(np.ndarray, name, refuse)) else property(refuse)


# Every dunder of NumPy arrays (and of this NumPy, so a new one is covered) that the class does not define is
# a refusal defined on the class: Python looks operators and protocols up on the type, not through __getattr__.
for _name in sorted(_NDARRAY_ATTRIBUTES | set(EXTRA_REFUSED)):
    if _name.startswith("__") and _name not in vars(Tracer) and _name != "__hash__":
        setattr(Tracer, _name, _refusal(_name))


