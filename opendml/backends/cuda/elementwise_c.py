"""Element-wise kernel templates: a grid-stride loop over any strides, and 16-byte vector chunks.

The per-element math is the ``apply`` device function lowered from the KernelSpec's element expression
(expr_c.py); scalars follow the pointers as kernel arguments ``q0, q1, ...``. A kernel with extra outputs
(``KernelSpec.extra``) takes their pointers ``pout1, pout2...`` after ``pout``; the layout holds their
strides after the output's, so each is written through its own offsets, and ``apply`` computes them beside
the output's value (through references), stored by 16-byte words wherever the output is.
"""

from __future__ import annotations

import math

from ...dtypes import DataType
from ...kernels.spec import KernelSpec
from ..layout import Layout
from . import expr_c
from .codegen import C_TYPE, PRELUDE, decompose
from .plan import BLOCK

WORD = {16: "uint4", 8: "uint2", 4: "unsigned int", 2: "unsigned short", 1: "unsigned char"}
FLOAT_WORD = {16: "float4", 8: "float2", 4: "float"}
UNROLL = 4  # chunks each thread loads before it computes and stores any: bytes in flight hide latency
# Where outputs are wider than the InputTensor: two chunks a thread, measured on an H200 against one and four
# (benchmarks/graphs.py row 4b, UINT8 -> FLOAT16 per column: 0.249 / 0.214 / 0.221 ms; row 4a, UINT8 ->
# FLOAT32: 0.339 / 0.334 / 0.335 ms; copying the same bytes 0.196 and 0.321 ms).
WIDENING_UNROLL = 2


def present(spec: KernelSpec) -> list[tuple[int, DataType]]:
    """The operands given, as (slot, storage type): an absent optional tensor has no slot in the kernel."""
    return [(k, t) for k, t in enumerate(spec.inputs) if t is not None]


def extras(spec: KernelSpec) -> list[tuple[int, DataType]]:
    """The extra outputs, as (number after the main output, storage type)."""
    return [(j, value.type) for j, value in enumerate(spec.extra, start=1)]


def _apply(spec: KernelSpec, packed: frozenset[int] = frozenset()) -> str:
    return expr_c.apply_function(spec.operator, spec.inputs, spec.element, spec.extra, packed,
                                 expr_c.clamp_bounds(spec.scalars))


def packed(spec: KernelSpec, layout: Layout, width: int) -> frozenset[int]:
    """The 8-bit operands the 16-byte chunk kernel gives ``apply`` as 32-bit words and a byte's place
    (expr_c.BYTES): those loaded a chunk at a time, where a chunk holds whole words of them and the kernel
    has no tail of single elements (which loads elements, not words)."""
    count = math.prod(layout.sizes)
    if width % 4 or (layout.rank == 1 and count % width):
        return frozenset()
    return frozenset(k for (k, t), st in zip(present(spec), layout.strides) if t.size == 1 and st[-1] == 1)


def _params(spec: KernelSpec) -> str:
    pointers = [f"ull p{k}" for k, _ in present(spec)] + ["ull pout"] + [f"ull pout{j}" for j, _ in extras(spec)]
    return ", ".join(pointers + expr_c.scalar_parameters(spec.element, spec.extra))


def _call(spec: KernelSpec, value: dict[int, str], results: list[str] | None = None) -> str:
    """``apply`` on each operand's ``value``; the extra outputs written to ``results``."""
    return expr_c.call("apply", [value[k] for k, _ in present(spec)], spec.element, spec.extra, results or [])


def elementwise_general(spec: KernelSpec, layout: Layout) -> str:
    """Any strides: one element per iteration of a grid-stride loop."""
    names = [f"o{k}" for k, _ in present(spec)] + ["oo"] + [f"oo{j}" for j, _ in extras(spec)]
    count = math.prod(layout.sizes)
    loads = {k: f"((const {C_TYPE[t]}*)p{k})[o{k}]" for k, t in present(spec)}
    results = [f"(({C_TYPE[t]}*)pout{j})[oo{j}]" for j, t in extras(spec)]
    return PRELUDE + _apply(spec) + f"""
extern "C" __global__ void opendml_kernel({_params(spec)}) {{
    for (ull i = (ull)blockIdx.x * blockDim.x + threadIdx.x; i < {count}ull; i += (ull)gridDim.x * blockDim.x) {{
        {" ".join(f"ull {n} = 0;" for n in names)}
        {decompose("(unsigned int)i", layout.sizes, layout.strides, names)}
        (({C_TYPE[spec.output]}*)pout)[oo] = {_call(spec, loads, results)};
    }}
}}
"""


def vector_width(spec: KernelSpec, layout: Layout) -> int | None:
    """Elements per chunk if the inner-vector path applies to this layout, else None.

    A chunk is 16 bytes of the widest operand (so each thread stores 16 bytes, and narrower operands load
    4 or 8). The path applies when, in the innermost dimension, every operand walks with stride 1 (loaded
    a chunk at a time) or 0 (one value per chunk) and every output (extra ones too) with stride 1, chunks
    stay inside a row, and every chunk of a stride-1 operand starts aligned to its size (given a 16-byte
    aligned base).
    """
    outputs = [spec.output] + [t for _, t in extras(spec)]
    types = [t for _, t in present(spec)] + outputs
    inner = [st[-1] for st in layout.strides]
    if any(s not in (0, 1) for s in inner) or any(s != 1 for s in inner[len(types) - len(outputs):]):
        return None
    width = 16 // max(t.size for t, s in zip(types, inner) if s == 1)
    if layout.rank > 1 and layout.sizes[-1] % width:
        return None
    for st in layout.strides:
        if st[-1] == 1 and any(s % width for s in st[:-1]):
            return None
    return width


def chunk_unroll(spec: KernelSpec) -> int:
    """Chunks per thread per tile: ``WIDENING_UNROLL`` where an output is wider than the InputTensor (writes
    dominate: four chunks a thread measured slower on an H100 for UINT8 -> FLOAT32), else ``UNROLL``."""
    first = spec.inputs[0]
    widest = max([spec.output.size] + [t.size for _, t in extras(spec)])
    return WIDENING_UNROLL if first is not None and widest > first.size else UNROLL


def _chunk_loads(spec: KernelSpec, layout: Layout, width: int, u: int, chunks: int,
                 words: frozenset[int] = frozenset()) -> tuple[list[str], dict[int, str]]:
    """Declarations and guarded loads of chunk ``u``, and each operand's element ``e`` of it (``words``:
    the packed operands' word and place)."""
    operands = present(spec)
    names = [f"o{k}_{u}" for k, _ in operands] + [f"oo_{u}"] + [f"oo{j}_{u}" for j, _ in extras(spec)]
    lines = [f"const ull c{u} = c + {u * BLOCK}ull; const bool ok{u} = c{u} < {chunks}ull;",
             " ".join(f"ull {n} = 0;" for n in names)]
    values: dict[int, str] = {}
    body = []
    for (k, t), st in zip(operands, layout.strides):
        c_type = C_TYPE[t]
        if not any(st):  # one value for the whole tensor: loaded once per thread, before the loop
            values[k] = f"s{k}"
            continue
        if st[-1] == 0:
            lines.append(f"{c_type} s{k}_{u} = 0;")
            body.append(f"s{k}_{u} = ((const {c_type}*)p{k})[o{k}_{u}];")
            values[k] = f"s{k}_{u}"
            continue
        word = WORD[width * t.size]
        held = f" unsigned int u[{width // 4}];" if k in words else ""
        lines.append(f"union {{ {word} w;{held} {c_type} e[{width}]; }} u{k}_{u};")
        body.append(f"u{k}_{u}.w = *(const {word}*)(p{k} + o{k}_{u} * {t.size}ull);")
        values[k] = f"u{k}_{u}.u[e >> 2], e & 3" if k in words else f"u{k}_{u}.e[e]"
    offsets = decompose(f"(unsigned int)(c{u} * {width}ull)", layout.sizes, layout.strides, names)
    lines.append(f"if (ok{u}) {{\n        {offsets}\n        " + "\n        ".join(body) + "\n        }")
    return lines, values


def _word(data_type: DataType, width: int) -> str:
    """The word ``width`` elements of an output are stored by. FLOAT32 chunks are stored as float4 (or
    float2): the compiler splits a uint4 store of float values into 4-byte stores (seen in the SASS for
    sm_90), never a float4 one."""
    return (FLOAT_WORD if data_type is DataType.FLOAT32 else WORD)[width * data_type.size]


def elementwise_vector(spec: KernelSpec, layout: Layout, width: int) -> str:
    """16-byte loads and stores of ``width`` consecutive elements per chunk; a scalar tail in 1-D.

    A block takes tiles of ``unroll`` x BLOCK consecutive chunks; each thread loads its ``unroll`` chunks of a
    tile (BLOCK apart) before it computes and stores any. Blocks are launched BLOCK threads wide.
    """
    count = math.prod(layout.sizes)
    chunks = count // width
    output = spec.output
    out_type = C_TYPE[output]
    out_word = _word(output, width)
    unroll = chunk_unroll(spec)
    words = packed(spec, layout, width)
    loads, stores = [], []
    more = extras(spec)
    held = "".join(f"\n            union {{ {_word(t, width)} w; {C_TYPE[t]} e[{width}]; }} uo{j};" for j, t in more)
    for u in range(unroll):
        lines, values = _chunk_loads(spec, layout, width, u, chunks, words)
        loads += lines
        written = "".join(f"\n            *({_word(t, width)}*)(pout{j} + oo{j}_{u} * {t.size}ull) = uo{j}.w;"
                          for j, t in more)
        stores.append(f"""if (ok{u}) {{
            union {{ {out_word} w; {out_type} e[{width}]; }} uo;{held}
            #pragma unroll
            for (int e = 0; e < {width}; ++e) uo.e[e] = {_call(spec, values, [f"uo{j}.e[e]" for j, _ in more])};
            *({out_word}*)(pout + oo_{u} * {output.size}ull) = uo.w;{written}
        }}""")
    operands = list(zip(present(spec), layout.strides))
    tail_loads = {k: f"((const {C_TYPE[t]}*)p{k})[i * {st[-1]}ull]" for (k, t), st in operands}
    uniform = " ".join(f"const {C_TYPE[t]} s{k} = *(const {C_TYPE[t]}*)p{k};" for (k, t), st in operands if not any(st))
    tail = "" if layout.rank > 1 or count % width == 0 else f"""
    for (ull i = {chunks * width}ull + (ull)blockIdx.x * blockDim.x + threadIdx.x; i < {count}ull; i += T) {{
        (({out_type}*)pout)[i] = {_call(spec, tail_loads, [f"(({C_TYPE[t]}*)pout{j})[i]" for j, t in more])};
    }}"""
    nl = "\n        "
    return PRELUDE + _apply(spec, words) + f"""
extern "C" __global__ void opendml_kernel({_params(spec)}) {{
    const ull T = (ull)gridDim.x * blockDim.x;
    {uniform}
    for (ull c = (ull)blockIdx.x * {BLOCK * unroll}ull + threadIdx.x; c < {chunks}ull; c += {unroll}ull * T) {{
        {nl.join(loads)}
        {nl.join(stores)}
    }}{tail}
}}
"""
