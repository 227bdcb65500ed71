"""Fuzzing the ONNX front end: small models run with ONNX's meaning, or are refused with an OpenDMLError.

``onnx_cases.cases`` draws a model of Clip, Relu, ArgMin, ArgMax, DequantizeLinear or QuantizeLinear
(sometimes two nodes) at a random opset, some with one defect opendml documents as refused. A valid model's outputs must equal the
element-by-element ONNX formulas (NaN equal to NaN, and the sign of a zero left open, as ONNX leaves it);
a defective one must raise an OpenDMLError (UnsupportedModelError or InvalidArgumentError), never another
exception. Each model runs twice through one Session (the second run reuses its uploaded constants).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import opendml as dml

pytest.importorskip("onnx", reason="the ONNX front end needs the onnx package (pip install 'opendml[onnx]')")

import opendml.onnx
from opendml.onnx import Session

from .onnx_cases import Case, cases
from .settings import fuzz_settings, judging, record

FAMILY = "onnx"


def same(got: object, expected: object) -> bool:
    """Equal values; any NaN equals any NaN; -0.0 equals +0.0 (ONNX does not fix the sign of a zero)."""
    if isinstance(expected, float) and math.isnan(expected):
        return isinstance(got, float) and math.isnan(got)
    return got == expected


@fuzz_settings(FAMILY)
@given(case=cases(), serialized=st.booleans())
def test_onnx_models_are_judged(case: Case, serialized: bool) -> None:
    with judging(FAMILY, "models", case):
        check_case(case, serialized)


def check_case(case: Case, serialized: bool) -> None:
    model = case.model()
    try:
        session = Session(model.SerializeToString() if serialized else model, "cpu")
        results = [session.run(case.feeds) for _ in range(2)]
    except dml.OpenDMLError as error:
        record(FAMILY, "models", "rejected")
        assert case.defects, f"a valid model was refused: {type(error).__name__}: {error}"
        return
    except Exception as error:
        raise AssertionError(f"opendml.onnx raised {type(error).__name__}: {error}") from error
    record(FAMILY, "models", "accepted")
    assert not case.defects, f"a model with a defect was run: {case.defects}"
    for run, outputs in enumerate(results, 1):
        assert sorted(outputs) == sorted(case.expected), (outputs.keys(), case.expected.keys())
        for name, expected in case.expected.items():
            got = outputs[name]
            assert got.dtype == expected.dtype and got.shape == expected.shape, (
                f"output {name} (run {run}) has {got.dtype} {got.shape}, not {expected.dtype} {expected.shape}")
            wrong = [f"{i}: got {got[i].item()!r}, expected {expected[i].item()!r}" for i in np.ndindex(*got.shape)
                     if not same(got[i].item(), expected[i].item())]
            assert not wrong, f"output {name} (run {run}) differs from ONNX's formula: " + "; ".join(wrong[:6])


@fuzz_settings(FAMILY, share=0.1)
@given(data=st.one_of(st.binary(max_size=64), st.sampled_from([b"", b"\x08\x07", b"not a model"])))
def test_onnx_junk_bytes_are_refused(data: bytes) -> None:
    """Bytes that are not a model (or an empty one): an OpenDMLError, never another exception."""
    with judging(FAMILY, "junk bytes", data):
        try:
            opendml.onnx.run(data, {})
        except dml.OpenDMLError:
            record(FAMILY, "junk bytes", "rejected")
            return
        except Exception as error:
            raise AssertionError(f"opendml.onnx.run raised {type(error).__name__}: {error}") from error
        record(FAMILY, "junk bytes", "accepted")
