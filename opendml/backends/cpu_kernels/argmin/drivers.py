"""ARGMIN's drivers: its tasks, state merges, fills and index writes run on Numba's threads.

As in ``drivers``: each thread runs one iteration of ``prange(workers)`` and in it takes the next share
not yet started (``next_share``); ``drivers.launch`` runs a driver, ``drivers.usable`` says whether it may.
"""

from __future__ import annotations

from numba import njit, prange

from ..drivers import next_share, parallel
from .engines.columns import argmin_columns
from .engines.rows import argmin_long_rows, argmin_rows, argmin_short_rows
from .keys import replaces

# Columns of an ARGMIN task row: where it starts in x, its first slot and index, its outer range, the
# state (row of cur/idx) it folds into; its sizes follow.
X0, SLOT0, INDEX0, START, STOP, STATE, SIZES = range(7)


# One driver per kernel: a driver compiles (and optimises again, linked into its own code) every kernel it
# may call, so a call compiles only the kernel its plan runs.


@parallel
def short_rows(x, tasks, xs, red, w, cur, idx, kind, order, floats, counter, workers):  # type: ignore
    """``argmin_short_rows`` over the task rows."""
    for _ in prange(workers):
        k = next_share(counter)
        while k < tasks.shape[0]:
            t = tasks[k]
            argmin_short_rows(x, t[X0], t[SIZES:], xs, red, w, t[SLOT0], t[INDEX0], t[START], t[STOP], cur[t[STATE]],
                              idx[t[STATE]], kind, order, floats)
            k = next_share(counter)


@parallel
def long_rows(x, tasks, xs, red, w, cur, idx, kind, order, floats, counter, workers):  # type: ignore
    """``argmin_long_rows`` over the task rows."""
    for _ in prange(workers):
        k = next_share(counter)
        while k < tasks.shape[0]:
            t = tasks[k]
            argmin_long_rows(x, t[X0], t[SIZES:], xs, red, w, t[SLOT0], t[INDEX0], t[START], t[STOP], cur[t[STATE]],
                             idx[t[STATE]], kind, order, floats)
            k = next_share(counter)


@parallel
def rows(x, tasks, xs, red, w, cur, idx, kind, order, floats, counter, workers):  # type: ignore
    """``argmin_rows`` over the task rows."""
    for _ in prange(workers):
        k = next_share(counter)
        while k < tasks.shape[0]:
            t = tasks[k]
            argmin_rows(x, t[X0], t[SIZES:], xs, red, w, t[SLOT0], t[INDEX0], t[START], t[STOP], cur[t[STATE]],
                        idx[t[STATE]], kind, order, floats)
            k = next_share(counter)


@parallel
def columns(x, tasks, xs, red, w, cur, idx, kind, order, floats, counter, workers):  # type: ignore
    """``argmin_columns`` over the task rows."""
    for _ in prange(workers):
        k = next_share(counter)
        while k < tasks.shape[0]:
            t = tasks[k]
            argmin_columns(x, t[X0], t[SIZES:], xs, red, w, t[SLOT0], t[INDEX0], t[START], t[STOP], cur[t[STATE]],
                           idx[t[STATE]], kind, order, floats)
            k = next_share(counter)


@njit(nogil=True, cache=True)
def merge_range(cur, idx, a, b, order):  # type: ignore[no-untyped-def]
    """Slots ``a..b`` of every later state folded into state 0 by key, then index (``keys.replaces``).
    Indexed in place: slicing four rows for a helper doubled this function's compile time (0.25 s against
    0.13 s), which the first split reduction of a process pays."""
    for p in range(1, cur.shape[0]):
        for s in range(a, b):
            found = idx[p, s]
            if found >= 0 and (idx[0, s] < 0 or replaces(cur[p, s], found, cur[0, s], idx[0, s], order)):
                cur[0, s], idx[0, s] = cur[p, s], found


@parallel
def merge(cur, idx, order, bounds, counter, workers):  # type: ignore[no-untyped-def]
    for _ in prange(workers):
        k = next_share(counter)
        while k < bounds.size - 1:
            merge_range(cur, idx, bounds[k], bounds[k + 1], order)
            k = next_share(counter)


@parallel
def fill(a, value, bounds, counter, workers):  # type: ignore[no-untyped-def]
    for _ in prange(workers):
        k = next_share(counter)
        while k < bounds.size - 1:
            for s in range(bounds[k], bounds[k + 1]):
                a[s] = value
            k = next_share(counter)


@parallel
def finish(idx, out, default, bounds, counter, workers):  # type: ignore[no-untyped-def]
    """ARGMIN's indices written to its output, cast as NumPy's unsafe casting does; ``default`` where a slot
    found nothing (every element NaN, SPEC 8.5)."""
    for _ in prange(workers):
        k = next_share(counter)
        while k < bounds.size - 1:
            for s in range(bounds[k], bounds[k + 1]):
                out[s] = idx[s] if idx[s] >= 0 else default
            k = next_share(counter)
