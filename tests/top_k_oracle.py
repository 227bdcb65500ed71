"""TOP_K's oracle, independent of opendml's code: Python's ``sorted`` over (NaN last, value, index) keys; and the
data the TOP_K tests draw."""

from __future__ import annotations

import math

import numpy as np

TYPES = ["FLOAT32", "FLOAT16", "INT32", "INT16", "INT8", "UINT32", "UINT16", "UINT8", "INT64", "UINT64"]


def oracle(x: np.ndarray, axis: int, k: int, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each sequence's elements as Python numbers sorted by (is NaN, value reversed where largest, index); the
    first k. -0.0 and +0.0 compare equal in Python, so they tie."""
    moved = np.moveaxis(x, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    values = np.empty((flat.shape[0], k), x.dtype)
    indices = np.empty((flat.shape[0], k), np.int64)
    for r, row in enumerate(flat):
        items = [(float(v) if x.dtype.kind == "f" else int(v)) for v in row.tolist()]

        def key(i: int, items: list = items) -> tuple:
            v = items[i]
            nan = isinstance(v, float) and math.isnan(v)
            return (nan, 0 if nan else (-v if largest else v), i)

        chosen = sorted(range(len(items)), key=key)[:k]
        indices[r] = chosen
        values[r] = row[chosen]
    shape = moved.shape[:-1] + (k,)
    return (np.moveaxis(values.reshape(shape), -1, axis), np.moveaxis(indices.reshape(shape), -1, axis))


def assert_same(got: tuple[np.ndarray, np.ndarray], want: tuple[np.ndarray, np.ndarray]) -> None:
    """Values bit for bit (a NaN's payload and a zero's sign included), indices equal."""
    g_values, g_indices = got
    w_values, w_indices = want
    unsigned = f"u{w_values.dtype.itemsize}"
    np.testing.assert_array_equal(g_values.view(unsigned), np.ascontiguousarray(w_values).view(unsigned))
    np.testing.assert_array_equal(g_indices.astype(np.int64), w_indices)


def random_values(rng: np.random.Generator, type_name: str, shape: tuple[int, ...], spread: int) -> np.ndarray:
    """Values drawn from ``spread`` distinct ones (many ties where it is small), with the type's edges."""
    dtype = np.dtype(type_name.lower())
    if dtype.kind == "f":
        pool = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, 1e-3, -7.0], dtype)
        extra = rng.standard_normal(spread).astype(dtype)
    else:
        info = np.iinfo(dtype)
        pool = np.array([info.min, info.max, 0, 1, info.max - 1], dtype)
        extra = rng.integers(info.min, info.max, spread, dtype=dtype, endpoint=True)
    choices = np.concatenate([pool, extra])
    return rng.choice(choices, size=shape)
