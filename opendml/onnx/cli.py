"""``opendml onnx MODEL.onnx --input NAME=FILE.npy ... [--output-dir DIR] [--backend cpu|cuda]``.

Runs an ONNX model on opendml and prints its outputs, or saves each as ``DIR/NAME.npy``. Errors are
reported on one line, with exit status 2. ``register(subparsers)`` adds the command to the ``opendml``
command (its handler is ``run(args)``); ``main(argv)`` runs it alone, as ``python -m opendml.onnx.cli``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from ..backends import BACKENDS
from ..errors import OpenDMLError
from ..kernels import notices

PROG = "opendml onnx"
DESCRIPTION = ("Run an ONNX model of Clip, Relu, ArgMin, ArgMax, DequantizeLinear and QuantizeLinear nodes on opendml, "
               "with ONNX's semantics.")


class _UsageError(Exception):
    """A command-line mistake, reported on one line (argparse's own report takes two)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", metavar="MODEL.onnx",
                        help="the ONNX model file (.json, .textproto and .onnxtxt files are read in those formats)")
    parser.add_argument("--input", "-i", action="append", default=[], metavar="NAME=FILE.npy",
                        help="a graph input from a .npy file (repeat for each input)")
    parser.add_argument("--output-dir", "-o", metavar="DIR", type=Path,
                        help="save each output as DIR/NAME.npy instead of printing it")
    parser.add_argument("--backend", choices=sorted(BACKENDS), default="cpu", help="where to run (default: cpu)")
    parser.add_argument("--feature-level", metavar="LEVEL", help="the device's DirectML feature level, "
                                                                 "e.g. 6_2 (default: the newest)")
    parser.add_argument("--verbose", "-v", action="store_true", help="report each node once it has run, on stderr")


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description=DESCRIPTION)
    add_arguments(parser)
    return parser


def register(subparsers: Any) -> None:
    """Add ``onnx`` to the ``opendml`` command's subparsers; its handler is :func:`run`."""
    parser: argparse.ArgumentParser = subparsers.add_parser("onnx", help="run an ONNX model on opendml",
                                                            description=DESCRIPTION)
    add_arguments(parser)

    def one_line(message: str) -> NoReturn:  # argparse's report takes two lines (usage, then the error)
        parser.exit(2, f"{parser.prog}: error: {message}\n")

    parser.error = one_line  # type: ignore[method-assign]
    parser.set_defaults(handler=run)


def _load_input(spec: str) -> tuple[str, np.ndarray]:
    name, sep, path = spec.partition("=")
    if not sep or not name or not path:
        raise _UsageError(f"argument --input: must be NAME=FILE.npy; got {spec!r}")
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as error:
        raise _UsageError(f"argument --input: {path!r} must be a readable .npy file; got {error}") from None
    if not isinstance(array, np.ndarray):
        array.close()
        raise _UsageError(f"argument --input: {path!r} must be a .npy file; got an .npz archive")
    return name, array


def _file_name(output: str) -> str:
    """An output name as a file name: characters other than letters, digits, '.', '_' and '-' become '_'."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", output).lstrip(".") or "output"


def _report(outputs: dict[str, np.ndarray], output_dir: Path | None) -> None:
    if output_dir is None:
        for name, array in outputs.items():
            print(f"{name}: {array.dtype} {list(array.shape)}")
            print(np.array2string(array, threshold=200))
        return
    files = {name: output_dir / f"{_file_name(name)}.npy" for name in outputs}
    if len(set(files.values())) != len(files):
        raise _UsageError("argument --output-dir: the outputs' names must map to distinct file names; "
                          f"got {', '.join(outputs)}")
    output_dir.mkdir(parents=True, exist_ok=True)
    for name, array in outputs.items():
        np.save(files[name], array)
        print(f"{name}: {array.dtype} {list(array.shape)} -> {files[name]}")


def _run(args: argparse.Namespace) -> int:
    from .. import Device  # the CLI's imports stay light until a model is run
    from .errors import require_onnx

    require_onnx()
    from .runtime import Session

    inputs = dict(_load_input(spec) for spec in args.input)
    device = Device(args.backend) if args.feature_level is None else Device(args.backend, args.feature_level)

    def progress(done: int, total: int, label: str) -> None:
        print(f"[{done}/{total}] {label}", file=sys.stderr)

    with notices.shown_on_stderr(args.verbose):  # a kernel compiled on first use says so as it starts
        session = Session(args.model, device)
        outputs = session.run(inputs, progress if args.verbose else None)
    _report(outputs, args.output_dir)
    return 0


def _one_line(error: BaseException) -> str:
    return " ".join(line.strip().removeprefix("- ") for line in str(error).splitlines() if line.strip())


def run(args: argparse.Namespace, prog: str = PROG) -> int:
    """Run the parsed command; returns the exit status (2 for any error, reported on one line of stderr)."""
    try:
        return _run(args)
    except (_UsageError, OpenDMLError, OSError) as error:
        print(f"{prog}: error: {_one_line(error)}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """Parse ``argv`` and run; returns the exit status (2 for any error, reported on one line of stderr)."""
    try:
        args = build_parser(prog).parse_args(argv)
    except SystemExit as exit_:  # --help
        return int(exit_.code or 0)
    except _UsageError as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 2
    return run(args, prog)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], prog="python -m opendml.onnx.cli"))
