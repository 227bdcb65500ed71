"""The activations built on the correctly rounded functions (``opendml.rounded``), docs/semantics.md section 9f.

SIGMOID, TANH, SOFTSIGN, GELU and SOFTPLUS of Steepness 1 are **correctly rounded as a whole** (``whole``): one
catalog function of the input, the exact value rounded once to the output's type. The activations with runtime
parameters cannot have a table of hard cases per value: each is a **documented composition** of correctly rounded
steps, float32 multiplies, divides and adds around correctly rounded functions at FLOAT32 (each step's result is
the exact value of its operands rounded once, so every backend gives the same bits), the last float32 value
rounded once more to a FLOAT16 output. ``steps`` gives each one's NumPy reference the same float32 arithmetic,
written apart from the element expressions.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import expr as ex
from ..dtypes import DataType
from ..feature_levels import FeatureLevel
from ..rounded.evaluate import evaluate
from ..schema import SupportRow
from .definition import Field, OperatorDefinition
from .unary import unary

FLOAT32 = DataType.FLOAT32


def whole(name: str, desc_type: type, introduced: FeatureLevel, rows: Sequence[SupportRow], function: str,
          python: str, fields: Sequence[Field] = ()) -> OperatorDefinition:
    """The activation ``name`` computing ``opendml.rounded``'s ``function`` (SIGMOID) of its input, rounded once
    to the output's type."""
    return unary(name, desc_type, introduced, rows,
                 element=lambda v, p, c: ex.Function(v, function, p.output),
                 reference=lambda v, p: evaluate(function, v, p.output.name),
                 python=python, fields=fields)


def rounded(v: ex.Expr, function: str) -> ex.Expr:
    """A composition's step: ``function`` of a float32 value, correctly rounded to FLOAT32."""
    return ex.Function(v, function, FLOAT32)


def f32(function: str, v: np.ndarray) -> np.ndarray:
    """The reference's step: ``function`` of float32 values, correctly rounded to FLOAT32."""
    return evaluate(function, np.asarray(v, np.float32), "FLOAT32")


def mul(a: np.ndarray | np.float32, b: np.ndarray | np.float32) -> np.ndarray:
    return np.multiply(a, b, dtype=np.float32)


def div(a: np.ndarray | np.float32, b: np.ndarray | np.float32) -> np.ndarray:
    return np.divide(a, b, dtype=np.float32)


def add(a: np.ndarray | np.float32, b: np.ndarray | np.float32) -> np.ndarray:
    return np.add(a, b, dtype=np.float32)
