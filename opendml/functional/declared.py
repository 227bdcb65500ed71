"""The functions of the declared operators (``opendml.ops.DECLARED``): one call path for all of them.

Each public function (``opendml.clip``, ``opendml.relu``, ...) is made here from its operator's declaration
(``function``): its name, parameters and keywords come from the ``Api`` record (``ops.signature``). A call takes
the cached fast paths first (``fastpath``: for a repeated call on small arrays they are the whole cost, so they
stand in the function itself), then hands a traced or Dask argument to that kind's front end
(``opendml.front_ends``), and otherwise describes its array and runs the operator over it: the operator's own,
or the one its adapter chooses for the array's type and the device's level (CLIP runs ELEMENT_WISE_CLIP1 on
integers).

>>> import numpy as np
>>> FUNCTIONS["ACTIVATION_LEAKY_RELU"](np.array([-2.0, 3.0], np.float32), alpha=0.5)
array([-1.,  3.], dtype=float32)
>>> FUNCTIONS["ELEMENT_WISE_CLIP"](np.array([-3, 0, 5], np.int32), -1, 2.7)
array([-1,  0,  2], dtype=int32)
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import front_ends
from ..device import Device
from ..dtypes import from_numpy
from ..ops import DECLARED
from ..ops.definition import OperatorDefinition
from ..ops.elementwise import exact_scalar
from ..ops.signature import arguments, define
from .devices import _as_array, _resolve_device
from .fastpath import Repeats, _remember

# The functions' bodies look these up in this module at each call (``ops.signature.define``).
from .fastpath import _direct as _direct
from .fastpath import _exact as _exact
from .fastpath import _repeated as _repeated
from .operands import _broadcast
from .placement import _leading_ones, _run, _view_as
from .quantization import _broadcast_to
from .results import _output

_NONE = (None, None, None)

# A function's body where its results are the input's type: the fast paths compare three scalars by identity
# (the first three fields, None for the rest), a call's key tells its fields' values apart exactly.
_FAST = """\
_done = _repeated(_repeats, x, out, device, {scalars})
if _done is not None:
    return _done
_key = (_name, {exact})
_done = _direct(device, _key, x, out, _repeats, ({scalars}))
if _done is not None:
    return _done
return _ordinary(x, {values}, out, device, _key)
"""
# An operator whose output's type is another (IS_NAN): the fast paths make results of the input's type.
_PLAIN = "return _ordinary(x, {values}, out, device, None)\n"


def function(op: OperatorDefinition) -> Callable[..., Any]:
    """The public function of a declared operator: ``f(x, *fields, out=None, device=None)``; an operator of
    several tensors (``Api.tensors``): ``f(a, b, *fields, out=None, device=None)``, NumPy's broadcasting."""
    api = op.api
    assert api is not None and len(api.keywords) <= 3  # the fast paths compare three scalars
    if len(api.tensors) > 1:
        return _function_of_arrays(op)
    repeats: Repeats = {}  # calls remembered for a repeat on the same arrays (``fastpath._repeated``)
    dtype = None if api.output is None else api.output.numpy

    def ordinary(x: Any, values: tuple[Any, ...], out: Any, device: Any, key: Any) -> Any:
        front_end = front_ends.of((x,), out)
        if front_end is not None:
            return front_end.declared(op, (x,), values, out, device)
        resolved = _resolve_device(device, x, op.schema.name)
        return _call(op, x, values, out, resolved, key, device, repeats, dtype)

    names = [f.python for f in api.keywords]
    scalars = ", ".join((names + ["None"] * 3)[:3])
    body = (_FAST if api.output is None else _PLAIN).format(
        scalars=scalars, exact=", ".join(f"_exact({n})" for n in names), values=arguments(api.keywords))
    closure = {"_repeats": repeats, "_name": op.schema.name, "_ordinary": ordinary}
    call = define(api.python, api.functional_keywords, body, globals(), closure, trailing=("out", "device"),
                  annotations=_annotations(op))
    call.__module__ = "opendml"
    call.__doc__ = _doc(op)
    return call


def _call(op: OperatorDefinition, x: Any, values: tuple[Any, ...], out: Any, device: Device, key: Any,
          device_arg: object, repeats: Repeats, dtype: Any) -> Any:
    """One operator over ``x``'s array, into ``out`` or a new array of ``dtype`` (None: x's); a call the fast
    paths can repeat is remembered for them (``key``)."""
    array = _as_array(device, x, op.schema.name, "InputTensor")
    schema, describe = op.over_arrays(device.feature_level, array.dtype, values)
    result = _output(device, out, array.shape, array.dtype if dtype is None else dtype, schema.name, x)
    pad = _leading_ones(schema, device, max(array.ndim, 1))
    shape = (1,) * pad + (array.shape or (1,))
    compiled = _run(device, schema, describe, [_view_as(array, shape)], _view_as(result.array, shape))
    if key is not None and array is x and compiled is not None:
        _remember(device, key, x, out, result.array, compiled, device_arg, repeats, (values + _NONE)[:3])
    return result.deliver()


def _function_of_arrays(op: OperatorDefinition) -> Callable[..., Any]:
    """The function of an operator of several tensors (ADD's ``add(a, b)``): no fast paths yet, every call
    described afresh."""
    api = op.api
    assert api is not None

    def ordinary(tensors: tuple[Any, ...], values: tuple[Any, ...], out: Any, device: Any) -> Any:
        front_end = front_ends.of(tensors, out)
        if front_end is not None:
            return front_end.declared(op, tensors, values, out, device)
        arrays = [t for t in tensors if not is_number(t)]
        resolved = _resolve_device(device, arrays[0] if arrays else None, op.schema.name)
        return _call_of_arrays(op, tensors, values, out, resolved)

    body = f"return _ordinary(({', '.join(api.arrays)}, ), {arguments(api.keywords)}, out, device)\n"
    call = define(api.python, api.functional_keywords, body, globals(), {"_ordinary": ordinary},
                  trailing=("out", "device"), annotations=_annotations(op), arrays=api.arrays)
    call.__module__ = "opendml"
    call.__doc__ = _doc(op)
    return call


def is_number(value: Any) -> bool:
    """A Python or NumPy number (not an array, not a bool: a bool has no DirectML type)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def operand_arrays(device: Device, op: OperatorDefinition, tensors: Sequence[Any]) -> list[Any]:
    """A call's operands as arrays of the device's kind. A number beside an array takes that array's type (as
    NumPy 2 types a Python scalar beside an array), exactly: an integer out of the type's range, or a fraction
    for an integer type, is refused, a float rounds to the float type (overflow refused); it reaches the
    operator as a zero-stride tensor, nothing materialised. Numbers alone take no type: refused by ``_as_array``
    as any array of no DirectML type."""
    assert op.api is not None
    owner, names = op.schema.name, op.api.tensors
    arrays: list[Any] = [None if is_number(t) else _as_array(device, t, owner, name) for t, name in zip(tensors, names)]
    # The operands from ``Api.typed`` on share one type; one before it (IF's condition) has its own.
    typed = next((a for a in arrays[op.api.typed:] if a is not None), None)
    for k, t in enumerate(tensors):
        if arrays[k] is None:
            if typed is None or k < op.api.typed:
                arrays[k] = _as_array(device, t, owner, names[k])
            else:
                data_type = from_numpy(typed.dtype)
                arrays[k] = _as_array(device, np.asarray(exact_scalar(t, data_type, owner, names[k])), owner, names[k])
    return arrays


def _call_of_arrays(op: OperatorDefinition, tensors: tuple[Any, ...], values: tuple[Any, ...], out: Any,
                    device: Device) -> Any:
    """One operator over the NumPy broadcast of its operands (each read through zero strides where it
    broadcasts), into ``out`` or a new array of the first operand's type (``Api.typed``'s)."""
    assert op.api is not None
    owner, names = op.schema.name, op.api.tensors
    arrays = operand_arrays(device, op, tensors)
    shape: tuple[int, ...] = tuple(arrays[0].shape)
    for k in range(1, len(arrays)):
        shape = _broadcast(owner, shape, " and ".join(names[:k]), tuple(arrays[k].shape), names[k])
    typed = arrays[op.api.typed].dtype
    schema, describe = op.over_arrays(device.feature_level, typed, values)
    dtype = typed if op.api.output is None else op.api.output.numpy
    like = next((t for t in tensors if not is_number(t)), tensors[0])
    result = _output(device, out, shape, dtype, schema.name, like)
    pad = _leading_ones(schema, device, max(len(shape), 1))
    full = (1,) * pad + (shape or (1,))
    placed = [_broadcast_to(device.backend.xp, a, full) for a in arrays]
    _run(device, schema, describe, placed, _view_as(result.array, full))
    return result.deliver()


def _annotations(op: OperatorDefinition) -> dict[str, str]:
    assert op.api is not None
    fields = {f.python: op.api.annotation(f) for f in op.api.keywords}
    # opendml.typing's names (``declared_stub`` writes them into the functions' stub for type checkers)
    arrays = {name: "ArrayInput" for name in op.api.arrays}
    return {**arrays, **fields, "out": "ArrayObject | None", "device": "DeviceLike", "return": "Any"}


def _doc(op: OperatorDefinition) -> str:
    """The operator module's first line (its formula), how the function maps onto the description, and the
    adapter's note on the operator it runs."""
    assert op.api is not None
    module = sys.modules[op.desc_type.__module__]
    formula = (module.__doc__ or op.schema.name).strip().splitlines()[0]
    fields = "".join(f", {f.python}={f.name}" for f in op.api.keywords)
    adapter = op.api.adapter
    note = "" if adapter is None else "\n\n" + (inspect.getdoc(adapter.choose) or "")
    if len(op.api.tensors) > 1:
        tensors = ", ".join(f"{p}={t}" for p, t in zip(op.api.arrays, op.api.tensors))
        typed = "the first array's" if op.api.typed == 0 else f"``{op.api.arrays[op.api.typed]}``'s"
        return (f"{formula}\n\nElement by element over ``{', '.join(op.api.arrays)}`` ({tensors}{fields}), as "
                f"DML_{op.schema.name}_OPERATOR_DESC, broadcasting as NumPy does (a broadcast operand is read "
                "through zero strides, never copied); a number takes the other operand's type. The result has "
                f"{typed} type and the broadcast shape (``out=``, if given, receives it). ``device``: a "
                "Device, a backend name or None (the arrays').")
    return (f"{formula}\n\nElement by element over ``x`` (InputTensor{fields}), as DML_{op.schema.name}_OPERATOR_DESC;"
            " the result has x's type and shape (``out=``, if given, receives it). ``device``: a Device, a backend "
            f"name or None (the array's).{note}")


# The public functions, by DirectML operator name (``opendml`` and ``opendml.functional`` export each under
# its ``Api.python`` name).
FUNCTIONS: dict[str, Callable[..., Any]] = {op.schema.name: function(op) for op in DECLARED}
