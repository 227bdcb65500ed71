"""The generated ARGMIN and element-wise kernels run on the host: each CUDA thread a std::thread, warp
shuffles and ``__syncthreads`` through barriers, the PTX helpers as host C++ of the same IEEE meaning. What
this checks is the templates' index arithmetic (plans, layouts, each operand's loads, each output's stores,
the combine pass), without a GPU."""

from __future__ import annotations

import math
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from opendml.backends.cuda import argmin_c, elementwise_c, expr_c
from opendml.backends.cuda.codegen import PRELUDE
from opendml.backends.cuda.plan import BLOCK, ArgMinPlan
from opendml.backends.layout import Layout
from opendml.kernels.spec import KernelSpec
from opendml.tensor import TensorDesc

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
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) float2 { float x, y; };
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
""" + PTX_HELPERS + r"""static void launch(unsigned grid, unsigned block, std::function<void()> body) {
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
static size_t last_size;  // the size of the file read last
static void* read_file(const char* path, size_t extra) {
    FILE* f = fopen(path, "rb"); fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET); last_size = n;
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
    body = body.replace(expr_c.ARITHMETIC, HOST_ARITHMETIC)
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
            shifts: Sequence[int], sm_count: int = 1, extra_outputs: Sequence[TensorDesc] = (),
            extra_shifts: Sequence[int] = ()) -> tuple[str, ArgMinPlan]:
    """A host program running ``spec``'s kernels as CudaBackend would (the element-by-element kernel where
    an operand's address, shifted by ``shifts`` bytes, or an extra output's, shifted by ``extra_shifts``,
    fits no load or store), reading operand k from ``in{k}.bin``, writing ``out.bin`` and each extra output
    j (1, 2...) into the bytes of ``out{j}.bin``; and the plan it runs."""
    assert spec.reduction is not None
    x = descs[0]
    assert x is not None
    kept, reduced = argmin_c.layouts(spec, descs, out, extra_outputs)
    plan = argmin_c.plan(spec, x, kept, reduced, sm_count)
    addresses = [*shifts, *extra_shifts]
    if any(addresses[k] % alignment for k, alignment in argmin_c.alignments(spec, plan, kept, reduced)):
        plan = plan.scalar()
    direction = spec.reduction.direction
    parts = [HARNESS, "namespace m {", _body(argmin_c.argmin_kernel(spec, plan, direction, kept, reduced), "run"), "}"]
    if plan.splits > 1:
        parts += ["namespace c {", _body(argmin_c.argmin_combine_kernel(spec, plan, direction, kept), "run"), "}"]
    size, partials = out.total_tensor_size_in_bytes, plan.outputs * plan.splits * 8
    lines = ["int main() {"]
    lines += [f'  char* p{k} = (char*)read_file("{folder}/in{k}.bin", {shift}) + {shift};' for k, shift in enumerate(shifts)]
    lines.append(f"  char* pout = (char*)read_file(\"{folder}/out.bin\", 0);")
    lines += [f'  char* pout{j} = (char*)read_file("{folder}/out{j}.bin", 0) + {shift}; size_t n{j} = last_size;'
              for j, shift in enumerate(extra_shifts, start=1)]
    lines.append(f"  char* pv = (char*)aligned_alloc(256, {partials // 256 * 256 + 256}); "
                 f"char* pi = (char*)aligned_alloc(256, {partials // 256 * 256 + 256});")
    scalars = [_literal(v) for v in expr_c.launch_scalars(spec.element, spec.scalars, spec.extra)]
    extras = [f"(ull)pout{j}" for j in range(1, len(extra_shifts) + 1)]
    arguments = ", ".join([*(f"(ull)p{k}" for k in range(len(shifts))), "(ull)pout", *extras, "(ull)pv", "(ull)pi",
                           *scalars])
    lines.append(f"  launch({_grid(plan, sm_count)}, {plan.block}, [=] {{ m::run({arguments}); }});")
    if plan.splits > 1:
        blocks = max(1, min(math.ceil(plan.outputs / (BLOCK // plan.combine_group)), sm_count * 32))
        lines.append(f"  launch({blocks}, {BLOCK}, [=] {{ c::run((ull)pv, (ull)pi, (ull)pout); }});")
    lines.append(f'  FILE* f = fopen("{folder}/out.bin", "wb"); fwrite(pout, 1, {size}, f); fclose(f);')
    for j, shift in enumerate(extra_shifts, start=1):
        lines.append(f'  f = fopen("{folder}/out{j}.bin", "wb"); fwrite(pout{j} - {shift}, 1, n{j}, f); fclose(f);')
    lines.append("  return 0; }")
    return "\n".join(parts + lines) + "\n", plan


def run_on_host(spec: KernelSpec, descs: Sequence[TensorDesc | None], out: TensorDesc, inputs: Sequence[np.ndarray],
                folder: Path, shifts: Sequence[int], extra_outputs: Sequence[TensorDesc] = (),
                extra_bytes: Sequence[np.ndarray] = (), extra_shifts: Sequence[int] = ()
                ) -> tuple[list[np.ndarray], ArgMinPlan]:
    """The output bytes of ``spec``'s kernels run on the host over ``inputs`` (the OutputTensor's, then each
    extra output's: ``extra_bytes`` as the kernels leave them, preceded by ``extra_shifts`` bytes), and
    the plan that ran."""
    for k, data in enumerate(inputs):
        (folder / f"in{k}.bin").write_bytes(data.tobytes())
    (folder / "out.bin").write_bytes(bytes(out.total_tensor_size_in_bytes))
    shifted = list(extra_shifts) or [0] * len(extra_outputs)
    for j, (data, shift) in enumerate(zip(extra_bytes, shifted), start=1):
        (folder / f"out{j}.bin").write_bytes(bytes(shift) + data.tobytes())
    source, plan = program(spec, descs, out, folder, shifts, 1, extra_outputs, shifted)
    _build_and_run(source, folder)
    written = [np.frombuffer((folder / f"out{j}.bin").read_bytes()[shift:], np.uint8)
               for j, shift in enumerate(shifted, start=1)]
    return [np.frombuffer((folder / "out.bin").read_bytes(), np.uint8), *written], plan


def _build_and_run(source: str, folder: Path) -> None:
    (folder / "kernels.cpp").write_text(source)
    binary = folder / "kernels"
    built = subprocess.run(["g++", "-std=c++20", "-O1", "-ffp-contract=off", "-pthread", "-w", "-o", str(binary),
                            str(folder / "kernels.cpp")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    subprocess.run([str(binary)], check=True, timeout=600)


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
