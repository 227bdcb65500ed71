"""The Numba kernels' FLOAT16 conversions against NumPy's float16, which rounds float32 to nearest even.

Every one of the 65536 halves is loaded; float32 values are checked on every exponent with a spread of
significands, every rounding boundary between two neighbouring halves (the tie, and one ulp either side of
it), the overflow and subnormal limits, and NaNs of both signs and several payloads: a store of any NaN is
0x7E00 with the NaN's sign (what every opendml backend writes), a load keeps the half's payload.
"""

from __future__ import annotations

import numpy as np
import pytest

from opendml.backends import cpu_kernels

if not cpu_kernels.numba_available():
    pytest.skip("Numba is not installed (the opendml[fast] extra)", allow_module_level=True)

from numba import njit

from opendml.backends.cpu_kernels.halves import float_to_half, half_to_float, round_to_half


@njit
def _loads(bits, out):  # type: ignore[no-untyped-def]
    for i in range(bits.size):
        out[i] = half_to_float(bits[i])


@njit
def _stores(values, out):  # type: ignore[no-untyped-def]
    for i in range(values.size):
        out[i] = float_to_half(values[i])


@njit
def _rounds(values, out):  # type: ignore[no-untyped-def]
    for i in range(values.size):
        out[i] = round_to_half(values[i])


ALL_HALVES = np.arange(65536, dtype=np.uint32).astype(np.uint16)


def float_samples() -> np.ndarray:
    """float32 bit patterns: a spread over every exponent, every tie between neighbouring finite halves and
    one ulp either side, and the edges (zeros, limits, infinities, NaNs)."""
    spread = np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32)
    finite = ALL_HALVES[(ALL_HALVES & 0x7C00) != 0x7C00].view(np.float16)
    low, high = np.sort(finite.astype(np.float64))[:-1], np.sort(finite.astype(np.float64))[1:]
    ties = ((low + high) / 2).astype(np.float32)  # exact: a half needs 11 significant bits, a tie 12
    near = ties.view(np.uint32)
    edges = np.array([0, 0x80000000, 0x477FE000, 0x477FEFFF, 0x477FF000, 0x47800000, 0x7F7FFFFF, 0x7F800000,
                      0xFF800000, 0x33000000, 0x33000001, 0x337FFFFF, 0x387FE000, 0x38800000, 0x7FC00000,
                      0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF, 0x7FA00000], dtype=np.uint32)
    return np.concatenate([spread, near, near + 1, near - 1, edges]).view(np.float32)


def expected_halves(values: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        bits = values.astype(np.float16).view(np.uint16).copy()
    nan = np.isnan(values)
    bits[nan] = np.where(np.signbit(values[nan]), 0xFE00, 0x7E00)
    return bits


def test_every_half_loads_exactly_and_keeps_its_nan_payload() -> None:
    got = np.empty(65536, np.float32)
    _loads(ALL_HALVES, got)
    expected = ALL_HALVES.view(np.float16).astype(np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))
    nan = (ALL_HALVES & 0x7FFF) > 0x7C00  # NumPy's conversion keeps the payload, signalling ones too
    assert np.array_equal((got.view(np.uint32)[nan] >> 13) & 0x3FF, ALL_HALVES[nan] & 0x3FF)


def test_stores_round_to_nearest_even_and_write_one_nan_per_sign() -> None:
    values = float_samples()
    got = np.empty(values.size, np.uint16)
    _stores(values, got)
    np.testing.assert_array_equal(got, expected_halves(values))


def test_an_intermediate_rounds_as_a_store_then_a_load() -> None:
    values = float_samples()
    got = np.empty(values.size, np.float32)
    _rounds(values, got)
    expected = expected_halves(values).view(np.float16).astype(np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))
