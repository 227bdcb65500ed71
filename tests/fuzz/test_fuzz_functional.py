"""Fuzzing the functional API: right bits in exactly out='s elements, or an OpenDMLError and nothing changed.

Each call (``functional.calls``) runs twice, its memory restored in between: the second call with the
same layout takes the cached fast path. Each time the result must equal the model bit for bit (NaN
payloads aside), with no byte of any array the test owns changed except the elements of ``out=``; or
the call must raise an OpenDMLError with every byte as it was. ``functional.expect`` says which.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given

import opendml as dml
from tests.elementwise_oracle import same_value

from .arrays import View
from .execution import device_at
from .functional import Call, Expected, Junk, calls, expect
from .settings import fuzz_settings, judging, record

FAMILY = "functional"


def arguments(call: Call) -> tuple[Any, list[Any], dict[str, Any]]:
    """(the function, its positional arguments, its keyword arguments) as the caller passes them."""
    def real(value: object) -> object:
        if isinstance(value, View):
            return value.array()
        return value.value if isinstance(value, Junk) else value

    args = call.args
    x = real(call.x)
    if call.function == "clip":
        positional = [x, real(args["min"]), real(args["max"])]
        keywords = {"scale_bias": args["scale_bias"]}
    elif call.function == "threshold":
        positional, keywords = [x, real(args["min"])], {"scale_bias": args["scale_bias"]}
    elif call.function == "dequantize_linear":
        positional, keywords = [x, real(args["scale"]), real(args["zero_point"])], {}
    elif call.function == "quantize_linear":
        positional = [x, real(args["scale"]), real(args["zero_point"])]
        keywords = {"output_type": args["output_type"]} if "output_type" in args else {}
    else:
        positional = [x, args["axes"]]
        keywords = {"axis_direction": args["axis_direction"], "output_type": args["output_type"]}
        if "nan_policy" in args:
            keywords["nan_policy"] = args["nan_policy"]
    if call.out is not None:
        keywords["out"] = real(call.out)
    if isinstance(call.device, tuple):
        keywords["device"] = device_at(call.device[1])
    elif call.device is not None:
        keywords["device"] = real(call.device)
    return getattr(dml, call.function), positional, keywords


def owners(call: Call) -> list[np.ndarray]:
    found: dict[int, np.ndarray] = {}
    for view in [*call.views, call.out] if isinstance(call.out, View) else call.views:
        found.setdefault(id(view.owner), view.owner)
    return list(found.values())


@fuzz_settings(FAMILY)
@given(call=calls())
def test_functional_calls_are_judged_by_the_spec(call: Call) -> None:
    with judging(FAMILY, "calls", call):
        check_call(call)


def check_call(call: Call) -> None:
    expected = expect(call)
    memory = owners(call)
    initial = [owner.copy() for owner in memory]
    outcomes = []
    for attempt in ("first", "second"):
        for owner, before in zip(memory, initial):
            owner[...] = before
        function, positional, keywords = arguments(call)
        try:
            result = function(*positional, **keywords)
        except dml.OpenDMLError as error:
            outcomes.append("rejected")
            assert expected.verdict != "accept", (
                f"a valid call was refused ({attempt} call): {type(error).__name__}: {error}")
            changed = [k for k, (owner, before) in enumerate(zip(memory, initial)) if not np.array_equal(owner, before)]
            assert not changed, f"a refused call changed the caller's memory ({attempt} call): arrays {changed}: {error}"
            continue
        except Exception as error:
            raise AssertionError(f"{call.function} raised {type(error).__name__} ({attempt} call): {error}") from error
        outcomes.append("accepted")
        assert expected.verdict != "reject", f"an invalid call was accepted ({attempt} call): {expected.reason}"
        check_result(call, expected, result, memory, initial, attempt)
    assert outcomes[0] == outcomes[1], f"the second call was {outcomes[1]}, the first {outcomes[0]}"
    record(FAMILY, "calls", outcomes[0])


def check_result(call: Call, expected: Expected, result: Any, memory: list[np.ndarray], initial: list[np.ndarray],
                 attempt: str) -> None:
    """The result's values, then every byte the caller owns: only out='s elements may have changed."""
    writable: dict[int, np.ndarray] = {}
    if isinstance(call.out, View):
        out_array = call.out.array()
        assert result is out_array, f"with out=, the call must return out itself ({attempt} call)"
        got = out_array
        writable[id(call.out.owner)] = call.out.element_bytes()
    else:
        assert isinstance(result, np.ndarray), f"the result is a {type(result).__name__} ({attempt} call)"
        assert result.shape == expected.shape and result.dtype == expected.dtype, (
            f"the result has shape {result.shape} and dtype {result.dtype}, not {expected.shape} {expected.dtype} "
            f"({attempt} call)")
        got = result
    convert = float if got.dtype.kind == "f" else int
    wrong = [f"{i}: got {convert(got[i])!r}, expected {v!r}" for i, v in expected.values.items()
             if not same_value(convert(got[i]), v)]
    assert not wrong, f"elements differ from SPEC ({attempt} call): " + "; ".join(wrong[:6])
    for k, (owner, before) in enumerate(zip(memory, initial)):
        allowed = writable.get(id(owner), np.zeros(owner.size, dtype=bool))
        changed = np.flatnonzero(~allowed & (owner != before))
        assert changed.size == 0, (
            f"bytes of the caller's memory outside out='s elements changed ({attempt} call): array {k} at "
            f"{changed.tolist()[:12]}")
