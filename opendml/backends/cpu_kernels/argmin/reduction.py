"""Which run serves a reduction's kernel specification (``spec`` says which it may be): the plain call over its
input's own elements (``call``), a computed element's (a fused prologue: ``prologue``), or one that also
writes extra outputs (``extras``). The latter two are imported by the first call that needs them: only fused
graphs load them, and they import ``call`` themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .... import expr as ex
from ....kernels.spec import KernelSpec
from . import call
from .spec import argmin_params


def reduction(spec: KernelSpec) -> Callable[..., None]:
    """The run of a reduction's kernel specification: a plain ARGMIN of its input (``call.argmin``), or one
    over a computed element."""
    params = argmin_params(spec, prologue=True)
    if spec.extra:  # a fused kernel writing graph outputs too: ``run(*operands, out, *extras, threads)``
        from . import extras

        return extras.reduction(spec, params)  # type: ignore[no-any-return]
    if computed(spec):
        from . import prologue  # only fused graphs load it

        return prologue.reduction(spec, params)  # type: ignore[no-any-return]
    return call.argmin(params)


def computed(spec: KernelSpec) -> bool:
    """Whether a reduction compares a computed element rather than its input's own elements."""
    return spec.element != ex.Load(0, spec.inputs[0]) if spec.inputs and spec.inputs[0] else True


def prepare_reduction(spec: KernelSpec, shape: Sequence[int], strides: Sequence[int], threads: int,
                      operands: Sequence[Sequence[int] | None] = (), extras: Sequence[Sequence[int]] = ()) -> None:
    """Compile the kernels that an ARGMIN of this input layout (``strides`` in elements) runs, and no
    others, by running its plan over no rows: the operator's compile step, so that its first execution
    compiles nothing (a one-element stand-in would take another path than most layouts). ``operands``:
    every operand's strides (None for an absent one), which a computed element's layout depends on;
    ``extras``: each extra output's."""
    params = argmin_params(spec, prologue=True)
    if spec.extra:
        from . import extras as with_extras

        with_extras.compile_layout(spec, params, shape, strides, operands, extras, threads)
        return
    if computed(spec):
        from . import prologue

        loaded = sorted(ex.loads(spec.element))
        every = [operands[k] if k < len(operands) and operands[k] is not None else strides for k in loaded]
        prologue.compile_layout(spec, params, shape, every, threads)  # type: ignore[arg-type]
        return
    call.compile_layout(spec, params, shape, strides, threads)
