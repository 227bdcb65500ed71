"""TOP_K and TOP_K1 on CUDA: the CUDA C of the selection, a block a sequence.

Each element of a sequence gets an unsigned key that orders it as the operator ranks it (``key_of``: the value's
bits made monotone, -0.0 as +0.0, complemented for the largest first, NaN the largest key in both directions), and
the pair (key, index) is unique. The K first pairs of a sequence are found by a radix selection on the pairs,
eight bits at a time from the key's top to the index's bottom (``PASSES``): a pass counts the elements whose pair
begins with the digits chosen so far, by their next digit, in a histogram of shared memory; one thread then takes
the digit in which the K-th pair falls. Once every pair beginning with the chosen digits is needed (at the latest
when the digits name one pair), the selected elements are exactly those whose pair begins with digits below the
chosen ones, or with them: K of them. They are gathered in shared memory, sorted by their pairs (a bitonic sort
of the next power of two, padded with pairs above any element's), and written in that order: the values read
again from the input (so a NaN keeps its bits), the indices as UINT32 or UINT64.

So the result is the operator's order (values by the direction, NaN last, ties by ascending index), whatever the
grid; K up to ``MOST_K`` (the sort's shared memory), sequences of fewer than 2**32 - 1 elements.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...dtypes import DataType
from ...errors import kernel_unsupported
from ...kernels.spec import KernelSpec
from ...tensor import TensorDesc
from .codegen import C_TYPE, PRELUDE, decompose, storage_type
from .plan import BLOCK

MOST_K = 2048
SLICE = 8192  # the fewest elements of a slice, where sequences too few to fill the GPU are cut
LOADS = 8  # elements a thread loads at once, all in flight, before it counts or gathers them
KEY_BITS = {DataType.FLOAT32: 32, DataType.FLOAT16: 16, DataType.INT32: 32, DataType.UINT32: 32,
            DataType.INT16: 16, DataType.UINT16: 16, DataType.INT8: 16, DataType.UINT8: 16,
            DataType.INT64: 64, DataType.UINT64: 64}


@dataclass(frozen=True)
class TopKPlan:
    """A TOP_K launch: ``sequences`` of ``length`` elements, ``k`` of each selected, their pairs sorted in
    ``slots`` (a power of two) of shared memory; the input's, values' and indices' offsets of a sequence by
    ``sizes`` (the other axes) and their strides, and their strides along the axis. Where ``slices`` > 1, each
    sequence is cut into that many slices of ``chunk`` elements, a block selecting the K first of each into a
    list of candidates (their indices), and a second kernel selects the K first among a sequence's candidates."""

    sequences: int
    length: int
    k: int
    slots: int
    sizes: tuple[int, ...]
    strides: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
    steps: tuple[int, int, int]
    slices: int = 1
    chunk: int = 0

    @property
    def candidates(self) -> int:
        """Words of the candidates' list: K a slice."""
        return self.sequences * self.slices * self.k if self.slices > 1 else 0


def plan_top_k(spec: KernelSpec, x: TensorDesc, values: TensorDesc, indices: TensorDesc,
               sm_count: int = 132) -> TopKPlan:
    """The plan of ``spec``'s selection over these descriptions; K or a sequence too large refused by name.
    Sequences too few to fill the GPU (``sm_count`` multiprocessors) are cut into slices of at least
    ``SLICE`` elements and four times K."""
    selection = spec.selection
    assert selection is not None
    axis, k, length = selection.axis, selection.k, x.sizes[selection.axis]
    check(spec.operator, k, length)
    others = [a for a in range(len(x.sizes)) if a != axis]
    sizes = tuple(x.sizes[a] for a in others) or (1,)

    def kept(desc: TensorDesc) -> tuple[int, ...]:
        return tuple(desc.effective_strides[a] for a in others) or (0,)

    slots = 1 << max(0, (k - 1).bit_length())
    sequences = math.prod(sizes)
    slices = 1
    if 2 * sequences < sm_count:
        slices = max(1, min(-(-2 * sm_count // sequences), length // max(SLICE, 4 * k)))
    chunk = -(-length // slices)
    return TopKPlan(sequences, length, k, slots, sizes, (kept(x), kept(values), kept(indices)),
                    (x.effective_strides[axis], values.effective_strides[axis], indices.effective_strides[axis]),
                    -(-length // chunk), chunk)


def check(operator: str, k: int, length: int) -> None:
    """Refuse, by name, a K past the sort's shared memory or a sequence whose indices would not fit."""
    if k > MOST_K:
        raise kernel_unsupported(operator, "K", f"must be at most {MOST_K} on backend 'cuda'", str(k))
    if length >= (1 << 32) - 1:
        raise kernel_unsupported(operator, "InputTensor.Sizes", "must give sequences of fewer than 2**32 - 1 "
                                 "elements on backend 'cuda'", f"{length} elements")


def passes(plan: TopKPlan, x: DataType) -> list[tuple[int, int]]:
    """(part, shift) of each digit of the pairs: the key's from its top (part 0), then the index's (part 1)."""
    index_bits = max(1, (plan.length - 1).bit_length())
    return ([(0, s) for s in range(KEY_BITS[x] - 8, -1, -8)]
            + [(1, s) for s in range(((index_bits + 7) // 8 - 1) * 8, -1, -8)])


def _key_of(x: DataType, largest: bool) -> str:
    """C of ``key_of``: an element's key, smaller for an element ranked first (before the index decides)."""
    bits = KEY_BITS[x]
    ones = (1 << bits) - 1
    storage = storage_type(x)
    if x in (DataType.FLOAT32, DataType.FLOAT16):
        sign, magnitude, infinity = 1 << (bits - 1), (1 << (bits - 1)) - 1, 0x7F800000 if bits == 32 else 0x7C00
        body = (f"ull b = (ull)v;\n"
                f"    if ((b & {magnitude}ull) > {infinity}ull) return {ones}ull;  // NaN: after every number\n"
                f"    if ((b & {magnitude}ull) == 0ull) b = 0ull;  // -0.0 is +0.0\n"
                f"    const ull ordered = (b & {sign}ull) ? (~b & {ones}ull) : (b | {sign}ull);")
    elif x in (DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64):
        body = f"const ull ordered = ((ull)(ll)v & {ones}ull) ^ {1 << (bits - 1)}ull;"
    else:
        body = "const ull ordered = (ull)v;"
    result = f"~ordered & {ones}ull" if largest else "ordered"
    return (f"__device__ __forceinline__ ull key_of(const {storage} v) {{\n    {body}\n    return {result};\n}}\n")


# What a stage's block works on: a sequence whole, a slice of one, or a sequence's candidates.
WHOLE, SLICES, MERGE = "whole", "slices", "merge"


def _elements(plan: TopKPlan, stage: str) -> tuple[str, str, str]:
    """C setting a block's ``start`` and ``count`` of its item, the element ``i``'s index (``index_of``), and
    its key where it is valid (``key_of_element``)."""
    if stage == SLICES:
        items = f"{plan.sequences * plan.slices}u"
        head = (f"const unsigned int s = item / {plan.slices}u, start = (item % {plan.slices}u) * {plan.chunk}u;\n"
                f"        const unsigned int count = min({plan.chunk}u, {plan.length}u - start);")
        return items, head, "start + (unsigned int)i"
    if stage == MERGE:
        head = (f"const unsigned int s = item, start = 0u, count = {plan.slices * plan.k}u;\n"
                f"        const unsigned int* listed = cand + (ull)s * {plan.slices * plan.k}u;")
        return f"{plan.sequences}u", head, "listed[i]"
    head = f"const unsigned int s = item, start = 0u, count = {plan.length}u;"
    return f"{plan.sequences}u", head, "(unsigned int)i"


def top_k_kernel(spec: KernelSpec, plan: TopKPlan, index_type: DataType, stage: str = WHOLE) -> str:
    """A stage of the selection, a block an item (a grid-stride loop over them): ``WHOLE`` selects each
    sequence's K and writes them sorted; ``SLICES`` selects the K first of each slice into the candidates' list
    (their indices, unsorted, the list's unused places 0xFFFFFFFF); ``MERGE`` selects among a sequence's
    candidates and writes the K sorted."""
    selection = spec.selection
    x = spec.inputs[0]
    assert selection is not None and x is not None
    storage = storage_type(x)
    digits = passes(plan, x)
    parts = ", ".join(str(p) for p, _ in digits)
    shifts = ", ".join(str(s) for _, s in digits)
    offsets = decompose("s", plan.sizes, list(plan.strides), ["xb", "vb", "ib"])
    sx, sv, si = plan.steps
    items, head, index_of = _elements(plan, stage)

    def each(action: str) -> str:
        """A loop over the item's elements, ``LOADS`` (index, key) pairs a thread loaded at once (all in
        flight) before ``action`` runs on each valid one (``j`` its index, ``key``)."""
        return f"""for (ull i0 = t; i0 < count; i0 += {LOADS}ull * blockDim.x) {{
                unsigned int places_of[{LOADS}];
                ull keys_of[{LOADS}];
                #pragma unroll
                for (unsigned int k = 0; k < {LOADS}u; ++k) {{
                    const ull i = i0 + k * blockDim.x;
                    places_of[k] = i < count ? {index_of} : 0xFFFFFFFFu;
                    keys_of[k] = places_of[k] != 0xFFFFFFFFu ? key_of(x[xb + (ull)places_of[k] * {sx}ull]) : 0ull;
                }}
                #pragma unroll
                for (unsigned int k = 0; k < {LOADS}u; ++k) {{
                    const unsigned int j = places_of[k];
                    const ull key = keys_of[k];
                    if (j != 0xFFFFFFFFu) {{ {action} }}
                }}
            }}"""

    if stage == SLICES:
        emit = f"""__syncthreads();
        for (unsigned int r = t; r < {plan.k}u; r += blockDim.x) {{  // the candidates, unsorted
            cand[(ull)item * {plan.k}u + r] = r < selected ? places[r] : 0xFFFFFFFFu;
        }}"""
    else:
        emit = f"""for (unsigned int i = {plan.k}u + t; i < {plan.slots}u; i += blockDim.x) {{
            keys[i] = 0xFFFFFFFFFFFFFFFFull;
            places[i] = 0xFFFFFFFFu;
        }}
        __syncthreads();
        for (unsigned int size = 2u; size <= {plan.slots}u; size <<= 1) {{  // bitonic sort by (key, index)
            for (unsigned int stride = size >> 1; stride > 0u; stride >>= 1) {{
                for (unsigned int i = t; i < {plan.slots}u; i += blockDim.x) {{
                    const unsigned int l = i ^ stride;
                    if (l > i && before(keys[l], places[l], keys[i], places[i]) == ((i & size) == 0u)) {{
                        const ull k0 = keys[i];
                        const unsigned int p0 = places[i];
                        keys[i] = keys[l]; places[i] = places[l];
                        keys[l] = k0; places[l] = p0;
                    }}
                }}
                __syncthreads();
            }}
        }}
        for (unsigned int r = t; r < {plan.k}u; r += blockDim.x) {{
            const unsigned int j = places[r];
            (({storage}*)pvalues)[vb + (ull)r * {sv}ull] = x[xb + (ull)j * {sx}ull];
            (({C_TYPE[index_type]}*)pindices)[ib + (ull)r * {si}ull] = ({C_TYPE[index_type]})j;
        }}"""
    return PRELUDE + _key_of(x, selection.largest) + f"""
__device__ __forceinline__ bool before(const ull ka, const unsigned int ia, const ull kb, const unsigned int ib) {{
    return ka < kb || (ka == kb && ia < ib);
}}
extern "C" __global__ void __launch_bounds__({BLOCK}) opendml_kernel(const ull px, const ull pvalues,
                                                                      const ull pindices, const ull pcand) {{
    const {storage}* x = (const {storage}*)px;
    unsigned int* cand = (unsigned int*)pcand;
    const int parts[{len(digits)}] = {{{parts}}};
    const int shifts[{len(digits)}] = {{{shifts}}};
    __shared__ unsigned int hist[256];
    __shared__ ull kmask, kprefix;
    __shared__ unsigned int imask, iprefix, need, done, count_of;
    __shared__ ull keys[{plan.slots}];
    __shared__ unsigned int places[{plan.slots}];
    const unsigned int t = threadIdx.x;
    for (unsigned int item = blockIdx.x; item < {items}; item += gridDim.x) {{
        {head}
        const unsigned int selected = min({plan.k}u, count);
        ull xb = 0, vb = 0, ib = 0;
        {offsets}
        if (t == 0) {{ kmask = 0; kprefix = 0; imask = 0; iprefix = 0; need = selected; done = 0; count_of = 0; }}
        __syncthreads();
        for (int p = 0; p < {len(digits)} && !done; ++p) {{  // the radix selection: a digit a pass
            for (unsigned int i = t; i < 256u; i += blockDim.x) hist[i] = 0u;
            __syncthreads();
            const ull km = kmask, kp = kprefix;
            const unsigned int im = imask, ip = iprefix;
            {each("if ((key & km) == kp && (j & im) == ip) atomicAdd(&hist[parts[p] ? (j >> shifts[p]) & 255u : "
                  "(unsigned int)(key >> shifts[p]) & 255u], 1u);")}
            __syncthreads();
            if (t == 0) {{  // the digit of the K-th pair among those beginning with the chosen digits
                unsigned int below = 0u, d = 0u;
                for (; d < 255u && below + hist[d] < need; ++d) below += hist[d];
                need -= below;
                if (parts[p]) {{ iprefix |= d << shifts[p]; imask |= 255u << shifts[p]; }}
                else {{ kprefix |= (ull)d << shifts[p]; kmask |= 255ull << shifts[p]; }}
                done = need == hist[d];
            }}
            __syncthreads();
        }}
        const ull km = kmask, kp = kprefix;
        const unsigned int im = imask, ip = iprefix;
        {each("if ((key & km) < kp || ((key & km) == kp && (j & im) <= ip)) { const unsigned int slot = "
              "atomicAdd(&count_of, 1u); keys[slot] = key; places[slot] = j; }")}  // the selected, in any order
        {emit}
        __syncthreads();
    }}
}}
"""
