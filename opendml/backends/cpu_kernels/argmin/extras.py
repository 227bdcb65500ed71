"""ARGMIN that writes extra outputs (``KernelSpec.extra``: a fused graph kernel whose intermediates are also
graph outputs) on the JIT path: each input element is read once, its values computed once, the value ARGMIN
compares written into a scratch tile and each extra value written to its output, then the tile reduced.

This is ``boxes``' scheme with more outputs: the plan (``plan``, through
``prologue.prepare``) is made over the merged layout of every operand *and* every extra output (a
dimension merges only where it merges for all of them), its tasks are cut into boxes (``boxes.box_at``),
and for each box the element-wise walker of ``codegen`` (``codegen.walker`` with the extras as more roots)
writes the tile and the box's part of each extra output in one pass (the nodes the roots share computed once:
the row-5 chain DEQUANTIZE_LINEAR -> CLIP stores the one clipped value twice), then the engine kernel of the
plan (``argmin_rows``, ``argmin_short_rows``, ``argmin_columns``) reduces the tile, which is still in this
core's cache. Every layout, split reduction and thread share the engines take is taken here, and:

- the tile holds the bits the intermediate buffer of the unfused graph would hold, so the indices are exact
  by construction, and each extra value is its node's stored value (a FLOAT16 one rounded once);
- boxes partition each task and tasks partition the input, so every element of every extra output is
  written exactly once, and nothing else: the walker writes at the described elements only (padding between
  them untouched, SPEC 8.8).

Extras of at least ``fast.STREAM_MIN_BYTES`` together (and of one element size with the tile, no FLOAT16:
``codegen.streams_extras``) are written with streaming stores, the tile with ordinary ones in the same
vector loop (``kernel_streamed`` of ``codegen.walker``, run by the ``task_*_streamed`` variants): an ordinary
store first reads the line it writes, so writing row 5's clipped tensor that way moved as many bytes as
writing it in a step of its own and reading it back (row 5, [16384, 4096] on 2 busy cores: 48 ms with
ordinary stores, 24 ms streamed, 41 ms as two steps). Smaller extras take ordinary stores (they stay in the
caches for what reads them next). The fast row tasks of ``fast_rows`` (the element compared in registers,
never stored) are not used here: the extras' stores make the kernel memory-bound anyway.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from types import ModuleType
from typing import Any

import numpy as np

from .... import expr as ex
from ....dtypes import DataType
from ....kernels import cache
from ....kernels.spec import KernelSpec
from ....ops.arg_reduction import ArgReductionParams
from .. import codegen
from ..views import flat
from . import call as engine
from . import prologue
from .engines import boxes
from .engines.task_rows import FIRST, INDEX0, LAST, ORIGINS, PIECE, SLOT0, START, STEP, STOP, F
from .keys import order_of

_modules: dict[tuple[ex.Expr, tuple[ex.Store, ...]], ModuleType] = {}


def _task(name: str, ops: tuple[int, ...], extras: int, q: list[str], scratch: str, values: str,
          streamed: bool = False) -> str:
    """One task of engine ``name``: operands ``a{k}``, extra outputs ``x{j}`` (their first elements
    ``at[m + j - 1]`` of each box, after the operands'), scalars ``q``; ``streamed``: the extras written by
    ``kernel_streamed`` (task and driver named ``..._streamed``)."""
    suffix = "_streamed" if streamed else ""
    m = len(ops)
    a = [f"a{k}" for k in ops]
    x = [f"x{j}" for j in range(1, extras + 1)]
    fill_args = ", ".join([f"{v}[at[{p}]:]" for p, v in enumerate(a)] + ["values"]
                          + [f"{v}[at[{m + p}]:]" for p, v in enumerate(x)] + ["bs"]
                          + [f"strides[{p}, f:]" for p in range(m)] + ["so"]
                          + [f"strides[{m + p}, f:]" for p in range(extras)] + ["0", "g * so[0]"] + q)
    head = ", ".join(a + x + ["t", "strides", "red", "w", "cur", "idx", "kind", "order", "floats"] + q)
    rows = m + extras
    return f'''@jit
def task_{name}{suffix}({head}):
    """One task: each box's element into a scratch tile and its extra values into their outputs, in one
    pass, then the tile reduced by ``argmin_{name}``."""
    f, step, piece = t[{F}], t[{STEP}], t[{PIECE}]
    sizes = t[{ORIGINS + rows}:]
    scratch = np.empty({boxes.BOX}, np.{scratch})
    values = scratch{values}
    at = np.empty({rows}, np.int64)
    bs, so = box_shape(sizes, f)
    rb, wb = red[f:], w[f:]
    pos, last = t[{FIRST}], t[{LAST}]
    while pos < last:
        g, slot, index = box_at(pos, last, sizes, f, step, strides, t[{ORIGINS}:{ORIGINS + rows}], red,
                                w, t[{SLOT0}], t[{INDEX0}], at)
        bs[0] = g
        kernel{suffix}({fill_args})
        argmin_{name}(scratch, 0, bs, so, rb, wb, slot, index, 0, engine_outer(bs, rb, {name == "columns"}),
                      cur[piece], idx[piece], kind, order, floats)
        pos += g


@njit(nogil=True, cache=True, parallel=True)
def driver_{name}{suffix}({head}, counter, workers):
    for _ in prange(workers):
        k = next_share(counter)
        while k < t.shape[0]:
            task_{name}{suffix}({head.replace("t, strides", "t[k], strides")})
            k = next_share(counter)'''


def source(element: ex.Expr, extra: tuple[ex.Store, ...]) -> str:
    """The Numba source of the module of a reduction's element writing ``extra`` (the module docstring)."""
    fill = boxes.fill_expression(element)
    ops = codegen.operands(fill, extra)
    q = [f"q{k}" for k in range(len({k for root in (fill, *extra) for k in ex.params(root)}))]
    scratch, values = boxes._scratch(fill.type)
    tasks = [_task(name, ops, len(extra), q, scratch, values) for name in boxes.ENGINES]
    if codegen.streams_extras(fill, extra):
        tasks += [_task(name, ops, len(extra), q, scratch, values, True) for name in boxes.ENGINES]
    return "\n\n\n".join([codegen.walker(fill, extra), boxes._IMPORTS, *tasks]) + "\n"


def compiled(element: ex.Expr, extra: tuple[ex.Store, ...]) -> ModuleType:
    """The generated module, written to the kernel cache and imported once per process."""
    return cache.generated_module(_modules, (element, extra), "argmin_extras_", lambda: source(element, extra))


class _Kernel:
    """What a reduction with extras needs per call: its operands, key kind and order, compiled module."""

    def __init__(self, spec: KernelSpec, params: ArgReductionParams) -> None:
        fill = boxes.fill_expression(spec.element)
        try:
            self.module = compiled(spec.element, spec.extra)
        except ex.ExpressionError as error:
            from .. import unsupported

            raise unsupported(spec) from error
        self.spec, self.axes = spec, params.axes
        self.ops = codegen.operands(fill, spec.extra)
        self.kind, self.key = prologue._kind(fill.type, params)
        self.order = order_of(params)
        loaded = {k: t for root in (fill, *spec.extra) for k, t in ex.loads(root).items()}
        self.halves = [loaded[k] is DataType.FLOAT16 for k in self.ops] + [
            x.type is DataType.FLOAT16 for x in spec.extra]
        self.streams = codegen.streams_extras(fill, spec.extra)

    def prepared(self, found: prologue.Prepared, elements: int) -> prologue.Prepared:
        """``found`` running the streamed tasks where the extras of ``elements`` elements are large enough
        to stream (``fast.STREAM_MIN_BYTES``, the element-wise kernels' rule)."""
        from .. import fast

        size = elements * sum(x.type.size for x in self.spec.extra)
        return replace(found, engine=found.engine + "_streamed") if self.streams and size >= fast.STREAM_MIN_BYTES \
            else found

    def flats(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Operands then extra outputs as the kernels take them: flat, FLOAT16 as its bits."""
        return [flat(a.view(np.uint16) if h else a) for a, h in zip(arrays, self.halves)]


def reduction(spec: KernelSpec, params: ArgReductionParams) -> Any:
    """``run(*operands, out, *extras, threads)``: the extras shaped as the reduced input."""
    kernel = _Kernel(spec, params)
    count = len(spec.extra)
    prepared: dict[Any, prologue.Prepared] = {}

    def run(*args: Any) -> None:
        arrays = [args[k] for k in kernel.ops] + list(args[-1 - count:-1])
        out, threads = args[-2 - count], args[-1]
        layout_key = (threads, arrays[0].shape, *(a.strides for a in arrays))
        found = prepared.get(layout_key)
        if found is None:
            if len(prepared) > 64:
                prepared.clear()
            found = prepared[layout_key] = kernel.prepared(prologue.prepare(
                arrays[0].shape, [_elements(a) for a in arrays], kernel.axes, threads), arrays[0].size)
        prologue._execute(kernel.module, found, kernel.flats(arrays), spec.scalars, kernel.kind, kernel.key,
                          kernel.order, out, threads)

    return run


def compile_layout(spec: KernelSpec, params: ArgReductionParams, shape: Sequence[int], strides: Sequence[int],
                   operands: Sequence[Sequence[int] | None], extras: Sequence[Sequence[int]], threads: int) -> None:
    """Compile what a call of this layout runs (``strides``: the input's, ``operands``: each operand's, None
    for an absent one, ``extras``: each extra output's), and nothing else, by running its plan over no boxes."""
    kernel = _Kernel(spec, params)
    every = [operands[k] if k < len(operands) and operands[k] is not None else strides for k in kernel.ops]
    found = kernel.prepared(prologue.prepare(shape, [*every, *extras], params.axes, threads),  # type: ignore[list-item]
                            math.prod(shape))
    empty = found.tasks.copy()
    empty[:, LAST] = empty[:, FIRST]
    empty[:, STOP] = empty[:, START]
    fill = boxes.fill_expression(spec.element)
    loaded = {k: t for root in (fill, *spec.extra) for k, t in ex.loads(root).items()}
    types = [loaded[k] for k in kernel.ops] + [x.type for x in spec.extra]
    flats = [np.zeros(1, np.uint16 if t is DataType.FLOAT16 else t.numpy) for t in types]
    state = engine.State.fresh(1, kernel.key, found.work.pieces)
    prologue._launch(kernel.module, replace(found, tasks=empty, slots=1, length=1), flats, spec.scalars,
                     kernel.kind, kernel.order, state, threads)


def _elements(a: np.ndarray) -> list[int]:
    return [s // a.itemsize for s in a.strides]
