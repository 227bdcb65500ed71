"""``opendml support [OPERATOR] [--feature-level L] [--json]``: DirectML's support tables, as users ask.

Which data types and dimension counts each operator's tensors take, from which feature level. Everything
is read from the operator schemas (``opendml/ops``), the same data the validator checks descriptions
against, so what this prints is what ``Device.create_operator`` accepts.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, NoReturn

from .dtypes import type_names
from .errors import OpenDMLError
from .feature_levels import FeatureLevel
from .ops import OPERATORS
from .schema import OperatorSchema, SupportRow

NAME = "support"
PROG = f"opendml {NAME}"
HELP = "show which data types and dimension counts each operator takes at each feature level"
DESCRIPTION = """\
DirectML's support tables: for each operator, from which feature level each row applies, how many
dimensions its tensors may have, and which data types each tensor takes. With --feature-level, only the
row in force at that level (or that the operator is not available there)."""
EPILOG = """\
examples:
  opendml support
  opendml support ELEMENT_WISE_DEQUANTIZE_LINEAR --feature-level 3_0
  opendml support dml_operator_argmin --json"""


class UsageError(OpenDMLError):
    """A bad argument to ``opendml support``, reported on one line with exit status 2."""


def find_schema(name: str) -> OperatorSchema:
    """An operator's schema by DirectML's name, case-insensitive, with or without ``DML_OPERATOR_``;
    ``ELEMENT_WISE_`` or ``ACTIVATION_`` may be left out too (``clip`` is ELEMENT_WISE_CLIP, ``relu``
    ACTIVATION_RELU), where no other operator is named so (``identity`` is ELEMENT_WISE_IDENTITY)."""
    key = name.strip().upper().removeprefix("DML_OPERATOR_")
    schemas = [definition.schema for definition in OPERATORS]
    for schema in schemas:  # the full name first: IDENTITY is ELEMENT_WISE_IDENTITY, not ACTIVATION_IDENTITY
        if key == schema.name:
            return schema
    for schema in schemas:
        if key in (schema.name.removeprefix("ELEMENT_WISE_"), schema.name.removeprefix("ACTIVATION_")):
            return schema
    known = ", ".join(definition.schema.name for definition in OPERATORS)
    raise UsageError(f"OPERATOR must be one of {known}; got {name!r}.")


def parse_level(text: str) -> FeatureLevel:
    try:
        return FeatureLevel.parse(text)
    except OpenDMLError:
        known = ", ".join(level.label for level in FeatureLevel)
        raise UsageError(f"--feature-level must be one of {known}; got {text!r}.") from None


def rows_at(schema: OperatorSchema, level: FeatureLevel | None) -> list[SupportRow]:
    """Every row (newest first), or the one in force at ``level`` (none before the operator exists)."""
    if level is None:
        return sorted(schema.rows, key=lambda row: row.level, reverse=True)
    row = schema.row_at(level)
    return [] if row is None or level < schema.introduced else [row]


def presence(schema: OperatorSchema, row: SupportRow, tensor: str) -> str | None:
    """For a tensor the description may leave out: whether this row lets it be absent."""
    field = next(t for t in schema.tensors if t.name == tensor)
    if not field.optional:
        return None
    return "optional" if tensor in row.may_be_absent else "required"


def as_json(schema: OperatorSchema, level: FeatureLevel | None) -> dict[str, Any]:
    rows = rows_at(schema, level)
    entry: dict[str, Any] = {"name": schema.name, "introduced": schema.introduced.label}
    if level is not None:
        entry["available"] = bool(rows)
    entry["rows"] = [{
        "from": row.level.label,
        "dimensions": {"min": row.dimensions[0], "max": row.dimensions[1]},
        "tensors": [{"name": t.name, "kind": t.kind, "data_types": type_names(row.types[t.name]).split(", "),
                     **({"presence": presence(schema, row, t.name)} if t.optional else {})}
                    for t in schema.tensors],
    } for row in rows]
    return entry


def as_text(schema: OperatorSchema, level: FeatureLevel | None) -> str:
    rows = rows_at(schema, level)
    head = f"{schema.name} (introduced at {schema.introduced})"
    if not rows:
        return f"{head}: not available at feature level {level}."
    if level is not None:
        head += f", at feature level {level}: the row from {rows[0].level}"
    table = [("from", "dimensions", "tensor", "data types")]
    for row in rows:
        low, high = row.dimensions
        dims = str(low) if low == high else f"{low}-{high}"
        for k, tensor in enumerate(schema.tensors):
            types = type_names(row.types[tensor.name])
            note = presence(schema, row, tensor.name)
            table.append((row.level.label if k == 0 else "", dims if k == 0 else "", tensor.name,
                          types + (f" ({note})" if note else "")))
    widths = [max(len(line[c]) for line in table) for c in range(3)]
    lines = ["  " + "  ".join(cell.ljust(width) for cell, width in zip(line[:3], widths)) + "  " + line[3]
             for line in table]
    return "\n".join([head, *lines])


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(NAME, help=HELP, description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("operator", nargs="?", metavar="OPERATOR",
                        help="DirectML's operator name, e.g. ELEMENT_WISE_CLIP or DML_OPERATOR_ARGMIN "
                             "(default: every operator)")
    parser.add_argument("--feature-level", "--feature_level", metavar="LEVEL",
                        help="show only the row in force at this level, e.g. 4_1")
    parser.add_argument("--json", action="store_true", help="print JSON, for tools")

    def one_line(message: str) -> NoReturn:  # argparse's own report adds a usage block
        print(f"{PROG}: error: {message}", file=sys.stderr)
        raise SystemExit(2)

    def known_only(args: Any = None, namespace: Any = None) -> tuple[argparse.Namespace, list[str]]:
        # Left alone, an unknown option goes back to the top-level parser, which reports it as its own.
        namespace, extras = argparse.ArgumentParser.parse_known_args(parser, args, namespace)
        if extras:
            one_line(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras

    parser.error = one_line  # type: ignore[method-assign]
    parser.parse_known_args = known_only  # type: ignore[method-assign]
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Exit status: 0, or 2 for a bad argument (one line on stderr)."""
    try:
        schemas = ([find_schema(args.operator)] if args.operator is not None
                   else [definition.schema for definition in OPERATORS])
        level = None if args.feature_level is None else parse_level(args.feature_level)
    except UsageError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    if args.json:
        report = {"feature_level": None if level is None else level.label,
                  "operators": [as_json(schema, level) for schema in schemas]}
        print(json.dumps(report, indent=2))
    else:
        print("\n\n".join(as_text(schema, level) for schema in schemas))
    return 0
