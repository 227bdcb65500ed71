"""``opendml dispatch``: run a DxDispatch-style JSON model, with timing."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from .. import FeatureLevel, OpenDMLError
from ..kernels import notices
from .paths import ALLOW_OUTSIDE_OPTION, check_path
from .resources import MAX_RESOURCE_BYTES

NEWEST = max(FeatureLevel)

NAME = "dispatch"
PROG = "opendml dispatch"
HELP = "run a DxDispatch-style JSON model of operators, with timing"
DESCRIPTION = """\
Run a JSON model of resources, dispatchables (DirectML operators) and commands, as DirectML's
DxDispatch does: a model written for DxDispatch that uses opendml's operators runs unchanged.
Without a model, list the bundled example models."""
EPILOG = "examples:\n  opendml dispatch --example clip\n  opendml dispatch model.json --backend cpu -i 100 -v 1"


def _positive(text: str) -> int:
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1; got {text}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer; got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative; got {text}")
    return value


def _milliseconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of milliseconds; got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive; got {text}")
    return value


_BYTE_UNITS = {"": 1, "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def _bytes(text: str) -> int:
    """A size in bytes: 1000000, 512MiB, 8GiB (KiB, MiB, GiB, TiB are powers of 1024)."""
    match = re.fullmatch(r"\s*(\d+)\s*([KMGT]iB)?\s*", text, re.IGNORECASE)
    if match is None:
        raise argparse.ArgumentTypeError(f"must be a number of bytes, optionally followed by KiB, MiB, GiB or TiB; "
                                         f"got {text!r}")
    value = int(match[1]) * _BYTE_UNITS[(match[2] or "").upper()]
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1; got {text!r}")
    return value


def _folder(text: str) -> Path:
    try:
        return Path(check_path(text, "--output-path"))
    except OpenDMLError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("--output-path: ")) from None


def _feature_level(text: str) -> FeatureLevel:
    try:
        return FeatureLevel.parse(text, owner="--feature-level", field="value")
    except OpenDMLError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """DxDispatch's options, spelled with hyphens (its underscore spellings are accepted too)."""
    parser.add_argument("model", nargs="?", type=Path, help="the JSON model to run")
    parser.add_argument("--example", metavar="NAME", help="run a bundled example model instead")
    parser.add_argument("--backend", choices=("auto", "cpu", "cuda"), default="auto",
                        help="where to run: auto is cuda when a CUDA GPU can be used, else cpu (default: auto)")
    parser.add_argument("--feature-level", "--feature_level", type=_feature_level, default=NEWEST,
                        metavar="LEVEL", help=f"the device's DirectML feature level (default: {NEWEST.label})")
    timing = parser.add_argument_group("timing")
    timing.add_argument("-i", "--dispatch-iterations", "--dispatch_iterations", type=_positive, default=1,
                        metavar="N", help="the fewest timed iterations of each dispatch, each executing one "
                                          "recorded command list (default: 1)")
    timing.add_argument("-r", "--dispatch-repeat", "--dispatch_repeat", type=_positive, default=1, metavar="N",
                        help="dispatches recorded into that command list; a sample is the time per dispatch "
                             "(default: 1)")
    timing.add_argument("-w", "--warmup-samples", "--warmup_samples", type=_count, default=1, metavar="N",
                        help="the most leading iterations counted as cold, left out of the median (default: 1)")
    timing.add_argument("-t", "--milliseconds-to-run", "--milliseconds_to_run", type=_milliseconds, metavar="MS",
                        help="keep iterating each dispatch at least this long")
    timing.add_argument("-v", "--timing-verbosity", "--timing_verbosity", type=int, choices=(0, 1, 2), default=0,
                        metavar="{0,1,2}",
                        help="0: a median per dispatch; 1: cold/hot statistics; 2: every iteration (default: 0)")
    parser.add_argument("--schema", action="store_true",
                        help="print the JSON schema (draft 2020-12) of the models opendml reads, and stop")
    files = parser.add_argument_group("files and memory")
    files.add_argument("--output-path", "--output_path", type=_folder, default=Path("."), metavar="DIR",
                       help="folder that writeFile targetPaths are relative to, and stay inside (default: .)")
    files.add_argument(ALLOW_OUTSIDE_OPTION, action="store_true",
                       help="let writeFile targetPaths be absolute or lead outside --output-path")
    files.add_argument("--max-resource-bytes", type=_bytes, default=MAX_RESOURCE_BYTES, metavar="BYTES",
                       help=f"refuse a resource larger than this, before allocating anything (default: "
                            f"{MAX_RESOURCE_BYTES // 2**30}GiB)")
    parser.add_argument("--print-commands", "--print_commands", action="store_true",
                        help="print each command before running it")


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(NAME, help=HELP, description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Exit status: 0 done, 2 a bad model or option (one line on stderr), 1 an internal error, 130 interrupted."""
    from . import catalog

    if args.schema:
        return _print_schema(args)
    if args.model is None and args.example is None:
        _print_examples(catalog.list_examples())
        return 0
    try:
        _run_model(args)
    except OpenDMLError as error:
        return _fail(str(error), 2)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; no files were written.", file=sys.stderr)
        return 130
    except BrokenPipeError:  # stdout closed (``opendml dispatch ... | head``): opendml.cli.main ends quietly
        raise
    except Exception as error:  # a fault of opendml's, not of the model: still one line, never a traceback
        return _fail(f"internal error: {type(error).__name__}: {error}", 1)
    return 0


def _run_model(args: argparse.Namespace) -> None:
    from . import catalog
    from .model import load_model
    from .runner import Runner, make_device
    from .timing import TimingOptions

    if args.model is not None and args.example is not None:
        raise OpenDMLError("give a model or --example NAME, not both.")
    path = args.model if args.example is None else catalog.find_example(args.example).path
    model = load_model(path, args.output_path, allow_outside_output_path=args.allow_outside_output_path,
                       max_resource_bytes=args.max_resource_bytes)
    device = make_device(args.backend, args.feature_level)
    print(f"Running on '{device.backend.name}' at feature level {device.feature_level}", flush=True)
    timing = TimingOptions(args.dispatch_iterations, args.dispatch_repeat, args.milliseconds_to_run,
                           args.warmup_samples, args.timing_verbosity)
    with notices.shown_on_stderr(args.timing_verbosity >= 1):  # -v 1 or 2: a kernel compiled on first use says so
        Runner(model, device, timing, print_commands=args.print_commands).run()


def _fail(message: str, status: int) -> int:
    # One line, whatever the message holds.
    print(f"{PROG}: error: {' '.join(message.split())}", file=sys.stderr)
    return status


def _print_schema(args: argparse.Namespace) -> int:
    from .schema import model_schema

    if args.model is not None or args.example is not None:
        return _fail("--schema takes no model or --example.", 2)
    print(json.dumps(model_schema(), indent=2))
    return 0


def _print_examples(examples: list) -> None:  # type: ignore[type-arg]
    print("Bundled example models (run one with: opendml dispatch --example NAME):")
    width = max((len(e.name) for e in examples), default=0)
    for example in examples:
        print(f"  {example.name:<{width}}  {example.description}")
