"""The errors of the ONNX front end: one for a model opendml cannot run, one for a missing onnx package."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import OpenDMLError


class UnsupportedModelError(OpenDMLError):
    """A model needs what opendml lacks; ``problems`` lists every one, all found before anything runs.

    Each problem follows opendml's one pattern, naming the node: ``Clip node 'c': Input min must be
    known before the graph runs (...); got the output of DequantizeLinear node 'dq'.``
    """

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        count = len(self.problems)
        listing = "".join(f"\n  - {problem}" for problem in self.problems)
        super().__init__(f"ONNX model: every node must map onto opendml's operators; "
                         f"got {count} problem{'' if count == 1 else 's'}:{listing}")


class OnnxUnavailableError(OpenDMLError, ImportError):
    """The ``onnx`` package, which the ONNX front end needs, is not installed."""


def require_onnx() -> None:
    """Raise OnnxUnavailableError, with the install command, when ``onnx`` cannot be imported."""
    try:
        import onnx  # noqa: F401
    except ImportError as error:
        raise OnnxUnavailableError(
            "opendml.onnx: the onnx package must be installed (pip install 'opendml[onnx]'); "
            f"got {type(error).__name__}: {error}.") from error
