"""How a command queue runs a closed command list's prepared calls: here, in order, on the calling thread
(the CPU backend, and the CUDA backend's queue when it does not capture CUDA graphs)."""

from __future__ import annotations

from typing import Protocol

from .prepared import Run


class RecordedWork(Protocol):
    """What an executor sees of a command list."""

    runs: tuple[Run, ...]  # every dispatch's prepared calls, in recording order
    cache: dict[str, object]  # what an executor keeps for this list (a CUDA graph); emptied when ``runs`` change
    captures: int  # CUDA graphs captured from it


class Executor(Protocol):
    cuda_graphs: bool

    def execute(self, work: RecordedWork) -> None: ...

    def wait(self) -> None: ...


class SynchronousExecutor:
    """Runs each call in order before returning: a later dispatch sees an earlier one's writes, and ``wait``
    has nothing to wait for."""

    cuda_graphs = False

    def execute(self, work: RecordedWork) -> None:
        for run in work.runs:
            run()

    def wait(self) -> None:
        """Nothing runs after ``execute`` returns."""
