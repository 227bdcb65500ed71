"""The generated ARGMIN and element-wise kernels run on the host: each CUDA thread a fiber of one OS thread, warp
shuffles and ``__syncthreads`` through barriers, the PTX helpers as host C++ of the same IEEE meaning. What
this checks is the templates' index arithmetic (plans, layouts, each operand's loads, each output's stores,
the combine pass), without a GPU."""

from __future__ import annotations

import atexit
import hashlib
import math
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from opendml.backends.cuda import argmin_c, elementwise_c, expr_c
from opendml.backends.cuda.codegen import PRELUDE
from opendml.backends.cuda.plan import BLOCK, ArgMinPlan
from opendml.backends.layout import Layout
from opendml.kernels.spec import KernelSpec
from opendml.tensor import TensorDesc
from tests.limits import HANG_SECONDS

# The PTX helpers of the CUDA prelude as host C++ with the same IEEE meaning: what host runs check is the
# lowering (types, widths, signedness, casts) and the templates' index arithmetic, not the PTX instructions,
# which the GPU tests check.
PTX_HELPERS = r"""
static float h2f(unsigned short h) { _Float16 x; memcpy(&x, &h, 2); return (float)x; }
static unsigned short f2h(float f) { _Float16 x = (_Float16)f; unsigned short h; memcpy(&h, &x, 2); return h; }
static float mul_rn(float a, float b) { volatile float r = a * b; return r; }
static float add_rn(float a, float b) { volatile float r = a + b; return r; }
static float ll2f_rn(ll a) { return (float)a; }
static float ull2f_rn(ull a) { return (float)a; }
static float i2f_rn(int a) { return (float)a; }
static float u2f_rn(unsigned int a) { return (float)a; }
static float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static bool lt(float a, float b) { return a < b; }
static bool is_number(float a) { return a == a; }
static bool lt(unsigned int a, unsigned int b) { return a < b; }
static bool lt(int a, int b) { return a < b; }
static bool lt(ull a, ull b) { return a < b; }
static bool lt(ll a, ll b) { return a < b; }
static int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static unsigned int __float_as_uint(float f) { unsigned int i; memcpy(&i, &f, 4); return i; }
static float __uint_as_float(unsigned int i) { float f; memcpy(&f, &i, 4); return f; }
static ll __double_as_longlong(double d) { ll i; memcpy(&i, &d, 8); return i; }
static double __longlong_as_double(ll i) { double d; memcpy(&d, &i, 8); return d; }
static float __double2float_rn(double d) { return (float)d; }
// Double arithmetic rounded once each (volatile: never contracted into a fused multiply-add), as CUDA's intrinsics.
static double __dadd_rn(double a, double b) { volatile double r = a + b; return r; }
static double __dsub_rn(double a, double b) { volatile double r = a - b; return r; }
static double __dmul_rn(double a, double b) { volatile double r = a * b; return r; }
static double __ddiv_rn(double a, double b) { volatile double r = a / b; return r; }
static double __dsqrt_rn(double a) { volatile double r = __builtin_sqrt(a); return r; }
static int __popc(unsigned int a) { return __builtin_popcount(a); }
static int __popcll(ull a) { return __builtin_popcountll(a); }
static unsigned int lanes(unsigned int lo, unsigned int hi) { return (lo & 0xFFFFu) | (hi << 16); }
static unsigned int pick(bool first, unsigned int a, unsigned int b) { return first ? a : b; }
static unsigned int __vminu2(unsigned int a, unsigned int b) {
    return lanes(pick((a & 0xFFFFu) < (b & 0xFFFFu), a, b), pick((a >> 16) < (b >> 16), a, b) >> 16);
}
static unsigned int __vmaxu2(unsigned int a, unsigned int b) {
    return lanes(pick((a & 0xFFFFu) > (b & 0xFFFFu), a, b), pick((a >> 16) > (b >> 16), a, b) >> 16);
}
static unsigned int __vmins2(unsigned int a, unsigned int b) {
    return lanes(pick((short)a < (short)b, a, b), pick((short)(a >> 16) < (short)(b >> 16), a, b) >> 16);
}
static unsigned int __vmaxs2(unsigned int a, unsigned int b) {
    return lanes(pick((short)a > (short)b, a, b), pick((short)(a >> 16) > (short)(b >> 16), a, b) >> 16);
}
"""

# expr_c.ARITHMETIC as host C++: cvt.rzi as the PTX ISA defines it (truncated, clamped to the destination's
# range; NaN gives 0 for 32-bit destinations and 1 << 63 for 64-bit ones), so that the lowering's own NaN
# selection for 64-bit results is what the host runs check.
HOST_ARITHMETIC = r"""static float div_rn(float a, float b) { volatile float r = a / b; return r; }
static float rint_rn(float a) { return __builtin_rintf(a); }
static int f2i_rz(float a, int lo, int hi) {
    int r = a != a ? 0 : a >= 2147483648.0f ? 2147483647 : a < -2147483648.0f ? (-2147483647 - 1) : (int)a;
    return r < lo ? lo : (r > hi ? hi : r);
}
static unsigned int f2u_rz(float a, unsigned int hi) {
    unsigned int r = a != a ? 0u : a >= 4294967296.0f ? 4294967295u : a <= -1.0f ? 0u : (unsigned int)a;
    return r > hi ? hi : r;
}
static ll f2ll_rz(float a) {
    return a != a ? (ll)(1ull << 63) : a >= 9223372036854775808.0f ? (ll)(~0ull >> 1)
        : a < -9223372036854775808.0f ? (ll)(1ull << 63) : (ll)a;
}
static ull f2ull_rz(float a) {
    return a != a ? 1ull << 63 : a >= 18446744073709551616.0f ? ~0ull : a <= -1.0f ? 0ull : (ull)a;
}
"""

# expr_c.DOUBLES as host C++: C's conversions (IEEE, rounded to nearest even where inexact; a double straight to
# _Float16, one rounding), cvt.rzi of a double as ARITHMETIC's of a float, except that a NaN gives 0x80000000 for
# 32-bit destinations (what an H100 gives), so that the lowering's NaN selection for doubles is what runs here.
HOST_DOUBLES = r"""static double f2d(float a) { return (double)a; }
static double i2d_rn(int a) { return (double)a; }
static double u2d_rn(unsigned int a) { return (double)a; }
static double ll2d_rn(ll a) { return (double)a; }
static double ull2d_rn(ull a) { return (double)a; }
static float d2f_rn(double a) { volatile float r = (float)a; return r; }
static unsigned short d2h_rn(double a) { _Float16 x = (_Float16)a; unsigned short h; memcpy(&h, &x, 2); return h; }
static bool is_number(double a) { return a == a; }
static int d2i_rz(double a, int lo, int hi) {
    int r = a != a ? (-2147483647 - 1) : a >= 2147483648.0 ? 2147483647 : a < -2147483648.0 ? (-2147483647 - 1) : (int)a;
    return r < lo ? lo : (r > hi ? hi : r);
}
static unsigned int d2u_rz(double a, unsigned int hi) {
    unsigned int r = a != a ? 0x80000000u : a >= 4294967296.0 ? 4294967295u : a <= -1.0 ? 0u : (unsigned int)a;
    return r > hi ? hi : r;
}
static ll d2ll_rz(double a) {
    return a != a ? (ll)(1ull << 63) : a >= 9223372036854775808.0 ? (ll)(~0ull >> 1)
        : a < -9223372036854775808.0 ? (ll)(1ull << 63) : (ll)a;
}
static ull d2ull_rz(double a) {
    return a != a ? 1ull << 63 : a >= 18446744073709551616.0 ? ~0ull : a <= -1.0 ? 0ull : (ull)a;
}
"""

HARNESS = r"""
// Host emulation of the CUDA features the ARGMIN templates use: each CUDA thread a fiber (ucontext) of one OS
// thread, switched at barriers, so that a barrier costs two context switches a thread, not a wake-up of
// hundreds of OS threads contending for a few cores.
#include <ucontext.h>
#include <math.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <functional>
#include <utility>
typedef unsigned long long ull; typedef long long ll;
#define INVALID_INDEX 0xFFFFFFFFFFFFFFFFull
#define __device__
#define __forceinline__ inline
#define __global__
#define __shared__ static
struct dim3 { unsigned int x = 1, y = 1, z = 1; };
dim3 threadIdx, blockIdx;  // the running fiber's, set as it is switched in
dim3 blockDim, gridDim;
struct alignas(16) uint4 { unsigned int x, y, z, w; };
struct alignas(8) uint2 { unsigned int x, y; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) float2 { float x, y; };
// A barrier of ``expected`` fibers: the last to arrive opens it (a new generation); each arriving fiber is
// switched out, and runs again once the scheduler sees its generation passed.
struct Barrier {
    unsigned expected = 0, arrived = 0; unsigned long generation = 0;
    void arrive_and_wait();
};
struct Fiber { ucontext_t context; dim3 thread, block; const Barrier* waits = nullptr; unsigned long since = 0;
               bool done = false; };
static std::vector<Fiber> fibers;
static ucontext_t scheduler;
static unsigned running;
void Barrier::arrive_and_wait() {
    Fiber& f = fibers[running];
    f.waits = this; f.since = generation; f.block = blockIdx;
    if (++arrived == expected) { arrived = 0; ++generation; }
    swapcontext(&f.context, &scheduler);
}
static Barrier* block_barrier;
static Barrier* warp_barriers[32];
static unsigned long long warp_slots[32][32];
static void __syncthreads() { block_barrier->arrive_and_wait(); }
template <typename T> static T __shfl_xor_sync(unsigned, T v, int off) {
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    ull bits = 0; memcpy(&bits, &v, sizeof(T));
    warp_slots[warp][lane] = bits;
    warp_barriers[warp]->arrive_and_wait();
    ull other = warp_slots[warp][lane ^ off];
    warp_barriers[warp]->arrive_and_wait();
    T r; memcpy(&r, &other, sizeof(T)); return r;
}
template <typename T> static T __shfl_sync(unsigned, T v, int from) {
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    ull bits = 0; memcpy(&bits, &v, sizeof(T));
    warp_slots[warp][lane] = bits;
    warp_barriers[warp]->arrive_and_wait();
    ull other = warp_slots[warp][from];
    warp_barriers[warp]->arrive_and_wait();
    T r; memcpy(&r, &other, sizeof(T)); return r;
}
// A split row's pieces merged by the scan (argmin_c.one_pass): blocks run one after another here, so the
// fence orders nothing that is not ordered already; the count and the reads are what the host run checks.
static void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static unsigned int atomicAdd(unsigned int* p, unsigned int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
template <typename T> static T __ldcg(const T* p) { return *p; }
static unsigned int __ballot_sync(unsigned, bool p) {
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    warp_slots[warp][lane] = p;
    warp_barriers[warp]->arrive_and_wait();
    unsigned int mask = 0;
    for (int k = 0; k < 32; ++k) mask |= (warp_slots[warp][k] ? 1u : 0u) << k;
    warp_barriers[warp]->arrive_and_wait();
    return mask;
}
static int __ffs(int x) { return __builtin_ffs(x); }
static int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned int)x); }
// REDUCE's value functions (reduce_c): 64-bit atomics on words of scratch, CUDA's integer min and max.
#define __noinline__
static ull atomicAdd(ull* p, ull v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
static ull atomicMax(ull* p, ull v) {
    ull old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (old < v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
    return old;
}
static int __clzll(ll x) { return x == 0 ? 64 : __builtin_clzll((ull)x); }
static unsigned int max(unsigned int a, unsigned int b) { return a < b ? b : a; }
static unsigned int min(unsigned int a, unsigned int b) { return a < b ? a : b; }
static ull max(ull a, ull b) { return a < b ? b : a; }
static int max(int a, int b) { return a < b ? b : a; }
static int min(int a, int b) { return a < b ? a : b; }
""" + PTX_HELPERS + r"""// The blocks run one after another on one set of threads (starting threads costs more than the kernels):
// each thread runs its part of a block, then waits for the others before the next block reuses __shared__.
// A thread-block cluster's blocks (argmin_c.CLUSTER_HELPERS) run in reverse order here, so that block 0, which
// reads the others' candidates after the cluster barrier, runs after them; a cluster variable has one copy
// per block of the cluster, which the others' addresses name.
static unsigned int cluster_size = 1;
static std::function<void()> fiber_body;
static void fiber_main() {
    const unsigned grid = gridDim.x, c = cluster_size;
    for (unsigned b = 0; b < grid; ++b) {
        blockIdx.x = b / c * c + (c - 1 - b % c); fiber_body(); block_barrier->arrive_and_wait();
    }
    fibers[running].done = true;
}  // returning resumes the scheduler (uc_link)
static void launch(unsigned grid, unsigned block, std::function<void()> body) {
    gridDim.x = grid; blockDim.x = block; fiber_body = body;
    const size_t stack = 256 * 1024;
    Barrier bar; bar.expected = block; block_barrier = &bar;
    std::vector<Barrier> warps((block + 31) / 32);
    for (unsigned w = 0; w < warps.size(); ++w) { warps[w].expected = block < 32 ? block : 32; warp_barriers[w] = &warps[w]; }
    fibers.assign(block, Fiber{});
    char* stacks = (char*)malloc((size_t)block * stack);  // untouched pages cost nothing
    for (unsigned t = 0; t < block; ++t) {
        Fiber& f = fibers[t];
        getcontext(&f.context);
        f.context.uc_stack.ss_sp = stacks + (size_t)t * stack; f.context.uc_stack.ss_size = stack;
        f.context.uc_link = &scheduler; f.thread.x = t;
        makecontext(&f.context, fiber_main, 0);
    }
    // In passes, each in a new pseudo-random order (a read of another thread's shared value with no barrier
    // between finds it unwritten in some order): each fiber runs until it arrives at a barrier (or ends), and
    // runs again in a later pass once the barrier has opened. A pass that runs none while some have not ended
    // is a deadlock: report it, as a GPU hangs.
    std::vector<unsigned> order(block);
    for (unsigned t = 0; t < block; ++t) order[t] = t;
    static unsigned long long seed = 0x9E3779B97F4A7C15ull;
    for (unsigned left = block; left;) {
        for (unsigned k = block - 1; k > 0; --k) {  // Fisher-Yates, xorshift64
            seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
            std::swap(order[k], order[seed % (k + 1)]);
        }
        bool ran = false;
        for (unsigned t : order) {
            Fiber& f = fibers[t];
            if (f.done || (f.waits && f.waits->generation == f.since)) continue;
            if (f.waits) blockIdx = f.block;
            f.waits = nullptr; running = t; threadIdx = f.thread; ran = true;
            swapcontext(&scheduler, &f.context);
            if (f.done) --left;
        }
        if (!ran && left) { fprintf(stderr, "deadlock: %u threads wait at a barrier no thread can open\n", left); abort(); }
    }
    free(stacks);
}
static size_t last_size;  // the size of the file read last
static void* read_file(const char* path, size_t extra) {
    FILE* f = fopen(path, "rb"); fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET); last_size = n;
    char* p = (char*)aligned_alloc(256, ((n + extra + 256) / 256) * 256);
    memset(p, 0, ((n + extra + 256) / 256) * 256);
    if (fread(p + extra, 1, n, f) != (size_t)n) abort(); fclose(f); return p;
}
template <typename T> static T from_bits(ull b) { T v; memcpy(&v, &b, sizeof(T)); return v; }
"""
# The comparison helpers the engine adds to the prelude as host C++, each replacing the device text it
# stands for (argmin_c.BEST_HELPERS, EQ_HELPERS, BEATS_HELPERS): the min-and-ballot scan's NaN-ignoring min
# and max (either zero of a -0.0/+0.0 pair, as min.f32 and max.f32 may give) and IEEE equality; under
# PROPAGATE a NaN-propagating min and max, an equality under which NaN matches NaN, and ``beats``: a less
# (greater) than b, or a NaN and b not.
HOST_BEST_HELPERS = {
    (False, False): "static float vmin(float a, float b) { return a != a ? b : (b != b ? a : (b < a ? b : a)); }\n",
    (True, False): "static float vmax(float a, float b) { return a != a ? b : (b != b ? a : (a < b ? b : a)); }\n",
    (False, True): "static float vmin(float a, float b) { return a != a ? a : (b != b ? b : (b < a ? b : a)); }\n",
    (True, True): "static float vmax(float a, float b) { return a != a ? a : (b != b ? b : (a < b ? b : a)); }\n",
}
HOST_EQ_HELPERS = {False: "static bool eq(float a, float b) { return a == b; }\n",
                   True: "static bool eq(float a, float b) { return a == b || (a != a && b != b); }\n"}
HOST_BEATS_HELPERS = {False: "static bool beats(float a, float b) { return b == b && (a < b || a != a); }\n",
                      True: "static bool beats(float a, float b) { return b == b && (a > b || a != a); }\n"}
# expr_c.BYTES as host C++: PTX prmt.b32 in its default mode, as the PTX ISA defines it (each selector nibble
# picks one of the 8 bytes of {b, a}; its high bit replicates that byte's sign bit instead).
HOST_BYTES = r"""static unsigned int prmt(unsigned int a, unsigned int b, unsigned int s) {
    const ull bytes = ((ull)b << 32) | a; unsigned int r = 0;
    for (int i = 0; i < 4; ++i) {
        const unsigned int n = (s >> (4 * i)) & 15u, byte = (unsigned int)(bytes >> (8 * (n & 7u))) & 255u;
        r |= ((n & 8u) ? ((byte & 128u) ? 255u : 0u) : byte) << (8 * i);
    }
    return r;
}
"""
# argmin_c.CLUSTER_HELPERS as host C++: the barrier orders nothing the block order does not (``launch``).
HOST_CLUSTER_HELPERS = r"""
#define CLUSTER_SHARED(type, name) static type name##_of[16]; type& name = name##_of[blockIdx.x % cluster_size]
static void cluster_barrier() {}
template <typename T> static const volatile T* cluster_peer(const T* p, unsigned int block) {
    return p - blockIdx.x % cluster_size + block;
}
"""
# expr_c.CLAMPS as host C++: the selects they stand for (the bound a nonzero number, so both give one answer).
HOST_CLAMPS = r"""static float clamp_above(float x, float p) { return p < x ? p : x; }
static float clamp_below(float x, float p) { return x < p ? p : x; }
"""
C_SCALAR = {np.float32: "float", np.int32: "int", np.uint32: "unsigned int", np.int64: "ll", np.uint64: "ull"}


def _body(source: str, name: str) -> str:
    """A kernel source as a host function: the prelude (PTX helpers) left to the harness."""
    assert source.startswith(PRELUDE)
    body = source[len(PRELUDE):]
    helpers: list[tuple[dict[Any, str], dict[Any, str]]] = [
        (argmin_c.BEST_HELPERS, HOST_BEST_HELPERS), (argmin_c.EQ_HELPERS, HOST_EQ_HELPERS),
        (argmin_c.BEATS_HELPERS, HOST_BEATS_HELPERS)]
    for device, host in helpers:
        for key, text in device.items():
            body = body.replace(text, host[key])
    body = body.replace(expr_c.ARITHMETIC, HOST_ARITHMETIC).replace(expr_c.BYTES, HOST_BYTES)
    body = body.replace(expr_c.DOUBLES, HOST_DOUBLES)
    body = body.replace(expr_c.CLAMPS, HOST_CLAMPS).replace(argmin_c.CLUSTER_HELPERS, HOST_CLUSTER_HELPERS)
    return re.sub(r'extern "C" __global__ void (__\w+__\([^)]*\) )*opendml_kernel', f"void {name}", body)


def _literal(value: np.generic) -> str:
    array = np.asarray(value)
    return f"from_bits<{C_SCALAR[array.dtype.type]}>({int(array.view(f'u{array.itemsize}'))}ull)"


def _grid(plan: ArgMinPlan, sm_count: int) -> int:
    """The blocks CudaBackend.run launches (grid-stride loops: any count gives the same result; a block for
    each piece of a cluster's row)."""
    items = plan.items
    if plan.cluster:
        return items
    if plan.family == "columns":
        return max(1, min(math.ceil(items / BLOCK), sm_count * 32))
    if plan.group == 32:
        return max(1, min(math.ceil(items * 32 / BLOCK), sm_count * 32))
    return max(1, min(items, sm_count * 32))


@dataclass(frozen=True)
class HostRun:
    """One reduction run on the host: ``spec``'s kernels over ``inputs`` (the bytes of each present operand,
    the InputTensor's first), each operand's address shifted by ``shifts`` bytes; each extra output
    described by ``extra_outputs``, its bytes ``extra_bytes`` as the kernels find them, preceded by
    ``extra_shifts`` bytes."""

    spec: KernelSpec
    descs: Sequence[TensorDesc | None]
    out: TensorDesc
    inputs: Sequence[np.ndarray]
    shifts: Sequence[int]
    extra_outputs: Sequence[TensorDesc] = ()
    extra_bytes: Sequence[np.ndarray] = ()
    extra_shifts: Sequence[int] = ()
    sm_count: int = 1  # the multiprocessors of the GPU whose plan runs
    clusters: int = 1  # the most blocks of a thread-block cluster on that GPU (1: none)


def _case(spec: KernelSpec, descs: Sequence[TensorDesc | None], out: TensorDesc, folder: Path, shifts: Sequence[int],
          sm_count: int, extra_outputs: Sequence[TensorDesc], extra_shifts: Sequence[int], tag: str,
          namespaces: dict[str, str] | None = None, clusters: int = 1) -> tuple[list[str], list[str], ArgMinPlan]:
    """The kernels of one run (in namespaces named after ``tag``, but for a source already in
    ``namespaces``, which maps each source to its namespace), the lines of ``main`` running them over the
    files named after ``tag``, and the plan they run."""
    assert spec.reduction is not None
    x = descs[0]
    assert x is not None
    kept, reduced = argmin_c.layouts(spec, descs, out, extra_outputs)
    plan = argmin_c.plan(spec, x, kept, reduced, sm_count, clusters)
    addresses = [*shifts, *extra_shifts]
    if any(addresses[k] % alignment for k, alignment in argmin_c.alignments(spec, plan, kept, reduced)):
        plan = plan.scalar()
    direction = spec.reduction.direction
    namespaces = {} if namespaces is None else namespaces
    parts: list[str] = []

    def namespace(source: str, name: str) -> str:
        if source not in namespaces:
            namespaces[source] = name
            parts.extend([f"namespace {name} {{", _body(source, "run"), "}"])
        return namespaces[source]

    scan = namespace(argmin_c.argmin_kernel(spec, plan, direction, kept, reduced), f"{tag}m")
    one_pass = argmin_c.one_pass(spec, plan)
    if plan.partial and not one_pass:
        combine = namespace(argmin_c.argmin_combine_kernel(spec, plan, direction, kept), f"{tag}c")
    size, partials = out.total_tensor_size_in_bytes, plan.outputs * argmin_c.partials_per_output(spec, plan) * 8
    lines = ["  {"]
    lines += [f'  char* p{k} = (char*)read_file("{folder}/{tag}in{k}.bin", {shift}) + {shift};'
              for k, shift in enumerate(shifts)]
    lines.append(f"  char* pout = (char*)read_file(\"{folder}/{tag}out.bin\", 0);")
    lines += [f'  char* pout{j} = (char*)read_file("{folder}/{tag}out{j}.bin", 0) + {shift}; size_t n{j} = last_size;'
              for j, shift in enumerate(extra_shifts, start=1)]
    lines.append(f"  char* pv = (char*)aligned_alloc(256, {partials // 256 * 256 + 256}); "
                 f"char* pi = (char*)aligned_alloc(256, {partials // 256 * 256 + 256}); "
                 f"unsigned int* pc = (unsigned int*)calloc({plan.outputs}, 4);")
    scalars = [_literal(v) for v in expr_c.launch_scalars(spec.element, spec.scalars, spec.extra)]
    extras = [f"(ull)pout{j}" for j in range(1, len(extra_shifts) + 1)]
    partial = ["(ull)pv", "(ull)pi", *(["(ull)pc"] if one_pass else [])]
    arguments = ", ".join([*(f"(ull)p{k}" for k in range(len(shifts))), "(ull)pout", *extras, *partial, *scalars])
    lines.append(f"  cluster_size = {plan.splits if plan.cluster else 1};")
    lines.append(f"  launch({_grid(plan, sm_count)}, {plan.block}, [=] {{ {scan}::run({arguments}); }});")
    lines.append("  cluster_size = 1;")
    # Every counter back at zero: the next launch finds them as this one did.
    lines.append(f"  for (int k = 0; k < {plan.outputs}; ++k) if (pc[k]) {{ fprintf(stderr, \"counter %d left at %u\\n\", "
                 "k, pc[k]); return 3; }")
    if plan.partial and not one_pass:
        blocks = max(1, min(math.ceil(plan.outputs / (BLOCK // plan.combine_group)), sm_count * 32))
        lines.append(f"  launch({blocks}, {BLOCK}, [=] {{ {combine}::run((ull)pv, (ull)pi, (ull)pout); }});")
    lines.append(f'  FILE* f = fopen("{folder}/{tag}out.bin", "wb"); fwrite(pout, 1, {size}, f); fclose(f);')
    for j, shift in enumerate(extra_shifts, start=1):
        lines.append(f'  f = fopen("{folder}/{tag}out{j}.bin", "wb"); fwrite(pout{j} - {shift}, 1, n{j}, f); fclose(f);')
    lines.append("  }")
    return parts, lines, plan


def program(spec: KernelSpec, descs: Sequence[TensorDesc | None], out: TensorDesc, folder: Path,
            shifts: Sequence[int], sm_count: int = 1, extra_outputs: Sequence[TensorDesc] = (),
            extra_shifts: Sequence[int] = ()) -> tuple[str, ArgMinPlan]:
    """A host program running ``spec``'s kernels as CudaBackend would (the element-by-element kernel where
    an operand's address, shifted by ``shifts`` bytes, or an extra output's, shifted by ``extra_shifts``,
    fits no load or store), reading operand k from ``in{k}.bin``, writing ``out.bin`` and each extra output
    j (1, 2...) into the bytes of ``out{j}.bin``; and the plan it runs."""
    parts, lines, plan = _case(spec, descs, out, folder, shifts, sm_count, extra_outputs, extra_shifts, "")
    return "\n".join([HARNESS, *parts, "int main() {", *lines, "  return 0; }"]) + "\n", plan


def run_on_host(spec: KernelSpec, descs: Sequence[TensorDesc | None], out: TensorDesc, inputs: Sequence[np.ndarray],
                folder: Path, shifts: Sequence[int], extra_outputs: Sequence[TensorDesc] = (),
                extra_bytes: Sequence[np.ndarray] = (), extra_shifts: Sequence[int] = ()
                ) -> tuple[list[np.ndarray], ArgMinPlan]:
    """The output bytes of ``spec``'s kernels run on the host over ``inputs`` (the OutputTensor's, then each
    extra output's: ``extra_bytes`` as the kernels leave them, preceded by ``extra_shifts`` bytes), and
    the plan that ran."""
    run = HostRun(spec, descs, out, inputs, shifts, extra_outputs, extra_bytes, extra_shifts)
    return run_batch_on_host([run], folder)[0]


def run_batch_on_host(runs: Sequence[HostRun], folder: Path) -> list[tuple[list[np.ndarray], ArgMinPlan]]:
    """Each run as ``run_on_host`` gives it, all from one host program (one compile, each distinct kernel
    compiled once)."""
    parts: list[str] = []
    lines: list[str] = []
    plans: list[tuple[ArgMinPlan, list[int]]] = []
    tags: list[str] = []
    namespaces: dict[str, str] = {}
    for n, run in enumerate(runs):
        tag = f"r{n}_" if len(runs) > 1 else ""
        for k, data in enumerate(run.inputs):
            (folder / f"{tag}in{k}.bin").write_bytes(data.tobytes())
        (folder / f"{tag}out.bin").write_bytes(bytes(run.out.total_tensor_size_in_bytes))
        shifted = list(run.extra_shifts) or [0] * len(run.extra_outputs)
        for j, (data, shift) in enumerate(zip(run.extra_bytes, shifted), start=1):
            (folder / f"{tag}out{j}.bin").write_bytes(bytes(shift) + data.tobytes())
        case_parts, case_lines, plan = _case(run.spec, run.descs, run.out, folder, run.shifts, run.sm_count,
                                             run.extra_outputs, shifted, tag, namespaces, run.clusters)
        parts += case_parts
        lines += case_lines
        plans.append((plan, shifted))
        tags.append(tag)
    _build_and_run("\n".join([HARNESS, *parts, "int main() {", *lines, "  return 0; }"]) + "\n", folder)
    results = []
    for tag, (plan, shifted) in zip(tags, plans):
        written = [np.frombuffer((folder / f"{tag}out{j}.bin").read_bytes()[shift:], np.uint8)
                   for j, shift in enumerate(shifted, start=1)]
        results.append(([np.frombuffer((folder / f"{tag}out.bin").read_bytes(), np.uint8), *written], plan))
    return results


FLAGS = ["-std=c++17", "-O1", "-ffp-contract=off", "-w"]
_work: list[Path] = []  # this process's folder of the precompiled HARNESS and the programs built
_harness_header: list[Path | None] = []  # the precompiled HARNESS, once tried (None: not usable)
_programs: dict[str, Path] = {}  # a program's source hash -> its binary


def _work_folder() -> Path:
    if not _work:
        _work.append(Path(tempfile.mkdtemp(prefix="opendml-host-programs-")))
        atexit.register(shutil.rmtree, _work[0], True)
    return _work[0]


def _precompiled_harness() -> Path | None:
    """HARNESS as a header precompiled once per process (with the programs' FLAGS, which a precompiled header
    must match): its standard headers are most of each program's compile time (0.9 s a program, 0.35 s
    with it). None where g++ cannot precompile it; the programs then include the text itself."""
    if not _harness_header:
        header = _work_folder() / "harness.h"
        header.write_text(HARNESS)
        built = subprocess.run(["g++", *FLAGS, "-x", "c++-header", "-o", str(header) + ".gch", str(header)],
                               capture_output=True, text=True)
        _harness_header.append(header if built.returncode == 0 else None)
    return _harness_header[0]


def _build_and_run(source: str, folder: Path) -> None:
    """Build ``source`` (unless this process built the same text already: the programs read and write their
    data in files named in the text, so runs over other values of one kernel share one binary) and run it."""
    key = hashlib.sha256(source.encode()).hexdigest()[:24]
    binary = _programs.get(key)
    if binary is None:
        header = _precompiled_harness() if source.startswith(HARNESS) else None
        if header is not None:  # the same text, its headers parsed once (g++ reads harness.h.gch beside it)
            source = f'#include "{header}"\n' + source[len(HARNESS):]
        (folder / "kernels.cpp").write_text(source)
        binary = _work_folder() / f"kernels-{key}"
        built = subprocess.run(["g++", *FLAGS, "-o", str(binary), str(folder / "kernels.cpp")], capture_output=True,
                               text=True)
        assert built.returncode == 0, built.stderr[-3000:]
        _programs[key] = binary
    subprocess.run([str(binary)], check=True, timeout=HANG_SECONDS)


def run_elementwise_on_host(spec: KernelSpec, layout: Layout, width: int | None, buffers: Sequence[np.ndarray],
                            shifts: Sequence[int], folder: Path, blocks: int = 2) -> list[np.ndarray]:
    """The bytes of each buffer after ``spec``'s element-wise kernel (the 16-byte chunk one where ``width``
    is given, else the one for any strides) ran on the host over ``blocks`` blocks. ``buffers`` are the
    present inputs' bytes, then the output's, then each extra output's; each kernel pointer is its buffer's
    start plus ``shifts`` bytes (the buffer holds those bytes before the tensor's first element)."""
    (found,) = run_elementwise_jobs_on_host([ElementwiseJob(spec, layout, width, buffers, shifts)], folder, blocks)
    return found


@dataclass(frozen=True)
class ElementwiseJob:
    """One element-wise kernel run of ``run_elementwise_jobs_on_host`` (the arguments of
    ``run_elementwise_on_host``)."""

    spec: KernelSpec
    layout: Layout
    width: int | None
    buffers: Sequence[np.ndarray]
    shifts: Sequence[int]


def run_elementwise_jobs_on_host(jobs: Sequence[ElementwiseJob], folder: Path, blocks: int = 2
                                 ) -> list[list[np.ndarray]]:
    """``run_elementwise_on_host`` of each job, all compiled into one host program (one g++ run for many
    kernels): each job's buffers after its kernel ran."""
    parts, lines = [HARNESS], ["int main() {"]
    for n, job in enumerate(jobs):
        source = (elementwise_c.elementwise_vector(job.spec, job.layout, job.width) if job.width is not None
                  else elementwise_c.elementwise_general(job.spec, job.layout))
        parts += [f"namespace m{n} {{", _body(source, "run"), "}"]
        for k, data in enumerate(job.buffers):
            (folder / f"j{n}b{k}.bin").write_bytes(data.tobytes())
            lines.append(f'  char* j{n}b{k} = (char*)read_file("{folder}/j{n}b{k}.bin", 0);')
        scalars = [_literal(v) for v in expr_c.launch_scalars(job.spec.element, job.spec.scalars, job.spec.extra)]
        arguments = ", ".join([*(f"(ull)(j{n}b{k} + {shift})" for k, shift in enumerate(job.shifts)), *scalars])
        lines.append(f"  launch({blocks}, {BLOCK}, [=] {{ m{n}::run({arguments}); }});")
        for k, data in enumerate(job.buffers):
            lines.append(f'  {{ FILE* f = fopen("{folder}/j{n}b{k}.bin", "wb"); fwrite(j{n}b{k}, 1, {data.nbytes}, f); '
                         "fclose(f); }")
    lines.append("  return 0; }")
    _build_and_run("\n".join([*parts, *lines]) + "\n", folder)
    return [[np.frombuffer((folder / f"j{n}b{k}.bin").read_bytes(), np.uint8) for k in range(len(job.buffers))]
            for n, job in enumerate(jobs)]


def run_host_program(text: str, folder: Path) -> list[str]:
    """Compile C++ ``text`` with g++ (no contraction of a multiply and an add) and run it: the words it
    prints. Skips where this g++ has no _Float16."""
    source, program = folder / "host.cpp", folder / "host"
    source.write_text(text)
    compiled = subprocess.run(["g++", "-O1", "-ffp-contract=off", "-o", str(program), str(source)],
                              capture_output=True, text=True)
    if compiled.returncode and "_Float16" in compiled.stderr:
        pytest.skip("this g++ has no _Float16")
    assert compiled.returncode == 0, compiled.stderr[-3000:]
    return subprocess.run([str(program)], capture_output=True, text=True, check=True).stdout.split()


@dataclass(frozen=True)
class ReduceRun:
    """One REDUCE value reduction run on the host: ``spec``'s scan and finish kernels over the InputTensor's
    bytes ``data``, with the plan of a GPU of ``sm_count`` multiprocessors, or ``plan`` where given (another
    split of the same reduction: the words, and so the result, must not change)."""

    spec: KernelSpec
    x: TensorDesc
    out: TensorDesc
    data: np.ndarray
    sm_count: int = 1
    plan: Any = None


def run_reduce_batch_on_host(runs: Sequence[ReduceRun], folder: Path, words_only: bool = False) -> list[np.ndarray]:
    """The OutputTensor bytes of each run, all from one host program (each distinct kernel compiled once); the
    program fails where a run leaves a word of scratch nonzero (the next launch must find them zero). With
    ``words_only``: the scan alone, and each run's words of scratch (uint64) in place of its output."""
    from opendml.backends.cuda import reduce_plan, reduce_stages

    parts: list[str] = []
    lines: list[str] = []
    namespaces: dict[str, str] = {}

    def namespace(source: str, name: str) -> str:
        if source not in namespaces:
            namespaces[source] = name
            # each source's macros (FIN_DIGITS, the rounded functions' include guards) its own
            undefine = [f"#undef {macro}" for macro in re.findall(r"^#define (\w+)", source, re.MULTILINE)]
            parts.extend([f"namespace {name} {{", _body(source, "run"), "}", *undefine])
        return namespaces[source]

    for n, run in enumerate(runs):
        kept, reduced = reduce_plan.layouts(run.spec, run.x, run.out)
        assert run.spec.accumulation is not None
        plan = run.plan or reduce_plan.plan_for(run.spec, run.x, kept, reduced, run.sm_count)
        stages = reduce_stages.stages(run.spec, plan, kept, reduced, run.out.data_type, run.sm_count)
        scratch = reduce_stages.scratch(plan, reduce_plan.mode(run.spec))
        (folder / f"r{n}in.bin").write_bytes(run.data.tobytes())
        (folder / f"r{n}out.bin").write_bytes(bytes(run.out.total_tensor_size_in_bytes))
        lines += [
            "  {",
            f'  char* px = (char*)read_file("{folder}/r{n}in.bin", 0);',
            f'  char* pout = (char*)read_file("{folder}/r{n}out.bin", 0);',
            *(f"  ull* {name} = (ull*)calloc({words}, 8);" for name, words in scratch.items()),
        ]
        for k, stage in enumerate(stages[:-1] if words_only else stages):
            kernel = namespace(stage.source, f"r{n}k{k}")
            arguments = ", ".join(f"(ull){'p' + name if name in ('x', 'out') else name}" for name in stage.args)
            lines.append(f"  launch({stage.grid}, {BLOCK}, [=] {{ {kernel}::run({arguments}); }});")
        if words_only:
            words = scratch["words"]
            lines.append(f'  FILE* f = fopen("{folder}/r{n}out.bin", "wb"); fwrite(words, 8, {words}, f); fclose(f);')
        else:
            lines += [
                *(f"  for (int k = 0; k < {words}; ++k) if ({name}[k]) {{ fprintf(stderr, \"{name} word %d left at "
                  f"%llu\\n\", k, {name}[k]); return 3; }}" for name, words in scratch.items()),
                f'  FILE* f = fopen("{folder}/r{n}out.bin", "wb"); fwrite(pout, 1, {run.out.total_tensor_size_in_bytes}, f);'
                " fclose(f);",
            ]
        lines.append("  }")
    _build_and_run("\n".join([HARNESS, *parts, "int main() {", *lines, "  return 0; }"]) + "\n", folder)
    if words_only:
        return [np.frombuffer((folder / f"r{n}out.bin").read_bytes(), np.uint64) for n in range(len(runs))]
    return [np.frombuffer((folder / f"r{n}out.bin").read_bytes(), np.uint8) for n in range(len(runs))]


@dataclass(frozen=True)
class TopKRun:
    """One TOP_K selection run on the host: ``spec``'s kernels over the InputTensor's bytes ``data``, writing the
    values and the indices described by ``values`` and ``indices``, on a grid of ``grid`` blocks, with the plan of a
    GPU of ``sm_count`` multiprocessors."""

    spec: KernelSpec
    x: TensorDesc
    values: TensorDesc
    indices: TensorDesc
    data: np.ndarray
    grid: int = 3
    sm_count: int = 132


def run_top_k_batch_on_host(runs: Sequence[TopKRun], folder: Path) -> list[tuple[np.ndarray, np.ndarray]]:
    """The values' and the indices' bytes of each run, all from one host program (the plan of a GPU of
    ``run.sm_count`` multiprocessors: sequences too few for it cut into slices, then merged)."""
    from opendml.backends.cuda import top_k_c

    parts: list[str] = []
    lines: list[str] = []
    for n, run in enumerate(runs):
        assert run.spec.selection is not None
        plan = top_k_c.plan_top_k(run.spec, run.x, run.values, run.indices, run.sm_count)
        stages = [top_k_c.SLICES, top_k_c.MERGE] if plan.slices > 1 else [top_k_c.WHOLE]
        for m, stage in enumerate(stages):
            source = top_k_c.top_k_kernel(run.spec, plan, run.spec.selection.index_type, stage)
            parts.extend([f"namespace t{n}s{m} {{", _body(source, "run"), "}"])
        (folder / f"t{n}in.bin").write_bytes(run.data.tobytes())
        for name, desc in (("v", run.values), ("i", run.indices)):
            (folder / f"t{n}{name}.bin").write_bytes(bytes(desc.total_tensor_size_in_bytes))
        lines += [
            "  {",
            f'  char* px = (char*)read_file("{folder}/t{n}in.bin", 0);',
            f'  char* pv = (char*)read_file("{folder}/t{n}v.bin", 0);',
            f'  char* pi = (char*)read_file("{folder}/t{n}i.bin", 0);',
            f"  unsigned int* pc = (unsigned int*)calloc({max(1, plan.candidates)}, 4);",
            *(f"  launch({run.grid}, {BLOCK}, [=] {{ t{n}s{m}::run((ull)px, (ull)pv, (ull)pi, (ull)pc); }});"
              for m in range(len(stages))),
            f'  FILE* f = fopen("{folder}/t{n}v.bin", "wb"); fwrite(pv, 1, {run.values.total_tensor_size_in_bytes}, f);'
            " fclose(f);",
            f'  f = fopen("{folder}/t{n}i.bin", "wb"); fwrite(pi, 1, {run.indices.total_tensor_size_in_bytes}, f);'
            " fclose(f);",
            "  }",
        ]
    _build_and_run("\n".join([HARNESS, *parts, "int main() {", *lines, "  return 0; }"]) + "\n", folder)
    return [(np.frombuffer((folder / f"t{n}v.bin").read_bytes(), np.uint8),
             np.frombuffer((folder / f"t{n}i.bin").read_bytes(), np.uint8)) for n in range(len(runs))]
