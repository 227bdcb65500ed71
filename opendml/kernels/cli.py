"""``opendml cache info``, ``clear`` and ``warm``: the kernel cache directory (``opendml.kernels.cache``).

``info`` prints the root, the directory this version of opendml compiles into, and every opendml directory
under the root with its files and bytes; ``clear`` removes those directories and nothing else there; ``warm``
compiles operators' kernels into it ahead of time (``warm``).
"""

from __future__ import annotations

import argparse
import sys

from . import cache

NAME = "cache"
HELP = "show or clear the compiled-kernel cache"
DESCRIPTION = ("Compiled CPU kernels are kept under a root directory (OPENDML_CACHE_DIR, default the user's "
               "cache directory), in one kernels-<fingerprint> directory per version of the kernel helpers.")


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(NAME, help=HELP, description=DESCRIPTION)
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    info = actions.add_parser("info", help="print the root, this version's directory, entries and bytes",
                              description="Print the root, this version's directory, entries and bytes.")
    info.set_defaults(handler=run_info)
    clear = actions.add_parser("clear", help="remove opendml's directories under the root (nothing else)",
                               description="Remove opendml's kernels-* directories under the root.")
    clear.set_defaults(handler=run_clear)
    warm = actions.add_parser("warm", help="compile operators' CPU kernels ahead of time (a Docker build step)",
                              description=WARM_DESCRIPTION, epilog=WARM_EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    warm.add_argument("targets", nargs="*", metavar="OPERATOR[:TYPE,...]",
                      help="an operator, as `opendml support` names it, and its input types (default: every one "
                           "of its newest support row); none: every operator")
    warm.set_defaults(handler=run_warm)
    for command in (info, clear, warm):  # so that an action reports its own unknown options
        command.set_defaults(command_parser=command)


WARM_DESCRIPTION = ("Compile the CPU kernels of the given operators and input types into this version's cache "
                    "directory, so that a later process runs them without compiling (one line per operator).")
WARM_EPILOG = """\
examples:
  opendml cache warm
  opendml cache warm ELEMENT_WISE_CLIP:FLOAT32,FLOAT16 ARGMAX
  OPENDML_CACHE_DIR=/opt/opendml-cache opendml cache warm relu:float32"""


def _size(entries: list[cache.Entry]) -> str:
    files, size = sum(e.files for e in entries), sum(e.bytes for e in entries)
    count = len(entries)
    return f"{count} {'directory' if count == 1 else 'directories'}, {files} files, {size:,} bytes"


def run_info(args: argparse.Namespace) -> int:
    root, current = cache.root(), cache.directory()
    print(f"root: {root}")
    print(f"this version: {current}" + ("" if current.parent == root else " (the root is not writable)"))
    entries = cache.entries(root)
    for entry in entries:
        mark = "  (this version)" if entry.path == current else ""
        print(f"  {entry.path.name}: {entry.files} files, {entry.bytes:,} bytes{mark}")
    print(f"total: {_size(entries)}")
    return 0


def run_clear(args: argparse.Namespace) -> int:
    root = cache.root()
    removed = cache.clear(root)
    print(f"removed {_size(removed)} from {root}")
    return 0


def run_warm(args: argparse.Namespace) -> int:
    from ..device import Device
    from . import warm

    try:
        targets = warm.parse_targets(args.targets)
    except warm.WarmUsageError as e:
        print(e, file=sys.stderr)
        return 2
    print(f"compiling into {cache.directory()}", flush=True)
    warm.warm(targets, Device("cpu"), lambda line: print(line, flush=True))
    return 0
