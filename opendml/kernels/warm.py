"""``opendml cache warm``: compile operators' CPU kernels ahead of time, into the kernel cache (``cache``).

A kernel is compiled on its first call, which waits for Numba (a second or more each); compiled kernels are kept
on disk, in the cache directory, for later processes. Warming runs each asked operator once per data type on a
small array on the CPU, through the functional API (so the kernels compiled are those its calls run: CLIP on an
integer type runs ELEMENT_WISE_CLIP1, as ``opendml.clip`` does, and CLIP_GRAD runs ELEMENT_WISE_CLIP_GRAD1), and
so fills the cache, e.g. in a Docker image's build step. A kernel compiled for a layout the warm-up does not run
(a reduction over other axes, another output type of ARGMIN or ARGMAX than INT64, strided views) is still compiled
on its first call. REDUCE warms every function its type takes, over the last axis, the first and all.

>>> [(op.schema.name, [t.name for t in types]) for op, types in parse_targets(["clip:float16", "ARGMAX"])][:1]
[('ELEMENT_WISE_CLIP', ['FLOAT16'])]
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..device import Device
from ..dtypes import DataType
from ..errors import OpenDMLError
from ..ops import OPERATORS
from ..ops.definition import REQUIRED, OperatorDefinition
from ..schema import OperatorSchema, SupportRow


class WarmUsageError(OpenDMLError):
    """A bad target of ``opendml cache warm``: one line, exit status 2."""


Target = tuple[OperatorDefinition, tuple[DataType, ...]]


def newest_row(schema: OperatorSchema) -> SupportRow:
    return max(schema.rows, key=lambda row: row.level)


def input_types(op: OperatorDefinition) -> tuple[DataType, ...]:
    """The types of the operator's first input tensor (IF's ATensor: ``Api.typed``'s) in its newest support row, in
    DataType's order."""
    return tuple(sorted(newest_row(op.schema).types[op.schema.inputs[_typed(op)].name]))


def _typed(op: OperatorDefinition) -> int:
    return 0 if op.api is None else op.api.typed


def parse_targets(texts: Sequence[str]) -> list[Target]:
    """``OPERATOR[:TYPE,TYPE...]`` each (the operator as ``opendml support`` reads it); none: every operator with
    every type of its newest support row."""
    from ..support import UsageError, find_schema

    if not texts:
        return [(op, input_types(op)) for op in OPERATORS]
    by_name = {op.schema.name: op for op in OPERATORS}
    targets = []
    for text in texts:
        name, typed, listed = text.partition(":")
        try:
            op = by_name[find_schema(name).name]
        except UsageError as e:
            raise WarmUsageError(f"opendml cache warm: {e}") from None
        accepted = input_types(op)
        targets.append((op, tuple(_type(op, t, accepted) for t in listed.split(",")) if typed else accepted))
    return targets


def _type(op: OperatorDefinition, text: str, accepted: tuple[DataType, ...]) -> DataType:
    known = ", ".join(t.name for t in accepted)
    try:
        parsed = DataType.parse(text.strip())
    except OpenDMLError:
        parsed = None
    if parsed not in accepted:
        field = f"{op.schema.name}'s {op.schema.inputs[_typed(op)].name}.DataType"
        raise WarmUsageError(f"opendml cache warm: {field} must be one of {known}; got {text!r}.")
    assert parsed is not None
    return parsed


def warm(targets: Iterable[Target], device: Device, report: Callable[[str], object] = print) -> None:
    """Run each target's operator once per type on ``device``, reporting a line per operator. Each kernel is
    compiled before its call returns, tiered execution or not (``tiers.compiled_now``): the cache holds it
    when the command ends."""
    from ..backends import tiers

    for op, types in targets:
        started = time.perf_counter()
        for data_type in types:
            with tiers.compiled_now():
                _run(op, data_type, device)
        names = ", ".join(t.name for t in types)
        report(f"{op.schema.name}: {names} ({time.perf_counter() - started:.1f} s)")


def _run(op: OperatorDefinition, data_type: DataType, device: Device) -> None:
    from .. import functional

    x = _sample(data_type, (4, 16))
    name = op.schema.name
    if op.api is not None:
        required = {f.python: 0 for f in op.api.functional_keywords if f.default is REQUIRED}
        arrays = (x,) * len(op.api.arrays)  # a binary operator's two tensors alike
        if op.api.typed:  # the tensors before (IF's condition): their newest row's first type
            own = [_sample(min(newest_row(op.schema).types[t]), (4, 16)) for t in op.api.tensors[:op.api.typed]]
            arrays = (*own, *arrays[op.api.typed:])
        functional.FUNCTIONS[name](*arrays, **required, device=device)
    elif name == "ELEMENT_WISE_CLIP1":  # what clip runs on an integer type (and CLIP's kernel on a float type)
        functional.FUNCTIONS["ELEMENT_WISE_CLIP"](x, 0, 1, device=device)
    elif name == "ELEMENT_WISE_CLIP_GRAD1":  # what clip_grad runs on an integer type
        functional.FUNCTIONS["ELEMENT_WISE_CLIP_GRAD"](x, x, 0, 1, device=device)
    elif name in ("ARGMIN", "ARGMAX"):
        reduce = functional.argmin if name == "ARGMIN" else functional.argmax
        reduce(x, 1, device=device)  # the last axis, and every axis
        reduce(x, device=device)
    elif name == "REDUCE":  # every function that takes the type: over the last axis, the first, and all
        from ..ops.reduce import FUNCTION_SCHEMAS

        for function, schema in FUNCTION_SCHEMAS.items():
            if data_type in newest_row(schema).types["InputTensor"]:
                for axes in (1, 0, None):
                    functional.reduce(x, function, axes, device=device)
    elif name == "ELEMENT_WISE_DEQUANTIZE_LINEAR":
        functional.dequantize_linear(x, np.float32(0.5), _sample(data_type, ())[()], device=device)
    elif name == "ELEMENT_WISE_QUANTIZE_LINEAR":
        scale = np.float16(0.5) if data_type == DataType.FLOAT16 else np.float32(0.5)
        for output_type in sorted(newest_row(op.schema).types["OutputTensor"]):
            functional.quantize_linear(x, scale, output_type=output_type, device=device)
    elif name == "CAST":  # to every type the input's converts to
        for output_type in sorted(newest_row(op.schema).types["OutputTensor"]):
            functional.cast(x, output_type, device=device)
    elif name == "ELEMENT_WISE_QUANTIZED_LINEAR_ADD":  # A and B of this type; each output type, zero points given
        for output_type in sorted(newest_row(op.schema).types["OutputTensor"]):
            functional.quantized_linear_add(x, 0.5, 1, x, 0.25, 2, 0.75, np.zeros((), output_type.numpy),
                                            device=device)
    elif name == "DEQUANTIZE":  # blocks of 8 along the rows, with and without a zero point, each output type
        for float_type in (np.float32, np.float16):
            scale = np.full((4, 2), 0.5, float_type)
            functional.dequantize(x, scale, _sample(data_type, (4, 2)), data_type=data_type, device=device)
            functional.dequantize(x, scale, data_type=data_type, device=device)
    elif name == "QUANTIZE":
        scale = np.full((4, 2), 0.5, x.dtype)
        for output_type in sorted(newest_row(op.schema).types["OutputTensor"]):
            functional.quantize(x, scale, output_type=output_type, device=device)
            functional.quantize(x, scale, _sample(output_type, (4, 2)).astype(output_type.numpy),
                                output_type=output_type, device=device)
    else:
        raise WarmUsageError(f"opendml cache warm: {name} has no functional call to warm its kernels with.")


def _sample(data_type: DataType, shape: tuple[int, ...]) -> Any:
    """Small values every operator takes (a bit pattern for the integer types, halves for the float ones)."""
    values = np.arange(int(np.prod(shape)), dtype=np.int64) % 7
    array = values.astype(data_type.numpy) if data_type.numpy.kind in "iu" else values.astype(data_type.numpy) / 2
    return array.reshape(shape)
