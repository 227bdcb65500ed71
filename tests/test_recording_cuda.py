"""CUDA command queues: each command list captured once into a CUDA graph and replayed with the oracle's bits.

These tests need an NVIDIA GPU with CuPy; elsewhere they skip, saying why. (tests/test_recording.py and
tests/test_recording_graphs.py run on the CUDA backend too where it is usable.)
"""

from __future__ import annotations

import numpy as np
import pytest

import opendml as dml
from tests.conftest import CUDA_MISSING
from tests.helpers import errors_in_new_thread
from tests.recording_helpers import (
    argmin_rows,
    clip,
    clipped,
    compiled,
    floats,
    read,
    record,
    row_argmins,
    table,
    threshold,
    thresholded,
    write,
)

pytestmark = pytest.mark.skipif(CUDA_MISSING is not None, reason=f"no usable CUDA GPU: {CUDA_MISSING}")

X = [-3.0, -0.5, 0.0, 0.5, 3.0, 7.0, -7.0, 0.75]
DATA = [X, [0.5, 0.3, 0.9, 0.1, -5.0, 2.0, 0.2, 0.4], [1.0, 1.0, 1.0, 1.0, 9.0, 8.0, 7.0, -9.0]]


@pytest.fixture(scope="module")
def gpu() -> dml.Device:
    return dml.Device("cuda")


def chain_list(gpu: dml.Device) -> tuple[dml.CommandList, list[dml.Buffer]]:
    """CLIP -> THRESHOLD -> ARGMIN through buffers, recorded in one list: (list, [x, thresholded, out])."""
    c, t, a = clip(gpu), threshold(gpu), argmin_rows(gpu)
    x, clipped_buffer, thresholded_buffer, out = (gpu.create_buffer(32) for _ in range(4))
    command_list = record(gpu, (c, table(gpu, c, [x], [clipped_buffer])),
                          (t, table(gpu, t, [clipped_buffer], [thresholded_buffer])),
                          (a, table(gpu, a, [thresholded_buffer], [out])))
    return command_list, [x, thresholded_buffer, out]


def test_a_list_is_captured_once_and_replayed(gpu: dml.Device) -> None:
    command_list, (x, thresholded_buffer, out) = chain_list(gpu)
    queue = gpu.create_command_queue()
    assert queue.cuda_graphs
    for values in DATA * 2:
        write(gpu, x, floats(values))  # on CuPy's default stream: the queue's stream waits for it
        queue.execute_command_lists([command_list])
        queue.wait()
        expected = thresholded(clipped(values))
        assert read(thresholded_buffer, np.float32, 8).tolist() == expected
        assert read(out, np.int64, 2).tolist() == row_argmins(expected)
    assert command_list.captures == 1
    assert "uncapturable" not in command_list.cache


def test_launch_by_launch_gives_the_same_bits(gpu: dml.Device, monkeypatch: pytest.MonkeyPatch) -> None:
    command_list, (x, _thresholded_buffer, out) = chain_list(gpu)
    queue = gpu.create_command_queue(cuda_graphs=False)
    assert not queue.cuda_graphs
    for values in DATA:
        write(gpu, x, floats(values))
        queue.execute_command_lists([command_list])
        queue.wait()
        assert read(out, np.int64, 2).tolist() == row_argmins(thresholded(clipped(values)))
    assert command_list.captures == 0
    monkeypatch.setenv("OPENDML_CUDA_GRAPHS", "0")
    assert not gpu.create_command_queue().cuda_graphs
    monkeypatch.setenv("OPENDML_CUDA_GRAPHS", "2")
    with pytest.raises(dml.InvalidArgumentError, match=r"^Environment: OPENDML_CUDA_GRAPHS must be one of 1, true, "
                       r"yes, on \(on\) or 0, false, no, off \(off\); got '2'\.$"):
        gpu.create_command_queue()


def test_a_changed_volatile_table_is_captured_again(gpu: dml.Device) -> None:
    op = clip(gpu, flags="DESCRIPTORS_VOLATILE")
    x, y, z = gpu.buffer_from(floats(X)), gpu.create_buffer(32), gpu.create_buffer(32)
    made = table(gpu, op, [x], [y])
    command_list = record(gpu, (op, made))
    queue = gpu.create_command_queue()
    queue.execute_command_lists([command_list])
    queue.execute_command_lists([command_list])
    assert command_list.captures == 1
    made.bind_outputs([z])
    queue.execute_command_lists([command_list])
    queue.wait()
    assert command_list.captures == 2
    assert read(z, np.float32, 8).tolist() == clipped(X)


def test_a_split_reduction_replays_over_its_own_partial_buffers(gpu: dml.Device) -> None:
    """An ARGMIN of one long row is cut into pieces merged by a second pass: its partial results get buffers
    when recorded, so replays (with the memory pool handing blocks out in between) keep the right answer."""
    import cupy

    n = 1 << 20
    row = dml.TensorDesc("FLOAT32", [1, n])
    op = compiled(gpu, dml.ArgMinDesc(row, dml.TensorDesc("INT64", [1, 1]), [1]))
    assert op.kernel.plan.splits > 1  # type: ignore[attr-defined]
    x, out = gpu.create_buffer(4 * n), gpu.create_buffer(8)
    command_list = record(gpu, (op, table(gpu, op, [x], [out])))
    queue = gpu.create_command_queue()
    rng = np.random.default_rng(7)
    for planted in (777_777, 3, n - 1):
        values = rng.uniform(1.0, 2.0, n).astype(np.float32)
        values[planted] = 0.0  # the one smallest element
        write(gpu, x, values)
        scratch = [cupy.full(1 << 16, 0x7F, cupy.uint8) for _ in range(8)]  # blocks come and go from the pool
        queue.execute_command_lists([command_list])
        queue.wait()
        del scratch
        assert read(out, np.int64, 1).tolist() == [planted]
    assert command_list.captures == 1


def test_prepared_launches_run_from_a_thread_new_to_cuda(gpu: dml.Device) -> None:
    """A prepared launch is one driver call in the CUDA context of the thread that runs it: from a thread
    that has not used CUDA yet (no context current) it still runs, through CuPy's launch."""

    op = clip(gpu)
    x, y = gpu.create_buffer(32), gpu.create_buffer(32)
    for _ in range(3):  # checked, then prepared, then run prepared
        write(gpu, x, floats(X))
        op.execute([x], [y])
    assert read(y, np.float32, 8).tolist() == clipped(X)
    write(gpu, x, floats(DATA[2]))
    import cupy

    cupy.cuda.Device().synchronize()

    def other() -> None:
        op.execute([x], [y])
        cupy.cuda.get_current_stream().synchronize()

    errors = errors_in_new_thread(other)
    assert not errors, errors
    assert read(y, np.float32, 8).tolist() == clipped(DATA[2])
