"""What a backend compiles: a kernel specification made from an operator's expression (``spec``), and the
NumPy lowering of expressions (``numpy_lowering``) that the NumPy CPU path runs."""

from __future__ import annotations

from .spec import KernelSpec, Reduction, ReductionKind

__all__ = ["KernelSpec", "Reduction", "ReductionKind"]
