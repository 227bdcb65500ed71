"""Small helpers shared by the tests: run one description on a device over NumPy data."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np
from hypothesis import strategies as st

import opendml as dml


def packed_bytes(values: np.ndarray, total: int) -> np.ndarray:
    """The array's bytes (row-major), zero-padded to ``total`` bytes."""
    raw = np.zeros(total, np.uint8)
    data = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
    raw[: data.size] = data
    return raw


def run(device: dml.Device, desc: object, inputs: Sequence[np.ndarray | None],
        fill: int = 0) -> np.ndarray:
    """Execute ``desc`` on packed copies of ``inputs``; return the packed output as a NumPy array."""
    op = device.compile_operator(device.create_operator(desc))
    tensors = op.operator.tensors
    names = [f.name for f in op.operator.definition.schema.inputs]
    bindings = []
    for name, values in zip(names, inputs):
        if values is None:
            bindings.append(None)
            continue
        total = tensors[name].total_tensor_size_in_bytes
        bindings.append(dml.BufferBinding(device.buffer_from(packed_bytes(np.asarray(values), total))))
    (out_field,) = op.operator.definition.schema.outputs
    out_desc = tensors[out_field.name]
    out = device.buffer_from(np.full(out_desc.total_tensor_size_in_bytes, fill, np.uint8))
    op.execute(bindings, [dml.BufferBinding(out)])
    count = out_desc.element_count * out_desc.data_type.size
    return out.to_numpy()[:count].view(out_desc.data_type.numpy).reshape(out_desc.sizes)


def bits(values: np.ndarray) -> np.ndarray:
    """Raw bits of a float array, for bit-exact comparisons that also see -0.0."""
    values = np.asarray(values)
    return values.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[values.itemsize])


def edge_values(data_type: dml.DataType, count: int, rng: np.random.Generator) -> np.ndarray:
    """Random values of a type, mixed with its edge cases (NaN, ±inf, ±0, denormals, limits, ties)."""
    dtype = data_type.numpy
    if data_type.is_float:
        info = np.finfo(dtype)
        special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, info.tiny / 4, -info.tiny / 2, info.max,
                            -info.max, 1.0, -1.0, 0.5], dtype=dtype)
        values = (rng.standard_normal(count) * 4).astype(dtype)
    else:
        low, high = data_type.integer_range
        special = np.array([low, high, 0, 1, low + 1, high - 1], dtype=dtype)
        values = rng.integers(low, high, count, dtype=dtype, endpoint=True)
        values[: count // 2] = rng.integers(-3 if low < 0 else 0, 4, count // 2).astype(dtype)  # ties
        rng.shuffle(values)
    picks = rng.random(count) < 0.2
    values[picks] = rng.choice(special, int(picks.sum()))
    return values


def same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Bit-identical, except that any NaN equals any NaN (payloads may differ)."""
    if a.dtype.kind == "f":
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        return bool((nan_a == nan_b).all() and (bits(a)[~nan_a] == bits(b)[~nan_b]).all())
    return bool((a == b).all())


def stored_edge_values(desc: dml.TensorDesc, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``edge_values`` for the elements a description's buffer stores (fewer than its sizes' where strides
    repeat elements: a broadcast row), and the array of its sizes that the description reads from them."""
    itemsize = desc.data_type.size
    stored = edge_values(desc.data_type, desc.total_tensor_size_in_bytes // itemsize, rng)
    strides = [s * itemsize for s in desc.effective_strides]
    return stored, np.lib.stride_tricks.as_strided(stored, desc.sizes, strides, writeable=False)


def mismatches(got: np.ndarray, expected: np.ndarray, inputs: Sequence[np.ndarray | None], limit: int = 5) -> str:
    """The first ``limit`` elements where ``same_values`` fails: index, the inputs there, got and expected."""
    got, expected = np.asarray(got), np.asarray(expected)
    wrong = ~np.vectorize(lambda a, b: same_values(np.array([a]), np.array([b])), otypes=[bool])(got, expected)
    lines = []
    for index in list(zip(*np.nonzero(wrong)))[:limit]:
        operands = [None if a is None else np.broadcast_to(a, got.shape)[index] for a in inputs]
        lines.append(f"{tuple(map(int, index))}: inputs {operands!r} got {got[index]!r} expected {expected[index]!r}")
    return f"{int(wrong.sum())} of {got.size} differ; " + "; ".join(lines)


def disjoint_strides(draw: st.DrawFn, sizes: Sequence[int], zero_axes: Sequence[int] = ()) -> tuple[int, ...]:
    """Strides in a random axis order, each jumping past everything inner to it, plus random padding.

    No two index vectors reach one element (unless ``zero_axes`` broadcasts some axes). Size-1 axes
    take any stride, zero included: they never move.
    """
    order = draw(st.permutations(range(len(sizes))))
    strides = [0] * len(sizes)
    reach = 0  # the largest element offset the inner axes reach
    for k in order:
        if sizes[k] == 1:
            strides[k] = draw(st.integers(0, 9))
        elif k in zero_axes:
            strides[k] = 0
        else:
            strides[k] = reach + 1 + draw(st.integers(0, 3))
            reach += (sizes[k] - 1) * strides[k]
    return tuple(strides)


def errors_in_new_thread(call: Callable[[], object]) -> list[BaseException]:
    """Run ``call`` in a thread of its own (one that has used no library yet) and return what it raised."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            call()
        except BaseException as error:  # handed to the test's thread, which asserts there is none
            errors.append(error)

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    return errors
