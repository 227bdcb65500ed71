"""Front ends over array kinds, found by the kind of a call's arguments and imported only when first asked for
(as backends are, ``opendml.backends``): the functional API's calls on traced arrays (``opendml.compile``'s
tracing) and on Dask arrays.

The functional API names them here and never imports them: both build on it (tracing applies its rules to
traced arrays; Dask runs its functions block by block), so no module of the three imports another in a circle.
Telling a kind is cheap and imports nothing: a traced array's class says so (``_opendml_traced``), and a Dask
array exists only once ``dask.array`` is imported (``dask.detect``).

Each front end offers the functional API's calls, their arguments as the functional API has them:
``declared(op, x, values, out, device)`` for every declared operator, ``dequantize_linear(x, scale, zero_point,
out, device)``, ``quantize_linear(x, scale, zero_point, output_type, out, device)``, ``cast(x, dtype, out,
device)`` and ``arg_reduction(kind,
x, axes, axis_direction, output_type, out, device, nan_policy, return_values, keepdims)``; Dask's also
``unravel_index(indices, shape, axes)`` and ``compiled(function, args, kwargs)`` (an ``opendml.compile``
function called with Dask arrays).
"""

from __future__ import annotations

import importlib
from typing import Any

from .dask.detect import any_dask

TRACED, DASK = "traced", "dask"

# kind -> module of its calls.
FRONT_ENDS: dict[str, str] = {
    TRACED: "opendml.tracing.functions",
    DASK: "opendml.dask.api",
}


def load(kind: str) -> Any:
    """The module of a kind's calls, imported on first use (Dask's imports Dask)."""
    return importlib.import_module(FRONT_ENDS[kind])


def is_traced(value: Any) -> bool:
    """Whether ``value`` is a traced array (``opendml.tracing.Tracer``): ``opendml.compile`` is tracing."""
    return bool(getattr(type(value), "_opendml_traced", False))


def kind_of(values: tuple[Any, ...], out: Any = None) -> str | None:
    """The front end a call takes: TRACED where one of ``values`` (its array arguments) is a traced array,
    DASK where one of them or ``out`` is a Dask array, else None (the functional API runs it itself)."""
    for value in values:
        if is_traced(value):
            return TRACED
    return DASK if any_dask(*values, out) else None


def of(values: tuple[Any, ...], out: Any = None) -> Any:
    """The module of the front end a call takes (``kind_of``), or None."""
    kind = kind_of(values, out)
    return None if kind is None else load(kind)
