"""ARGMIN over a computed FLOAT32 element with its last dimension reduced, computed where it is compared:
the fast task of ``boxes``' modules, for layouts whose last merged dimension every operand walks
contiguously or not at all (stride 1, or 0: a broadcast value, hoisted).

``task_fast_rows`` reduces each run of a task's rows: its whole vectors through ``lanes_best`` (an
intrinsic of ``vectors``: the expression in vector registers, a best value and vector per lane,
compared as floats where ``floats_compare_exactly()``), the few elements after them one by one with the
scalar ``value`` and integer keys; a run whose lanes found only +inf or NaN (not certain as floats) is
reduced again with keys, as ``rows.run_best`` does. It folds into the same (key, index) states as the
engines (``keys``), takes the same plan tasks, and computes each value with the element-wise
kernels' own lowering (``value`` for one element, ``vectors`` for whole vectors: the same instructions, no
fast-math), so it gives the bits of the unfused graph. The source is specialised for one hoisting pattern
(which operands are one value along the last dimension), so a call compiles one vector loop, not one per
pattern.

Kept last dimensions (columns) of such layouts take ``fast_columns``, which computes the element in
its fold over each group of rows.
"""

from __future__ import annotations

from . import task_rows

IMPORTS = '''from numba.extending import intrinsic as _intrinsic
from opendml.backends.cpu_kernels.argmin.keys import found_key, key_of, replaces, takes
from opendml.backends.cpu_kernels.argmin.engines.lanes import floats_compare_exactly, lane_float_key
from opendml.backends.cpu_kernels.argmin.engines.vectors import bits_of, lanes_typing'''


def source(ops: tuple[int, ...], q: list[str], hoisted: tuple[bool, ...]) -> str:
    """The fast tasks and their drivers for operands ``ops`` (``hoisted``: one value along the last
    dimension), scalars ``q``."""
    m = len(ops)
    a = [f"a{k}" for k in ops]
    starts = [f"b{k}" for k in ops]
    lanes_args = ", ".join([f"a{k}[b{k}]" if h else f"a{k}" for k, h in zip(ops, hoisted)] + starts
                           + ["n // 16", "order", "kind"] + q)
    head = ", ".join(a + ["t", "strides", "red", "w", "cur", "idx", "kind", "order", "floats"] + q)
    driver_args = head.replace("t, strides", "t[k], strides")
    # The runs' origins walked inline: a call of ``boxes.box_at`` cost 0.2 s of compile time.
    origins = "\n".join(f"        b{k} = t[{task_rows.ORIGINS + p}]" for p, k in enumerate(ops))
    walk = "\n".join(f"            b{k} += i * strides[{p}, d]" for p, k in enumerate(ops))

    def value(index: str, base: str = "b") -> str:
        args = [f"a{k}[{base}{k}]" if h else f"a{k}[{base}{k} + {index}]" for k, h in zip(ops, hoisted)]
        return f"key_of(bits_of(value({', '.join(args + q)})), kind)"

    parts = [IMPORTS, f'''@_intrinsic
def lanes_best(typingctx, {", ".join(a + starts + ["count", "order", "kind"] + q)}):
    return lanes_typing(ELEMENT, OPERANDS, ({", ".join(a + starts + ["count", "order", "kind"] + q)},))''',
             f'''@jit
def row_fast({", ".join(a + starts + ["n", "kind", "order", "floats"] + q)}):
    """The best (key, position) of a run: whole vectors in registers, then the rest one by one."""
    done, key, pos = 0, np.int32(0), 0
    if floats and n >= 16:
        found, pos = lanes_best({lanes_args})
        key, certain = lane_float_key(found, kind)  # not where the best is +inf (ARGMAX: -inf) or NaN only
        if certain:
            done = n // 16 * 16
    if done == 0:
        key, pos, done = {value("0")}, 0, 1
    for k in range(done, n):
        v = {value("k")}
        if takes(v, key, order):
            key, pos = v, k
    return key, pos''',
             f'''@jit
def task_fast_rows({head}):
    sizes = t[{task_rows.ORIGINS + m}:]
    nd = sizes.size
    n, wn, piece = sizes[-1], w[-1], t[{task_rows.PIECE}]
    c, ix = cur[piece], idx[piece]
    floats = floats and floats_compare_exactly()
    for r in range(t[{task_rows.START}], t[{task_rows.STOP}]):
{origins}
        slot, index, rest = t[{task_rows.SLOT0}], t[{task_rows.INDEX0}], r
        for d in range(nd - 2, -1, -1):  # the run's first elements and slot: r over the dimensions before it
            i = rest % sizes[d]
            rest //= sizes[d]
{walk}
            if red[d]:
                index += i * w[d]
            else:
                slot += i * w[d]
        key, pos = row_fast({", ".join(a + starts + ["n", "kind", "order", "floats"] + q)})
        index += pos * wn
        if found_key(key, kind) and (ix[slot] < 0 or replaces(key, index, c[slot], ix[slot], order)):
            c[slot], ix[slot] = key, index''']
    for engine in ("fast_rows",):
        parts.append(f'''@njit(nogil=True, cache=True, parallel=True)
def driver_{engine}({head}, counter, workers):
    for _ in prange(workers):
        k = next_share(counter)
        while k < t.shape[0]:
            task_{engine}({driver_args})
            k = next_share(counter)''')
    return "\n\n\n".join(parts)
