"""DirectML's recording model: binding tables, the operator initializer, the command recorder, command
lists and command queues (docs/recording.md).

Bindings are checked once, when bound into a binding table; a dispatch is prepared once, when recorded into
a command list; a closed list is executed any number of times by a command queue, replaying the prepared
calls (on CUDA, one CUDA graph launch per list).
"""

from __future__ import annotations

from .binding_table import BindingTable
from .commands import CommandList, CommandQueue, CommandRecorder
from .initializer import OperatorInitializer

__all__ = ["BindingTable", "CommandList", "CommandQueue", "CommandRecorder", "OperatorInitializer"]
