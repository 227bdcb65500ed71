"""``run`` of the modules ``codegen`` generates: the element expression over a contiguous run.

The first operand is per element; each other operand (a scale, a zero point) is per element or one value (stride 0),
each combination a loop of its own with the value hoisted, so every loop vectorises. Where the first operand is stored
as the output is, an exact in-place alias gets a loop over the one array (two arrays that may alias do not vectorise).
Past ``HOISTED_MAX`` other operands (QUANTIZED_LINEAR_ADD's 7, a fused chain's 5), the run goes in blocks of ``CHUNK``
elements, each other operand read through a view: of its run, or of a buffer (made once per ``kernel`` call) filled with
its one value; one loop that vectorises, and nothing streams (2**7 loops and streams took 40 s to compile; one loop
reading each operand at ``k * d`` did not vectorise, 4x slower).

A run of an expression computing a function of ``fast_functions`` is checked (``_run_checked``): computed in
vector code block by block, the marked elements again by ``value`` (an in-place block's operands copied aside
first).

Every run asks LLVM for 512-bit vectors (``fast_functions.prefer_wide_vectors``) where the CPU has them: the
arithmetic-bound runs gain (one core, 2**22 elements: EXP's checked run 9.9 -> 4.8 ms, ERF's 17.5 -> 10.5 ms; the
fused DEQUANTIZE -> ADD -> RELU -> QUANTIZE chain on [16384, 4096], 2 cores, 15.9 -> 12.4 ms), the memory-bound
ones are unchanged (CLIP, ADD, QUANTIZE_LINEAR alone).
"""

from __future__ import annotations

from collections.abc import Iterator

from ... import expr as ex
from .codegen_names import _branch, _combinations, _Names, _stores


def _run_checked(names: _Names) -> str:
    """``run`` of an expression with functions of ``fast_functions``: each block of ``CHUNK`` elements computed
    by ``value_fast`` straight into the outputs (and whether each is marked), the marked ones (rare: a double within
    NEAR ulps of a midpoint has odds of about 2**-23; or an input outside an evaluation's range) computed again by
    ``value``. Where an output shares memory with an operand read per element (in place), each block's operands are
    copied aside first, so that an element redone still reads its operands (a block through buffers always cost
    the copy: EXP 10.5 against 8.2 ms for 2**22 elements)."""
    stepping_ops = [names.lead] + list(names.others)
    lines = ["@jit", f"def run({_run_signature(names)}):",
             '    """A contiguous run: the first operand per element, the others per element (d == 1) or one '
             'value (d == 0); checked in blocks."""',
             "    fast_functions.prefer_wide_vectors()",
             "    n = ro.size",
             "    marks = np.empty(CHUNK, np.bool_)"]
    lines += [f"    s{k} = np.empty(CHUNK, r{k}.dtype)" for k in stepping_ops]
    lines.append("    alias = " + " or ".join(f"overlaps(r{k}, ro{j})" for k in stepping_ops for j in names.outs))
    lines += _fills(names) if names.generic else []
    for indent, hoisted, opening in _patterns(names):
        lines += opening
        # Each operand read per element through its block's view, at k: a read at ``c + k`` (which Numba must
        # check for a negative index) made the block's loop about 1.7x slower (EXP: 12.6 against 7.7 ms for 2**22).
        stepping = [names.lead] + [k for k in names.others if k not in hoisted]
        args = names.call([f"x{names.lead}[k]"] + [f"v{k}" if k in hoisted else f"x{k}[k]" for k in names.others],
                          names.q)
        outputs = names.out("y{j}[k]")
        pad = indent + "        "
        lines += [f"{indent}for c in range(0, n, CHUNK):",
                  f"{indent}    m = min(CHUNK, n - c)",
                  f"{indent}    x{names.lead} = r{names.lead}[c:c + m]"]
        lines += _views(names, indent + "    ") if names.generic else [
            f"{indent}    x{k} = r{k}[c:c + m]" for k in stepping[1:]]
        lines += [f"{indent}    y{j} = ro{j}[c:c + m]" for j in names.outs]
        lines.append(f"{indent}    if alias:")
        for k in stepping:
            lines += [f"{indent}        s{k}[:m] = x{k}", f"{indent}        x{k} = s{k}[:m]"]
        lines += [f"{indent}    redo = False",
                  f"{indent}    for k in range(m):",
                  f"{pad}{', '.join(outputs)}, f = value_fast({args})",
                  f"{pad}marks[k] = f",
                  f"{pad}redo |= f",
                  f"{indent}    if redo:",
                  f"{indent}        for k in range(m):",
                  f"{pad}    if marks[k]:"]
        lines += _stores(names, outputs, f"value({args})", pad + "        ")
    return "\n".join(lines)


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
             "    fast_functions.prefer_wide_vectors()",
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
             'value (d == 0)."""',
             "    fast_functions.prefer_wide_vectors()"]
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
