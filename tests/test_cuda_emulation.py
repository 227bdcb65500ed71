"""The host emulation of CUDA (tests/cuda_emulation.py) itself: its fibers run a block's threads in a new order
at each barrier, so that a kernel missing a ``__syncthreads`` reads another thread's shared value unwritten and
the host run finds it, and a barrier no thread can open stops the program instead of hanging it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests import cuda_emulation

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")

# Each of a block's 256 threads writes its index to shared memory, then thread 0 adds them up (with or without
# the barrier between) and, over 8 blocks, the program prints the sums it got.
PROGRAM = r"""
static unsigned sums[8];
static void kernel() {
    __shared__ unsigned values[256];
    values[threadIdx.x] = threadIdx.x + 1;
    SYNC
    if (threadIdx.x == 0) {
        unsigned total = 0;
        for (int k = 0; k < 256; ++k) total += values[k];
        sums[blockIdx.x] = total;
    }
    __syncthreads();
    values[threadIdx.x] = 0;
}
int main() {
    launch(8, 256, [] { kernel(); });
    for (int b = 0; b < 8; ++b) printf("%u\n", sums[b]);
    return 0;
}
"""


def _run(tmp_path: Path, sync: str) -> subprocess.CompletedProcess[str]:
    binary = tmp_path / "program"
    source = tmp_path / "program.cpp"
    source.write_text(cuda_emulation.HARNESS + PROGRAM.replace("SYNC", sync))
    subprocess.run(["g++", *cuda_emulation.FLAGS, "-o", str(binary), str(source)], check=True)
    return subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)


def _sums(tmp_path: Path, sync: str) -> list[int]:
    ran = _run(tmp_path, sync)
    assert ran.returncode == 0, ran.stderr
    return [int(line) for line in ran.stdout.split()]


@needs_gxx
def test_a_block_barrier_orders_the_shared_writes_before_the_reads(tmp_path: Path) -> None:
    assert _sums(tmp_path, "__syncthreads();") == [256 * 257 // 2] * 8


@needs_gxx
def test_a_missing_block_barrier_is_found(tmp_path: Path) -> None:
    sums = _sums(tmp_path, "")
    assert any(total != 256 * 257 // 2 for total in sums), sums


@needs_gxx
def test_a_barrier_no_thread_can_open_stops_the_program(tmp_path: Path) -> None:
    ran = _run(tmp_path, "if (threadIdx.x == 0) return;")  # thread 0 leaves the others at a barrier
    assert ran.returncode != 0
    assert "deadlock: 255 threads wait at a barrier no thread can open" in ran.stderr
