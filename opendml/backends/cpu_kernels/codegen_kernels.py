"""The row walks of the modules ``codegen`` generates, and their vector code:

- ``stream``: the streaming-store vector code of the expression (``vectors.stream_typing``), for outputs of
  at least ``fast.STREAM_MIN_BYTES``; not in modules of FLOAT16 data, which are never streamed.
- ``kernel``: the row walk over ``sizes`` and per-operand strides from element ``start`` to ``stop``:
  contiguous runs through ``run``, other runs element by element.
- ``kernel_streamed``: the same walk writing contiguous runs with ``stream`` (scalar head and tail around
  its aligned vectors). A function of its own, so that only calls whose output streams compile it: the
  vector code is most of a module's compile time.
- ``driver`` and ``driver_streamed``: ``kernel`` or ``kernel_streamed`` over thread shares on Numba's
  threads (``drivers`` explains the counter), compiled only when a call shares its work out.

``run``, which the walks call on contiguous runs, is written by ``codegen_runs``; the entry that calls the walks
by ``codegen_entry``.
"""

from __future__ import annotations

from ... import expr as ex
from . import vectors
from .codegen_names import _branch, _combinations, _Names, _stores


def _streams(roots: tuple[ex.Store, ...], names: _Names) -> bool:
    """Whether the module has ``stream`` and the streamed kernel (a generic one has not: it would need a stream
    per hoisting pattern)."""
    return vectors.streamable(*roots) and not names.generic


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
