"""benchmarks/dask.py: a tiny run in one process (the workers as threads), and the checks it relies on.

The benchmark's numbers are not tested (they belong to the machine); what is tested is that every row runs
on the cluster and in the client, that its checks hold (opendml on Dask arrays gives single-process
opendml's bits, Dask's answers agree, the placed minimum is found), and that the checks themselves tell a
wrong answer from a right one.
"""

from __future__ import annotations

import csv
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

pytest.importorskip("dask.array", reason="Dask is not installed (pip install 'opendml[dask]'): the benchmark needs it")
pytest.importorskip("distributed", reason="distributed is not installed (pip install 'opendml[dask]'): the benchmark "
                    "runs on a LocalCluster")

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "dask.py"
ROWS = ["1", "2", "3", "4", "5"]


@pytest.fixture(scope="module")
def bench() -> Iterator[ModuleType]:
    """The script as a module, under a name that is not ``dask``."""
    spec = importlib.util.spec_from_file_location("benchmark_dask", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


@pytest.fixture(scope="module")
def tiny_run(bench: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> tuple[int, list[dict[str, str]]]:
    """One run at the tiny sizes on a LocalCluster of 2 workers as threads of this process; its exit status
    and the lines of its CSV (header comments apart)."""
    out = tmp_path_factory.mktemp("dask")
    status = bench.main(["--sizes", "tiny", "--in-process", "--repeats", "1", "--out", str(out)])
    lines = [line for line in (out / "dask-tiny.csv").read_text().splitlines() if not line.startswith("#")]
    return status, list(csv.DictReader(lines))


def by_row(lines: list[dict[str, str]], row: str) -> dict[str, dict[str, str]]:
    return {line["implementation"]: line for line in lines if line["row"] == row and line["implementation"] != "target"}


def test_every_row_runs_on_the_cluster_and_in_the_client(tiny_run) -> None:
    status, lines = tiny_run
    assert status == 0
    assert sorted({line["row"] for line in lines}) == ROWS
    for row in ROWS:
        impls = by_row(lines, row)
        expected = {"opendml-dask", "floor", "opendml"} | ({"dask"} if row != "3" else set())  # da.argmin: 1 or all axes
        assert expected <= set(impls), (row, impls)
        for name in expected:
            assert float(impls[name]["median_s"]) > 0 and impls[name]["runs"] == "1", impls[name]
        assert impls["opendml-dask"]["where"] == impls["floor"]["where"] == "cluster"
        assert impls["opendml"]["where"] == "client"
        assert impls["floor"]["check"].startswith("n/a: the floor, every block read once")


def test_opendml_on_dask_gives_single_process_bits_and_dask_agrees(tiny_run) -> None:
    _, lines = tiny_run
    for row in ROWS:
        impls = by_row(lines, row)
        assert impls["opendml"]["check"] == "reference"
        assert impls["opendml-dask"]["check"].startswith("exact"), impls["opendml-dask"]
        if "dask" in impls:
            assert impls["dask"]["check"].startswith(("equal", "exact")), impls["dask"]
    placed = 50 * 80 + 7  # the tiny huge array [64, 80] has its one 0 at [50, 7]
    assert f"INT64 index {placed}, value 0" in by_row(lines, "5")["opendml-dask"]["check"]


def test_each_row_states_the_issue_targets(tiny_run) -> None:
    _, lines = tiny_run
    verdicts = {row: [line["check"] for line in lines if line["row"] == row and line["implementation"] == "target"]
                for row in ROWS}
    assert all(v.split()[0] in ("PASS", "FAIL", "n/a") for vs in verdicts.values() for v in vs)
    assert any(">= 3x faster than da.argmin over axis 0" in v for v in verdicts["1"])
    for row in ["1", "2", "3", "4"]:
        assert any(">= 0.7x single-process opendml's throughput" in v for v in verdicts[row]), row
    for row in ROWS:
        assert any("peak worker memory <= 4 blocks" in v for v in verdicts[row]), row
    assert any(v.startswith("PASS INT64 index of the minimum placed at 4007") for v in verdicts["5"])


def test_the_huge_array_has_one_zero_where_placed_whatever_the_block(bench: ModuleType) -> None:
    sizes = bench.SIZES["tiny"]
    data = bench.make_data("huge", sizes, 1024, seed=3)  # blocks of 1 KiB: the 0 lies in an inner block
    assert data.array.npartitions > 4
    x = data.array.compute(scheduler="sync")
    assert x.dtype == np.uint8 and x.shape == sizes.huge
    assert np.flatnonzero(x == 0).tolist() == [bench.flat_position(sizes)]
    assert int(x.reshape(-1).max()) > 200  # values spread over [1, 255], not a constant


def test_past_2_32_elements_single_process_is_refused_and_int32_indices_too(bench: ModuleType) -> None:
    import dask.array as da

    shape = bench.SIZES["issue"].huge
    assert bench.flat_position(bench.SIZES["issue"]) > 2**32
    assert "Sizes must hold at most 4294967295 elements" in bench.single_tensor_refusal(shape)
    lazy = da.zeros(shape, dtype=np.uint8, chunks=(16384, 16384))  # never computed: the rule is checked on the client
    verdict = bench.int32_output(lazy)
    assert verdict.startswith("refused on the client: ARGMIN: OutputTensor.DataType must hold every index"), verdict


def test_dask_indices_at_equal_elements_are_ties_and_at_larger_ones_differ(bench: ModuleType) -> None:
    x = np.array([[3.0, 1.0, 2.0], [1.0, 1.0, 0.5], [0.0, 4.0, 0.5]], np.float32)
    reference = np.array([[2, 0, 1]])  # opendml's: the first minimum of each column
    assert bench.compare_indices(x, (0,), reference, np.array([2, 0, 1])) == "equal indices"
    assert "1 ties broken another way" in bench.compare_indices(x, (0,), reference, np.array([2, 1, 1]))
    assert bench.compare_indices(x, (0,), reference, np.array([1, 0, 1])).startswith("DIFFERS")
    flat = np.array([[6]])
    assert "ties broken" not in bench.compare_indices(x, (0, 1), flat, np.int64(6))
    assert bench.compare_indices(x, (0, 1), flat, np.int64(5)).startswith("DIFFERS")


def test_the_column_checksum_sees_one_flipped_bit_and_not_the_blocks(bench: ModuleType) -> None:
    y = np.random.default_rng(0).standard_normal((12, 5)).astype(np.float32)
    whole = bench.column_xor(y)
    assert np.array_equal(np.bitwise_xor.reduce(np.vstack([bench.column_xor(y[:5]), bench.column_xor(y[5:])])),
                          whole[0])
    flipped = y.copy()
    flipped.view(np.uint32)[7, 3] ^= 1
    assert bench.same_bits(whole, bench.column_xor(flipped), "checksums").startswith("DIFFERS")
    assert bench.same_bits(np.float32([0.0]), np.float32([-0.0]), "values").startswith("DIFFERS")  # bits, not ==
    assert bench.same_bits((np.int64([1]), np.float32([2])), (np.int64([1]), np.float32([2])), "both") \
        == "exact (both, bit for bit)"
