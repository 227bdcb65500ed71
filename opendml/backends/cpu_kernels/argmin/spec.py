"""What the CPU ARGMIN and ARGMAX engines take from a kernel specification (NumPy only: both kernel modules use it)."""

from __future__ import annotations

from .... import expr as ex
from ....errors import kernel_unsupported
from ....kernels.spec import KernelSpec, ReductionKind
from ....ops.arg_reduction import ArgReductionParams


def argmin_params(spec: KernelSpec, prologue: bool = False) -> ArgReductionParams:
    """The ARGMIN or ARGMAX a reduction's specification asks for (either NanPolicy: one engine runs them
    all, ``keys``), or a clear error for one the engines cannot run.

    The engines read the input's elements and compare them (as keys, ``keys``), so without
    ``prologue`` the only element expression taken is ``Load(0, T)`` of the input itself. ``prologue``: the
    caller evaluates any element expression itself: the NumPy kernels block by block, the JIT kernels into
    scratch tiles that the engines then reduce (``boxes``), for every layout the engines take.
    """
    record = spec.reduction
    if record is None or record.kind not in (ReductionKind.ARGMIN, ReductionKind.ARGMAX):
        raise kernel_unsupported(spec.operator, "Reduction", "must be an ARGMIN or ARGMAX record for the CPU "
                                 "reduction kernels", None if record is None else record.kind.name)
    if prologue:
        return ArgReductionParams(record.axes, record.direction, record.index_type, record.kind, record.nan_rule)
    source = spec.inputs[0] if spec.inputs else None
    wanted = None if source is None else ex.Load(0, source)
    if wanted is None or spec.element != wanted:
        raise kernel_unsupported(spec.operator, "Reduction element",
                      f"must be {wanted!r}, the input's own elements (the CPU reduction kernels compare them as "
                      "loaded: a computed prologue is not lowered)", repr(spec.element))
    return ArgReductionParams(record.axes, record.direction, record.index_type, record.kind, record.nan_rule)
