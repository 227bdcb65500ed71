"""Numba kernels generated from an element-wise KernelSpec: each operator's expression, lowered once.

``source(element)`` writes the Numba source of a module that runs ``element`` over a layout:

- ``value``: the expression on one element of each operand, one local per node in ``expr.nodes`` order (a
  shared subtree is computed once), each node's Numba expression from its entry of ``nodes.LOWERINGS``. FLOAT16 data
  arrives as uint16 bits: a load converts it exactly (``half_to_float``), a FLOAT16 store rounds once
  (``float_to_half``). Integer nodes cast explicitly (Numba widens int32 - int32 to int64). Divide, Round and
  Saturate are the intrinsics of ``arithmetic`` (Numba's ``/`` would check the divisor, its casts of
  out-of-range floats are undefined). No fastmath anywhere, and a multiply and an add are separate statements,
  so LLVM never contracts them into a fused multiply-add.
- ``run``: a contiguous run. The first operand is per element; each other operand (a scale, a zero point)
  is per element or one value (stride 0), each combination a loop of its own with the value hoisted, so
  every loop vectorises. Where the first operand is stored as the output is, an exact in-place alias gets
  a loop over the one array (two arrays that may alias do not vectorise). Past ``HOISTED_MAX`` other operands
  (QUANTIZED_LINEAR_ADD's 7, a fused chain's 5), the run goes in blocks of ``CHUNK`` elements, each other
  operand read through a view: of its run, or of a buffer (made once per ``kernel`` call) filled with its one
  value; one loop that vectorises, and nothing streams (2**7 loops and streams took 40 s to compile; one loop
  reading each operand at ``k * d`` did not vectorise, 4x slower).
- ``stream``: the streaming-store vector code of the expression (``vectors.stream_typing``), for outputs of
  at least ``fast.STREAM_MIN_BYTES``; not in modules of FLOAT16 data, which are never streamed.
- ``kernel``: the row walk over ``sizes`` and per-operand strides from element ``start`` to ``stop``:
  contiguous runs through ``run``, other runs element by element.
- ``kernel_streamed``: the same walk writing contiguous runs with ``stream`` (scalar head and tail around
  its aligned vectors). A function of its own, so that only calls whose output streams compile it: the
  vector code is most of a module's compile time.
- ``driver`` and ``driver_streamed``: ``kernel`` or ``kernel_streamed`` over thread shares on Numba's
  threads (``drivers`` explains the counter), compiled only when a call shares its work out.
- ``entry(scalars, host)``: the operator's Python entry, ``run(*inputs, out, threads)`` with its scalars
  bound, unrolled over the operands (it is on every call's path: a loop over a list of operands cost a
  microsecond a call); ``host`` (``fast``) gives the layout walk and the streaming threshold.

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

import itertools
from collections.abc import Iterator
from types import ModuleType

from ... import expr as ex
from ...dtypes import DataType
from ...kernels import cache
from . import fast_functions, vectors
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


def _streams(roots: tuple[ex.Store, ...], names: _Names) -> bool:
    """Whether the module has ``stream`` and the streamed kernel (a generic one has not: it would need a stream
    per hoisting pattern)."""
    return vectors.streamable(*roots) and not names.generic


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


class _Names:
    """The generated code's argument lists: operands ``a{k}``, outputs ``o``, ``o1``... (``outs``), scalars."""

    def __init__(self, ops: tuple[int, ...], params: int, outputs: int = 1) -> None:
        self.ops = ops
        self.lead, self.others = ops[0], ops[1:]
        self.q = [f"q{k}" for k in range(params)]
        self.outs = [""] + [str(j) for j in range(1, outputs)]  # suffixes: o, o1, o2...
        # Too many other operands for a loop per hoisting pattern: one loop over blocks, each other operand read
        # from a view of its run or, where it is one value, from a buffer holding it (``_views``).
        self.generic = len(self.others) > HOISTED_MAX

    def other(self, k: int, at: str) -> str:
        """Other operand ``k``'s element at index ``at`` of a contiguous run (not hoisted); in a generic run, at
        ``at`` of the block's view ``x{k}``."""
        return f"x{k}[{at}]" if self.generic else f"r{k}[{at}]"

    def buffers(self) -> list[str]:
        """A generic run's buffers, one per other operand (``CHUNK`` elements, made once per ``kernel`` call)."""
        return [f"t{k}" for k in self.others] if self.generic else []

    def out(self, pattern: str) -> list[str]:
        """``pattern`` for each output (``{j}``: its suffix)."""
        return [pattern.format(j=j) for j in self.outs]

    def each(self, pattern: str) -> list[str]:
        return [pattern.format(k=k) for k in self.ops]

    def call(self, *groups: list[str] | str) -> str:
        items: list[str] = []
        for g in groups:
            items += [g] if isinstance(g, str) else g
        return ", ".join(items)


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
from opendml.backends.cpu_kernels.rows import base_offset, in_phase, streamed
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
                assert isinstance(node, ex.Function)
                flags.append(f"f{len(of) - 1}")
                y, inside = f"y{len(of) - 1}", f"inside{len(of) - 1}"
                lines.append(f"    {y}, {inside} = fast_functions.{node.name}({of[node.value]})")
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
    return isinstance(node, ex.Function) and node.name in fast_functions.FAST


CHUNK = 512  # elements a checked run computes in vector code before it redoes the marked ones


def _run_checked(names: _Names) -> str:
    """``run`` of an expression with functions of ``fast_functions``: each block of ``CHUNK`` elements computed
    by ``value_fast`` into buffers (and whether each is marked), the marked ones (rare: a double within NEAR ulps
    of a midpoint has odds of about 2**-23; or an input outside an evaluation's range) computed again by
    ``value``, then copied out. Through buffers, an output that is an operand
    (in place) still holds the operands when an element is redone."""
    lines = ["@jit", f"def run({_run_signature(names)}):",
             '    """A contiguous run: the first operand per element, the others per element (d == 1) or one '
             'value (d == 0); checked in blocks."""',
             "    n = ro.size"]
    lines += [f"    buf{j} = np.empty(CHUNK, ro{j}.dtype)" for j in names.outs]
    lines.append("    marks = np.empty(CHUNK, np.bool_)")
    lines += _fills(names) if names.generic else []
    for indent, hoisted, opening in _patterns(names):
        lines += opening
        at = "k" if names.generic else "c + k"
        args = names.call([f"r{names.lead}[c + k]"] + [f"v{k}" if k in hoisted else names.other(k, at)
                                                         for k in names.others], names.q)
        buffers = names.out("buf{j}[k]")
        pad = indent + "        "
        lines += [f"{indent}for c in range(0, n, CHUNK):",
                  f"{indent}    m = min(CHUNK, n - c)"]
        lines += _views(names, indent + "    ") if names.generic else []
        lines += [f"{indent}    redo = False",
                  f"{indent}    for k in range(m):",
                  f"{pad}{', '.join(buffers)}, f = value_fast({args})",
                  f"{pad}marks[k] = f",
                  f"{pad}redo |= f",
                  f"{indent}    if redo:",
                  f"{indent}        for k in range(m):",
                  f"{pad}    if marks[k]:"]
        lines += _stores(names, buffers, f"value({args})", pad + "        ")
        lines += [f"{indent}    ro{j}[c:c + m] = buf{j}[:m]" for j in names.outs]
    return "\n".join(lines)


HOISTED_MAX = 3  # other operands beyond which the runs are one generic loop (2**n loops would take minutes to compile)


def _combinations(names: _Names) -> list[tuple[int, ...]]:
    """The other operands hoisted in each specialised loop, most hoisted first (the last: none). Past
    ``HOISTED_MAX`` other operands, one loop, none hoisted (``names.generic``: each read through a view)."""
    if names.generic:
        return [()]
    found = []
    for hoisted in itertools.product((True, False), repeat=len(names.others)):
        found.append(tuple(k for k, h in zip(names.others, hoisted) if h))
    return found


def _run_signature(names: _Names) -> str:
    """``run``'s arguments: the operands' runs, the outputs' runs, the other operands' steps (0 or 1), scalars."""
    return names.call(names.each("r{k}"), names.out("ro{j}"), [f"d{k}" for k in names.others], names.q,
                      names.buffers())


def _patterns(names: _Names) -> Iterator[tuple[str, tuple[int, ...], list[str]]]:
    """``run``'s branch for each hoisting pattern: its body's indent, the operands it hoists, and the lines that
    open it (the test where there are several, then the hoisted values read once)."""
    combos = _combinations(names)
    for c, hoisted in enumerate(combos):
        test = [f"    {_branch(c, len(combos), hoisted)}"] if len(combos) > 1 else []
        indent = "        " if test else "    "
        yield indent, hoisted, test + [f"{indent}v{k} = r{k}[0]" for k in hoisted]


def _branch(c: int, count: int, hoisted: tuple[int, ...]) -> str:
    """The test of combination ``c`` of ``count`` (``_combinations``' order: earlier ones already failed)."""
    if c == count - 1:
        return "else:"
    return f"{'if' if c == 0 else 'elif'} {' and '.join(f'd{k} == 0' for k in hoisted)}:"


def _stores(names: _Names, targets: list[str], call: str, pad: str) -> list[str]:
    """Lines storing ``value``'s result (``call``) into ``targets``, one per output."""
    if len(targets) == 1:
        return [f"{pad}{targets[0]} = {call}"]
    return [f"{pad}w = {call}"] + [f"{pad}{target} = w[{j}]" for j, target in enumerate(targets)]


def _views(names: _Names, pad: str) -> list[str]:
    """A generic run's lines, inside its loop over blocks of ``m`` elements from ``c``: each other operand's view
    ``x{k}``, its run's block where it steps (d == 1), else its buffer, filled with its value (``_fills``)."""
    return [f"{pad}x{k} = r{k}[c:c + m] if d{k} else t{k}[:m]" for k in names.others]


def _fills(names: _Names) -> list[str]:
    """A generic run's first lines: each one-value other operand's buffer filled with the value, as far as
    the run's first block reaches, so that every block reads each operand through a contiguous view and the
    block's loop vectorises (a read at ``k * d`` would not)."""
    return [f"    if d{k} == 0:\n        t{k}[:min(n, CHUNK)] = r{k}[0]" for k in names.others]


def _lead_may_be_output(element: ex.Expr, lead: int) -> bool:
    """Whether the lead operand is read as the output is stored, so that it may be the output itself (in place)."""
    return ex.loads(element).get(lead) is element.data_type


def _run_generic(element: ex.Expr, names: _Names) -> str:
    """``run`` past ``HOISTED_MAX`` other operands: blocks of ``CHUNK`` elements over views (``_views``)."""
    lead = names.lead
    alias = _lead_may_be_output(element, lead)
    outs = names.out("y{j}")
    lines = ["@jit", f"def run({_run_signature(names)}):",
             '    """A contiguous run: the first operand per element, the others per element (d == 1) or one '
             'value (d == 0), in blocks over views."""',
             "    n = ro.size"] + _fills(names)
    lines += ["    for c in range(0, n, CHUNK):", "        m = min(CHUNK, n - c)"] + _views(names, "        ")
    lines += [f"        y{j} = ro{j}[c:c + m]" for j in names.outs]

    def loop(first: str, pad: str) -> list[str]:
        args = [first] + [names.other(k, "k") for k in names.others]
        return [f"{pad}for k in range(m):"] + _stores(names, [f"{o}[k]" for o in outs],
                                                       f"value({names.call(args, names.q)})", pad + "    ")

    if alias:
        lines.append(f"        if r{lead}.ctypes.data == ro.ctypes.data:  # in place: one array, so it vectorises")
        lines += loop("y[k]", "            ")
        lines.append("        else:")
        lines += [f"            x{lead} = r{lead}[c:c + m]"] + loop(f"x{lead}[k]", "            ")
    else:
        lines += [f"        x{lead} = r{lead}[c:c + m]"] + loop(f"x{lead}[k]", "        ")
    return "\n".join(lines)


def _run(element: ex.Expr, names: _Names) -> str:
    if names.generic:
        return _run_generic(element, names)
    lead = names.lead
    alias = _lead_may_be_output(element, lead)
    outs = names.out("ro{j}")
    lines = ["@jit", f"def run({_run_signature(names)}):",
             '    """A contiguous run: the first operand per element, the others per element (d == 1) or one '
             'value (d == 0)."""']
    for indent, hoisted, opening in _patterns(names):
        lines += opening

        def loop(first: str, pad: str, hoisted: tuple[int, ...] = hoisted) -> list[str]:
            args = [first] + [f"v{k}" if k in hoisted else names.other(k, "k") for k in names.others]
            return [f"{pad}for k in range(ro.size):"] + _stores(names, [f"{o}[k]" for o in outs],
                                                                 f"value({names.call(args, names.q)})", pad + "    ")

        if alias:
            lines.append(f"{indent}if r{lead}.ctypes.data == ro.ctypes.data:  # in place: one array, so the loop "
                         "vectorises")
            lines += loop("ro[k]", indent + "    ")
            lines.append(f"{indent}else:")
            lines += loop(f"r{lead}[k]", indent + "    ")
        else:
            lines += loop(f"r{lead}[k]", indent)
    return "\n".join(lines)


def _stream(names: _Names, cached: int = 0) -> str:
    """``stream``: the vector code of every root, the first ``cached`` outputs written with ordinary stores."""
    args = names.call(names.each("a{k}"), names.out("o{j}"), names.each("b{k}"), names.out("bo{j}"), "count", names.q)
    flags = "".join(f"{j < cached}, " for j in range(len(names.outs)))
    return "\n".join(["@intrinsic", f"def stream(typingctx, {args}):",
                      f"    return stream_typing(ROOTS, OPERANDS, ({args},), ({flags.rstrip()}))"])


def _kernel(names: _Names, streamed: bool, cached: int = 0) -> str:
    """``kernel``, or ``kernel_streamed``: a function of its own, compiled only when an output is large
    enough to stream (the vector code of ``stream`` is most of a module's compile time). The first ``cached``
    outputs are not streamed: the runs are aligned for the first streamed one."""
    outs = names.out("o{j}")
    signature = names.call(names.each("a{k}"), outs, "sizes", names.each("s{k}"), names.out("so{j}"), "start", "stop",
                           names.q)
    each = names.each
    steps = f"{names.call(each('d{k}'), names.out('do{j}'))} = {names.call(each('s{k}[-1]'), names.out('so{j}[-1]'))}"
    lines = ["@jit", f"def kernel{'_streamed' if streamed else ''}({signature}):",
             "    n = sizes[-1]",
             f"    {steps}",
             "    row = start // n",
             "    j = start - row * n"]
    lines += [f"    t{k} = np.empty(CHUNK, a{k}.dtype)" for k in names.others] if names.generic else []
    lines += ["    while start < stop:", "        end = min(n, j + stop - start)"]
    lines += [f"        b{k} = base_offset(row, sizes, s{k})" for k in names.ops]
    lines += [f"        bo{j} = base_offset(row, sizes, so{j})" for j in names.outs]
    others = [f"d{k} <= 1" for k in names.others]
    lines.append(f"        contiguous = {' and '.join([f'd{names.lead} == 1'] + names.out('do{j} == 1') + others)}")
    call = f"value({names.call(each('a{k}[b{k} + k * d{k}]'), names.q)})"
    targets = names.out("o{j}[bo{j} + k * do{j}]")
    runs = [f"a{names.lead}[b{names.lead} + j:b{names.lead} + end]"] + [f"a{k}[b{k} + j * d{k}:]" for k in names.others]
    run_args = names.call(runs, names.out("o{j}[bo{j} + j:bo{j} + end]"), [f"d{k}" for k in names.others], names.q,
                          names.buffers())
    if streamed:
        lead, *rest = names.outs[cached:]
        phased = [f"in_phase(o{lead}, bo{lead}, o{j}, bo{j})" for j in rest]
        lines += [f"        if {' and '.join(['contiguous'] + phased)}:",
                  f"            h, t = streamed(o{lead}, bo{lead}, j, end, True)"]
        lines += ["    " + line for line in _stream_calls(names)]
        lines += ["            for k in range(j, h):  # the rest one by one: a few elements"]
        lines += _stores(names, targets, call, "                ")
        lines += ["            for k in range(t, end):"]
        lines += _stores(names, targets, call, "                ")
        if phased:  # outputs out of phase: no vector aligns every store, so ordinary ones
            lines += ["        elif contiguous:", f"            run({run_args})"]
    else:
        lines += ["        if contiguous:", f"            run({run_args})"]
    lines += ["        else:", "            for k in range(j, end):"]
    lines += _stores(names, targets, call, "                ")
    lines += ["        start += end - j", "        row += 1", "        j = 0"]
    return "\n".join(lines)


def _stream_calls(names: _Names) -> list[str]:
    """``stream`` called for each combination of hoisted operands (``run``'s), each compiled apart."""
    lines = []
    combos = _combinations(names)
    for c, hoisted in enumerate(combos):
        values = [f"a{k}[b{k}]" if k in hoisted else f"a{k}" for k in names.ops]
        starts = [f"b{names.lead} + h"] + ["0" if k in hoisted else f"b{k} + h * d{k}" for k in names.others]
        call = f"stream({names.call(values, names.out('o{j}'), starts, names.out('bo{j} + h'), 't - h', names.q)})"
        if len(combos) == 1:
            return [f"        {call}"]
        lines += [f"        {_branch(c, len(combos), hoisted)}", f"            {call}"]
    return lines


def _driver(names: _Names, suffix: str) -> str:
    """``driver`` (of ``kernel``) or ``driver_streamed`` (of ``kernel_streamed``): compiled only when a call
    shares its work out to Numba's threads."""
    head = names.call(names.each("a{k}"), names.out("o{j}"), "sizes", names.each("s{k}"), names.out("so{j}"))
    tail = names.call(names.q)
    between = f"bounds[k], bounds[k + 1]{', ' if tail else ''}{tail}"
    return "\n".join([
        "@njit(nogil=True, cache=True, parallel=True)",
        f"def driver{suffix}({head}, bounds, {tail + ', ' if tail else ''}counter, workers):",
        "    for _ in prange(workers):",
        "        k = next_share(counter)",
        "        while k < bounds.size - 1:",
        f"            kernel{suffix}({head}, {between})",
        "            k = next_share(counter)"])


def _entry(roots: tuple[ex.Store, ...], names: _Names) -> str:
    lines = ["def entry(scalars, host):",
             '    """``run(*inputs, out, *extra_outputs, threads)`` of an operator whose scalar parameters are '
             '``scalars``; ``run.prepare`` takes the same arguments and returns that call with everything '
             'resolved, taking none (what a recorded dispatch replays); ``run.prepare_layout`` takes them too and '
             'returns a call taking the arrays, with everything their layout decides resolved (what a repeated '
             'functional call runs: it holds no array)."""']
    if names.q:
        lines.append(f"    ({', '.join(names.q)},) = scalars")
    lines += ["    lengths, unit, walk, run_shares, flat = (host.lengths, host.UNIT, host.walk, host.run_shares,",
              "                                             host.flat)"]
    for mode in ("run", "prepare", "prepare_layout"):
        lines += ["", f"    def {mode}(*args):"]
        lines += _entry_body(roots, names, mode)
    lines += ["", "    run.prepare = prepare", "    run.prepare_layout = prepare_layout", "    return run"]
    return "\n".join(lines)


def _loads(roots: tuple[ex.Store, ...], names: _Names, indent: str, after: int) -> list[str]:
    """The arrays taken from ``args`` (FLOAT16 as its bits: the kernels convert them); ``after``: how many
    arguments follow the outputs (the thread count, or none)."""
    loaded = {k: t for root in roots for k, t in ex.loads(root).items()}
    lines = []
    for k in names.ops:
        bits = ".view(np.uint16)" if loaded[k] is DataType.FLOAT16 else ""
        lines.append(f"{indent}a{k} = args[{k}]{bits}")
    for j, (o, root) in enumerate(zip(names.out("o{j}"), roots)):
        bits = ".view(np.uint16)" if root.data_type is DataType.FLOAT16 else ""
        lines.append(f"{indent}{o} = args[{j - len(roots) - after}]{bits}")
    return lines


def _entry_body(roots: tuple[ex.Store, ...], names: _Names, mode: str) -> list[str]:
    """The body of ``run`` (calling the kernel), of ``prepare`` (returning that call as a ``partial``: the
    arrays' views, the layout walk and the kernel are fixed by the arguments, and buffers never move) or of
    ``prepare_layout`` (returning a call that takes arrays laid out as the arguments: the kernel, the layout
    walk and the sizes fixed, the arrays given at each call)."""
    outs = names.out("o{j}")
    arrays = names.each("a{k}") + outs
    lines = _loads(roots, names, "        ", 1)
    lines.append("        n = o.size")
    if _streams(roots, names):
        lines += [f"        if {' + '.join(f'{o}.nbytes' for o in outs)} >= host.STREAM_MIN_BYTES:",
                  "            k, d = kernel_streamed, driver_streamed",
                  "        else:",
                  "            k, d = kernel, driver"]
    else:
        lines.append("        k, d = kernel, driver")
    contiguous = " and ".join(f"{a}.flags.c_contiguous" for a in arrays)
    units = ["unit"] * len(arrays)
    flat_arrays = [f"{a}.reshape(-1)" for a in arrays]
    tail = names.call(names.q)
    small = names.call(flat_arrays, "lengths(n)", units, "0", "n", names.q)
    head = f"({', '.join(f'flat({a})' for a in arrays)},)"
    shared = f"k, d, head, walk([{', '.join(arrays)}], threads), ({tail + ',' if tail else ''}), threads"
    lines.append(f"        if n < PARALLEL_MIN and {contiguous}:  # the per-call cost path")
    if mode == "prepare_layout":
        return lines + _layout_calls(roots, names, arrays, units, head, tail)
    if mode == "prepare":
        lines.append(f"            return partial(k, {small})")
    else:
        lines += [f"            k({small})", "            return"]
    lines += ["        threads = args[-1]", f"        head = {head}"]
    lines.append(f"        return partial(run_shares, {shared})" if mode == "prepare"
                 else f"        run_shares({shared})")
    return lines


def _layout_calls(roots: tuple[ex.Store, ...], names: _Names, arrays: list[str], units: list[str], head: str,
                  tail: str) -> list[str]:
    """``prepare_layout``'s calls, after its test of the per-call cost path: there, the kernel over the
    arrays flattened (1-D arrays are flat already: given as they are); else the layout walk's shares."""
    loads = _loads(roots, names, "                ", 0)
    one_d = " and ".join(f"{a}.ndim == 1" for a in arrays)
    lines = ["            sizes = lengths(n)", f"            if {one_d}:", "                def call(*args):"]
    lines += ["    " + line for line in loads]
    lines += [f"                    k({names.call(arrays, 'sizes', units, '0', 'n', names.q)})",
              "                return call", "", "            def call(*args):"]
    lines += loads
    flat_call = names.call([f"{a}.reshape(-1)" for a in arrays], "sizes", units, "0", "n", names.q)
    lines += [f"                k({flat_call})",
              "            return call", "        threads = args[-1]",
              f"        layout = walk([{', '.join(arrays)}], threads)", "", "        def call(*args):"]
    lines += [line[4:] for line in loads]
    lines += [f"            run_shares(k, d, {head}, layout, ({tail + ',' if tail else ''}), threads)",
              "        return call"]
    return lines
