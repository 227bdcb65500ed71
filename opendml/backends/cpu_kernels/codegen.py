"""Numba kernels generated from an element-wise KernelSpec: each operator's expression, lowered once.

``source(element)`` writes the Numba source of a module that runs ``element`` over a layout:

- ``value``: the expression on one element of each operand, one local per node in ``expr.nodes`` order (a
  shared subtree is computed once), each node's Numba expression from its entry of ``nodes.LOWERINGS``. FLOAT16 data
  arrives as uint16 bits: a load converts it exactly (``half_to_float``), a FLOAT16 store rounds once
  (``float_to_half``). Integer nodes cast explicitly (Numba widens int32 - int32 to int64). Divide, Round and
  Saturate are the intrinsics of ``arithmetic`` (Numba's ``/`` would check the divisor, its casts of
  out-of-range floats are undefined). No fastmath anywhere, and a multiply and an add are separate statements,
  so LLVM never contracts them into a fused multiply-add.
- ``run`` (written by ``codegen_runs``): a contiguous run, one loop per pattern of the other operands that are one
  value, or blocks over views past ``HOISTED_MAX`` of them.
- ``stream``, ``kernel``, ``kernel_streamed``, ``driver`` and ``driver_streamed`` (``codegen_kernels``): the
  streaming-store vector code, the row walk over the layout, and those walks over thread shares.
- ``entry(scalars, host)`` (``codegen_entry``): the operator's Python entry.

The generated code's argument names, and the lines several of its functions share, come from ``codegen_names``.

A kernel with extra outputs (``KernelSpec.extra``: a fused kernel writing intermediates that are graph
outputs) has one module for its roots, the element and the extras (``source(element, extra)``): ``value``
returns a tuple, each root's stored form from one computation of the nodes they share; ``run``, ``kernel``,
the drivers and ``entry`` take one output array (and one strides array) per root, the main output ``o`` first,
then ``o1``, ``o2``...; the entry's arguments are the inputs, the outputs and the thread count. The streamed
kernel stores every root with streaming stores where they have one element size (``vectors.streamable``) and
a run's outputs share their alignment to a vector (the usual case: rows of whole cache lines in buffers
aligned alike); other runs are written by ``run`` with ordinary stores (row 4's chain on [16384, 4096] with
the CLIP's FLOAT32 result a second output: 13.5 ms streamed, 29.6 ms with ordinary stores, 2 cores).
Modules of one root are as before.

Scalars (``Param``) are kernel arguments, so one compiled module serves every value of Min, Max, Scale or
Bias. ``compiled(element, extra)`` writes the module into the kernel cache (``opendml.kernels.cache``), imports it
from there, and Numba caches its compiled code beside it.
"""

from __future__ import annotations

from types import ModuleType

from ... import expr as ex
from ...dtypes import DataType
from ...kernels import cache
from . import fast_functions, vectors
from .codegen_entry import _entry
from .codegen_kernels import _driver, _kernel, _stream, _streams
from .codegen_names import CHUNK, HOISTED_MAX, _Names
from .codegen_runs import _run, _run_checked
from .nodes import expression, operands, scalar

_modules: dict[tuple[ex.Expr, tuple[ex.Store, ...]], ModuleType] = {}


def compiled(element: ex.Expr, extra: tuple[ex.Store, ...] = ()) -> ModuleType:
    """The generated module of an element-wise expression (a ``Store``) and the extra values it writes,
    imported once per process."""
    return cache.generated_module(_modules, (element, extra), "elementwise_", lambda: source(element, extra))


def _parameters(roots: tuple[ex.Expr, ...]) -> int:
    return len({k for root in roots for k in ex.params(root)})


def source(element: ex.Expr, extra: tuple[ex.Store, ...] = ()) -> str:
    """The Numba source of the module running ``element`` and writing ``extra`` too (see the module
    docstring)."""
    roots = _roots(element, extra)
    names = _Names(operands(element, extra), _parameters(roots), len(roots))
    streams = _streams(roots, names)
    parts = [_HEADER, expression(roots), _value(roots, names), *_runs(element, roots, names)]
    if streams:
        parts.append(_stream(names))
    parts += [_kernel(names, streamed=False), _driver(names, "")]
    if streams:
        parts += [_kernel(names, streamed=True), _driver(names, "_streamed")]
    parts.append(_entry(roots, names))
    return "\n\n\n".join(parts) + "\n"


def _runs(element: ex.Expr, roots: tuple[ex.Store, ...], names: _Names) -> list[str]:
    """``run``, checked where a root computes a function of ``fast_functions`` (with ``value_fast`` before it)."""
    blocks = [f"CHUNK = {CHUNK}"] if checked(roots) or names.generic else []  # runs in blocks of CHUNK elements
    if checked(roots):
        return blocks + [_value(roots, names, fast=True), _run_checked(names)]
    return blocks + [_run(element, names)]


def _roots(element: ex.Expr, extra: tuple[ex.Store, ...]) -> tuple[ex.Store, ...]:
    if not isinstance(element, ex.Store):
        raise ex.ExpressionError(f"an element-wise kernel stores its value; got {element!r}")
    return (element, *extra)


def walker(element: ex.Expr, extra: tuple[ex.Store, ...] = ()) -> str:
    """The Numba source of ``ELEMENT``, ``value``, ``run`` and ``kernel`` alone (the header included): what a
    reduction with a computed element (``argmin.engines.boxes``) runs to write its element's values into a scratch
    tile (and its extra values into their outputs: ``argmin.extras``), or computes them with
    (``argmin.engines.fast_rows``). With ``extra`` that stream (``streams_extras``), ``stream`` and ``kernel_streamed``
    too: the tile (output ``o``) written with ordinary stores, the extras with streaming ones."""
    roots = _roots(element, extra)
    names = _Names(operands(element, extra), _parameters(roots), len(roots))
    parts = [_HEADER, expression(roots), _value(roots, names), *_runs(element, roots, names),
             _kernel(names, streamed=False)]
    if streams_extras(element, extra):
        parts += [_stream(names, cached=1), _kernel(names, streamed=True, cached=1)]
    return "\n\n\n".join(parts)


def streams_extras(element: ex.Expr, extra: tuple[ex.Store, ...]) -> bool:
    """Whether ``walker`` writes ``extra`` with streaming stores (``vectors.streamable``)."""
    generic = len(operands(element, extra)) - 1 > HOISTED_MAX  # no stream: it would need a loop per pattern
    return bool(extra) and not generic and vectors.streamable(element, *extra)


_HEADER = '''"""Generated by opendml.backends.cpu_kernels.codegen from the element expression ELEMENT: do not edit
(the kernel cache directory is named after the generator's own source)."""

from functools import partial

import numpy as np
from numba import njit, prange
from numba.extending import intrinsic

from opendml import expr as ex
from opendml.backends.cpu_kernels.arithmetic import (bit_count, divide, int_quotient, remainder, round_even,
                                                    round_saturate_to, saturate_to, sign_bit, square_root, wrapping_add,
                                                    wrapping_multiply, wrapping_subtract)
from opendml.backends.cpu_kernels import fast_functions, rounded
from opendml.backends.cpu_kernels.arithmetic import (bitwise_and, bitwise_or, bitwise_xor, shift_left, shift_right,
                                                    wrap_to)
from opendml.backends.cpu_kernels.drivers import next_share
from opendml.backends.cpu_kernels.halves import (double_to_half, float_to_half, half_to_float, round_double_to_half,
                                                 round_to_half)
from opendml.backends.cpu_kernels.rows import base_offset, in_phase, overlaps, streamed
from opendml.backends.cpu_kernels.vectors import stream_typing
from opendml.backends.cpu_kernels.views import PARALLEL_MIN
from opendml.dtypes import DataType
from opendml.kernels.cache import use_for_numba

use_for_numba()

jit = njit(nogil=True, cache=True)
inline = njit(nogil=True, cache=True, inline="always")  # value_fast: into run, where its loop vectorizes'''


def _value(roots: tuple[ex.Store, ...], names: _Names, fast: bool = False) -> str:
    """``value``: each node once (shared by the roots), then each root's stored form; a root that is also
    read inside another root's expression (a FLOAT16 intermediate both stored and computed on) gets its
    stored form from the same value. One root: its stored value; several: a tuple of them.

    ``fast``: ``value_fast``, the same with each function of ``fast_functions`` evaluated in vector code,
    returning what ``value`` returns and then whether an element must be computed again by ``value`` (an input
    outside an evaluation's range, or a double near a rounding midpoint)."""
    inner = {child for root in roots for node in ex.nodes(root) for child in node.children}
    of: dict[ex.Expr, str] = {}
    stored: dict[ex.Expr, str] = {}
    flags: list[str] = []
    name = "value_fast" if fast else "value"
    lines = ["@inline" if fast else "@jit", f"def {name}({names.call(names.each('a{k}'), names.q)}):"]
    for root in roots:
        for node in ex.nodes(root):
            if node in of:
                continue
            of[node] = f"t{len(of)}"
            if fast and _fast(node):
                assert isinstance(node, (ex.Function, ex.BinaryFunction))
                flags.append(f"f{len(of) - 1}")
                y, inside = f"y{len(of) - 1}", f"inside{len(of) - 1}"
                operands = of[node.value] if isinstance(node, ex.Function) else f"{of[node.a]}, {of[node.b]}"
                lines.append(f"    {y}, {inside} = fast_functions.{node.name}({operands})")
                rounding = f"fast_functions.to_{node.precision.name.lower()}({y}, {inside})"
                lines.append(f"    {of[node]}, {flags[-1]} = {rounding}")
            else:
                lines.append(f"    {of[node]} = {scalar(node, of, node in roots and node not in inner)}")
    for root in roots:
        if root in inner and root.type is DataType.FLOAT16 and root not in stored:  # its bits, not its value
            stored[root] = f"t{len(of) + len(stored)}"
            lines.append(f"    {stored[root]} = {scalar(root, of, True)}")
    results = [stored.get(root, of[root]) for root in roots] + ([" | ".join(flags)] if fast else [])
    lines.append(f"    return {', '.join(results)}")
    return "\n".join(lines)


def checked(roots: tuple[ex.Store, ...]) -> bool:
    """Whether a root computes a function that ``fast_functions`` evaluates in vector code (``run`` is then
    checked: ``_run_checked``)."""
    return any(_fast(node) for root in roots for node in ex.nodes(root))


def _fast(node: ex.Expr) -> bool:
    if isinstance(node, ex.BinaryFunction):
        return node.name in fast_functions.FAST_BINARY
    return isinstance(node, ex.Function) and node.name in fast_functions.FAST
