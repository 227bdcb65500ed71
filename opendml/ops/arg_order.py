"""The order of ARGMIN's and ARGMAX's candidates, stated once: which of two (value, index) pairs wins.

A reduction answers the index of the candidate that wins over every other under a total order on (value,
index) pairs. Three choices fix it, each a table below:

- the operator (``ReductionKind``): ARGMIN's smaller value wins, ARGMAX's larger (``LARGER_WINS``);
- the NaN policy (``NanPolicy``, an opendml extension): under IGNORE a NaN loses to every number, under
  PROPAGATE it wins over every number (``NAN_WINS``). NaN of any sign and payload are one value, as are
  -0.0 and +0.0: two of them tie;
- the direction (``AxisDirection``): equal values go to the smaller index (INCREASING) or to the larger
  (DECREASING) (``LATER_WINS``).

The indices of one reduction are distinct, so no two candidates tie: merging partial answers by this order
is associative and commutative, whatever the parts and the order they come in. A reduction of NaN only,
under IGNORE, answers its first (INCREASING) or last (DECREASING) index (``tie_winner``), DirectML's answer
(SPEC 7, 8.5 and 9).

``ArgOrder.better`` evaluates the order on arrays (NumPy's, or CuPy's through NumPy's dispatch). The NumPy
reference reduces with it (``arg_reduction.arg_reduction_reference``), and so does every merge of partial
answers (``functional.reduction_split``, ``dask.merge``). The engines lower it: the CPU's integer keys
(``backends/cpu_kernels/argmin/keys.py``) and CUDA's ``Order`` (``backends/cuda/argmin_c/comparison.py``),
each tested against ``better`` (tests/test_arg_order.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..enums import AxisDirection, NanPolicy
from ..kernels.spec import ReductionKind

LARGER_WINS = {ReductionKind.ARGMIN: False, ReductionKind.ARGMAX: True}  # which value wins: the larger?
NAN_WINS = {NanPolicy.IGNORE: False, NanPolicy.PROPAGATE: True}  # a NaN against a number: does it win?
LATER_WINS = {AxisDirection.INCREASING: False, AxisDirection.DECREASING: True}  # equal values: the later?


@dataclass(frozen=True)
class ArgOrder:
    """The order of one ARGMIN or ARGMAX: its operator, NaN policy and direction."""

    kind: ReductionKind
    nan_policy: NanPolicy
    direction: AxisDirection

    @property
    def larger_wins(self) -> bool:
        return LARGER_WINS[self.kind]

    @property
    def nan_wins(self) -> bool:
        return NAN_WINS[self.nan_policy]

    @property
    def later_wins(self) -> bool:
        return LATER_WINS[self.direction]

    def better(self, a_values: Any, a_indices: Any, b_values: Any, b_indices: Any) -> Any:
        """Where candidate ``a`` wins over candidate ``b``, element by element (a boolean array): a value
        ahead, or an equal value at the index the direction prefers. Indices compare as numbers, so any
        two that order as the candidates' indices do serve (0 and 1 for a before b)."""
        ahead = (a_values > b_values) if self.larger_wins else (a_values < b_values)  # False at any NaN
        same = a_values == b_values  # -0.0 == +0.0
        if a_values.dtype.kind == "f":
            nan_a, nan_b = np.isnan(a_values), np.isnan(b_values)
            ahead |= (nan_a & ~nan_b) if self.nan_wins else (nan_b & ~nan_a)
            same |= nan_a & nan_b
        same &= (a_indices > b_indices) if self.later_wins else (a_indices < b_indices)  # the index breaks a tie
        ahead |= same
        return ahead


def tie_winner(direction: AxisDirection, count: int) -> int:
    """The index that wins among ``count`` candidates of equal values (a reduction of NaN only, under IGNORE,
    included): the first, or the last where the later index wins."""
    return count - 1 if LATER_WINS[direction] else 0
