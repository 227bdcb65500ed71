"""opendml on a real ``distributed.LocalCluster`` of 2 worker processes of 1 thread each, started once for the
module: devices, compiled operators and compiled graphs sent to the workers and used there (rebuilt once per
worker process), the workers' share of the cores, and the functional API on Dask arrays made on the workers.

The workers import this module by name to run its functions (they are pickled by reference).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from elementwise_oracle import arg_of
from helpers import bits, packed_bytes

import opendml as dml
from opendml import graph as g
from opendml import thread_count

distributed = pytest.importorskip("distributed", reason="distributed is not installed (pip install 'opendml[dask]')")
da = pytest.importorskip("dask.array", reason="Dask is not installed (pip install 'opendml[dask]')")

NEEDS_DASK_ARRAYS = "opendml.dask (the functional API on Dask arrays) is not part of this build yet"


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """The cluster, its workers started without OPENDML_NUM_THREADS (so that they take their share)."""
    saved = os.environ.pop(thread_count.ENV_THREADS, None)
    try:
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                      silence_logs=40) as cluster, distributed.Client(cluster) as client:
            yield client
    finally:
        if saved is not None:
            os.environ[thread_count.ENV_THREADS] = saved


def _workers(client: Any) -> list[str]:
    workers = sorted(client.scheduler_info()["workers"])
    assert len(workers) == 2
    return workers


# --- run on the workers --------------------------------------------------------------------------------------

def _input(seed: int) -> np.ndarray:
    """FLOAT32 [6, 50] with ties and NaN, made from a seed wherever it runs (never sent)."""
    x = np.random.default_rng(seed).integers(-4, 4, (6, 50)).astype(np.float32)
    x[:, ::7] = np.nan
    return x


def _execute(op: dml.CompiledOperator, x: np.ndarray) -> np.ndarray:
    device = op.operator.device
    out_desc = op.operator.tensor("OutputTensor")
    out = device.create_buffer(out_desc.total_tensor_size_in_bytes)
    op.execute([device.buffer_from(packed_bytes(x, op.operator.tensor("InputTensor").total_tensor_size_in_bytes))],
               [out])
    return out.to_numpy()[:out_desc.element_count * 8].view(np.int64).reshape(out_desc.sizes)


def _run_sent(device: dml.Device, op: dml.CompiledOperator, graph: dml.CompiledGraph, seed: int) -> dict[str, Any]:
    """What a worker makes of a device, a compiled ARGMIN and a compiled graph sent to it."""
    x = _input(seed)
    out = device.create_buffer(6 * 8)
    graph.execute([device.buffer_from(x)], [out])
    return {"process": os.getpid(), "objects": (id(device), id(op), id(graph)),
            "one device": op.operator.device is device and graph.device is device, "threads": device.threads,
            "argmin": _execute(op, x), "graph": out.to_numpy().view(np.int64),
            "clip": dml.clip(x, -1.0, 2.0, device=device)}


def _share_here() -> dict[str, int]:
    """Run on each worker (client.run): its cores, the worker processes it sees, and a new device's threads."""
    from opendml import worker_share

    return {"cores": thread_count.available_cores(), "processes": worker_share._worker_processes(),
            "threads": dml.Device("cpu", "6_3").threads}


def _threads_of(device: dml.Device) -> int:
    return device.threads


# --- tests ---------------------------------------------------------------------------------------------------

def _argmin_and_graph(device: dml.Device) -> tuple[dml.CompiledOperator, dml.CompiledGraph]:
    x_desc = dml.TensorDesc("FLOAT32", [6, 50])
    op = device.compile_operator(device.create_operator(dml.ArgMinDesc(
        x_desc, dml.TensorDesc("INT64", [6, 1]), [1], "DECREASING")))
    graph = dml.Graph(device)
    x = graph.input(0, x_desc)
    return op, graph.compile([g.argmin(g.clip(x, -1.0, 2.0), [1], "INCREASING")])


def test_devices_and_compiled_operators_run_on_the_workers(client: Any) -> None:
    """Sent with every task, they are rebuilt once per worker process (the same objects in both tasks a
    worker runs, the operator and the graph on the worker's one device of the key) and give this process's
    bits, which the oracle confirms."""
    device = dml.Device("cpu", "6_2", threads=1)
    op, graph = _argmin_and_graph(device)
    futures = [client.submit(_run_sent, device, op, graph, seed, workers=[w], pure=False)
               for w in _workers(client) for seed in (1, 2)]
    results = client.gather(futures)
    by_process: dict[int, set[Any]] = {}
    for r in results:
        by_process.setdefault(r["process"], set()).add(r["objects"])
    assert len(by_process) == 2 and all(len(ids) == 1 for ids in by_process.values())
    assert os.getpid() not in by_process
    for seed, r in zip((1, 2, 1, 2), results):
        x = _input(seed)
        assert r["one device"] and r["threads"] == 1
        assert r["argmin"].tolist() == _execute(op, x).tolist() == [
            [arg_of([float(v) for v in row], "DECREASING")] for row in x]
        clipped = np.minimum(np.maximum(x, np.float32(-1.0)), np.float32(2.0))
        assert r["graph"].tolist() == [arg_of([float(v) for v in row], "INCREASING") for row in clipped]
        assert bits(r["clip"]).tolist() == bits(dml.clip(x, -1.0, 2.0, device=device)).tolist()


def test_the_workers_take_their_share_of_the_cores(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each worker sees 2 worker processes of 1 thread: a device made or unpickled there without ``threads=``
    uses cores // 2 threads (at least 1); an explicit count travels; the client's devices keep every core."""
    monkeypatch.delenv(thread_count.ENV_THREADS, raising=False)
    shares = client.run(_share_here)
    assert sorted(shares) == _workers(client)
    for found in shares.values():
        assert found["processes"] == 2 and found["threads"] == max(1, found["cores"] // 2)
    cores = next(iter(shares.values()))["cores"]
    sent = client.gather([client.submit(_threads_of, d, pure=False)
                          for d in (dml.Device("cpu", "6_1"), dml.Device("cpu", "5_2", threads=3))])
    assert sent == [max(1, cores // 2), 3]
    assert dml.Device("cpu", "6_1").threads == thread_count.available_cores()  # the client's process is no worker


def _array(seed: int) -> Any:
    """FLOAT32 [40, 30, 26] with ties and NaN, in uneven chunks, made on the workers."""
    x = da.random.default_rng(seed).standard_normal((40, 30, 26), dtype=np.float32, chunks=(16, 11, 26))
    x = da.round(x * 2) / np.float32(2)  # few distinct values: ties across chunk boundaries
    return da.where(abs(x) > 2.2, np.float32(np.nan), x).astype(np.float32)


def test_clip_and_argmin_of_arrays_made_on_the_workers(client: Any) -> None:
    """opendml.clip and opendml.argmin over several axes of a Dask array generated on the workers give
    single-machine opendml's bits."""
    pytest.importorskip("opendml.dask", reason=NEEDS_DASK_ARRAYS)
    import dask

    x = _array(3)
    clipped = dml.clip(x, -1.0, 1.5)
    cases = [((0,), "INCREASING", "INT64"), ((0, 2), "DECREASING", "INT32"), (None, "DECREASING", "UINT32")]
    reduced = [dml.argmin(clipped, axes=axes, axis_direction=d, output_type=t) for axes, d, t in cases]
    on_device = dml.argmin(x, axes=(1, 2), device=dml.Device("cpu", threads=1))
    here, *got = dask.compute(x, clipped, *reduced, on_device)
    assert np.isnan(here).any() and bits(got[0]).tolist() == bits(dml.clip(here, -1.0, 1.5)).tolist()
    for (axes, direction, out_type), result in zip(cases, got[1:]):
        want = dml.argmin(got[0], axes=axes, axis_direction=direction, output_type=out_type)
        assert result.dtype == want.dtype and result.tolist() == want.tolist()
    assert got[-1].tolist() == dml.argmin(here, axes=(1, 2)).tolist()
