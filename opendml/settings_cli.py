"""``opendml settings``: every OPENDML_* variable (``opendml.settings``), its current value, default and meaning.

``--markdown`` prints the table the README holds instead (a test checks that the two agree).
"""

from __future__ import annotations

import argparse

from . import settings

NAME = "settings"
HELP = "list the OPENDML_* environment variables with their current values"
DESCRIPTION = ("List every OPENDML_* environment variable: its current value (or the error it would raise), the "
               "values it accepts, its default, what it does and where it is read.")


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(NAME, help=HELP, description=DESCRIPTION)
    parser.add_argument("--markdown", action="store_true", help="print the README's Markdown table instead")
    parser.add_argument("--tests", action="store_true", help="include the variables only the test suite reads")
    parser.set_defaults(handler=run)


def _plain(text: str) -> str:
    return text.replace("`", "")


def run(args: argparse.Namespace) -> int:
    if args.markdown:
        print(settings.markdown_table(), end="")
        return 0
    status = 0
    for setting in settings.TABLE:
        if setting.scope == "tests" and not args.tests:
            continue
        now = settings.current(setting)
        status |= int(": invalid (" in now)
        print(f"{setting.name} = {now}")
        print(f"    values: {_plain(setting.parser.values())}; default: {_plain(setting.default_text)}")
        more = f"; see {setting.doc}" if setting.doc else ""
        print(f"    {_plain(setting.meaning)} (read in {setting.where}{more})")
    return status
