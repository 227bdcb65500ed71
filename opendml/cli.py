"""The ``opendml`` command. Each tool is a subcommand, listed in SUBCOMMANDS.

A subcommand module provides ``register(subparsers)``, which adds its parser and sets
``handler=run`` on it; ``run(args)`` returns the exit status. Adding a tool is one line here.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from . import __version__

SUBCOMMANDS: tuple[str, ...] = (
    "opendml.dispatch.cli",
    "opendml.onnx.cli",
    "opendml.support",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="opendml", description="opendml's command-line tools.")
    parser.add_argument("--version", action="version", version=f"opendml {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for module in SUBCOMMANDS:
        importlib.import_module(module).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args))
    except BrokenPipeError:  # the reader went away (``opendml dispatch | head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
