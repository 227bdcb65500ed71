"""The functions of the declared operators (``opendml.ops.DECLARED``): one call path for all of them.

Each public function (``opendml.relu``, ``opendml.leaky_relu``, ...) is made here from its operator's
declaration (``function``): its name, signature and keywords come from the ``Api`` record. A call takes the
cached fast paths first (``fastpath``), then hands a traced argument to ``opendml.compile``'s tracing and a
Dask argument to ``opendml.dask``, and otherwise describes its array and runs the operator over it.

>>> import numpy as np
>>> FUNCTIONS["ACTIVATION_LEAKY_RELU"](np.array([-2.0, 3.0], np.float32), alpha=0.5)
array([-1.,  3.], dtype=float32)
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any

from ..dask.detect import any_dask as _any_dask
from ..ops import DECLARED
from ..ops.definition import REQUIRED, OperatorDefinition
from .devices import _dask, _resolve_device, _traced, _tracing
from .fastpath import Repeats, _direct, _exact, _repeated
from .operators import _unary

_NONE = (None, None, None)


def function(op: OperatorDefinition) -> Callable[..., Any]:
    """The public function of a declared operator: ``f(x, *fields, out=None, device=None)``."""
    api = op.api
    assert api is not None and len(api.keywords) <= 3  # the fast paths compare three scalars
    name = op.schema.name
    repeats: Repeats = {}  # calls remembered for a repeat on the same arrays (``fastpath._repeated``)
    # The fast paths make results of the input's type: an operator whose output's type is another (IS_NAN)
    # takes the ordinary path each time.
    fast = api.output is None
    dtype = None if api.output is None else api.output.numpy

    def call(x: Any, *args: Any, out: Any = None, device: Any = None, **kwargs: Any) -> Any:
        values = api.bind(args, kwargs) if args or kwargs or api.keywords else ()
        scalars = (values + _NONE)[:3]
        key = None
        if fast:
            done = _repeated(repeats, x, out, device, *scalars)  # first: the per-call cost of small arrays
            if done is not None:
                return done
            key = (name, *map(_exact, values))
            done = _direct(device, key, x, out, repeats, scalars)
            if done is not None:
                return done
        if _tracing(x):
            return _traced().declared(op, x, values, out, device)
        if _any_dask(x, out):
            return _dask().declared(op, x, values, out, device)
        resolved = _resolve_device(device, x, name)
        return _unary(op.schema, x, out, resolved, lambda i, o: op.describe(i, o, values), key, device, repeats,
                      scalars, dtype)

    call.__name__ = call.__qualname__ = api.python
    call.__module__ = "opendml"
    call.__doc__ = _doc(op)
    call.__signature__ = _signature(op)  # type: ignore[attr-defined]
    return call


def _signature(op: OperatorDefinition) -> inspect.Signature:
    assert op.api is not None
    keyword, either = inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD
    parameters = [inspect.Parameter("x", either)]
    parameters += [inspect.Parameter(f.python, either if f.positional else keyword,
                                     default=inspect.Parameter.empty if f.default is REQUIRED else f.default)
                   for f in op.api.keywords]
    parameters += [inspect.Parameter("out", keyword, default=None), inspect.Parameter("device", keyword, default=None)]
    return inspect.Signature(parameters)


def _doc(op: OperatorDefinition) -> str:
    """The operator module's first line (its formula), and how the function maps onto the description."""
    assert op.api is not None
    module = sys.modules[op.desc_type.__module__]
    formula = (module.__doc__ or op.schema.name).strip().splitlines()[0]
    fields = "".join(f", {f.python}={f.name}" for f in op.api.keywords)
    return (f"{formula}\n\nElement by element over ``x`` (InputTensor{fields}), as DML_{op.schema.name}_OPERATOR_DESC;"
            " the result has x's type and shape (``out=``, if given, receives it). ``device``: a Device, a backend "
            "name or None (the array's).")


# The public functions, by DirectML operator name (``opendml`` and ``opendml.functional`` export each under
# its ``Api.python`` name).
FUNCTIONS: dict[str, Callable[..., Any]] = {op.schema.name: function(op) for op in DECLARED}
