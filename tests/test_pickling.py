"""Devices, compiled operators, compiled graphs and compiled functions pickle with plain ``pickle`` and
rebuild themselves on arrival, once per process (what sending them to Dask workers needs); buffers refuse.

Each object goes to a ``multiprocessing`` spawn child (a fresh interpreter, as a Dask worker is) and must give
there the bits it gives here; the results here are checked against the independent oracle.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import pickle
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import pytest
from elementwise_oracle import argmin_tensor, clamp_element, dequantize_element, float_field_bound
from helpers import bits, packed_bytes

import opendml as dml
from opendml import graph as g
from opendml import thread_count


@pytest.fixture(scope="module")
def child() -> Iterator[ProcessPoolExecutor]:
    """One spawned Python process for the module: it imports this module afresh, nothing inherited."""
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """No device pickled before the test (by other tests) is the one of its key: the first pickled here is."""
    from opendml import device
    from opendml.shared import Registry

    monkeypatch.setattr(device, "_shared", Registry())


@pytest.fixture(scope="module")
def cpu2() -> dml.Device:
    """The module's device: the first of its key pickled here, so its operators unpickle to themselves."""
    return dml.Device("cpu", "6_2", threads=2)


def execute(op: dml.CompiledOperator, inputs: Sequence[np.ndarray | None]) -> bytes:
    """The output's bytes after executing ``op`` on packed copies of ``inputs``."""
    device, tensors = op.operator.device, op.operator.tensors
    bindings = []
    for field, values in zip(op.operator.definition.schema.inputs, inputs):
        desc = tensors[field.name]
        bindings.append(None if values is None or desc is None else
                        dml.BufferBinding(device.buffer_from(packed_bytes(values, desc.total_tensor_size_in_bytes))))
    out_desc = op.operator.tensor(op.operator.definition.schema.outputs[0].name)
    out = device.create_buffer(out_desc.total_tensor_size_in_bytes)
    op.execute(bindings, [dml.BufferBinding(out)])
    return out.to_numpy()[:out_desc.element_count * out_desc.data_type.size].tobytes()


def as_array(raw: bytes, desc: dml.TensorDesc) -> np.ndarray:
    return np.frombuffer(raw, desc.data_type.numpy).reshape(desc.sizes)


# --- run in the child (module-level functions, so that the pool can send them) ------------------------------

def unpickle_twice(blob: bytes) -> tuple[bool, Any]:
    """Whether two unpicklings give one object here, and what the child sees of it."""
    first, second = pickle.loads(blob), pickle.loads(blob)
    return first is second, describe(first)


def describe(obj: Any) -> Any:
    if isinstance(obj, dml.Device):
        return obj.backend.name, obj.feature_level.label, obj.threads
    if isinstance(obj, dml.CompiledOperator):
        device = obj.operator.device
        from opendml.device import shared_device
        # The operator lives on the child's one device of its key, in that device's compile cache.
        shared = shared_device(device.backend.name, device.feature_level.label, device._threads_setting)
        return device is shared, device.compiled(obj.operator.desc, obj.flags) is obj, int(obj.flags)
    if isinstance(obj, dml.CompiledGraph):
        return obj.fuse, int(obj.flags), len(obj.plan.steps)
    return type(obj).__name__


def execute_pickled(blob: bytes, inputs: Sequence[np.ndarray | None]) -> bytes:
    return execute(pickle.loads(blob), inputs)


def execute_graph(blob: bytes, inputs: Sequence[np.ndarray], sizes: int) -> tuple[bool, bytes]:
    """A pickled compiled graph run here (unpickled twice: the same one), its one output's bytes."""
    compiled = pickle.loads(blob)
    device = compiled.device
    out = device.create_buffer(sizes)
    compiled.execute([device.buffer_from(a) for a in inputs], [out])
    return pickle.loads(blob) is compiled, out.to_numpy().tobytes()


def call_pickled(blob: bytes, x: np.ndarray) -> tuple[bool, np.ndarray]:
    fn = pickle.loads(blob)
    return pickle.loads(blob) is fn, fn(x)


def thread_counts(blobs: Sequence[bytes]) -> list[int]:
    """Devices' thread counts when unpickled under OPENDML_NUM_THREADS=1."""
    os.environ[thread_count.ENV_THREADS] = "1"
    try:
        return [pickle.loads(blob).threads for blob in blobs]
    finally:
        del os.environ[thread_count.ENV_THREADS]


@dml.compile
def dequantize_clip(q: np.ndarray) -> Any:
    """A module-level compiled function: pickled by reference."""
    return dml.clip(dml.dequantize_linear(q, 0.5, 3), -1.0, 40.0)


# --- tests ---------------------------------------------------------------------------------------------------

def test_a_device_pickles_after_compiling(fresh: None) -> None:
    """The issue's case: a device that has compiled an operator pickles, and here unpickles to itself."""
    device = dml.Device("cpu", "5_0", threads=2)
    x = np.array([-3.0, 0.5, 7.0], np.float32)
    assert bits(dml.clip(x, -1.0, 1.0, device=device)).tolist() == bits(np.float32([-1.0, 0.5, 1.0])).tolist()
    assert pickle.loads(pickle.dumps(device)) is device


def test_a_device_rebuilds_once_per_process(child: ProcessPoolExecutor) -> None:
    blob = pickle.dumps(dml.Device("cpu", "4_1", threads=2))
    assert len(blob) < 200  # the backend, feature level and thread setting: nothing compiled travels
    assert child.submit(unpickle_twice, blob).result() == (True, ("cpu", "4_1", 2))


def test_the_default_thread_count_is_resolved_where_a_device_arrives(monkeypatch: pytest.MonkeyPatch,
                                                                      child: ProcessPoolExecutor) -> None:
    """A device made without ``threads=`` carries no count: the receiving process resolves its own default
    (here its OPENDML_NUM_THREADS); an explicit ``threads=`` travels and wins there."""
    monkeypatch.setenv(thread_count.ENV_THREADS, "3")
    default, explicit = dml.Device("cpu", "6_0"), dml.Device("cpu", "6_1", threads=2)
    assert (default.threads, explicit.threads) == (3, 2)
    assert child.submit(thread_counts, [pickle.dumps(default), pickle.dumps(explicit)]).result() == [1, 2]


def test_devices_of_one_key_unpickle_to_one_device(fresh: None) -> None:
    """Two devices of one backend, level and thread setting unpickle to one device in this process."""
    a, b = dml.Device("cpu", "3_1", threads=1), dml.Device("cpu", "3_1", threads=1)
    assert pickle.loads(pickle.dumps(a)) is pickle.loads(pickle.dumps(b)) is a
    assert pickle.loads(pickle.dumps(dml.Device("cpu", "3_1"))) is not a  # another thread setting


def test_the_compile_cache_is_keyed_by_flags() -> None:
    device = dml.Device("cpu")
    desc = dml.TensorDesc("FLOAT32", [4])
    clip = dml.ElementWiseClipDesc(desc, desc, -1.0, 1.0)
    plain, half = device.compiled(clip), device.compiled(clip, "ALLOW_HALF_PRECISION_COMPUTATION")
    assert plain is not half and (plain.flags, half.flags) == (0, 1)
    assert device.compiled(clip, 1) is half and device.compiled(clip) is plain


def _clip_case() -> tuple[object, list[np.ndarray], np.ndarray]:
    """FLOAT16 CLIP with ScaleBias over [3, 4, 5]: the operator, its input, the oracle's result."""
    desc = dml.TensorDesc("FLOAT16", [3, 4, 5])
    x = (np.random.default_rng(1).standard_normal(60) * 3).astype(np.float16)
    x[[3, 17]] = [np.nan, -0.0]
    low, high = float_field_bound(-1.5, "FLOAT16"), float_field_bound(2.25, "FLOAT16")
    want = np.array([clamp_element(float(v), "FLOAT16", (1.5, 0.25), low, high) for v in x], np.float16)
    return dml.ElementWiseClipDesc(desc, desc, -1.5, 2.25, dml.ScaleBias(1.5, 0.25)), [x.reshape(3, 4, 5)], want


def _argmin_case() -> tuple[object, list[np.ndarray], np.ndarray]:
    """ARGMIN over axes {0, 2} of [3, 4, 5] FLOAT32 with ties and NaN, DECREASING, INT32 indices."""
    x = np.random.default_rng(2).integers(-3, 3, (3, 4, 5)).astype(np.float32)
    x[0, 1, :] = np.nan
    x[:, 2, :] = np.nan  # a reduction of NaN only: the last index (SPEC 8.5)
    values = {tuple(int(i) for i in k): float(v) for k, v in np.ndenumerate(x)}
    got = argmin_tensor(values, x.shape, (0, 2), "DECREASING")
    want = np.array([got[(0, j, 0)] for j in range(4)], np.int32)
    desc = dml.ArgMinDesc(dml.TensorDesc("FLOAT32", x.shape), dml.TensorDesc("INT32", [1, 4, 1]), [0, 2],
                          "DECREASING")
    return desc, [x], want


def _dequantize_case() -> tuple[object, list[np.ndarray], np.ndarray]:
    """UINT8 DEQUANTIZE_LINEAR with a per-axis scale and zero point (zero strides) to FLOAT32."""
    x = np.random.default_rng(3).integers(0, 256, (4, 6), dtype=np.uint8)
    scale, zero = np.float32([0.5, -0.25, 3.0, 1e-3]), np.uint8([0, 128, 7, 255])
    want = np.array([[dequantize_element(int(x[i, j]), float(scale[i]), int(zero[i]), "FLOAT32") for j in range(6)]
                     for i in range(4)], np.float32)
    per_axis = {"sizes": [4, 6], "strides": [1, 0]}
    desc = dml.ElementWiseDequantizeLinearDesc(dml.TensorDesc("UINT8", [4, 6]), dml.TensorDesc("FLOAT32", **per_axis),
                                               dml.TensorDesc("UINT8", **per_axis), dml.TensorDesc("FLOAT32", [4, 6]))
    return desc, [x, scale, zero], want


@pytest.mark.parametrize("case", [_clip_case, _argmin_case, _dequantize_case], ids=["clip", "argmin", "dequantize"])
def test_a_compiled_operator_gives_the_same_bits_in_another_process(case: Any, child: ProcessPoolExecutor,
                                                                    cpu2: dml.Device, fresh: None) -> None:
    desc, inputs, want = case()
    device = cpu2
    op = device.compile_operator(device.create_operator(desc), "DISABLE_META_COMMANDS")
    here = execute(op, inputs)
    out_desc = op.operator.tensor(op.operator.definition.schema.outputs[0].name)
    assert as_array(here, out_desc).reshape(-1).view(np.uint8).tobytes() == want.tobytes()
    blob = pickle.dumps(op)
    assert child.submit(execute_pickled, blob, inputs).result() == here
    assert pickle.loads(blob) is op  # here it unpickles to itself
    # There it is compiled once, on the child's one device of its key, into that device's compile cache.
    assert child.submit(unpickle_twice, blob).result() == (True, (True, True, int(dml.ExecutionFlags(2))))


def _dequantize_clip_argmin(device: dml.Device) -> dml.CompiledGraph:
    graph = dml.Graph(device)
    q = graph.input(0, dml.TensorDesc("UINT8", [3, 8]))
    scale = g.reinterpret(graph.input(1, dml.TensorDesc("FLOAT32", [1])), sizes=[3, 8], strides=[0, 0])
    return graph.compile([g.argmin(g.clip(g.dequantize_linear(q, scale, q), 0.0, 1.0), [1], "DECREASING")])


def test_a_compiled_graph_gives_the_same_bits_in_another_process(child: ProcessPoolExecutor) -> None:
    """DEQUANTIZE_LINEAR -> CLIP -> ARGMIN (fused here and there), rebuilt once in the child."""
    compiled = _dequantize_clip_argmin(dml.Device("cpu", threads=2))
    q = np.random.default_rng(4).integers(0, 256, (3, 8), dtype=np.uint8)
    scale = np.float32([0.01])
    device = compiled.device
    out = device.create_buffer(24)
    compiled.execute([device.buffer_from(q), device.buffer_from(scale)], [out])
    here = out.to_numpy().tobytes()
    # The zero point is q itself: every element dequantizes to 0, clipped 0: a tie won by the last index.
    values = {(i, j): clamp_element(dequantize_element(int(q[i, j]), 0.01, int(q[i, j]), "FLOAT32"), "FLOAT32",
                                    None, 0.0, 1.0) for i in range(3) for j in range(8)}
    want = argmin_tensor(values, (3, 8), (1,), "DECREASING")
    assert np.frombuffer(here, np.int64).tolist() == [want[(i, 0)] for i in range(3)] == [7, 7, 7]
    blob = pickle.dumps(compiled)
    assert pickle.loads(blob) is compiled
    assert child.submit(execute_graph, blob, [q, scale], 24).result() == (True, here)


def test_a_compiled_graph_keeps_its_flags_and_fusion(child: ProcessPoolExecutor) -> None:
    from opendml.graphs.compiled import compile_graph

    fused = _dequantize_clip_argmin(dml.Device("cpu"))
    unfused = compile_graph(fused.device, fused.graph_desc, "DESCRIPTORS_VOLATILE", fuse=False)
    assert (unfused.fuse, fused.fuse, len(unfused.plan.steps), len(fused.plan.steps)) == (False, True, 3, 1)
    assert child.submit(unpickle_twice, pickle.dumps(unfused)).result() == (True, (False, 4, 3))


def test_an_operator_pickles_as_its_description(fresh: None) -> None:
    device = dml.Device("cpu", "6_2", threads=1)
    desc = dml.TensorDesc("INT8", [2, 3])
    operator = device.create_operator(dml.ElementWiseThresholdDesc(desc, desc, -2.0))
    copy = pickle.loads(pickle.dumps(operator))
    assert copy is not operator and copy.device is device and repr(copy.desc) == repr(operator.desc)


def test_a_compiled_function_pickles_by_reference(child: ProcessPoolExecutor) -> None:
    q = np.random.default_rng(5).integers(0, 256, 40, dtype=np.uint8)
    here = dequantize_clip(q)
    want = np.array([clamp_element(dequantize_element(int(v), 0.5, 3, "FLOAT32"), "FLOAT32", None, -1.0, 40.0)
                     for v in q], np.float32)
    assert bits(here).tolist() == bits(want).tolist()
    blob = pickle.dumps(dequantize_clip)
    assert b"dequantize_clip" in blob and len(blob) < 100  # a module and a name
    assert pickle.loads(blob) is dequantize_clip
    same, there = child.submit(call_pickled, blob, q).result()
    assert same and bits(there).tolist() == bits(here).tolist()


def test_a_compiled_lambda_needs_cloudpickle(child: ProcessPoolExecutor) -> None:
    """Plain pickle cannot take a lambda; cloudpickle (Dask's fallback) sends it by value with its options,
    and a process receiving it rebuilds it once."""
    cloudpickle = pytest.importorskip("cloudpickle", reason="cloudpickle (a dependency of dask) is not installed")
    fn = dml.compile(lambda x: dml.argmin(x, axes=[1], axis_direction="DECREASING"), device=dml.Device("cpu"))
    with pytest.raises((pickle.PicklingError, AttributeError)):
        pickle.dumps(fn)
    x = np.float32([[1, 0, 0, 5], [2, 2, -1, -1]])
    assert fn(x).tolist() == [[2], [3]]
    blob = cloudpickle.dumps(fn)
    assert pickle.loads(blob) is fn
    same, there = child.submit(call_pickled, blob, x).result()
    assert same and there.tolist() == [[2], [3]] and there.dtype == np.int64


def test_buffers_refuse_to_pickle() -> None:
    device = dml.Device("cpu")
    buffer = device.buffer_from(np.float32([1, 2]))
    for obj in (buffer, dml.BufferBinding(buffer, 0, 8)):
        with pytest.raises(dml.OpenDMLError, match=r"^Buffer: pickling is not supported \(a buffer is device memory "
                           r"of one process: .*\); got <CpuBuffer 8 bytes on Device\('cpu', '6_4'\)>\.$"):
            pickle.dumps(obj)


def test_the_default_device_is_the_shared_one() -> None:
    """What ``Device()`` unpickles to is the functional API's default device: tasks sent with a device and
    tasks without one share its compile cache."""
    from opendml.functional.devices import default_device

    assert pickle.loads(pickle.dumps(dml.Device())) is default_device()
    assert math.isfinite(float(dml.clip(np.float32(2.0), 0.0, 1.0)))
