"""Running an accepted operator over guard-filled buffers, and checking every byte afterwards."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

import opendml as dml

from .rules import FLOAT_NAMES, OUTPUT_FIELDS, RawOperator, Tensor, float_field_bound, typed_bound
from .values import expected_output, guard_bytes, near, output_mismatches, read_values, values_of, write_values

_devices: dict[str, dml.Device] = {}

# Accepted descriptions up to these sizes are executed (the model is plain Python, one element at a time).
MAX_EXECUTED_ELEMENTS = 512
MAX_EXECUTED_BYTES = 1 << 20


def device_at(level: str) -> dml.Device:
    """One CPU device per feature level, shared by the examples (devices hold no state between runs
    that a description could change)."""
    if level not in _devices:
        _devices[level] = dml.Device("cpu", level)
    return _devices[level]


@dataclass(frozen=True)
class Placement:
    """Where a tensor lies: which buffer of the case, at which byte offset."""

    tensor: Tensor
    buffer: int
    offset: int


def small_enough(tensors: Sequence[Tensor | None]) -> bool:
    return all(t is None or (t.element_count <= MAX_EXECUTED_ELEMENTS and t.total <= MAX_EXECUTED_BYTES)
               for t in tensors)


def palette(op: RawOperator) -> list[int | float]:
    """Element values that tie with the operator's bounds, or sit next to them."""
    out = op.tensors["OutputTensor"]
    if op.operator not in ("ELEMENT_WISE_CLIP", "ELEMENT_WISE_CLIP1", "ELEMENT_WISE_THRESHOLD"):
        return []
    assert isinstance(out, Tensor)
    bound = typed_bound if op.operator == "ELEMENT_WISE_CLIP1" else float_field_bound
    names = ("min",) if op.operator == "ELEMENT_WISE_THRESHOLD" else ("min", "max")
    values: list[int | float] = []
    for name in names:
        values += near(bound(op.fields[name], out.type_name), out.type_name)
    if out.type_name in FLOAT_NAMES:
        values += [0.0, -0.0]
    return values


def fill_inputs(data: st.DataObject, op: RawOperator, placements: dict[str, Placement | None],
                memory: list[bytearray]) -> None:
    """Write drawn values into every input's elements (in field order: later inputs win where they meet)."""
    favoured = palette(op)
    for name, placement in placements.items():
        if placement is None or name in OUTPUT_FIELDS:
            continue
        tensor = placement.tensor
        count = tensor.element_count
        values = data.draw(st.lists(values_of(tensor.type_name, favoured), min_size=count, max_size=count), name)
        write_values(memory[placement.buffer], tensor, placement.offset, values)


def check_execution(compiled: dml.CompiledOperator, op: RawOperator, placements: dict[str, Placement | None],
                    memory: list[bytearray], inputs: list[object], outputs: list[object],
                    buffers: list[dml.Buffer], times: int = 2) -> None:
    """Execute ``times`` times; after each, the output's elements equal the model and no other byte of
    any buffer changed. In place, the second run reads the first run's results."""
    for run in range(times):
        before = [bytes(m) for m in memory]
        values = {name: None if p is None else read_values(before[p.buffer], p.tensor, p.offset)
                  for name, p in placements.items() if name not in OUTPUT_FIELDS}
        expected = expected_output(op, values)
        compiled.execute(inputs, outputs)  # type: ignore[arg-type]
        after = [b.to_numpy().tobytes() for b in buffers]
        out = placements["OutputTensor"]
        assert out is not None
        problems = output_mismatches(out.tensor, out.offset, expected, before[out.buffer], after[out.buffer])
        for k, (a, b) in enumerate(zip(before, after)):
            if k != out.buffer and a != b:
                changed = np.flatnonzero(np.frombuffer(a, np.uint8) != np.frombuffer(b, np.uint8))
                problems.append(f"buffer {k} (not the output's) changed at bytes {changed.tolist()[:16]}")
        assert not problems, f"execution {run + 1} of {op.operator}: " + "; ".join(problems)
        memory[:] = [bytearray(a) for a in after]


def fresh_memory(sizes: Sequence[int], seeds: Sequence[int]) -> list[bytearray]:
    return [guard_bytes(size, seed) for size, seed in zip(sizes, seeds)]
