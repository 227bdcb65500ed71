"""Fuzzing bindings: execute accepts exactly the bindings SPEC.md allows, and refuses the rest untouched.

A valid operator is compiled once; then one to three sets of bindings are drawn over a few buffers
holding random bytes: buffers shared between tensors (overlaps, exact in-place aliases), offsets aligned
or not, bound sizes short or long, ranges past the end, wrong counts, None or junk in place of a binding.
``rules.binding_problem`` decides each set. A refused set raises BindingError and leaves every buffer
as it was; an accepted one runs twice (the second time through the cached binding) and writes exactly
the model's values into exactly the output's elements.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import opendml as dml

from .descriptions import make_desc, valid_operators
from .execution import Placement, check_execution, device_at, small_enough
from .rules import (
    IN_PLACE,
    TENSOR_FIELDS,
    RawBinding,
    RawOperator,
    RawTensor,
    Tensor,
    binding_problem,
    judge_operator,
    judge_tensor,
)
from .settings import fuzz_settings, judging, note, record

FAMILY = "bindings"


def judged_operator(op: RawOperator) -> RawOperator:
    tensors: dict[str, object] = {}
    for name, raw in op.tensors.items():
        verdict = judge_tensor(raw) if isinstance(raw, RawTensor) else raw
        assert verdict is None or isinstance(verdict, Tensor), verdict
        tensors[name] = verdict
    return RawOperator(op.operator, tensors, op.fields)


def build_binding(raw: RawBinding, buffers: list[dml.Buffer]) -> Any:
    if raw.kind == "none":
        return None
    if raw.kind == "junk":
        return raw.junk
    if raw.kind == "buffer":
        return buffers[raw.buffer]
    return dml.BufferBinding(buffers[raw.buffer], raw.offset, raw.size)  # type: ignore[arg-type]


def build_group(group: object, buffers: list[dml.Buffer]) -> Any:
    if not isinstance(group, list):
        return group
    return [build_binding(b, buffers) for b in group]


def _round_up(value: int, step: int) -> int:
    return -(-value // step) * step


@st.composite
def valid_set(draw: st.DrawFn, op: RawOperator, buffers: list[int]) -> list[RawBinding]:
    """One binding per tensor, in DirectML's order: aligned, in range, apart (or an exact in-place alias)."""
    cursor = [0] * len(buffers)
    bindings: list[RawBinding] = []
    for name in TENSOR_FIELDS[op.operator]:
        tensor = op.tensors.get(name)
        if not isinstance(tensor, Tensor):
            bindings.append(RawBinding("none"))
            continue
        if name == "OutputTensor" and op.operator in IN_PLACE and draw(st.integers(0, 3)) == 0:
            bindings.append(replace(bindings[0], size=None))  # in place: exactly the input's binding
            continue
        k = draw(st.integers(0, len(buffers) - 1))
        step = max(16, tensor.alignment)
        offset = 0 if step > 256 else _round_up(cursor[k], step) + step * draw(st.integers(0, 1))
        cursor[k] = offset + tensor.total
        room = buffers[k] - offset
        size = draw(st.sampled_from([None, None, tensor.total, max(tensor.total, room)]))
        bindings.append(RawBinding("binding", k, offset, size))
    return bindings


DEFECTS = ("offset", "offset", "size", "size", "overlap", "overlap", "whole buffer", "none", "junk", "count")


def add_defect(draw: st.DrawFn, op: RawOperator, bindings: list[RawBinding], buffers: list[int]) -> object:
    """One thing wrong (or, for overlaps and whole buffers, perhaps not): returns the new list, or junk."""
    defect = draw(st.sampled_from(DEFECTS))
    k = draw(st.integers(0, len(bindings) - 1))
    b = bindings[k]
    if defect == "offset":
        value = draw(st.sampled_from([4, 8, -16, 2**40, 16.0, True, None, buffers[b.buffer] + 16]))
        start = b.offset if isinstance(b.offset, int) and not isinstance(b.offset, bool) else 0
        offset = start + value if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 64 else value
        bindings[k] = RawBinding("binding", b.buffer, offset, b.size)
    elif defect == "size":
        total = op.tensors[TENSOR_FIELDS[op.operator][k]]
        need = total.total if isinstance(total, Tensor) else 16
        size = draw(st.sampled_from([need - 1, need - 4, -1, 2**40, float(need), True, buffers[b.buffer] + 1]))
        bindings[k] = RawBinding("binding", b.buffer, b.offset, size)
    elif defect == "overlap":
        other = draw(st.sampled_from(bindings))
        shift = draw(st.sampled_from([0, 0, 16, -16, 32]))
        offset = other.offset + shift if isinstance(other.offset, int) else 0
        bindings[-1] = RawBinding("binding", other.buffer, offset, None)
    elif defect == "whole buffer":
        bindings[k] = RawBinding("buffer", draw(st.integers(0, len(buffers) - 1)))
    elif defect == "none":
        bindings[k] = RawBinding("none")
    elif defect == "junk":
        bindings[k] = RawBinding("junk", junk=draw(st.sampled_from(["buffer", 0, object(), dml.ScaleBias(1, 2)])))
    else:
        return draw(st.sampled_from(["short", "long", "none", "single"]))
    return bindings


@st.composite
def binding_sets(draw: st.DrawFn, op: RawOperator, buffers: list[int]) -> tuple[object, object]:
    """(inputs, outputs): lists of RawBinding, valid or with one or two defects (a wrong count: not lists)."""
    bindings: object = draw(valid_set(op, buffers))
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 1, 2]))):
        if isinstance(bindings, list):
            bindings = add_defect(draw, op, bindings, buffers)
    if isinstance(bindings, str):  # the count defect: reshape one group
        valid: list[RawBinding] = draw(valid_set(op, buffers))
        inputs, outputs = valid[:-1], valid[-1:]
        changed = {"short": lambda g: g[:-1], "long": lambda g: [*g, g[-1]], "none": lambda g: None,
                   "single": lambda g: g[0]}[bindings]
        return (changed(inputs), outputs) if draw(st.booleans()) else (inputs, changed(outputs))
    assert isinstance(bindings, list)
    return bindings[:-1], bindings[-1:]


@st.composite
def binding_cases(draw: st.DrawFn) -> tuple[RawOperator, list[int], list[tuple[object, object]]]:
    _, raw = draw(valid_operators())
    op = judged_operator(raw)
    present = [t for t in op.tensors.values() if isinstance(t, Tensor)]
    capacity = sum(_round_up(t.total, 16) + 2 * max(16, min(t.alignment, 256)) for t in present) + 16
    buffers = [capacity + 16 * draw(st.integers(0, 4)) for _ in range(draw(st.integers(1, 3)))]
    if draw(st.integers(0, 9)) == 0:
        buffers[0] = draw(st.sampled_from([0, 4, 16]))
    sets = draw(st.lists(binding_sets(op, buffers), min_size=1, max_size=3))
    return raw, buffers, sets


@fuzz_settings(FAMILY)
@given(case=binding_cases(), seed=st.integers(0, 2**32 - 1))
def test_bindings_are_judged_by_the_spec(case: tuple[RawOperator, list[int], list[tuple[object, object]]],
                                         seed: int) -> None:
    with judging(FAMILY, "judged", case):
        check_bindings(*case, seed)


def check_bindings(raw: RawOperator, buffer_sizes: list[int], sets: list[tuple[object, object]], seed: int) -> None:
    op = judged_operator(raw)
    level = "6_4"
    assert judge_operator(op).accepts(level)
    device = device_at(level)
    tensors = {name: t for name, t in op.tensors.items() if isinstance(t, Tensor) or t is None}
    desc = make_desc(raw.operator, {n: r.build() if isinstance(r, RawTensor) else r for n, r in raw.tensors.items()},
                     raw.fields)
    compiled = device.compile_operator(device.create_operator(desc))
    rng = np.random.default_rng(seed)
    memory = [bytearray(rng.integers(0, 256, size, dtype=np.uint8).tobytes()) for size in buffer_sizes]
    buffers = [device.buffer_from(np.frombuffer(bytes(m), np.uint8)) for m in memory]
    for inputs, outputs in sets:
        problem = binding_problem(raw.operator, tensors, buffer_sizes, inputs, outputs)
        try:
            built_inputs, built_outputs = build_group(inputs, buffers), build_group(outputs, buffers)
        except dml.OpenDMLError as error:  # a BufferBinding may refuse bad arguments when it is made
            assert problem is not None, f"BufferBinding refused valid arguments: {error}"
            record(FAMILY, "judged", "sets rejected")
            continue
        if problem is not None:
            record(FAMILY, "judged", "sets rejected")
            check_refused(compiled, built_inputs, built_outputs, buffers, memory, problem)
            continue
        record(FAMILY, "judged", "sets accepted")
        assert isinstance(inputs, list) and isinstance(outputs, list)
        placements: dict[str, Placement | None] = {}
        fields = TENSOR_FIELDS[raw.operator]
        for name, binding in zip(fields, [*inputs, *outputs]):
            tensor = tensors[name]
            offset = 0 if binding.kind == "buffer" else binding.offset
            placements[name] = None if tensor is None else Placement(tensor, binding.buffer, offset)  # type: ignore[arg-type]
        if not small_enough(list(tensors.values())):
            compiled.execute(built_inputs, built_outputs)
            memory[:] = [bytearray(b.to_numpy().tobytes()) for b in buffers]
            continue
        try:
            check_execution(compiled, op, placements, memory, built_inputs, built_outputs, buffers)
        except dml.OpenDMLError as error:
            raise AssertionError(f"execute refused valid bindings: {type(error).__name__}: {error}") from error
        note(FAMILY, "judged", "sets executed")


def check_refused(compiled: dml.CompiledOperator, inputs: object, outputs: object, buffers: list[dml.Buffer],
                  memory: list[bytearray], problem: str) -> None:
    try:
        compiled.execute(inputs, outputs)  # type: ignore[arg-type]
    except dml.BindingError:
        pass
    except dml.OpenDMLError as error:
        raise AssertionError(f"{type(error).__name__}, not BindingError, for bad bindings ({problem}): {error}") from error
    except Exception as error:
        raise AssertionError(f"execute raised {type(error).__name__} for bad bindings ({problem}): {error}") from error
    else:
        raise AssertionError(f"execute accepted bad bindings ({problem}): inputs {inputs!r}, outputs {outputs!r}")
    for k, (buffer, before) in enumerate(zip(buffers, memory)):
        assert buffer.to_numpy().tobytes() == bytes(before), f"a refused execute changed buffer {k} ({problem})"
