"""ONNX's own backend node tests of the mapped operators, through opendml.onnx.backend.

Every test passes, or is listed in onnx_exclusions.txt with its reason and must then fail with
UnsupportedModelError (opendml's one clear error, raised before anything runs).
"""

from __future__ import annotations

import re
import unittest
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("onnx", reason="the ONNX front end needs the onnx extra (pip install 'opendml[onnx]')")

import onnx.backend.test

from opendml.onnx import UnsupportedModelError, backend

OPERATORS = ("clip", "relu", "argmin", "argmax", "dequantizelinear", "quantizelinear", "identity", "abs", "neg",
             "ceil", "floor", "round", "sign", "reciprocal", "sqrt", "isnan", "isinf", "not", "bitwise_not", "leakyrelu",
             "thresholdedrelu", "shrink", "hardsigmoid", "hardswish", "add", "sub", "mul", "div", "min", "max", "sum",
             "mod", "equal", "greater", "greater_equal", "less", "less_equal", "and", "or", "xor", "where", "reduce",
             "bitwise_and", "bitwise_or", "bitwise_xor", "bitshift", "cast", "mean", "prelu", "exp", "log", "sin",
             "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "top_k",
             "sigmoid", "softplus", "softsign", "elu", "celu", "selu", "gelu", "softmax", "logsoftmax", "hardmax",
             "pow")
# ONNX names And's, Or's and Xor's node tests by rank (test_and2d, test_or_bcast3v1d): a digit may follow the name.
_INCLUDED = re.compile(rf"test_({'|'.join(OPERATORS)})(_\w+|\d\w*)?_(cpu|cuda)")
_DEVICE_SUFFIX = re.compile(r"_(cpu|cuda)$")


def _read_exclusions(path: Path) -> dict[str, str]:
    """Pattern -> reason, from lines of ``PATTERN  reason``; '#' starts a comment line."""
    exclusions = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            pattern, reason = line.split(maxsplit=1)
            exclusions[pattern] = reason.strip()
    return exclusions


EXCLUSIONS = _read_exclusions(Path(__file__).with_name("onnx_exclusions.txt"))


def _exclusion(test_name: str) -> str | None:
    """The reason a node test is excluded: by a pattern for every device, or by one of ``DEVICE:pattern`` for its
    own device (``cuda:test_top_k.*``)."""
    base = _DEVICE_SUFFIX.sub("", test_name)
    device = test_name[len(base) + 1:]
    for pattern, reason in EXCLUSIONS.items():
        only, bare = _device_and_pattern(pattern)
        if only in (None, device) and re.fullmatch(bare, base):
            return reason
    return None


def _device_and_pattern(pattern: str) -> tuple[str | None, str]:
    found = re.fullmatch(r"(cpu|cuda):(.*)", pattern)
    return (found[1], found[2]) if found else (None, pattern)


# Node tests whose compiled kernels are the same paths at another width than default ones': slow (each signed
# BitShift compiles a fused kernel of casts, shifts and XORs of its own; INT32's run by default, edge cases
# included).
SLOW = re.compile(r"test_bitshift_(left|right)_int(8|16|64)")


def _must_stay_unsupported(test: Callable[..., Any], reason: str) -> Callable[..., Any]:
    """An excluded test: expected to fail with UnsupportedModelError, strictly (a pass fails the suite)."""
    return pytest.mark.xfail(raises=UnsupportedModelError, strict=True, reason=f"onnx_exclusions.txt: {reason}")(test)


# The node tests check ONNX's mapping onto opendml's operators: by default on the CPU's NumPy kernels (each node test
# would otherwise compile kernels of its own: two minutes of the suite), under --slow on the compiled ones.
pytestmark = pytest.mark.usefixtures("numpy_kernels_unless_slow")


class _Backend(backend.OpenDMLBackend):
    """opendml's backend, except that ONNX's runner may not skip a model as incompatible: every model
    must then run, or fail as its exclusion says."""

    is_compatible = None  # type: ignore[assignment]


def _selected_cases() -> dict[str, type[unittest.TestCase]]:
    """ONNX's generated test classes, cut down to the mapped operators' node tests."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # generating other operators' cases warns (NumPy overflow in casts)
        runner = onnx.backend.test.BackendTest(_Backend, __name__)
        cases = runner.test_cases
    selected = {}
    for class_name, case in cases.items():
        tests = {}
        for name in dir(case):
            if not _INCLUDED.fullmatch(name):
                continue
            test = getattr(case, name)
            reason = _exclusion(name)
            tests[name] = test if reason is None else _must_stay_unsupported(test, reason)
            if SLOW.fullmatch(_DEVICE_SUFFIX.sub("", name)):
                tests[name] = pytest.mark.slow(tests[name])
        if tests:
            selected[class_name] = type(class_name, (unittest.TestCase,), {**tests, "__module__": __name__})
    return selected


SELECTED = _selected_cases()
globals().update(SELECTED)

_SELECTED_NAMES = {_DEVICE_SUFFIX.sub("", name) for case in SELECTED.values() for name in dir(case)
                   if name.startswith("test_")}


def test_every_operator_has_node_tests() -> None:
    for operator in OPERATORS:
        assert any(name.startswith(f"test_{operator}") for name in _SELECTED_NAMES), f"no node test of {operator}"
    assert {"test_dequantizelinear_axis", "test_dequantizelinear_blocked", "test_clip_default_int8_min",
            "test_argmin_keepdims_example_select_last_index", "test_relu", "test_argmax_negative_axis_keepdims_random",
            "test_quantizelinear_axis", "test_quantizelinear_blocked_asymmetric"} <= _SELECTED_NAMES


# The list is written against the node tests of the onnx versions that CI installs (1.23 on); older
# versions lack some of the cases it names (int2, float4e2m1, ...).
_LIST_VERSION = (1, 23)


@pytest.mark.skipif(tuple(int(p) for p in onnx.__version__.split(".")[:2]) < _LIST_VERSION,
                    reason=f"onnx {onnx.__version__} predates some node tests that onnx_exclusions.txt names")
@pytest.mark.parametrize("pattern", sorted(EXCLUSIONS))
def test_every_exclusion_matches_a_node_test(pattern: str) -> None:
    bare = _device_and_pattern(pattern)[1]
    assert any(re.fullmatch(bare, name) for name in _SELECTED_NAMES), f"{pattern} matches no node test"
