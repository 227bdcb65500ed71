"""Fuzzing descriptions: any description is created exactly when SPEC.md says, or refused with the right error.

A description valid at some feature level, mutated zero to three times, is built and created on a CPU
device at a random level. ``rules`` decides, without opendml's validator, which levels accept it: at
the device's level it must be created (and compiled); accepted only higher, it must raise
UnsupportedFeatureLevelError naming the lowest such level; accepted nowhere, InvalidArgumentError.
Never another exception. Each accepted description small enough is executed twice over guard-filled
buffers, and its output compared bit for bit with the model, every other byte unchanged.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import opendml as dml

from .descriptions import description_cases, make_desc
from .execution import Placement, check_execution, device_at, fill_inputs, fresh_memory, small_enough
from .rules import LEVELS, TENSOR_FIELDS, RawOperator, RawTensor, Tensor, judge_operator, judge_tensor
from .settings import fuzz_settings, judging, note, record

FAMILY = "descriptions"

def build_tensors(op: RawOperator) -> tuple[dict[str, object], dict[str, object]] | None:
    """(the descriptions built, the oracle's reading of each), or None when a TensorDesc was (rightly) refused."""
    built: dict[str, object] = {}
    judged: dict[str, object] = {}
    for name, raw in op.tensors.items():
        if not isinstance(raw, RawTensor):
            built[name] = judged[name] = raw
            continue
        verdict = judge_tensor(raw)
        try:
            desc = raw.build()
        except dml.OpenDMLError as error:
            assert not isinstance(verdict, Tensor), f"TensorDesc refused a valid description: {raw}: {error}"
            assert isinstance(error, dml.InvalidArgumentError), (
                f"TensorDesc refused with {type(error).__name__}, not InvalidArgumentError: {raw}: {error}")
            return None
        except Exception as error:
            raise AssertionError(f"TensorDesc raised {type(error).__name__}: TensorDesc{_arguments(raw)}: "
                                 f"{error}") from error
        assert isinstance(verdict, Tensor), f"TensorDesc accepted an invalid {verdict}: {raw}"
        assert desc.total_tensor_size_in_bytes == verdict.total, (desc, verdict)
        built[name], judged[name] = desc, verdict
    return built, judged


def _category(problem: str) -> str:
    """A problem without its particulars (the level, the field), to group failures."""
    return problem.split(" at ")[0]


def _arguments(raw: RawTensor) -> str:
    return (f"({raw.data_type!r}, {raw.sizes!r}, {raw.strides!r}, flags={raw.flags!r}, "
            f"total_tensor_size_in_bytes={raw.total!r}, guaranteed_base_offset_alignment={raw.alignment!r})")


def create(level: str, desc: object) -> dml.CompiledOperator | dml.OpenDMLError:
    device = device_at(level)
    try:
        return device.compile_operator(device.create_operator(desc))
    except dml.OpenDMLError as error:
        return error
    except Exception as error:
        raise AssertionError(f"create_operator raised {type(error).__name__}: {desc!r} at {level}: {error}") from error


@fuzz_settings(FAMILY)
@given(case=description_cases(), data=st.data())
def test_descriptions_are_judged_by_the_spec(case: tuple[str, RawOperator], data: st.DataObject) -> None:
    with judging(FAMILY, "judged", case):
        check_description(*case, data)


def check_description(level: str, op: RawOperator, data: st.DataObject) -> None:
    made = build_tensors(op)
    if made is None:
        record(FAMILY, "judged", "rejected")
        return
    built, judged = made
    desc = make_desc(op.operator, built, op.fields)
    verdict = judge_operator(RawOperator(op.operator, judged, op.fields))
    result = create(level, desc)
    if isinstance(result, dml.OpenDMLError):
        record(FAMILY, "judged", "rejected")
        assert not verdict.accepts(level), f"a valid description was refused: at {level}: {result}\n{desc!r}"
        required = verdict.required_level(level)
        if required is None:
            assert isinstance(result, dml.InvalidArgumentError), (
                f"{type(result).__name__}, not InvalidArgumentError, for a description no level accepts "
                f"({_category(verdict.problem)}): {result}\n{desc!r}")
        else:
            assert isinstance(result, dml.UnsupportedFeatureLevelError), (
                f"{type(result).__name__}, not UnsupportedFeatureLevelError, for a description a higher level "
                f"accepts: {required} accepts it, not {level}: {result}\n{desc!r}")
            assert str(result.required_level) == required, (
                f"UnsupportedFeatureLevelError names the wrong level: {result.required_level}, not {required}: {result}")
        return
    record(FAMILY, "judged", "accepted")
    assert verdict.accepts(level), (
        f"an invalid description was created ({_category(verdict.problem)}): at {level}: {verdict.problem}\n{desc!r}")
    execute_once_judged(result, RawOperator(op.operator, judged, op.fields), data)


def execute_once_judged(compiled: dml.CompiledOperator, op: RawOperator, data: st.DataObject) -> None:
    """Each tensor in a buffer of its own, at an aligned offset, guard bytes around it."""
    tensors = [t if isinstance(t, Tensor) else None for t in op.tensors.values()]
    if not small_enough(tensors):
        return
    device = compiled.operator.device
    placements: dict[str, Placement | None] = {}
    sizes, bindings = [], []
    for name in TENSOR_FIELDS[op.operator]:
        tensor = op.tensors.get(name)
        if not isinstance(tensor, Tensor):
            placements[name] = None
            continue
        step = max(16, tensor.alignment)
        offset = step * data.draw(st.integers(0, 2), f"{name} offset") if step <= 256 else 0
        tail = data.draw(st.integers(0, 24), f"{name} tail")
        placements[name] = Placement(tensor, len(sizes), offset)
        sizes.append(offset + tensor.total + tail)
    memory = fresh_memory(sizes, [data.draw(st.integers(0, 255), "fill") for _ in sizes])
    fill_inputs(data, op, placements, memory)
    buffers = [device.buffer_from(bytes(m)) if data.draw(st.booleans(), "upload") else _written(device, m)
               for m in memory]
    for name, placement in placements.items():
        if placement is None:
            bindings.append(None)
            continue
        size = data.draw(st.sampled_from([None, placement.tensor.total]), f"{name} size")
        bindings.append(dml.BufferBinding(buffers[placement.buffer], placement.offset, size))
    check_execution(compiled, op, placements, memory, bindings[:-1], bindings[-1:], buffers)
    note(FAMILY, "judged", "executed")


def _written(device: dml.Device, memory: bytearray) -> dml.Buffer:
    """A buffer made by create_buffer (zero-filled), then given the bytes through buffer_from's copy."""
    buffer = device.create_buffer(len(memory))
    assert buffer.to_numpy().tobytes() == bytes(len(memory)), "create_buffer must give zero-filled memory"
    return device.buffer_from(np.frombuffer(bytes(memory), np.uint8))


@fuzz_settings(FAMILY)
@given(level=st.one_of(st.sampled_from(LEVELS), st.sampled_from(["7_0", "6_5", "banana", "", None, 1.5, -1, 0x6500,
                                                                  "FL_6_4", "6.4", 0x6400, "DML_FEATURE_LEVEL_5_0"])))
def test_descriptions_device_levels(level: object) -> None:
    """A device is made at every level DirectML defines (in its spellings), and refused at any other."""
    with judging(FAMILY, "levels", level):
        check_level(level)


def check_level(level: object) -> None:
    valid = {**{lv: lv for lv in LEVELS}, "FL_6_4": "6_4", "6.4": "6_4", 0x6400: "6_4",
             "DML_FEATURE_LEVEL_5_0": "5_0"}
    try:
        device = dml.Device("cpu", level)  # type: ignore[arg-type]
    except dml.InvalidArgumentError:
        record(FAMILY, "levels", "rejected")
        assert level not in valid, f"level {level!r} was refused"
        return
    record(FAMILY, "levels", "accepted")
    assert level in valid, f"level {level!r} was accepted"
    assert str(device.feature_level) == valid[level]  # type: ignore[index]


EXECUTION_FLAGS = {"NONE": 0, "ALLOW_HALF_PRECISION_COMPUTATION": 1, "DISABLE_META_COMMANDS": 2,
                   "DESCRIPTORS_VOLATILE": 4}


def execution_flags(value: object) -> int | None:
    """DML_EXECUTION_FLAGS: a combination of the defined bits (0 to 7), a member, or one flag's name."""
    if isinstance(value, dml.ExecutionFlags):
        return int(value) if 0 <= int(value) <= 7 else None
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 0 <= value <= 7 else None
    if isinstance(value, str):
        return EXECUTION_FLAGS.get(value.removeprefix("DML_EXECUTION_FLAG_"))
    return None


@fuzz_settings(FAMILY)
@given(flags=st.one_of(st.integers(-2, 9), st.sampled_from([
    *EXECUTION_FLAGS, "DML_EXECUTION_FLAG_DESCRIPTORS_VOLATILE", dml.ExecutionFlags.DISABLE_META_COMMANDS,
    dml.ExecutionFlags(3), "BOGUS", "DML_EXECUTION_FLAG_", None, 1.5, True, 2**32])))
def test_descriptions_execution_flags(flags: object) -> None:
    """compile_operator takes the defined execution flags (which change no result) and refuses others."""
    with judging(FAMILY, "execution flags", flags):
        device = device_at("6_4")
        desc = dml.TensorDesc("FLOAT32", [3])
        operator = device.create_operator(dml.ElementWiseClipDesc(desc, desc, -1.0, 1.0))
        expected = execution_flags(flags)
        try:
            compiled = device.compile_operator(operator, flags)  # type: ignore[arg-type]
        except dml.InvalidArgumentError as error:
            record(FAMILY, "execution flags", "rejected")
            assert expected is None, f"valid execution flags were refused: {flags!r}: {error}"
            return
        except Exception as error:
            raise AssertionError(f"compile_operator raised {type(error).__name__}: {flags!r}: {error}") from error
        record(FAMILY, "execution flags", "accepted")
        assert expected is not None, f"execution flags outside the defined bits were accepted: {flags!r}"
        assert int(compiled.flags) == expected
        buffer = device.buffer_from(np.array([-3.0, 0.5, 3.0], np.float32))
        compiled.execute([dml.BufferBinding(buffer)], [dml.BufferBinding(buffer)])
        assert buffer.to_numpy().view(np.float32).tolist() == [-1.0, 0.5, 1.0]
