"""The generated ARGMIN kernels run on the host: each CUDA thread a std::thread, warp shuffles and
``__syncthreads`` through barriers, the PTX helpers as host C++ of the same IEEE meaning. What this checks is
the templates' index arithmetic (plans, layouts, each operand's loads, the combine pass), without a GPU."""

from __future__ import annotations

import math
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from opendml.backends.cuda import argmin_c, expr_c
from opendml.backends.cuda.codegen import PRELUDE
from opendml.backends.cuda.plan import BLOCK, ArgMinPlan
from opendml.kernels.spec import KernelSpec
from opendml.tensor import TensorDesc

HARNESS = r"""
// Host emulation of the CUDA features the ARGMIN templates use: one std::thread per CUDA thread.
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#include <functional>
typedef unsigned long long ull; typedef long long ll;
#define INVALID_INDEX 0xFFFFFFFFFFFFFFFFull
#define __device__
#define __forceinline__ inline
#define __global__
#define __shared__ static
struct dim3 { unsigned int x = 1, y = 1, z = 1; };
thread_local dim3 threadIdx, blockIdx;
dim3 blockDim, gridDim;
struct alignas(16) uint4 { unsigned int x, y, z, w; };
struct alignas(8) uint2 { unsigned int x, y; };
static std::barrier<>* block_barrier;
static std::barrier<>* warp_barriers[32];
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
static void launch(unsigned grid, unsigned block, std::function<void()> body) {
    gridDim.x = grid; blockDim.x = block;
    for (unsigned b = 0; b < grid; ++b) {
        std::barrier<> bar(block); block_barrier = &bar;
        std::vector<std::barrier<>*> warps;
        for (unsigned w = 0; w < (block + 31) / 32; ++w) warp_barriers[w] = new std::barrier<>(block < 32 ? block : 32);
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < block; ++t)
            threads.emplace_back([=] { threadIdx.x = t; blockIdx.x = b; body(); });
        for (auto& th : threads) th.join();
        for (unsigned w = 0; w < (block + 31) / 32; ++w) delete warp_barriers[w];
    }
}
static void* read_file(const char* path, size_t extra) {
    FILE* f = fopen(path, "rb"); fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    char* p = (char*)aligned_alloc(256, ((n + extra + 256) / 256) * 256);
    memset(p, 0, ((n + extra + 256) / 256) * 256);
    if (fread(p + extra, 1, n, f) != (size_t)n) abort(); fclose(f); return p;
}
template <typename T> static T from_bits(ull b) { T v; memcpy(&v, &b, sizeof(T)); return v; }
"""
# The min-and-ballot scan's PTX helpers (argmin_c.FLOAT_HELPERS) as host C++: a NaN-ignoring min (either
# zero of a -0.0/+0.0 pair, as min.f32 may give) and IEEE equality.
HOST_FLOAT_HELPERS = r"""static float vmin(float a, float b) { return a != a ? b : (b != b ? a : (b < a ? b : a)); }
static bool eq(float a, float b) { return a == b; }
"""
C_SCALAR = {np.float32: "float", np.int32: "int", np.uint32: "unsigned int", np.int64: "ll", np.uint64: "ull"}


def _body(source: str, name: str) -> str:
    """A kernel source as a host function: the prelude (PTX helpers) left to the harness."""
    assert source.startswith(PRELUDE)
    body = source[len(PRELUDE):].replace(argmin_c.FLOAT_HELPERS, HOST_FLOAT_HELPERS)
    return body.replace('extern "C" __global__ void opendml_kernel', f"void {name}")


def _literal(value: np.generic) -> str:
    array = np.asarray(value)
    return f"from_bits<{C_SCALAR[array.dtype.type]}>({int(array.view(f'u{array.itemsize}'))}ull)"


def _grid(plan: ArgMinPlan, sm_count: int) -> int:
    """The blocks CudaBackend.run launches (grid-stride loops: any count gives the same result)."""
    items = plan.items
    if plan.family == "columns":
        return max(1, min(math.ceil(items / BLOCK), sm_count * 32))
    if plan.group == 32:
        return max(1, min(math.ceil(items * 32 / BLOCK), sm_count * 32))
    return max(1, min(items, sm_count * 32))


def program(spec: KernelSpec, descs: Sequence[TensorDesc | None], out: TensorDesc, folder: Path,
            shifts: Sequence[int], sm_count: int = 1) -> tuple[str, ArgMinPlan]:
    """A host program running ``spec``'s kernels as CudaBackend would (the element-by-element kernel where
    an operand's address, shifted by ``shifts`` bytes, fits no load), reading operand k from ``in{k}.bin``
    and writing ``out.bin``; and the plan it runs."""
    assert spec.reduction is not None
    x = descs[0]
    assert x is not None
    kept, reduced = argmin_c.layouts(spec, descs, out)
    plan = argmin_c.plan(spec, x, kept, reduced, sm_count)
    if any(shifts[k] % alignment for k, alignment in argmin_c.alignments(spec, plan, kept, reduced)):
        plan = plan.scalar()
    direction = spec.reduction.direction
    parts = [HARNESS, "namespace m {", _body(argmin_c.argmin_kernel(spec, plan, direction, kept, reduced), "run"), "}"]
    if plan.splits > 1:
        parts += ["namespace c {", _body(argmin_c.argmin_combine_kernel(spec, plan, direction, kept), "run"), "}"]
    size, partials = out.total_tensor_size_in_bytes, plan.outputs * plan.splits * 8
    lines = ["int main() {"]
    lines += [f'  char* p{k} = (char*)read_file("{folder}/in{k}.bin", {shift}) + {shift};' for k, shift in enumerate(shifts)]
    lines.append(f"  char* pout = (char*)read_file(\"{folder}/out.bin\", 0);")
    lines.append(f"  char* pv = (char*)aligned_alloc(256, {partials // 256 * 256 + 256}); "
                 f"char* pi = (char*)aligned_alloc(256, {partials // 256 * 256 + 256});")
    scalars = [_literal(v) for v in expr_c.launch_scalars(spec.element, spec.scalars)]
    arguments = ", ".join([*(f"(ull)p{k}" for k in range(len(shifts))), "(ull)pout", "(ull)pv", "(ull)pi", *scalars])
    lines.append(f"  launch({_grid(plan, sm_count)}, {plan.block}, [=] {{ m::run({arguments}); }});")
    if plan.splits > 1:
        blocks = max(1, min(math.ceil(plan.outputs / (BLOCK // plan.combine_group)), sm_count * 32))
        lines.append(f"  launch({blocks}, {BLOCK}, [=] {{ c::run((ull)pv, (ull)pi, (ull)pout); }});")
    lines.append(f'  FILE* f = fopen("{folder}/out.bin", "wb"); fwrite(pout, 1, {size}, f); fclose(f); return 0; }}')
    return "\n".join(parts + lines) + "\n", plan


def run_on_host(spec: KernelSpec, descs: Sequence[TensorDesc | None], out: TensorDesc, inputs: Sequence[np.ndarray],
                folder: Path, shifts: Sequence[int]) -> tuple[np.ndarray, ArgMinPlan]:
    """The output bytes of ``spec``'s kernels run on the host over ``inputs``, and the plan that ran."""
    for k, data in enumerate(inputs):
        (folder / f"in{k}.bin").write_bytes(data.tobytes())
    (folder / "out.bin").write_bytes(bytes(out.total_tensor_size_in_bytes))
    source, plan = program(spec, descs, out, folder, shifts)
    (folder / "kernels.cpp").write_text(source)
    binary = folder / "kernels"
    built = subprocess.run(["g++", "-std=c++20", "-O1", "-ffp-contract=off", "-pthread", "-w", "-o", str(binary),
                            str(folder / "kernels.cpp")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    subprocess.run([str(binary)], check=True, timeout=600)
    return np.frombuffer((folder / "out.bin").read_bytes(), np.uint8), plan
