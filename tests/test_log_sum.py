"""The correctly rounded ``addend + ln(V * 2**-149)`` of an exact integer sum ``V`` (LOG_SUM's and LOG_SUM_EXP's
finish), on Python integers and on an accumulator's digits in Numba, against mpmath at 400 bits: integers of every
size, just above and below powers of two and the switch at sqrt(2), with and without an addend."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from opendml.backends import cpu_kernels
from opendml.rounded.log_sum import log_of_integer
from opendml.rounded.method import FLOAT16, FLOAT32, Precision
from tests.reduce_oracle import log_rounded

FORMATS: list[tuple[Precision, type]] = [(FLOAT32, np.float32), (FLOAT16, np.float16)]


def _cases() -> list[tuple[int, float]]:
    rng = random.Random(2718)
    cases = [(1 << 149, 0.0), ((1 << 149) + 1, 0.0), ((1 << 149) - 1, 0.0), (1, 0.0), (3 << 149, -1.0986123),
             (6369051672525772 << 97, 0.0), (6369051672525773 << 97, 0.0), ((1 << 300) - 1, 0.0)]
    for _ in range(150):
        total = rng.getrandbits(rng.randint(1, 330)) or 1
        if rng.random() < 0.4:  # near a power of two: t tiny, of either sign
            total = (1 << rng.randint(60, 330)) + rng.choice([-1, 1]) * rng.getrandbits(rng.randint(1, 50))
        addend = 0.0 if rng.random() < 0.5 else float(np.float32(rng.uniform(-120, 120)))
        cases.append((total, addend))
    return cases


CASES = _cases()


def _oracle(total: int, addend: float, dtype: type) -> float:
    return log_rounded(Fraction(total, 1 << 149), addend, dtype)


@pytest.mark.parametrize(("precision", "dtype"), FORMATS)
def test_integers_of_every_size_give_the_correctly_rounded_log(precision: Precision, dtype: type) -> None:
    wrong = [(t, a) for t, a in CASES if log_of_integer(t, 149, a, precision) != _oracle(t, a, dtype)]
    assert not wrong, wrong[:3]


@pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed (the opendml[fast] extra)")
@pytest.mark.parametrize(("precision", "dtype"), FORMATS)
def test_the_accumulators_digits_give_the_integers_bits(precision: Precision, dtype: type) -> None:
    from opendml.backends.cpu_kernels import log_sums, sum_accumulator

    rng = random.Random(31)
    totals = [t for t, _ in CASES]
    accs = np.zeros((len(totals), sum_accumulator.WORDS), np.int64)
    for r, total in enumerate(totals):
        for k in range(sum_accumulator.DIGITS):
            accs[r, k] = (total >> (32 * k)) & 0xFFFFFFFF
        k = rng.randrange(sum_accumulator.DIGITS - 1)  # digits left uncarried, as the sums leave them
        if accs[r, k + 1]:
            accs[r, k + 1] -= 1
            accs[r, k] += 1 << 32
    got = log_sums.log_sums(accs, precision.base, precision.lowest, precision.top)
    assert got.tolist() == [_oracle(t, 0.0, dtype) for t in totals]


def _near_midpoints(dtype: type, count: int) -> list[int]:
    """Sums ``V`` (units ``2**-149``) whose logarithm lies about ``2**-60`` to ``2**-85`` (relative) from a midpoint
    of the type, either side: well inside the double's ``NEAR`` ulps, well outside the double-double's tie zone of
    ``2**-93`` (``V`` the integer nearest ``exp(midpoint (1 + offset)) * 2**149``)."""
    import mpmath

    rng = random.Random(57)
    totals = []
    info = np.finfo(dtype)
    while len(totals) < count:
        value = dtype(rng.uniform(-60.0, 60.0) if rng.random() < 0.8 else rng.uniform(-0.9, 0.9))
        up = np.nextafter(value, dtype(np.inf))
        midpoint = (Fraction(float(value)) + Fraction(float(up))) / 2
        if abs(value) >= info.max / 2:
            continue
        offset = rng.choice([-1, 1]) * mpmath.mpf(2) ** -rng.randint(60, 85)
        with mpmath.workprec(400):
            at = mpmath.mpf(midpoint.numerator) / midpoint.denominator * (1 + offset)
            exact = mpmath.exp(at) * mpmath.mpf(2) ** 149
            totals.append(int(mpmath.nint(exact)))
    return totals


@pytest.mark.skipif(not cpu_kernels.numba_available(), reason="Numba is not installed (the opendml[fast] extra)")
@pytest.mark.parametrize(("precision", "dtype"), FORMATS)
def test_the_double_route_decides_only_far_from_midpoints_and_near_one(precision: Precision, dtype: type) -> None:
    """LOG_SUM's quick double: where it decides, the oracle's value; it leaves to the double-double route every sum
    whose logarithm lies near a midpoint, and every sum in (0.36, 3); both routes together give the oracle's bits."""
    from opendml.backends.cpu_kernels import log_sums, sum_accumulator

    near = _near_midpoints(dtype, 40)
    rng = random.Random(8)
    middle = [int(rng.uniform(0.37, 2.99) * (1 << 149)) for _ in range(20)]
    far = [rng.getrandbits(rng.randint(1, 300)) or 1 for _ in range(200)]
    decided = []
    for total in near + middle + far:
        digits = np.zeros(sum_accumulator.DIGITS + 3, np.int64)
        for k in range(sum_accumulator.DIGITS):
            digits[k] = (total >> (32 * k)) & 0xFFFFFFFF
        quick = log_sums._quick_log(digits, total.bit_length() - 1, precision.base, precision.lowest, precision.top)
        if not np.isnan(quick):
            assert quick == _oracle(total, 0.0, dtype), total
            decided.append(total)
    assert not set(decided) & set(near + middle)
    assert len(set(decided) & set(far)) > 150  # the double decides almost every sum
    accs = np.zeros((len(near + middle), sum_accumulator.WORDS), np.int64)
    for r, total in enumerate(near + middle):
        for k in range(sum_accumulator.DIGITS):
            accs[r, k] = (total >> (32 * k)) & 0xFFFFFFFF
    got = log_sums.log_sums(accs, precision.base, precision.lowest, precision.top)
    assert got.tolist() == [_oracle(t, 0.0, dtype) for t in near + middle]
