"""What every operator module provides: its schema, its description type, its rules and its math."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..dtypes import DataType
from ..feature_levels import FeatureLevel
from ..kernels.spec import KernelSpec
from ..schema import OperatorSchema, snake_case
from ..tensor import TensorDesc

REQUIRED: Any = object()  # a Field without a default: the functional API's argument must be given

# How a front end makes an operator's description of its tensors: the inputs' (in order), then the output's.
Describe = Callable[..., object]


@dataclass(frozen=True)
class Field:
    """A description's field beside its tensors, as every front end reads it.

    ``kind`` says how ``opendml dispatch`` reads its JSON ("float": a FLOAT; "scale_bias": a DML_SCALE_BIAS);
    ``python`` is the functional API's and the graph builder's keyword; ``default`` what it takes when left
    out (``REQUIRED``: nothing).
    """

    name: str  # DirectML's name: "Alpha"
    kind: str
    python: str
    default: Any = REQUIRED
    enum: Any = None  # an "enum" field's class (RoundingMode), whose ``parse`` reads it
    prefix: str = ""  # an "enum" field's DirectML C prefix ("DML_ROUNDING_MODE_")

    @property
    def positional(self) -> bool:
        """Whether a call may give it by position (a number: ``leaky_relu(x, 0.1)``; ScaleBias by keyword)."""
        return self.kind == "float"

    @property
    def attribute(self) -> str:
        """The description's attribute holding it ("scale_bias")."""
        return snake_case(self.name)

    @property
    def annotation(self) -> str:
        """The front ends' annotation of its argument (``help()`` shows it)."""
        if self.kind == "float":  # opendml.typing.Scalar: a Python or a NumPy number
            return "Scalar"
        if self.kind == "scale_bias":
            return "ScaleBias | tuple[float, float] | None"
        return f"{self.enum.__name__} | str | int" if self.kind == "enum" else "Any"


@dataclass(frozen=True)
class Adapter:
    """An irregular operator's rule over arrays (the functional API on every kind of array, and so its tracing
    under ``opendml.compile`` and Dask's blocks): ``choose(level, dtype, values)`` gives, for a device's feature
    level, the input's NumPy dtype and the keyword fields' values, the operator a call runs (its schema) and how
    its description is made (CLIP runs ELEMENT_WISE_CLIP1 on integers where the level has it). The graph builder
    and ``opendml dispatch`` take the operator as it is named. ``choose``'s docstring is the functions' note on
    the rule; ``optional``: keywords that also take None."""

    choose: Callable[[FeatureLevel, Any, tuple[Any, ...]], tuple[OperatorSchema, Describe]]
    optional: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Api:
    """How the front ends call an operator: the function's name (``opendml.relu``, ``opendml.graph.relu``), the
    tensors it takes as arrays (the first, or ``typed``, is the input whose type the output takes) and its keyword
    fields: those a call may give by position (``clip(x, min, max)``), then the rest (``scale_bias=``), each in
    DirectML's order."""

    python: str
    tensors: tuple[str, ...]
    keywords: tuple[Field, ...]
    output: DataType | None = None  # the output's type where it is not the input's (IS_NAN: UINT8)
    adapter: Adapter | None = None  # an irregular operator's rule over arrays (CLIP's CLIP1 switch)
    # The tensor (its position in ``tensors``) whose type the output and a number operand take; those before it
    # have a type of their own (ELEMENT_WISE_IF's UINT8 ConditionTensor: 1, ATensor's).
    typed: int = 0

    @property
    def arrays(self) -> tuple[str, ...]:
        """The functions' parameters of the tensors: ``x`` for a unary operator's InputTensor, ``a`` and ``b`` for
        a binary one's ATensor and BTensor (DirectMLX's names); any other in snake_case (``slope``,
        ``input_gradient``)."""
        return tuple("x" if t == "InputTensor" else snake_case(t.removesuffix("Tensor")) for t in self.tensors)

    @property
    def functional_keywords(self) -> tuple[Field, ...]:
        """The functional API's keywords: an ``optional`` one without a default of its own defaults to None (an
        absent bound: ``clip(x, min=0)`` bounds nothing above, as NumPy's and the Array API's ``clip``). The
        graph builder takes the operator as it is named, every field required as DirectML's description has it."""
        optional = frozenset() if self.adapter is None else self.adapter.optional
        return tuple(replace(f, default=None) if f.python in optional and f.default is REQUIRED else f
                     for f in self.keywords)

    def annotation(self, f: Field) -> str:
        """The functional API's annotation of ``f``'s argument."""
        optional = self.adapter is not None and f.python in self.adapter.optional
        return f"{f.annotation} | None" if optional else f.annotation


@dataclass(frozen=True)
class OperatorDefinition:
    """An operator: schema (data), relation rules (``prepare``) and NumPy reference (the oracle).

    ``prepare(desc)`` checks the rules that tie the tensors and fields together (beyond the support
    table, which the one validator reads from ``schema``) and returns the parameters the math needs.
    ``reference(inputs, params)`` takes NumPy views of the inputs (None for an absent optional tensor)
    and returns the output values, shaped and typed as the output tensor. ``kernel(params, tensors)``
    states the per-element math once, as the ``KernelSpec`` every backend compiles; the reference stays
    independent of it, the oracle the kernels are tested against. ``fields`` and ``api`` (a declared
    family's operators, ``ops.unary``) are what every front end is derived from.
    """

    schema: OperatorSchema
    desc_type: type
    prepare: Callable[[Any], Any]
    reference: Callable[[Sequence[np.ndarray | None], Any], np.ndarray]
    kernel: Callable[[Any, Mapping[str, TensorDesc | None]], KernelSpec]
    fields: tuple[Field, ...] = ()  # the fields beside the tensors, where the front ends derive from them
    api: Api | None = None  # None: the operator's front ends are written out (CLIP, ARGMIN, ...)
    # The layout its kernel runs over where it is not the description's (QUANTIZE, DEQUANTIZE: 4-bit operands
    # staged one element a byte, blocked axes cut in two; QUANTIZED_LINEAR_ADD: a one-element scale or zero point
    # over the output's sizes through zero strides): ``layout(name, params, tensors)`` gives each tensor's
    # ``blocked.Operand``, and ``opendml.kernels.staged`` runs the kernel over it.
    layout: Callable[[str, Any, Mapping[str, TensorDesc | None]], Mapping[str, Any]] | None = None
    # The support table a description is checked against, where it depends on a field (REDUCE's Function):
    # from ``prepare``'s parameters; None: ``schema`` itself.
    schema_of: Callable[[Any], OperatorSchema] | None = None

    def support_schema(self, params: Any) -> OperatorSchema:
        """The schema whose support table a description with these parameters is checked against."""
        return self.schema if self.schema_of is None else self.schema_of(params)

    def describe(self, inputs: Sequence[TensorDesc], output_tensor: TensorDesc, values: Sequence[Any]) -> Any:
        """A declared operator's description of its input tensors (``Api.tensors``, in order), its output tensor
        and its keyword fields' values."""
        assert self.api is not None
        fields = {f.attribute: v for f, v in zip(self.api.keywords, values)}
        return self.desc_type(*inputs, output_tensor, **fields)

    def over_arrays(self, level: FeatureLevel, dtype: Any, values: tuple[Any, ...]) -> tuple[OperatorSchema, Describe]:
        """The operator a call over arrays of ``dtype`` (a NumPy dtype) runs on a device at ``level``, and how its
        description is made of its tensors (the inputs, then the output): the adapter's choice, else this operator
        with ``values``."""
        assert self.api is not None
        if self.api.adapter is None:
            return self.schema, lambda *t: self.describe(t[:-1], t[-1], values)
        return self.api.adapter.choose(level, dtype, values)

    def tensors(self, desc: object) -> dict[str, TensorDesc | None]:
        """The description's tensors by DirectML field name, in binding order."""
        return {t.name: t.value(desc) for t in self.schema.tensors}  # type: ignore[misc]
