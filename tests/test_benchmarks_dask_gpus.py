"""benchmarks/dask_gpus.py: a tiny run on CPU workers (NumPy chunks) measures and checks every row, and the
pieces it is made of (seeds, blocks, layouts, the slice check, the targets) do what it says.

The benchmark's numbers are not tested (they belong to the machine); what is tested is that it runs the
issue's rows on a real cluster of one worker per device, each seeing its own device, and that its checks
and verdicts can fail.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from tests.limits import HANG_SECONDS

pytest.importorskip("distributed", reason="distributed is not installed (pip install 'opendml[dask]')")
da = pytest.importorskip("dask.array", reason="Dask is not installed (pip install 'opendml[dask]')")

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "dask_gpus.py"
ROWS = ["argmin-0", "argmin-all", "chain-0"]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """One run of the script with 2 CPU workers at its tiny sizes (8 blocks of 64 KiB a row)."""
    out = tmp_path_factory.mktemp("dask-gpus")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, str(SCRIPT), "--cpu", "--gpus", "2", "--sizes", "tiny", "--out", str(out)],
                          env=env, capture_output=True, text=True, check=False, timeout=HANG_SECONDS)
    return done, out


def _lines(out: Path) -> tuple[list[str], list[dict[str, str]]]:
    text = (out / "dask-gpus-cpu-x2-tiny.csv").read_text().splitlines()
    header = [line for line in text if line.startswith("#")]
    return header, list(csv.DictReader(line for line in text if not line.startswith("#")))


def test_the_run_measures_every_row_on_both_workers_and_on_one(tiny_run) -> None:
    done, out = tiny_run
    assert done.returncode == 0, done.stdout + done.stderr
    _, lines = _lines(out)
    for row in ROWS:
        measured = {line["workers"]: line for line in lines if line["row"] == row}
        assert set(measured) == {"alone", "alone, reduction", "2", "1", "target"}, (row, measured)
        for workers in ("2", "1"):
            line = measured[workers]
            assert line["blocks"] == "8" and line["bytes"] == str(8 * 65536), line
            assert float(line["total_s"]) > 0, line
            assert float(line["gbs"]) == pytest.approx(8 * 65536 / float(line["total_s"]) / 1e9, rel=1e-2, abs=0.01)
            assert int(line["live_blocks_peak"]) >= 1, line  # every worker made blocks, and counted them
    shapes = {line["row"]: line["shape"] for line in lines if line["workers"] == "2"}
    assert shapes == {"argmin-0": "512x256", "argmin-all": "512x256", "chain-0": "2048x256"}  # 64 KiB blocks


def test_every_answer_was_checked_and_equal(tiny_run) -> None:
    done, out = tiny_run
    _, lines = _lines(out)
    checks = {(line["row"], line["workers"]): line["check"] for line in lines if line["workers"] in ("2", "1")}
    assert checks == {**{(row, "2"): "slice equal; whole equal to 1 worker's" for row in ROWS},
                      **{(row, "1"): "slice equal" for row in ROWS}}
    assert "DIFFERS" not in done.stdout


def test_each_worker_sees_its_own_device(tiny_run) -> None:
    _, out = tiny_run
    header, _ = _lines(out)
    (workers,) = [line for line in header if line.startswith("# workers: ")]
    seen = sorted(part.rsplit("=", 1)[1] for part in workers.removeprefix("# workers: ").split("; "))
    assert seen == ["0", "1"], workers


def test_the_targets_are_stated_with_a_verdict_and_progress_goes_to_stderr(tiny_run) -> None:
    done, out = tiny_run
    _, lines = _lines(out)
    for row in ROWS:
        verdicts = [line["check"] for line in lines if line["row"] == row and line["workers"] == "target"]
        assert len(verdicts) == 2, verdicts  # against the bare figure and the scaling (no memory verdict on CPUs)
        assert verdicts[0].startswith(">= 0.8 x 2 x one worker alone")
        assert verdicts[1].startswith(">= 0.8 x 2 x the 1-worker Dask run")
        assert all(v.endswith((" PASS", " FAIL")) for v in verdicts), verdicts
    assert "PASS" in done.stdout or "FAIL" in done.stdout
    assert "starting 2 workers" in done.stderr and "starting 2 workers" not in done.stdout
    if importlib.util.find_spec("matplotlib") is not None:
        assert (out / "dask-gpus-cpu-x2-tiny.png").stat().st_size > 0


# The pieces, in this process.


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("benchmark_dask_gpus", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def _info(location: tuple[int, int], shape: tuple[int, int]) -> dict[Any, Any]:
    return {None: {"chunk-location": location, "chunk-shape": shape}}


def test_a_block_is_made_from_its_place_alone(bench: ModuleType) -> None:
    one = bench.make_block("cpu", "float32", 7, block_info=_info((1, 0), (3, 5)))
    assert one.shape == (3, 5) and one.dtype == np.float32
    assert np.array_equal(one, bench.make_block("cpu", "float32", 7, block_info=_info((1, 0), (3, 5))))
    assert not np.array_equal(one, bench.make_block("cpu", "float32", 7, block_info=_info((0, 1), (3, 5))))
    assert not np.array_equal(one, bench.make_block("cpu", "float32", 8, block_info=_info((1, 0), (3, 5))))
    codes = bench.make_block("cpu", "uint8", 7, block_info=_info((0, 0), (64, 256)))
    assert codes.dtype == np.uint8 and codes.min() == 0 and codes.max() == 255


def test_the_elements_are_the_index_hash_the_script_states(bench: ModuleType) -> None:
    """Two elements worked by hand from the stated hash (x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15;
    x *= 0x846ca68b; x ^= x >> 16, applied to index * 0x9e3779b9 + key), in Python integers."""

    def mix(x: int) -> int:
        x ^= x >> 16
        x = (x * 0x7FEB352D) & 0xFFFFFFFF
        x ^= x >> 15
        x = (x * 0x846CA68B) & 0xFFFFFFFF
        return x ^ (x >> 16)

    seed = 0x1234_5678_9ABC_DEF0
    key = (seed ^ (seed >> 32)) & 0xFFFFFFFF
    values = bench.fill_cpu((2, 3), "float32", seed)
    word = mix((4 * 0x9E3779B9 + key) & 0xFFFFFFFF)
    assert values[1, 1] == np.float32(((word >> 8) + 1) / 2**24)
    codes = bench.fill_cpu((1, 7), "uint8", seed)
    word = mix((1 * 0x9E3779B9 + key) & 0xFFFFFFFF)
    assert codes[0, 5] == (word >> 8) & 0xFF  # byte 1 of word 1, little-endian
    assert values.min() > 0 and values.max() <= 1


def test_the_gpu_makes_the_same_blocks_as_the_cpu(bench: ModuleType) -> None:
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed: the GPU's blocks are checked on a GPU")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError:
        pytest.skip("no CUDA device: the GPU's blocks are checked on a GPU")
    # Element counts of every remainder mod 4, and one past a launch's threads (the kernel strides over it).
    for shape, dtype in (((513, 257), "float32"), ((1001, 37), "uint8"), ((1, 3), "uint8"), ((2, 7), "uint8"),
                         ((1, 6), "float32"), ((2049, 4099), "float32"), ((3001, 4097), "uint8")):
        assert np.array_equal(bench.fill_cuda(shape, dtype, 99).get(), bench.fill_cpu(shape, dtype, 99)), (shape, dtype)


def test_a_200_gib_array_of_65536_columns_is_819200_rows_of_whole_1_gib_blocks(bench: ModuleType) -> None:
    lay = bench.layout(200 * 2**30, 2**30, 65536, 4)
    assert (lay.block_rows, lay.blocks, lay.shape) == (4096, 200, (819200, 65536))
    assert lay.nbytes == 200 * 2**30
    codes = bench.layout(200 * 2**30, 2**30, 65536, 1)
    assert codes.shape == (3276800, 65536)
    assert bench.layout(1000, 2**30, 256, 4).blocks == 2  # at least two blocks, so that the merges run
    assert bench.layout(8 * 2**32, 2**32, 65536, 1).block_rows == 65535  # a tensor holds at most 2^32 - 1 elements


def test_the_data_are_the_blocks_made_where_they_run(bench: ModuleType) -> None:
    row = bench.ROWS[0]
    lay = bench.layout(8 * 4096, 4096, 64, 4)  # 8 blocks of [16, 64]
    x = bench.data("cpu", row, lay, 3)
    assert x.chunks == ((16,) * 8, (64,))
    whole = x.compute(scheduler="sync")
    assert np.array_equal(whole[32:48], bench.fill_cpu((16, 64), "float32", bench.block_seed(3, (2, 0))))


class _SyncClient:
    """What check_slice asks of a client, computed in this process."""

    class _Done:
        def __init__(self, value: Any) -> None:
            self.value = value

        def result(self) -> Any:
            return self.value

        def release(self) -> None:
            pass

    def compute(self, graph: Any, workers: Any = None, allow_other_workers: bool = False) -> _Done:
        return self._Done(graph.compute(scheduler="sync"))


@pytest.mark.parametrize("key", ROWS)
def test_the_slice_check_is_equal_on_the_same_data_and_differs_on_other_data(bench: ModuleType, key: str) -> None:
    row = next(r for r in bench.ROWS if r.key == key)
    lay = bench.layout(4 * 16384, 16384, 64, row.itemsize)
    x = bench.data("cpu", row, lay, 5)
    operands = bench.chain_operands("cpu", 64)
    assert bench.check_slice(_SyncClient(), "cpu", row, lay, x, 5, operands) == "equal"
    assert bench.check_slice(_SyncClient(), "cpu", row, lay, x, 6, operands).startswith("DIFFERS")


def _measured(bench: ModuleType, workers: int, total_s: float, pool: int) -> Any:
    lay = bench.layout(100 * 10**9, 10**9, 1000, 4)  # 100 blocks of 1e9 bytes
    memory = [{"pool_peak": pool, "pool_high_water": pool, "device_peak": pool, "device_start": 0,
               "live_blocks": 1, "blocks_made": 50}] * workers
    return bench.Measurement(bench.ROWS[0], lay, workers, total_s, memory, np.zeros((1, 1000)))


def test_the_targets_hold_at_0_8_x_n_x_one_gpu_and_a_few_chunks(bench: ModuleType) -> None:
    bare = bench.Bare(bench.ROWS[0], (250, 1000), 5e-6, 1e-5)  # 1e6 bytes made and reduced in 10 us: 100 GB/s
    one = _measured(bench, 1, 1.0, 2 * 10**9)  # 1e11 bytes in 1 s: 100 GB/s
    fast = _measured(bench, 2, 0.6, 2 * 10**9)  # 1e11 bytes in 0.6 s: 166.7 GB/s = 0.83 x 2 x 100
    slow = _measured(bench, 2, 0.7, 5 * 10**9)  # 1e11 bytes in 0.7 s: 142.9 GB/s = 0.71 x 2 x 100
    assert [v.passed for v in bench.verdicts("cuda", [fast, one], bare)] == [True, True, True]
    assert [v.passed for v in bench.verdicts("cuda", [slow, one], bare)] == [False, False, False]
    assert [v.passed for v in bench.verdicts("cuda", [slow, one], bare, threads=3)] == [False, False, True]
    assert len(bench.verdicts("cpu", [fast, one], bare)) == 2  # no memory verdict on the resident set
    slower_alone = bench.Bare(bench.ROWS[0], (250, 1000), 5e-6, 2e-5)  # 50 GB/s made and reduced
    assert [v.passed for v in bench.verdicts("cuda", [slow, one], slower_alone)] == [True, False, False]
    scaled = _measured(bench, 2, 0.55, 10**9)  # 0.91 x 2 x the 1-GPU run, but 0.91 x 2 x alone too
    assert "0.91 x 2 x 1 GPU" in str(bench.verdicts("cuda", [scaled, one], bare)[1])


def test_a_worker_counts_the_blocks_alive_in_it(bench: ModuleType) -> None:
    live = bench.LiveBlocks()
    first, second = np.ones(3), np.ones(3)
    live.made(first)
    live.made(second)
    del first
    live.made(np.ones(3))  # made and dropped at once
    assert (live.now, live.peak) == (1, 2)
    del second
    assert live.now == 0


def test_worker_k_sees_the_kth_visible_gpu(bench: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    specs = bench.worker_specs("cuda", 2, 1)
    assert [s["options"]["env"]["CUDA_VISIBLE_DEVICES"] for s in specs.values()] == ["2", "3"]
    with pytest.raises(SystemExit, match="only 2 GPUs are visible"):
        bench.worker_specs("cuda", 3, 1)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert [s["options"]["env"]["CUDA_VISIBLE_DEVICES"] for s in bench.worker_specs("cuda", 3, 1).values()] \
        == ["0", "1", "2"]
