"""ARGMIN over a computed FLOAT32 element with its last dimension kept (columns), computed where it is
compared: the fast column task of ``boxes``' modules, for layouts whose last merged dimension every
operand walks contiguously or not at all (stride 1, or 0: a broadcast value, hoisted out of the column
loop), and elements with no FLOAT16 in them (``vectors.vectorised``, as the fast rows: a FLOAT16
intermediate's rounding made this fold 15% slower than the scratch tiles).

``task_fast_columns`` walks a task as ``argmin_columns`` walks its input: outer positions, columns in tiles
of ``COLUMN_TILE`` whose running (key, row) state stays in cache, rows in chunks of ``ROW_CHUNK``. Each
group of ``GROUP`` rows is folded into the tile's state in one pass over the columns, the element computed
there by the generated ``value`` (the element-wise kernels' own lowering: the bits of the unfused
intermediate) and turned into its key, branch-free, as ``columns.fold_rows`` folds loaded keys.
Each operand of a row is a slice indexed by the column alone: a computed offset would be checked for a
negative index on every element, and the loop would not vectorise (57 ms against 7.8 ms for the
benchmark's first-axis row, DEQUANTIZE_LINEAR UINT8 [16384, 4096] -> CLIP -> ARGMIN on 2 threads; the
scratch tiles of ``boxes`` took 15 ms).

A chunk's state starts at the largest key and row 0 rather than at its first row's keys: the first row
then replaces it wherever the tiles' first row would have been kept (a smaller key; DECREASING: any key),
and where nothing replaces it the column held only that key, first found at row 0 (NaN's key under IGNORE;
under PROPAGATE no element's key, NaN's being the smallest, so the first row always replaces it). So one loop, inline,
serves every row, and a call compiles the task alone (with ``value`` and the key helpers) instead of the
element-wise walker, the column engine and the box helpers of the scratch tiles: the benchmark's
first-axis row compiled its task in 3.2 s, and now in 0.85 s. The source is specialised for one hoisting
pattern.
"""

from __future__ import annotations

from . import task_rows
from .columns import COLUMN_TILE, ROW_CHUNK

# Rows folded into the state per pass over a tile's columns. Computing the element costs more than loading
# and storing the state, so two rows run as fast as eight (``columns.ROW_GROUP``, for loaded keys):
# 6.95 against 7.05 ms on the benchmark's first-axis row (one row: 7.5 ms), and compile in half the time
# (0.32 s against 0.66 s for a fold of DEQUANTIZE_LINEAR -> CLIP as a function of its own).
GROUP = 2

IMPORTS = '''from opendml.backends.cpu_kernels.argmin.engines.columns import fold
from opendml.backends.cpu_kernels.argmin.keys import found_key, key_of, replaces
from opendml.backends.cpu_kernels.argmin.engines.vectors import bits_of'''


def _fold(ops: tuple[int, ...], q: list[str], hoisted: tuple[bool, ...]) -> str:
    """The loop over a chunk's rows, inline in the task (a function of its own would be optimised and compiled
    to machine code once alone and again inside the task): ``GROUP`` rows folded per pass over the columns,
    operand k's row r at ``p{k} + r * e{k}`` and numbered ``n{r}``. Past the last whole group every ``e{k}``
    is 0 and every number ``row``: one row folded ``GROUP`` times, which changes nothing after the first (a
    row's key met again at its own row number replaces only itself, ``fold``), so one loop serves every row."""
    pad = " " * 16
    lines = ["while row < rows:", f"    full = row + {GROUP} <= rows"]
    for k, h in zip(ops, hoisted):
        lines += [f"    e{k} = s{k} if full else 0",
                  f"    p{k} = o{k}{'' if h else ' + c0'} + (r0 + row) * s{k}"]
    for r in range(GROUP):
        for k, h in zip(ops, hoisted):
            at = f"p{k} + {r} * e{k}" if r else f"p{k}"
            lines.append(f"    x{k}_{r} = a{k}[{at}{'' if h else ':'}]")
        lines.append(f"    n{r} = np.int32(row + {r}) if full else n0" if r else "    n0 = np.int32(row)")
    lines += ["    for c in range(width):", "        m, p = best[c], pos[c]"]
    for r in range(GROUP):
        args = ", ".join([f"x{k}_{r}" if h else f"x{k}_{r}[c]" for k, h in zip(ops, hoisted)] + q)
        lines.append(f"        m, p = fold(key_of(bits_of(value({args})), kind), m, p, n{r}, kind, order)")
    lines += ["        best[c], pos[c] = m, p", f"    row += {GROUP} if full else 1"]
    return "\n".join(pad + line for line in lines)


def _task(ops: tuple[int, ...], q: list[str], hoisted: tuple[bool, ...]) -> str:
    m = len(ops)
    head = ", ".join([f"a{k}" for k in ops] + ["t", "strides", "red", "w", "cur", "idx", "kind", "order", "floats"]
                     + q)

    row_strides = "\n".join(f"    s{k} = strides[{p}, nd - 2] if has_rows else 0" for p, k in enumerate(ops))
    origins = "\n".join(f"        o{k} = t[{task_rows.ORIGINS + p}]" for p, k in enumerate(ops))
    walk = "\n".join(f"            o{k} += i * strides[{p}, d]" for p, k in enumerate(ops))
    return f'''@jit
def task_fast_columns({head}):
    """One task: columns in tiles, rows in chunks, the element computed in the fold."""
    sizes = t[{task_rows.ORIGINS + m}:]
    nd = sizes.size
    ncols, wc, piece = sizes[-1], w[-1], t[{task_rows.PIECE}]
    has_rows = red[nd - 2] == 1
    nrows = sizes[nd - 2] if has_rows else 1
    wr = w[nd - 2] if has_rows else 0
{row_strides}
    outer_dims = nd - 2 if has_rows else nd - 1
    cp, ip = cur[piece], idx[piece]
    tile = min(ncols, {COLUMN_TILE})
    best = np.empty(tile, np.int32)  # FLOAT32 keys, and a type as for pos: one overload of np.empty
    pos = np.empty(tile, np.int32)
    for outer in range(t[{task_rows.START}], t[{task_rows.STOP}]):
{origins}
        slot_base, index = t[{task_rows.SLOT0}], t[{task_rows.INDEX0}]
        r = outer
        for d in range(outer_dims - 1, -1, -1):
            i = r % sizes[d]
            r //= sizes[d]
{walk}
            if red[d]:
                index += i * w[d]
            else:
                slot_base += i * w[d]
        for c0 in range(0, ncols, tile):
            width = min(tile, ncols - c0)
            for r0 in range(0, nrows, {ROW_CHUNK}):
                rows = min(nrows - r0, {ROW_CHUNK})
                for c in range(width):
                    best[c], pos[c] = np.int32(0x7FFFFFFF), np.int32(0)  # the largest key (IGNORE: NaN's)
                row = 0
{_fold(ops, q, hoisted)}
                for c in range(width):
                    key = best[c]
                    slot, at = slot_base + (c0 + c) * wc, index + (r0 + pos[c]) * wr
                    if found_key(key, kind) and (ip[slot] < 0 or replaces(key, at, cp[slot], ip[slot], order)):
                        cp[slot], ip[slot] = key, at  # (a column of NaN found nothing)'''


def source(ops: tuple[int, ...], q: list[str], hoisted: tuple[bool, ...]) -> str:
    """The fast column task and its driver for operands ``ops`` (``hoisted``: one value along the last
    dimension) and scalars ``q``."""
    head = ", ".join([f"a{k}" for k in ops] + ["t", "strides", "red", "w", "cur", "idx", "kind", "order", "floats"]
                     + q)
    driver = f'''@njit(nogil=True, cache=True, parallel=True)
def driver_fast_columns({head}, counter, workers):
    for _ in prange(workers):
        k = next_share(counter)
        while k < t.shape[0]:
            task_fast_columns({head.replace("t, strides", "t[k], strides")})
            k = next_share(counter)'''
    parts = [IMPORTS, _task(ops, q, hoisted), driver]
    return "\n\n\n".join(parts)
