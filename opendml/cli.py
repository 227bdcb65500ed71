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
from typing import NoReturn

from . import __version__

SUBCOMMANDS: tuple[str, ...] = (
    "opendml.dispatch.cli",
    "opendml.kernels.cli",
    "opendml.onnx.cli",
    "opendml.settings_cli",
    "opendml.support",
)


class OneLineParser(argparse.ArgumentParser):
    """A command-line mistake is one line, ``<prog>: error: <message>``, exit status 2 (argparse's own
    report puts the usage block first). Subcommands' parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="opendml", description="opendml's command-line tools.")
    parser.add_argument("--version", action="version", version=f"opendml {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    for module in SUBCOMMANDS:
        importlib.import_module(module).register(subparsers)
    for command in subparsers.choices.values():  # so that a subcommand reports its own unknown options
        command.set_defaults(command_parser=command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args, unknown = build_parser().parse_known_args(argv)
    if unknown:
        args.command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        return int(args.handler(args))
    except BrokenPipeError:  # the reader went away (``opendml dispatch | head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
