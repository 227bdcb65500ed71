"""The one validator of support tables, and the shared relation rules between tensors."""

from __future__ import annotations

from collections.abc import Mapping

from .dtypes import type_names
from .enums import TensorFlags
from .errors import UnsupportedFeatureLevelError, invalid, message
from .feature_levels import FeatureLevel
from .schema import OperatorSchema
from .tensor import TensorDesc

Problem = tuple[str, str, object]  # (field, requirement, what was given)


def check_support(schema: OperatorSchema, tensors: Mapping[str, TensorDesc | None],
                  level: FeatureLevel) -> None:
    """Reject a description that the support table in force at ``level`` does not allow.

    A description some higher level would accept raises UnsupportedFeatureLevelError naming the lowest
    such level; one that no level accepts raises InvalidArgumentError.
    """
    problem = support_problem(schema, tensors, level)
    if problem is None:
        return
    text = message(schema.name, *problem)
    accepting = next((higher for higher in FeatureLevel if higher > level
                      and support_problem(schema, tensors, higher) is None), None)
    if accepting is None:
        raise invalid(schema.name, *problem)
    raise UnsupportedFeatureLevelError(
        f"{text} The lowest feature level that accepts this description is {accepting}.", accepting)


def support_problem(schema: OperatorSchema, tensors: Mapping[str, TensorDesc | None],
                    level: FeatureLevel) -> Problem | None:
    """The first rule of the table in force at ``level`` that the tensors break, or None."""
    row = schema.row_at(level)
    if level < schema.introduced or row is None:
        return ("FeatureLevel", f"must be at least {schema.introduced}, where {schema.name} was introduced",
                level.label)
    at = f"at feature level {level}"
    for tensor in schema.tensors:
        desc = tensors.get(tensor.name)
        if desc is None:
            if tensor.optional and tensor.name in row.may_be_absent:
                continue
            return (tensor.name, f"is required {at}", "none")
        low, high = row.dimensions
        if not low <= desc.dimension_count <= high:
            wanted = f"{low}" if low == high else f"between {low} and {high}"
            return (f"{tensor.name}.DimensionCount", f"must be {wanted} {at}", desc.dimension_count)
        allowed = row.types[tensor.name]
        if desc.data_type not in allowed:
            return (f"{tensor.name}.DataType", f"must be one of {type_names(allowed)} {at}",
                    desc.data_type.name)
    return None


def check_no_owned_by_dml(schema: OperatorSchema, tensors: Mapping[str, TensorDesc | None]) -> None:
    """The four operators have no weights, so no tensor may be OWNED_BY_DML."""
    for name, desc in tensors.items():
        if desc is not None and desc.flags & TensorFlags.OWNED_BY_DML:
            raise invalid(schema.name, f"{name}.Flags",
                          "must not include OWNED_BY_DML (this operator has no weights)", desc.flags.name)


def check_same_data_type(owner: str, a: str, da: TensorDesc, b: str, db: TensorDesc) -> None:
    if da.data_type != db.data_type:
        raise invalid(owner, f"{b}.DataType", f"must equal {a}.DataType ({da.data_type.name})",
                      db.data_type.name)


def check_same_sizes(owner: str, a: str, da: TensorDesc, b: str, db: TensorDesc) -> None:
    if da.dimension_count != db.dimension_count:
        raise invalid(owner, f"{b}.DimensionCount", f"must equal {a}.DimensionCount ({da.dimension_count})",
                      db.dimension_count)
    for k, (na, nb) in enumerate(zip(da.sizes, db.sizes)):
        if na != nb:
            raise invalid(owner, f"{b}.Sizes[{k}]", f"must equal {a}.Sizes[{k}] ({na})", nb)


def check_output_writable(owner: str, name: str, desc: TensorDesc) -> None:
    """An output whose index vectors reach one element twice has no single meaning."""
    if desc.has_overlapping_elements():
        raise invalid(owner, f"{name}.Strides",
                      "must address each output element once (no zero stride on a dimension larger "
                      "than 1, no two indices reaching one element)", list(desc.effective_strides))
