"""Kernel launches with their arguments packed once, as the driver reads them: what prepared calls run (an
``execute`` over bindings it has seen, a recorded dispatch, a repeated functional call).

CuPy's ``RawKernel`` converts every argument at each call, which is about a third of a launch's host time
(6.4 us against 4.2 us for the driver's launch alone, measured on an H200). A prepared call's arguments are
packed once where the driver reads them (each argument's bytes, and the array of their addresses that
``cuLaunchKernel`` takes), so that a call is one driver launch on the current stream.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import cupy
import numpy as np

if TYPE_CHECKING:
    from ...binding import BoundTensor

_launch_kernel = cupy.cuda.driver.launchKernel
current_stream = cupy.cuda.get_current_stream
_DriverError = cupy.cuda.driver.CUDADriverError


def bound_address(bound: BoundTensor) -> int:
    """The device address of a bound tensor's first byte."""
    return bound.buffer.address + bound.offset


class PackedLaunch:
    """``kernel(grid, block, args)`` as a call taking nothing, its arguments packed once.

    The driver launches the kernel's function loaded on the device current when this was made. Where the
    driver refuses (a thread that has not yet used CUDA has no current context; another device is current)
    the call goes through CuPy's launch, which sets these up, with the same arguments.
    """

    __slots__ = ("_args", "_block", "_function", "_grid", "_kernel", "_params", "_pointer", "_values")

    def __init__(self, kernel: Any, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...]) -> None:
        self._kernel, self._grid, self._block, self._args = kernel, grid, block, args
        # Each argument's bytes as the kernel's parameter holds them (NumPy scalars of the parameter's type, as
        # CuPy passes them), and their addresses: both held as long as the call.
        self._values = [np.array(value) for value in args]
        self._params = np.array([value.ctypes.data for value in self._values], np.uintp)
        self._pointer = int(self._params.ctypes.data)
        self._function = int(getattr(kernel, "kernel", kernel).ptr)  # a loaded Function, or a RawKernel's

    def __call__(self) -> None:
        if not self._driver_launch(current_stream().ptr):
            self._kernel(self._grid, self._block, self._args)

    def _driver_launch(self, stream: int) -> bool:
        """Launch through the driver on ``stream`` (a handle); False where the driver refuses."""
        try:
            _launch_kernel(self._function, self._grid[0], 1, 1, self._block[0], 1, 1, 0, stream, self._pointer, 0)
        except _DriverError as error:
            # Whatever keeps the error (it outlives this call under compute-sanitizer, which refuses these
            # launches) must not keep the frames of this call's callers, and with them the buffers they bound.
            error.__traceback__ = None
            return False
        return True


class PointerLaunch(PackedLaunch):
    """``kernel(grid, block, (*before, *pointers, *scalars))`` for device addresses given at each call: the
    arguments ``before`` them and the scalars packed once, the addresses written into slots of their own
    before each launch (the driver copies the parameters when it launches). Calls from several threads take
    turns over the slots."""

    __slots__ = ("_first", "_lock", "_slots")

    def __init__(self, kernel: Any, grid: tuple[int, ...], block: tuple[int, ...], count: int,
                 scalars: tuple[Any, ...], before: tuple[Any, ...] = ()) -> None:
        super().__init__(kernel, grid, block, (*before, *(np.uint64(0) for _ in range(count)), *scalars))
        self._first = len(before)
        # Each address's slot written through ctypes (a third of a NumPy 0-d assignment's cost).
        held = self._values[self._first:self._first + count]
        self._slots = [ctypes.c_uint64.from_address(value.ctypes.data) for value in held]
        self._lock = threading.Lock()

    def __call__(self, *pointers: int) -> None:  # type: ignore[override]
        self.on(current_stream().ptr, pointers)

    def on(self, stream: int, pointers: Sequence[int]) -> None:
        """Launch on ``stream`` (a handle) over these addresses."""
        with self._lock:
            for slot, pointer in zip(self._slots, pointers):
                slot.value = pointer
            if self._driver_launch(stream):
                return
            first = self._first
            args = self._args[:first] + tuple(np.uint64(p) for p in pointers) + self._args[first + len(pointers):]
            if stream == current_stream().ptr:
                self._kernel(self._grid, self._block, args)
                return
            with cupy.cuda.ExternalStream(stream):
                self._kernel(self._grid, self._block, args)
