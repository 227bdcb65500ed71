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
