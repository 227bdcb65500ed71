"""The Python entry of the modules ``codegen`` generates:

- ``entry(scalars, host)``: the operator's Python entry, ``run(*inputs, out, threads)`` with its scalars
  bound, unrolled over the operands (it is on every call's path: a loop over a list of operands cost a
  microsecond a call); ``host`` (``fast``) gives the layout walk and the streaming threshold.

With extra outputs (``KernelSpec.extra``), the entry's arguments are the inputs, the outputs and the thread count.
The walks it calls (``kernel``, ``driver`` and their streamed forms) are written by ``codegen_kernels``.
"""

from __future__ import annotations

from ... import expr as ex
from ...dtypes import DataType
from .codegen_kernels import _streams
from .codegen_names import _Names


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
