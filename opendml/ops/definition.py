"""What every operator module provides: its schema, its description type, its rules and its math."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..kernels.spec import KernelSpec
from ..schema import OperatorSchema
from ..tensor import TensorDesc


@dataclass(frozen=True)
class OperatorDefinition:
    """An operator: schema (data), relation rules (``prepare``) and NumPy reference (the oracle).

    ``prepare(desc)`` checks the rules that tie the tensors and fields together (beyond the support
    table, which the one validator reads from ``schema``) and returns the parameters the math needs.
    ``reference(inputs, params)`` takes NumPy views of the inputs (None for an absent optional tensor)
    and returns the output values, shaped and typed as the output tensor. ``kernel(params, tensors)``
    states the per-element math once, as the ``KernelSpec`` every backend compiles; the reference stays
    independent of it, the oracle the kernels are tested against.
    """

    schema: OperatorSchema
    desc_type: type
    prepare: Callable[[Any], Any]
    reference: Callable[[Sequence[np.ndarray | None], Any], np.ndarray]
    kernel: Callable[[Any, Mapping[str, TensorDesc | None]], KernelSpec]

    def tensors(self, desc: object) -> dict[str, TensorDesc | None]:
        """The description's tensors by DirectML field name, in binding order."""
        return {t.name: getattr(desc, t.attribute) for t in self.schema.tensors}
