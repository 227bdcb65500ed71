"""ARGMIN with a computed element (a fused prologue): the element's values written box by box into a small
scratch tile, and the ARGMIN engines run on the tile unchanged.

A fused chain feeding ARGMIN hands the reduction an element expression over several operands (the chain's
external inputs, broadcast ones through zero strides) instead of a load of its input. The generated module
of an expression (``source``) holds:

- ``kernel``: the element-wise walk of ``codegen`` (``codegen.walker``) over the expression stored as its
  own type (``fill_expression``): it writes, for a box of the input, exactly the bits the intermediate
  buffer of the unfused graph would hold (FLOAT16 rounded once to half);
- ``task_rows``, ``task_short_rows``, ``task_columns``: one ARGMIN task of the plan (``plan``), cut
  into boxes of at most ``BOX`` elements (``box_at``), each filled into a scratch tile of this thread and
  reduced there by the engine kernel of that name (``argmin_rows``, ``argmin_short_rows``,
  ``argmin_columns``), folding into the task's (key, index) state as a split reduction's pieces do: the
  engines compare indices explicitly (``keys.replaces``), so boxes may come in any order. A box is a
  sub-box of the task's merged layout, so every layout, split and thread share the engines take is taken
  here, and the tile's bits are the intermediate's: the result is exact by construction;
- ``driver_*``: those tasks on Numba's threads (``drivers``), each compiled only when a call runs it;
- where ``hoisted`` is given (a FLOAT32 element with no FLOAT16 in it, every operand walking the last
  dimension with stride 1 or 0), the fast tasks that compute the element where it is compared, with no
  tile: ``fast_rows`` (a reduced last dimension) and ``fast_columns`` (a kept one).

A box spans whole trailing dimensions and a range of one dimension (as ``blocked.blocks`` cuts blocks), and
never more than one position of the dimensions before it; for rows the box is a group of whole rows (short
rows: ``argmin_short_rows`` on the tile) or a piece of one long row; for columns, a group of rows of every
column, so that each tile costs one fold of its columns into the state.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from ..... import expr as ex
from .....dtypes import DataType
from .....kernels import cache
from ... import codegen
from ...jit import jit
from . import fast_columns, fast_rows
from .task_rows import FIRST, INDEX0, LAST, ORIGINS, PIECE, SLOT0, STEP, F

# Elements of a scratch tile: 1 MiB of FLOAT32, half a core's L2 cache here, where the engine reads it back.
# A column tile folds into the state once per tile, so tall tiles pay: the first-axis ARGMIN of DEQUANTIZE
# [16384, 4096] -> CLIP took 16, 10, 8.6 and 10.5 ms on 2 threads with tiles of 2^16 to 2^19 elements.
BOX = 1 << 18

ENGINES = ("rows", "short_rows", "columns")

_modules: dict[tuple[ex.Expr, tuple[bool, ...] | None], ModuleType] = {}


def fill_expression(element: ex.Expr) -> ex.Store:
    """``element`` as the element-wise expression writing the tile: the value stored as its own type (a
    FLOAT16 value as its bits, as the intermediate buffer holds it)."""
    if isinstance(element, ex.Store):
        return element
    return ex.Store(element, element.data_type)  # type: ignore[arg-type]


@jit
def box_shape(sizes, f):  # type: ignore[no-untyped-def]
    """A box's sizes (from dimension ``f``; the first is set per box) and its tile's packed strides."""
    bs = sizes[f:].copy()
    so = np.empty(bs.size, np.int64)
    step = 1
    for d in range(bs.size - 1, -1, -1):
        so[d] = step
        step *= bs[d]
    return bs, so


@jit
def box_at(pos, last, sizes, f, step, strides, origins, red, w, slot0, index0, at):  # type: ignore[no-untyped-def]
    """The box at position ``pos`` (over dimensions ``0..f``, the last counted in elements): its length
    along ``f`` (at most ``step``, not past ``last`` or the end of the dimension), its first slot and index;
    ``at`` receives each operand's first element."""
    n = sizes[f]
    within = pos % n
    g = min(step, last - pos, n - within)
    rest = pos // n
    slot, index = slot0, index0
    for k in range(at.size):
        at[k] = origins[k] + within * strides[k, f]
    if red[f]:
        index += within * w[f]
    else:
        slot += within * w[f]
    for d in range(f - 1, -1, -1):
        i = rest % sizes[d]
        rest //= sizes[d]
        for k in range(at.size):
            at[k] += i * strides[k, d]
        if red[d]:
            index += i * w[d]
        else:
            slot += i * w[d]
    return g, slot, index


@jit
def engine_outer(bs, rb, columns):  # type: ignore[no-untyped-def]
    """The outer positions an engine walks in a box: rows for the row kernels; for the column kernel, the
    positions before its reduced rows (or before its columns, where the dimension before them is kept)."""
    count = 1
    for d in range(bs.size):
        count *= bs[d]
    inner = bs[-1]
    if columns and bs.size >= 2 and rb[bs.size - 2]:
        inner *= bs[-2]
    return count // inner


_IMPORTS = '''from opendml.backends.cpu_kernels.argmin.engines.boxes import box_at, box_shape, engine_outer
from opendml.backends.cpu_kernels.argmin.engines.columns import argmin_columns
from opendml.backends.cpu_kernels.argmin.engines.rows import argmin_rows, argmin_short_rows'''


def _task(engine: str, ops: tuple[int, ...], q: list[str], scratch: str, values: str) -> str:
    a = [f"a{k}" for k in ops]
    fill_args = ", ".join([f"{x}[at[{p}]:]" for p, x in enumerate(a)] + ["values", "bs"]
                          + [f"strides[{p}, f:]" for p in range(len(ops))] + ["so", "0", "g * so[0]"] + q)
    head = ", ".join(a + ["t", "strides", "red", "w", "cur", "idx", "kind", "order", "floats"] + q)
    return f'''@jit
def task_{engine}({head}):
    """One task: its boxes filled into a scratch tile and reduced there by ``argmin_{engine}``."""
    f, step, piece = t[{F}], t[{STEP}], t[{PIECE}]
    sizes = t[{ORIGINS + len(ops)}:]
    scratch = np.empty({BOX}, np.{scratch})
    values = scratch{values}
    at = np.empty({len(ops)}, np.int64)
    bs, so = box_shape(sizes, f)
    rb, wb = red[f:], w[f:]
    pos, last = t[{FIRST}], t[{LAST}]
    while pos < last:
        g, slot, index = box_at(pos, last, sizes, f, step, strides, t[{ORIGINS}:{ORIGINS + len(ops)}], red, w,
                                t[{SLOT0}], t[{INDEX0}], at)
        bs[0] = g
        kernel({fill_args})
        argmin_{engine}(scratch, 0, bs, so, rb, wb, slot, index, 0, engine_outer(bs, rb, {engine == "columns"}),
                        cur[piece], idx[piece], kind, order, floats)
        pos += g


@njit(nogil=True, cache=True, parallel=True)
def driver_{engine}({head}, counter, workers):
    for _ in prange(workers):
        k = next_share(counter)
        while k < t.shape[0]:
            task_{engine}({head.replace("t, strides", "t[k], strides")})
            k = next_share(counter)'''


def _scratch(t: DataType) -> tuple[str, str]:
    """The tile's dtype as the engines read it, and how the fill writes it: FLOAT32 as int32 bits
    (``keys``), FLOAT16 as uint16 bits (the fill's stored form), integers as themselves."""
    if t is DataType.FLOAT32:
        return "int32", ".view(np.float32)"
    if t is DataType.FLOAT16:
        return "uint16", ""
    return t.numpy.name, ""


def source(element: ex.Expr, hoisted: tuple[bool, ...] | None = None) -> str:
    """The Numba source of the module of a reduction's element (see the module docstring); with the fast
    tasks of ``fast_rows`` and ``fast_columns`` where ``hoisted`` says which operands are one value
    along the last dimension (a vectorised element, ``prologue.prepare``)."""
    fill = fill_expression(element)
    ops = codegen.operands(fill)
    q = [f"q{k}" for k in range(len(ex.params(fill)))]
    scratch, values = _scratch(fill.type)
    tasks = [_task(engine, ops, q, scratch, values) for engine in ENGINES]
    if hoisted is not None:
        tasks += [fast_rows.source(ops, q, hoisted), fast_columns.source(ops, q, hoisted)]
    return "\n\n\n".join([codegen.walker(fill), _IMPORTS, *tasks]) + "\n"


def compiled(element: ex.Expr, hoisted: tuple[bool, ...] | None = None) -> ModuleType:
    """The generated module of a reduction's element, written to the kernel cache and imported once."""
    return cache.generated_module(_modules, (element, hoisted), "argmin_boxes_", lambda: source(element, hoisted))
