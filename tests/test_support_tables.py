"""Every support-table row of SPEC 4-7 and 9, transcribed here independently of opendml's schemas.

For each operator, level, data-type combination and dimension count, the description must be accepted
exactly when the table in force at that level allows it; when it is rejected but a higher level would
accept it, the error must name the lowest such level.
"""

from __future__ import annotations

import functools
import itertools

import pytest

import opendml as dml
from opendml import DataType as T
from opendml import FeatureLevel as L

F = {T.FLOAT32, T.FLOAT16}
I32 = {T.INT32, T.INT16, T.INT8, T.UINT32, T.UINT16, T.UINT8}
I64 = {T.INT64, T.UINT64}
IDX = {T.INT64, T.INT32, T.UINT64, T.UINT32}
EVERY_TYPE = [t for t in T if t is not T.UNKNOWN]
ALL_RANKS = range(1, 9)
FOUR = range(4, 5)

# (from level, dimension counts, data types) — SPEC 4 and 5.
CLIP_TABLE = [(L.FL_5_0, ALL_RANKS, F | I32 | I64), (L.FL_3_0, ALL_RANKS, F | I32),
              (L.FL_2_1, FOUR, F | I32), (L.FL_1_0, FOUR, F)]
CLIP1_TABLE = [(L.FL_5_0, ALL_RANKS, F | I32 | I64)]
THRESHOLD_TABLE = [(L.FL_3_0, ALL_RANKS, F | I32), (L.FL_2_1, FOUR, F | I32), (L.FL_1_0, FOUR, F)]
# SPEC 6: (from level, ranks, input = zero point types, scale = output types, zero point optional).
DEQUANTIZE_TABLE = [(L.FL_6_2, ALL_RANKS, I32, F, True), (L.FL_6_0, ALL_RANKS, I32, F, False),
                    (L.FL_3_0, ALL_RANKS, I32, {T.FLOAT32}, False), (L.FL_2_1, FOUR, I32, {T.FLOAT32}, False),
                    (L.FL_1_0, FOUR, {T.UINT8}, {T.FLOAT32}, False)]
# SPEC 9: (from level, ranks, input types, scale types, zero point = output types, zero point optional).
QUANTIZE_TABLE = [(L.FL_6_2, ALL_RANKS, {T.FLOAT32, T.FLOAT16, T.INT32}, F, {T.INT8, T.UINT8}, True),
                  (L.FL_6_0, ALL_RANKS, {T.FLOAT32, T.FLOAT16, T.INT32}, F, {T.INT8, T.UINT8}, False),
                  (L.FL_3_0, ALL_RANKS, {T.FLOAT32, T.INT32}, {T.FLOAT32}, {T.INT8, T.UINT8}, False),
                  (L.FL_2_1, FOUR, {T.FLOAT32, T.INT32}, {T.FLOAT32}, {T.INT8, T.UINT8}, False),
                  (L.FL_1_0, FOUR, {T.FLOAT32}, {T.FLOAT32}, {T.UINT8}, False)]
# SPEC 7: (from level, ranks, input types, output types).
ARGMIN_TABLE = [(L.FL_4_1, ALL_RANKS, F | I32 | I64, IDX), (L.FL_3_0, ALL_RANKS, F | I32, IDX)]

# The unary family, from each operator's DirectML page (ELEMENT_WISE_IDENTITY's 4_1 row with FLOAT64: a copy,
# docs/semantics.md, sections 9 and 9d). Descriptions are made with the functional keyword fields' defaults.
TWO_TO_FIVE = range(4, 6)
ACTIVATION_TABLE = [(L.FL_3_0, ALL_RANKS, F), (L.FL_2_0, TWO_TO_FIVE, F), (L.FL_1_0, FOUR, F)]
SIGNED = {T.INT32, T.INT16, T.INT8}

UNARY_TABLES = {
    "ElementWiseIdentityDesc": [(L.FL_4_1, ALL_RANKS, F | {T.FLOAT64} | I32 | I64), *CLIP_TABLE[1:]],
    "ElementWiseAbsDesc": [(L.FL_4_1, ALL_RANKS, F | SIGNED | {T.INT64}), (L.FL_3_0, ALL_RANKS, F | SIGNED),
                           (L.FL_2_1, FOUR, F | SIGNED), (L.FL_1_0, FOUR, F)],
    "ElementWiseNegateDesc": [(L.FL_5_0, ALL_RANKS, F | SIGNED | {T.INT64})],
    "ElementWiseCeilDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_1_0, FOUR, F)],
    "ElementWiseFloorDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_1_0, FOUR, F)],
    "ElementWiseRecipDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_1_0, FOUR, F)],
    "ElementWiseSqrtDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_1_0, FOUR, F)],
    "ElementWiseExpDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_1_0, FOUR, F)],
    "ElementWiseConstantPowDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_1_0, FOUR, F)],
    "ElementWiseLogDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_1_0, FOUR, F)],
    "ElementWiseSinDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_1_0, FOUR, F)],
    "ElementWiseCosDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_1_0, FOUR, F)],
    "ElementWiseTanDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_1_0, FOUR, F)],
    "ElementWiseAsinDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_1_0, FOUR, F)],
    "ElementWiseAcosDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_1_0, FOUR, F)],
    "ElementWiseAtanDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_1_0, FOUR, F)],
    "ElementWiseSinhDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_2_0, FOUR, F)],
    "ElementWiseCoshDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_2_0, FOUR, F)],
    "ElementWiseTanhDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_2_0, FOUR, F)],
    "ElementWiseAsinhDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_2_0, FOUR, F)],
    "ElementWiseAcoshDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_2_0, FOUR, F)],
    "ElementWiseAtanhDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_2_0, FOUR, F)],
    "ElementWiseErfDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_2_0, FOUR, F)],
    "ElementWiseBitNotDesc": [(L.FL_4_1, ALL_RANKS, I32 | I64), (L.FL_3_0, ALL_RANKS, {T.UINT32, T.UINT16, T.UINT8})],
    "ElementWiseLogicalNotDesc": [(L.FL_3_0, ALL_RANKS, {T.UINT32, T.UINT8}), (L.FL_2_0, FOUR, {T.UINT32, T.UINT8}),
                                  (L.FL_1_0, FOUR, {T.UINT32})],
    "ElementWiseSignDesc": [(L.FL_4_1, ALL_RANKS, F | I32 | I64), (L.FL_3_0, ALL_RANKS, F | I32),
                            (L.FL_2_1, FOUR, F | I32), (L.FL_2_0, FOUR, F)],
    "ElementWiseRoundDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_2_1, FOUR, F)],
    "ActivationIdentityDesc": ACTIVATION_TABLE,
    "ActivationLinearDesc": ACTIVATION_TABLE,
    "ActivationReluDesc": [(L.FL_5_1, ALL_RANKS, F | SIGNED), *ACTIVATION_TABLE],
    "ActivationLeakyReluDesc": ACTIVATION_TABLE,
    "ActivationThresholdedReluDesc": ACTIVATION_TABLE,
    "ActivationHardSigmoidDesc": ACTIVATION_TABLE,
    "ActivationHardSwishDesc": [(L.FL_6_2, ALL_RANKS, F)],
    "ActivationShrinkDesc": [(L.FL_5_1, ALL_RANKS, F | I32), (L.FL_3_0, ALL_RANKS, F), (L.FL_2_0, TWO_TO_FIVE, F)],
    "ActivationSigmoidDesc": ACTIVATION_TABLE,
    "ActivationTanhDesc": ACTIVATION_TABLE,
    "ActivationSoftplusDesc": ACTIVATION_TABLE,
    "ActivationParametricSoftplusDesc": ACTIVATION_TABLE,
    "ActivationSoftsignDesc": ACTIVATION_TABLE,
    "ActivationEluDesc": ACTIVATION_TABLE,
    "ActivationCeluDesc": [(L.FL_3_0, ALL_RANKS, F)],
    "ActivationScaledEluDesc": ACTIVATION_TABLE,
    "ActivationScaledTanhDesc": ACTIVATION_TABLE,
    "ActivationGeluDesc": [(L.FL_5_1, ALL_RANKS, F)],
    "ActivationSwishDesc": [(L.FL_6_2, ALL_RANKS, F)],
}
UNARY_FIELDS = {"ElementWiseConstantPowDesc": (2.0,),
                "ElementWiseRoundDesc": ("TOWARD_ZERO",), "ActivationLinearDesc": (2.0, 1.0), "ActivationLeakyReluDesc": (0.1,),
                "ActivationThresholdedReluDesc": (1.0,), "ActivationHardSigmoidDesc": (0.2, 0.5),
                "ActivationHardSwishDesc": (0.2, 0.5), "ActivationShrinkDesc": (0.0, 0.5),
                "ActivationSoftplusDesc": (1.0,), "ActivationParametricSoftplusDesc": (1.0, 1.0),
                "ActivationEluDesc": (1.0,), "ActivationCeluDesc": (1.0,), "ActivationScaledEluDesc": (1.5, 1.0),
                "ActivationScaledTanhDesc": (1.0, 0.5), "ActivationSwishDesc": (1.0,)}


def in_force(table: list, level: L) -> tuple | None:
    rows = [row for row in table if row[0] <= level]
    return max(rows, key=lambda row: row[0]) if rows else None


def expected_outcome(table: list, allows, levels=tuple(L)) -> dict[L, bool]:
    return {level: (row := in_force(table, level)) is not None and allows(row) for level in levels}


def check(make_desc, outcome: dict[L, bool]) -> None:
    for level, accepted in outcome.items():
        device = dml.Device("cpu", level)
        if accepted:
            device.create_operator(make_desc())
            continue
        higher = [lv for lv, ok in outcome.items() if ok and lv > level]
        expected_error = dml.UnsupportedFeatureLevelError if higher else dml.InvalidArgumentError
        with pytest.raises(expected_error) as info:
            device.create_operator(make_desc())
        if higher:
            assert info.value.required_level == min(higher)
            assert f"accepts this description is {min(higher).label}" in str(info.value)


def sizes(rank: int) -> list[int]:
    return [2] * rank


@pytest.mark.parametrize("rank", ALL_RANKS)
@pytest.mark.parametrize("data_type", EVERY_TYPE, ids=lambda t: t.name)
@pytest.mark.parametrize("kind", ["CLIP", "CLIP1", "THRESHOLD"])
def test_unary_tables(kind: str, data_type: T, rank: int) -> None:
    t = dml.TensorDesc(data_type, sizes(rank))
    table = {"CLIP": CLIP_TABLE, "CLIP1": CLIP1_TABLE, "THRESHOLD": THRESHOLD_TABLE}[kind]
    make = {
        "CLIP": lambda: dml.ElementWiseClipDesc(t, t, 0.0, 1.0),
        "CLIP1": lambda: dml.ElementWiseClip1Desc(t, t, data_type, 0, 1),
        "THRESHOLD": lambda: dml.ElementWiseThresholdDesc(t, t, 0.0),
    }[kind]
    check(make, expected_outcome(table, lambda row: rank in row[1] and data_type in row[2]))


@pytest.mark.parametrize("desc_name", UNARY_TABLES)
def test_unary_family_tables(desc_name: str) -> None:
    make = getattr(dml, desc_name)
    fields = UNARY_FIELDS.get(desc_name, ())
    for data_type, rank in itertools.product(EVERY_TYPE, ALL_RANKS):
        t = dml.TensorDesc(data_type, sizes(rank))
        check(functools.partial(make, t, t, *fields), _unary_outcome(UNARY_TABLES[desc_name], rank, data_type))


def _unary_outcome(table: list, rank: int, data_type: T) -> dict[L, bool]:
    return expected_outcome(table, lambda row: rank in row[1] and data_type in row[2])


# (from level, ranks, input types, output types): the operators whose output's type is not the input's.
TYPED_OUTPUT_TABLES = {
    "ElementWiseIsNanDesc": [(L.FL_3_0, ALL_RANKS, F, {T.UINT32, T.UINT8}), (L.FL_2_0, FOUR, F, {T.UINT32, T.UINT8})],
    "ElementWiseIsInfinityDesc": [(L.FL_3_0, ALL_RANKS, F, {T.UINT8}), (L.FL_2_1, FOUR, F, {T.UINT8})],
    "ElementWiseBitCountDesc": [(L.FL_4_1, ALL_RANKS, I32 | I64, {T.UINT32, T.UINT8}),
                                (L.FL_3_0, ALL_RANKS, {T.UINT32, T.UINT16, T.UINT8}, {T.UINT32, T.UINT8})],
}


@pytest.mark.parametrize("desc_name", TYPED_OUTPUT_TABLES)
def test_typed_output_tables(desc_name: str) -> None:
    make = getattr(dml, desc_name)
    fields = ("POSITIVE",) if desc_name == "ElementWiseIsInfinityDesc" else ()
    for input_type, output_type, rank in itertools.product(EVERY_TYPE, EVERY_TYPE, [1, 4, 5]):
        x, y = dml.TensorDesc(input_type, sizes(rank)), dml.TensorDesc(output_type, sizes(rank))
        check(functools.partial(make, x, y, *fields),
              _typed_outcome(TYPED_OUTPUT_TABLES[desc_name], rank, input_type, output_type))


def _typed_outcome(table: list, rank: int, input_type: T, output_type: T) -> dict[L, bool]:
    return expected_outcome(table, lambda row: rank in row[1] and input_type in row[2] and output_type in row[3])


# (from level, ranks, types): the binary family, written from each page (ATensor, BTensor and OutputTensor alike).
_WIDE = F | {T.INT32, T.UINT32}
ARITHMETIC_TABLE = [(L.FL_5_1, ALL_RANKS, F | I32 | I64),
                    (L.FL_4_1, ALL_RANKS, _WIDE | I64), (L.FL_3_0, ALL_RANKS, _WIDE),
                    (L.FL_2_1, TWO_TO_FIVE, _WIDE), (L.FL_1_0, TWO_TO_FIVE, F)]
DIVIDE_TABLE = [(L.FL_6_0, ALL_RANKS, F | I32 | I64), (L.FL_5_1, ALL_RANKS, F | I32),
                (L.FL_3_0, ALL_RANKS, _WIDE), (L.FL_2_1, TWO_TO_FIVE, _WIDE), (L.FL_1_0, TWO_TO_FIVE, F)]
MIN_MAX_TABLE = [(L.FL_5_0, ALL_RANKS, F | I32 | I64), (L.FL_3_0, ALL_RANKS, F | I32), (L.FL_2_1, {4}, F | I32),
                 (L.FL_1_0, {4}, F)]
MODULUS_TABLE = [(L.FL_6_0, ALL_RANKS, F | I32 | I64), (L.FL_3_0, ALL_RANKS, F | I32), (L.FL_2_1, {4}, F | I32)]
LOGICAL_TABLE = [(L.FL_3_0, ALL_RANKS, {T.UINT32, T.UINT8}), (L.FL_2_0, FOUR, {T.UINT32, T.UINT8}),
                 (L.FL_1_0, FOUR, {T.UINT32})]
_U32 = frozenset({T.UINT32, T.UINT16, T.UINT8})
BIT_LOGICAL_TABLE = [(L.FL_4_1, ALL_RANKS, I32 | I64), (L.FL_3_0, ALL_RANKS, _U32)]  # DirectML's floats: not taken
BIT_SHIFT_TABLE = [(L.FL_4_1, ALL_RANKS, _U32 | {T.UINT64}), (L.FL_3_0, ALL_RANKS, _U32), (L.FL_2_1, {4}, _U32)]
BINARY_TABLES = {
    "ElementWiseAddDesc": ARITHMETIC_TABLE,
    "ElementWiseSubtractDesc": ARITHMETIC_TABLE,
    "ElementWiseMultiplyDesc": ARITHMETIC_TABLE,
    "ElementWiseDivideDesc": DIVIDE_TABLE,
    "ElementWiseMinDesc": MIN_MAX_TABLE,
    "ElementWiseMaxDesc": MIN_MAX_TABLE,
    "ElementWiseMeanDesc": [(L.FL_3_0, ALL_RANKS, _WIDE), (L.FL_2_1, {4}, _WIDE), (L.FL_1_0, {4}, F)],
    "ElementWiseDifferenceSquareDesc": [(L.FL_3_1, ALL_RANKS, _WIDE)],
    "ElementWiseModulusFloorDesc": MODULUS_TABLE,
    "ElementWiseModulusTruncateDesc": MODULUS_TABLE,
    "ElementWiseAdd1Desc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_2_0, TWO_TO_FIVE, F)],
    "ElementWiseLogicalAndDesc": LOGICAL_TABLE,
    "ElementWiseLogicalOrDesc": LOGICAL_TABLE,
    "ElementWiseLogicalXorDesc": LOGICAL_TABLE,
    "ElementWiseBitAndDesc": BIT_LOGICAL_TABLE,
    "ElementWiseBitOrDesc": BIT_LOGICAL_TABLE,
    "ElementWiseBitXorDesc": BIT_LOGICAL_TABLE,
    "ElementWiseBitShiftLeftDesc": BIT_SHIFT_TABLE,
    "ElementWiseBitShiftRightDesc": BIT_SHIFT_TABLE,
    "ElementWiseAtanYxDesc": [(L.FL_3_1, ALL_RANKS, F)],
    # The page's floats (its integer rows, exact integer powers, are not declared: refused by the table)
    "ElementWisePowDesc": [(L.FL_3_0, ALL_RANKS, F), (L.FL_1_0, FOUR, F)],
}


@pytest.mark.parametrize("desc_name", BINARY_TABLES)
def test_binary_family_tables(desc_name: str) -> None:
    make = getattr(dml, desc_name)
    for data_type, rank in itertools.product(EVERY_TYPE, ALL_RANKS):
        t = dml.TensorDesc(data_type, sizes(rank))
        check(functools.partial(make, t, t, t), _unary_outcome(BINARY_TABLES[desc_name], rank, data_type))


# (from level, ranks, ATensor's and BTensor's types, OutputTensor's types): the comparisons, from their pages.
_BOOLEAN = {T.UINT32, T.UINT8}
COMPARISON_TABLE = [(L.FL_4_1, ALL_RANKS, F | I32 | I64, _BOOLEAN), (L.FL_3_0, ALL_RANKS, F | I32, _BOOLEAN),
                    (L.FL_2_1, FOUR, F | I32, _BOOLEAN), (L.FL_2_0, FOUR, F, _BOOLEAN), (L.FL_1_0, FOUR, F, {T.UINT32})]
COMPARISON_TABLE_3_0 = COMPARISON_TABLE[:2]  # GREATER_THAN_OR_EQUAL and LESS_THAN_OR_EQUAL: introduced in 3_0
COMPARISON_TABLES = {
    "ElementWiseLogicalEqualsDesc": COMPARISON_TABLE,
    "ElementWiseLogicalGreaterThanDesc": COMPARISON_TABLE,
    "ElementWiseLogicalGreaterThanOrEqualDesc": COMPARISON_TABLE_3_0,
    "ElementWiseLogicalLessThanDesc": COMPARISON_TABLE,
    "ElementWiseLogicalLessThanOrEqualDesc": COMPARISON_TABLE_3_0,
}


@pytest.mark.parametrize("desc_name", COMPARISON_TABLES)
def test_comparison_tables(desc_name: str) -> None:
    make = getattr(dml, desc_name)
    for input_type, output_type, rank in itertools.product(EVERY_TYPE, EVERY_TYPE, [1, 4, 5]):
        t, y = dml.TensorDesc(input_type, sizes(rank)), dml.TensorDesc(output_type, sizes(rank))
        check(functools.partial(make, t, t, y),
              _typed_outcome(COMPARISON_TABLES[desc_name], rank, input_type, output_type))


# ELEMENT_WISE_IF: (from level, ranks, ATensor's, BTensor's and OutputTensor's types); ConditionTensor UINT8. The
# 2_0 row is FLOAT16 alone (the page's last table).
IF_TABLE = [(L.FL_5_0, ALL_RANKS, F | {T.FLOAT64} | I32 | I64), (L.FL_3_0, ALL_RANKS, F | I32),
            (L.FL_2_0, FOUR, {T.FLOAT16})]


# CAST: (from level, ranks, types), its InputTensor and OutputTensor any two of them (the page's tables).
CAST_TABLE = [(L.FL_4_1, ALL_RANKS, F | {T.FLOAT64} | I32 | I64), (L.FL_3_1, ALL_RANKS, F | I32 | I64),
              (L.FL_3_0, FOUR, F | I32 | I64), (L.FL_1_0, FOUR, F | {T.INT16, T.INT8, T.UINT16, T.UINT8})]


def test_cast_table() -> None:
    for input_type, output_type, rank in itertools.product(EVERY_TYPE, EVERY_TYPE, [1, 4, 5]):
        x, y = dml.TensorDesc(input_type, sizes(rank)), dml.TensorDesc(output_type, sizes(rank))
        check(functools.partial(dml.CastDesc, x, y), _cast_outcome(rank, input_type, output_type))


def _cast_outcome(rank: int, input_type: T, output_type: T) -> dict[L, bool]:
    return expected_outcome(CAST_TABLE, lambda row: rank in row[1] and input_type in row[2] and output_type in row[2])


def test_if_table() -> None:
    for condition_type, data_type, rank in itertools.product(EVERY_TYPE, EVERY_TYPE, [1, 4, 5]):
        c, t = dml.TensorDesc(condition_type, sizes(rank)), dml.TensorDesc(data_type, sizes(rank))
        check(functools.partial(dml.ElementWiseIfDesc, c, t, t, t), _if_outcome(rank, condition_type, data_type))


def _if_outcome(rank: int, condition_type: T, data_type: T) -> dict[L, bool]:
    return expected_outcome(IF_TABLE, lambda row: rank in row[1] and data_type in row[2] and condition_type is T.UINT8)
# ACTIVATION_PARAMETERIZED_RELU and the gradient operators, from their pages (their three tensors alike); the
# fields each description is made with (CLIP_GRAD1's MinMaxDataType is the tensors' type, given at the call).
GRADIENT_TABLES = {
    "ActivationParameterizedReluDesc": [(L.FL_5_1, ALL_RANKS, F | SIGNED), *ACTIVATION_TABLE],
    "ActivationReluGradDesc": [(L.FL_4_0, ALL_RANKS, F), (L.FL_3_0, ALL_RANKS, F)],
    "ElementWiseClipGradDesc": [(L.FL_5_0, ALL_RANKS, F | I32 | I64), (L.FL_3_1, ALL_RANKS, F | I32)],
    "ElementWiseClipGrad1Desc": [(L.FL_5_0, ALL_RANKS, F | I32 | I64)],
}
GRADIENT_FIELDS = {"ElementWiseClipGradDesc": (0.0, 1.0), "ElementWiseClipGrad1Desc": (0, 1)}


@pytest.mark.parametrize("desc_name", GRADIENT_TABLES)
def test_gradient_and_parameterized_relu_tables(desc_name: str) -> None:
    make = getattr(dml, desc_name)
    for data_type, rank in itertools.product(EVERY_TYPE, ALL_RANKS):
        t = dml.TensorDesc(data_type, sizes(rank))
        fields = GRADIENT_FIELDS.get(desc_name, ())
        if desc_name == "ElementWiseClipGrad1Desc":
            fields = (data_type, *fields)
        check(functools.partial(make, t, t, t, *fields), _unary_outcome(GRADIENT_TABLES[desc_name], rank, data_type))


@pytest.mark.parametrize("rank", [1, 4, 8])
@pytest.mark.parametrize("absent", [False, True])
@pytest.mark.parametrize("scale_type", [T.FLOAT32, T.FLOAT16], ids=lambda t: t.name)
@pytest.mark.parametrize("output_type", [T.INT8, T.UINT8, T.INT16], ids=lambda t: t.name)
@pytest.mark.parametrize("input_type", [T.INT8, T.UINT8, T.INT32, T.FLOAT32], ids=lambda t: t.name)
def test_quantized_linear_add_table(input_type: T, output_type: T, scale_type: T, absent: bool, rank: int) -> None:
    """The page's one table (4_0): ATensor, BTensor, their zero points, OutputTensor and its zero point INT8 or
    UINT8 in 1 to 8 dimensions, the three scales FLOAT32, the zero points optional."""
    x, y = dml.TensorDesc(input_type, sizes(rank)), dml.TensorDesc(output_type, sizes(rank))
    one = dml.TensorDesc(scale_type, sizes(rank), [0] * rank)
    zx, zy = (None, None) if absent else (x, y)
    ok = (input_type in {T.INT8, T.UINT8} and output_type in {T.INT8, T.UINT8}
          and scale_type is T.FLOAT32)
    check(lambda: dml.ElementWiseQuantizedLinearAddDesc(x, one, zx, x, one, zx, one, zy, y),
          expected_outcome([(L.FL_4_0, ALL_RANKS, {True})], lambda row: ok))


def test_every_declared_operator_has_its_table_here() -> None:
    from opendml.ops import DECLARED

    clamps = {"ElementWiseClipDesc", "ElementWiseThresholdDesc"}  # test_unary_tables
    tables = set(UNARY_TABLES) | set(TYPED_OUTPUT_TABLES) | set(BINARY_TABLES) | set(COMPARISON_TABLES) | clamps
    tables |= {"ElementWiseIfDesc"} | set(GRADIENT_TABLES)
    tables -= {"ElementWiseClipGrad1Desc"}  # no front end by its own name: clip_grad runs it
    assert {op.desc_type.__name__ for op in DECLARED} == tables


@pytest.mark.parametrize("rank", ALL_RANKS)
@pytest.mark.parametrize("with_zero_point", [True, False])
@pytest.mark.parametrize("input_type", EVERY_TYPE, ids=lambda t: t.name)
@pytest.mark.parametrize("scale_type", [T.FLOAT32, T.FLOAT16, T.FLOAT64, T.INT32], ids=lambda t: t.name)
def test_dequantize_linear_table(scale_type: T, input_type: T, with_zero_point: bool, rank: int) -> None:
    x = dml.TensorDesc(input_type, sizes(rank))
    scale = dml.TensorDesc(scale_type, sizes(rank), [0] * rank)
    zero_point = dml.TensorDesc(input_type, sizes(rank), [0] * rank) if with_zero_point else None
    out = dml.TensorDesc(scale_type, sizes(rank))

    def allows(row: tuple) -> bool:
        _, ranks, inputs, floats, optional = row
        return (rank in ranks and input_type in inputs and scale_type in floats
                and (with_zero_point or optional))

    check(lambda: dml.ElementWiseDequantizeLinearDesc(x, scale, zero_point, out),
          expected_outcome(DEQUANTIZE_TABLE, allows))


@pytest.mark.parametrize("rank", ALL_RANKS)
@pytest.mark.parametrize("with_zero_point", [True, False])
@pytest.mark.parametrize("output_type", [T.INT8, T.UINT8, T.INT16, T.UINT32, T.FLOAT32], ids=lambda t: t.name)
@pytest.mark.parametrize("input_type", EVERY_TYPE, ids=lambda t: t.name)
@pytest.mark.parametrize("scale_type", [T.FLOAT32, T.FLOAT16, T.FLOAT64, T.INT32], ids=lambda t: t.name)
def test_quantize_linear_table(scale_type: T, input_type: T, output_type: T, with_zero_point: bool,
                               rank: int) -> None:
    x = dml.TensorDesc(input_type, sizes(rank))
    scale = dml.TensorDesc(scale_type, sizes(rank), [0] * rank)
    zero_point = dml.TensorDesc(output_type, sizes(rank), [0] * rank) if with_zero_point else None
    out = dml.TensorDesc(output_type, sizes(rank))
    # The scale rule holds at every level: FLOAT32 for an INT32 input, else the input's type.
    scale_rule = scale_type is (T.FLOAT32 if input_type is T.INT32 else input_type)

    def allows(row: tuple) -> bool:
        _, ranks, inputs, scales, outputs, optional = row
        return (rank in ranks and input_type in inputs and scale_type in scales and output_type in outputs
                and (with_zero_point or optional) and scale_rule)

    check(lambda: dml.ElementWiseQuantizeLinearDesc(x, scale, zero_point, out),
          expected_outcome(QUANTIZE_TABLE, allows))


@pytest.mark.parametrize("rank", ALL_RANKS)
@pytest.mark.parametrize(("input_type", "output_type"), list(itertools.product(EVERY_TYPE, EVERY_TYPE)),
                         ids=lambda t: t.name)
def test_argmin_table(input_type: T, output_type: T, rank: int) -> None:
    x = dml.TensorDesc(input_type, sizes(rank))
    out = dml.TensorDesc(output_type, [1] + sizes(rank)[1:])
    outcome = expected_outcome(ARGMIN_TABLE, lambda row: rank in row[1] and input_type in row[2]
                               and output_type in row[3])
    check(lambda: dml.ArgMinDesc(x, out, [0]), outcome)


def test_argmin_names_its_introduction_level() -> None:
    t = dml.TensorDesc("FLOAT32", [2])
    with pytest.raises(dml.UnsupportedFeatureLevelError, match=r"^ARGMIN: FeatureLevel must be at least 3_0"):
        dml.Device("cpu", "2_1").create_operator(dml.ArgMinDesc(t, dml.TensorDesc("UINT32", [1]), [0]))


def test_clip1_names_its_introduction_level() -> None:
    t = dml.TensorDesc("INT32", [2])
    with pytest.raises(dml.UnsupportedFeatureLevelError, match="ELEMENT_WISE_CLIP1") as info:
        dml.Device("cpu", "4_1").create_operator(dml.ElementWiseClip1Desc(t, t, "INT32", 0, 1))
    assert info.value.required_level is L.FL_5_0


def test_level_message_names_field_type_and_level() -> None:
    t = dml.TensorDesc("INT8", [1, 1, 2, 2])
    with pytest.raises(dml.UnsupportedFeatureLevelError) as info:
        dml.Device("cpu", "2_0").create_operator(dml.ElementWiseClipDesc(t, t, 0.0, 1.0))
    assert str(info.value) == (
        "ELEMENT_WISE_CLIP: InputTensor.DataType must be one of FLOAT32, FLOAT16 at feature level 2_0; got INT8."
        " The lowest feature level that accepts this description is 2_1.")


# DML_DEQUANTIZE_OPERATOR_DESC's and DML_QUANTIZE_OPERATOR_DESC's pages (6_3): (from level, ranks, input types,
# output types); QuantizationTensors FLOAT32, FLOAT16, INT8, INT4, UINT8, UINT4 (the scale of the float tensor's
# type and the zero point of the quantized tensor's: docs/semantics.md, section 11).
Q4 = {T.INT8, T.INT4, T.UINT8, T.UINT4}
BLOCKED_TABLES = {"DequantizeDesc": [(L.FL_6_3, ALL_RANKS, Q4, F)], "QuantizeDesc": [(L.FL_6_3, ALL_RANKS, F, Q4)]}


@pytest.mark.parametrize("rank", [1, 3, 8])
@pytest.mark.parametrize("kind", ["NONE", "SCALE", "SCALE_ZERO_POINT"])
@pytest.mark.parametrize("desc_name", BLOCKED_TABLES)
def test_quantize_and_dequantize_tables(desc_name: str, kind: str, rank: int) -> None:
    table = BLOCKED_TABLES[desc_name]
    make = getattr(dml, desc_name)
    for input_type, output_type in itertools.product(EVERY_TYPE, EVERY_TYPE):
        float_type, quantized = (output_type, input_type) if desc_name == "DequantizeDesc" else (input_type, output_type)
        quantization = [dml.TensorDesc(float_type, [1] * rank), dml.TensorDesc(quantized, [1] * rank)]
        count = {"NONE": 0, "SCALE": 1, "SCALE_ZERO_POINT": 2}[kind]
        outcome = expected_outcome(table, lambda row, i=input_type, o=output_type: rank in row[1] and i in row[2]
                                   and o in row[3])
        check(functools.partial(make, dml.TensorDesc(input_type, sizes(rank)), kind, quantization[:count],
                                dml.TensorDesc(output_type, sizes(rank))), outcome)
