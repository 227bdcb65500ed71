"""Resources: named buffers and their initial values (array, constant, sequence or file)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import DataType, OpenDMLError
from .errors import child, model_error
from .fields import (
    UINT64_MAX,
    expect_float,
    expect_integer,
    expect_object,
    expect_string,
    expect_uint,
    wrong_type,
)

RESOURCE_FIELDS = ("type", "initialValuesDataType", "initialValues", "initialValuesOffsetInBytes", "sizeInBytes")
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


@dataclass(frozen=True)
class Resource:
    """A buffer of the model: ``values`` are written at ``offset`` into ``size_in_bytes`` zero bytes."""

    name: str
    path: str
    data_type: DataType
    values: np.ndarray  # 1-D, of data_type's NumPy dtype
    offset: int
    size_in_bytes: int

    @property
    def element_count(self) -> int:
        """Elements shown by print and writeFile: the buffer up to the end of its initial values."""
        return (self.offset + self.values.nbytes) // self.data_type.size

    def initial_bytes(self) -> np.ndarray:
        data = np.zeros(self.size_in_bytes, dtype=np.uint8)
        data[self.offset:self.offset + self.values.nbytes] = self.values.view(np.uint8)
        return data

    def elements(self, data: np.ndarray, count: int | None = None) -> np.ndarray:
        """The first ``count`` elements (default: ``element_count``) of the buffer bytes ``data``."""
        count = self.element_count if count is None else count
        return data[:count * self.data_type.size].view(self.data_type.numpy)


def parse_data_type(value: object, path: str) -> DataType:
    name = expect_string(value, path)
    try:
        return DataType.parse(name, owner="initialValuesDataType")
    except OpenDMLError:
        known = ", ".join(t.name for t in DataType if t is not DataType.UNKNOWN)
        raise model_error(path, f"must be one of {known} (with or without DML_TENSOR_DATA_TYPE_)",
                          repr(name)) from None


def parse_resource(name: str, value: object, path: str, model_dir: Path) -> Resource:
    obj = expect_object(value, path, RESOURCE_FIELDS, required=("initialValues",))
    if "type" in obj and obj["type"] != "buffer":
        raise model_error(child(path, "type"), 'must be "buffer" (the only kind of resource)', repr(obj["type"]))
    declared = None
    if "initialValuesDataType" in obj:
        declared = parse_data_type(obj["initialValuesDataType"], child(path, "initialValuesDataType"))
    data_type, values = _initial_values(obj["initialValues"], child(path, "initialValues"), declared, path,
                                        model_dir)
    offset = 0
    if "initialValuesOffsetInBytes" in obj:
        offset = expect_uint(obj["initialValuesOffsetInBytes"], child(path, "initialValuesOffsetInBytes"), UINT64_MAX)
    needed = offset + values.nbytes
    if "sizeInBytes" in obj:
        size = expect_uint(obj["sizeInBytes"], child(path, "sizeInBytes"), UINT64_MAX, low=1)
        if size < needed:
            raise model_error(child(path, "sizeInBytes"),
                              f"must be at least {needed} (the initial values' offset and size)", size)
    else:
        size = (needed + 3) // 4 * 4  # DirectML wants buffer sizes in multiples of 4 bytes
    return Resource(name, path, data_type, values, offset, size)


def _initial_values(value: object, path: str, declared: DataType | None, resource_path: str,
                    model_dir: Path) -> tuple[DataType, np.ndarray]:
    if isinstance(value, dict) and "sourcePath" in value:
        return _from_file(value, path, declared, resource_path, model_dir)
    if declared is None:
        raise model_error(child(resource_path, "initialValuesDataType"),
                          "is required (except for .npy files, which carry their type)", "nothing")
    if isinstance(value, list):
        if not value:
            raise model_error(path, "must not be empty", "[]")
        return declared, to_typed_array(value, declared, path)
    if isinstance(value, dict):
        if "value" in value:
            obj = expect_object(value, path, ("valueCount", "value"), required=("valueCount", "value"))
            count = expect_uint(obj["valueCount"], child(path, "valueCount"), low=1)
            element = to_typed_scalar(obj["value"], declared, child(path, "value"))
            return declared, np.repeat(element, count)
        if "valueStart" in value:
            return declared, _sequence(value, path, declared)
        raise model_error(path, 'must hold "value", "valueStart" or "sourcePath"', "none of them")
    if value == "deferred":
        raise model_error(path, "must hold values (deferred resources are for ONNX models)", '"deferred"')
    raise wrong_type(path, "an array of values or an object (constant, sequence or file)", value)


def _sequence(value: object, path: str, data_type: DataType) -> np.ndarray:
    obj = expect_object(value, path, ("valueCount", "valueStart", "valueDelta"),
                        required=("valueCount", "valueStart", "valueDelta"))
    count = expect_uint(obj["valueCount"], child(path, "valueCount"), low=1)
    start = to_typed_scalar(obj["valueStart"], data_type, child(path, "valueStart"))
    delta = to_typed_scalar(obj["valueDelta"], data_type, child(path, "valueDelta"))
    steps = np.repeat(delta, count)
    steps[0] = start[0]
    # Each element adds the delta to the one before, rounded (or wrapped) in the element type, as
    # DxDispatch's "value += valueDelta" does.
    with np.errstate(over="ignore", invalid="ignore"):
        return np.add.accumulate(steps, dtype=data_type.numpy)


def to_typed_array(items: list[object], data_type: DataType, path: str) -> np.ndarray:
    """JSON values as an array of ``data_type``; ``path`` names the JSON array holding them."""
    return _convert(items, [child(path, k) for k in range(len(items))], data_type)


def to_typed_scalar(value: object, data_type: DataType, path: str) -> np.ndarray:
    """One JSON value as a one-element array of ``data_type``."""
    return _convert([value], [path], data_type)


def _convert(items: list[object], paths: list[str], data_type: DataType) -> np.ndarray:
    if data_type.is_float:
        doubles = np.array([expect_float(item, at) for item, at in zip(items, paths)], dtype=np.float64)
        with np.errstate(over="ignore"):
            # DxDispatch converts FLOAT16 values through float32 (double -> float -> half).
            narrowed = doubles if data_type == DataType.FLOAT64 else doubles.astype(np.float32)
            typed = narrowed.astype(data_type.numpy)
        overflow = np.isfinite(doubles) & ~np.isfinite(typed)
        if overflow.any():
            k = int(np.argmax(overflow))
            raise model_error(paths[k], f"must be representable in {data_type.name} (it would become infinite)",
                              items[k])
        return typed
    low, high = data_type.integer_range
    ints = [expect_integer(item, at, low, high) for item, at in zip(items, paths)]
    return np.array(ints, dtype=data_type.numpy)


def _from_file(value: object, path: str, declared: DataType | None, resource_path: str,
               model_dir: Path) -> tuple[DataType, np.ndarray]:
    obj = expect_object(value, path, ("sourcePath",))
    source_field = child(path, "sourcePath")
    source = resolve_input(expect_string(obj["sourcePath"], source_field), model_dir)
    if source.suffix.lower() in _IMAGE_SUFFIXES:
        raise model_error(source_field, "must be a .npy or raw binary file (images are not supported)", str(source))
    try:
        if source.suffix.lower() == ".npy":
            data_type, values = _read_npy(source, source_field)
        else:
            data_type, values = declared, np.fromfile(source, dtype=np.uint8)
    except OSError as error:
        raise model_error(source_field, "must name a readable file",
                          f"{source} ({error.strerror or error})") from None
    if data_type is None:
        raise model_error(child(resource_path, "initialValuesDataType"), "is required for a raw binary file",
                          "nothing")
    if declared is not None and declared != data_type:
        raise model_error(child(resource_path, "initialValuesDataType"),
                          f"must match the data type of {source.name} ({data_type.name})", declared.name)
    if values.nbytes == 0:
        raise model_error(source_field, "must name a file holding at least one value", "an empty file")
    if values.nbytes % data_type.size:
        raise model_error(source_field, f"must hold a whole number of {data_type.name} values "
                          f"({data_type.size} bytes each)", f"{values.nbytes} bytes")
    return data_type, values.view(data_type.numpy)


def _read_npy(source: Path, path: str) -> tuple[DataType, np.ndarray]:
    try:
        array = np.load(source, allow_pickle=False)
    except ValueError as error:
        raise model_error(path, "must name a valid .npy file", f"{source} ({error})") from None
    try:
        data_type = DataType.parse(array.dtype)
    except OpenDMLError:
        raise model_error(path, "must name a .npy file of a DirectML data type", f"dtype {array.dtype}") from None
    # Row-major, little-endian: the bytes DirectML would see.
    return data_type, np.ascontiguousarray(array, dtype=data_type.numpy).reshape(-1)


def resolve_input(source: str, model_dir: Path) -> Path:
    """A source file: relative to the model's folder first, then to the current folder (as DxDispatch)."""
    path = Path(source)
    if path.is_absolute():
        return path
    beside_model = model_dir / path
    return beside_model if beside_model.exists() or not path.exists() else path
