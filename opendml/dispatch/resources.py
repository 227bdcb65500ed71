"""Resources: named buffers and their initial values (array, constant, sequence or file).

Reading a model checks every resource (its size against a limit, a file's header and length) without
making its values: they are written straight into the buffer when the model runs, so that an error
anywhere in the model is reported before a large resource is allocated, and a resource costs its own
size in memory, once.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

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
from .paths import IMAGE_SUFFIXES, check_path, file_kind, resolve_input

RESOURCE_FIELDS = ("type", "initialValuesDataType", "initialValues", "initialValuesOffsetInBytes", "sizeInBytes")
# The forms of initialValues, each an object with these fields (the first names the form); or an array.
CONSTANT_FIELDS = ("valueCount", "value")
SEQUENCE_FIELDS = ("valueCount", "valueStart", "valueDelta")
FILE_FIELDS = ("sourcePath",)
MAX_RESOURCE_BYTES = 4 * 2**30  # the default limit on one resource's size (--max-resource-bytes)
_CHUNK = 1 << 16  # elements made at a time by a sequence


class InitialValues(Protocol):
    """How a resource's initial values are made, without making them yet."""

    @property
    def nbytes(self) -> int: ...

    def fill(self, dest: np.ndarray) -> None:
        """Write the values' bytes into ``dest``, a uint8 array of exactly ``nbytes``."""


@dataclass(frozen=True)
class GivenValues:
    """Values listed in the model (already typed: the JSON holding them is larger still)."""

    array: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(self.array.nbytes)

    def fill(self, dest: np.ndarray) -> None:
        dest[:] = self.array.view(np.uint8)


@dataclass(frozen=True)
class ConstantValues:
    element: np.ndarray  # one element of the resource's type
    count: int

    @property
    def nbytes(self) -> int:
        return self.count * self.element.itemsize

    def fill(self, dest: np.ndarray) -> None:
        dest.view(self.element.dtype)[:] = self.element


@dataclass(frozen=True)
class SequenceValues:
    """Each element adds the delta to the one before, rounded (or wrapped) in the element type, as
    DxDispatch's ``value += valueDelta`` does."""

    start: np.ndarray  # one element each
    delta: np.ndarray
    count: int

    @property
    def nbytes(self) -> int:
        return self.count * self.start.itemsize

    def fill(self, dest: np.ndarray) -> None:
        out = dest.view(self.start.dtype)
        for begin in range(0, self.count, _CHUNK):  # a chunk at a time: no second copy of the resource
            end = min(begin + _CHUNK, self.count)
            steps = np.full(end - begin + 1, self.delta[0], dtype=self.start.dtype)
            steps[0] = self.start[0] if begin == 0 else out[begin - 1]
            with np.errstate(over="ignore", invalid="ignore"):
                made = np.add.accumulate(steps)
            out[begin:end] = made[:-1] if begin == 0 else made[1:]


@dataclass(frozen=True)
class FileValues:
    """Values read from a file when the model runs; reading the model checked its header and length."""

    source: Path
    path: str  # the JSON path of sourcePath
    data_offset: int
    nbytes: int
    file_dtype: np.dtype  # the element type as stored (a .npy file may be big-endian)
    shape: tuple[int, ...]
    fortran_order: bool = False

    def fill(self, dest: np.ndarray) -> None:
        try:
            with open(self.source, "rb") as file:
                file.seek(self.data_offset)
                read = _read_into(file, dest.data)
        except OSError as error:
            raise model_error(self.path, "must name a readable file", f"{self.source} ({error.strerror})") from None
        if read != self.nbytes:
            raise model_error(self.path, f"must still hold {self.nbytes} bytes of values when the model runs",
                              f"{read} bytes in {self.source}")
        values = dest.view(self.file_dtype)
        if self.file_dtype.byteorder == ">":  # DirectML's bytes are little-endian
            values.byteswap(inplace=True)
        if self.fortran_order and len(self.shape) > 1:  # to row-major order (a copy, for this rare layout)
            values[:] = np.ascontiguousarray(values.reshape(self.shape, order="F")).reshape(-1)


def _read_into(file: BinaryIO, view: memoryview) -> int:
    total = 0
    while total < len(view):
        count = file.readinto(view[total:])  # type: ignore[attr-defined]
        if not count:
            break
        total += count
    return total


@dataclass(frozen=True)
class Resource:
    """A buffer of the model: ``values`` are written at ``offset`` into ``size_in_bytes`` zero bytes."""

    name: str
    path: str
    data_type: DataType
    values: InitialValues
    offset: int
    size_in_bytes: int

    @property
    def element_count(self) -> int:
        """Elements shown by print and writeFile: the buffer up to the end of its initial values."""
        return (self.offset + self.values.nbytes) // self.data_type.size

    def initial_bytes(self) -> np.ndarray:
        """The buffer's initial bytes: one allocation, filled in place."""
        data = np.zeros(self.size_in_bytes, dtype=np.uint8)
        self.values.fill(data[self.offset:self.offset + self.values.nbytes])
        return data

    def initial_values(self) -> np.ndarray:
        """The initial values alone, as an array of the resource's type."""
        data = np.empty(self.values.nbytes, dtype=np.uint8)
        self.values.fill(data)
        return data.view(self.data_type.numpy)

    def elements(self, data: np.ndarray, count: int | None = None) -> np.ndarray:
        """The first ``count`` elements (default: ``element_count``) of the buffer bytes ``data``."""
        count = self.element_count if count is None else count
        return data[:count * self.data_type.size].view(self.data_type.numpy)


def parse_data_type(value: object, path: str) -> DataType:
    name = expect_string(value, path)
    try:
        parsed = DataType.parse(name, owner="initialValuesDataType")
    except OpenDMLError:
        known = ", ".join(t.name for t in DataType if t is not DataType.UNKNOWN)
        raise model_error(path, f"must be one of {known} (with or without DML_TENSOR_DATA_TYPE_)",
                          repr(name)) from None
    if parsed.is_sub_byte:  # a resource's values are whole elements; 4-bit tensors read packed UINT8 bytes
        raise model_error(path, "must be a type of whole bytes (a UINT4 or INT4 tensor's resource holds its packed "
                          "bytes as UINT8: two elements a byte, the first in the low nibble)", repr(name))
    return parsed


def parse_resource(name: str, value: object, path: str, model_dir: Path,
                   max_bytes: int = MAX_RESOURCE_BYTES) -> Resource:
    """A resource's description, checked; its values are made only by ``Resource.initial_bytes``."""
    obj = expect_object(value, path, RESOURCE_FIELDS, required=("initialValues",))
    if "type" in obj and obj["type"] != "buffer":
        raise model_error(child(path, "type"), 'must be "buffer" (the only kind of resource)', repr(obj["type"]))
    declared = None
    if "initialValuesDataType" in obj:
        declared = parse_data_type(obj["initialValuesDataType"], child(path, "initialValuesDataType"))
    values_path = child(path, "initialValues")
    data_type, values = _initial_values(obj["initialValues"], values_path, declared, path, model_dir, max_bytes)
    offset = 0
    if "initialValuesOffsetInBytes" in obj:
        offset = expect_uint(obj["initialValuesOffsetInBytes"], child(path, "initialValuesOffsetInBytes"), UINT64_MAX)
    needed = offset + values.nbytes
    if "sizeInBytes" in obj:
        size_path = child(path, "sizeInBytes")
        size = expect_uint(obj["sizeInBytes"], size_path, UINT64_MAX, low=1)
        if size < needed:
            raise model_error(size_path, f"must be at least {needed} (the initial values' offset and size)", size)
    else:
        size_path = child(path, "initialValuesOffsetInBytes") if offset > max_bytes else values_path
        size = (needed + 3) // 4 * 4  # DirectML wants buffer sizes in multiples of 4 bytes
    _check_size(size, size_path, max_bytes)
    return Resource(name, path, data_type, values, offset, size)


def _check_size(size: int, path: str, max_bytes: int) -> None:
    """Before anything is allocated: a resource larger than the limit is most likely a mistake."""
    if size > max_bytes:
        raise model_error(path, f"must make a resource of at most {max_bytes} bytes (--max-resource-bytes "
                          f"raises the limit)", f"{size} bytes")


def _initial_values(value: object, path: str, declared: DataType | None, resource_path: str, model_dir: Path,
                    max_bytes: int) -> tuple[DataType, InitialValues]:
    if isinstance(value, dict) and "sourcePath" in value:
        return _from_file(value, path, declared, resource_path, model_dir)
    if declared is None:
        raise model_error(child(resource_path, "initialValuesDataType"),
                          "is required (except for .npy files, which carry their type)", "nothing")
    if isinstance(value, list):
        if not value:
            raise model_error(path, "must not be empty", "[]")
        _check_size(len(value) * declared.size, path, max_bytes)
        return declared, GivenValues(to_typed_array(value, declared, path))
    if isinstance(value, dict):
        fields = CONSTANT_FIELDS if "value" in value else SEQUENCE_FIELDS if "valueStart" in value else None
        if fields is None:
            raise model_error(path, 'must hold "value", "valueStart" or "sourcePath"', "none of them")
        obj = expect_object(value, path, fields, required=fields)
        count_path = child(path, "valueCount")
        count = expect_uint(obj["valueCount"], count_path, low=1)
        _check_size(count * declared.size, count_path, max_bytes)
        if fields is CONSTANT_FIELDS:
            return declared, ConstantValues(to_typed_scalar(obj["value"], declared, child(path, "value")), count)
        start = to_typed_scalar(obj["valueStart"], declared, child(path, "valueStart"))
        return declared, SequenceValues(start, to_typed_scalar(obj["valueDelta"], declared, child(path, "valueDelta")),
                                        count)
    if value == "deferred":
        raise model_error(path, "must hold values (deferred resources are for ONNX models)", '"deferred"')
    raise wrong_type(path, "an array of values or an object (constant, sequence or file)", value)


def to_typed_array(items: list[object], data_type: DataType, path: str) -> np.ndarray:
    """JSON values as an array of ``data_type``; ``path`` names the JSON array holding them."""
    def at(k: int) -> str:
        return child(path, k)

    if data_type.is_float:
        # Plain numbers convert in one step; anything else (words, mistakes) goes value by value.
        if all(type(item) in (int, float) for item in items):
            try:
                return _narrow(np.array(items, dtype=np.float64), data_type, items, at)
            except OverflowError:  # an integer beyond float64: converted one by one below
                pass
        return _narrow(np.array([expect_float(item, at(k)) for k, item in enumerate(items)], dtype=np.float64),
                       data_type, items, at)
    low, high = data_type.integer_range
    if all(type(item) is int for item in items) and low <= min(items) and max(items) <= high:  # type: ignore[operator, type-var]
        return np.array(items, dtype=data_type.numpy)
    return np.array([expect_integer(item, at(k), low, high) for k, item in enumerate(items)], dtype=data_type.numpy)


def to_typed_scalar(value: object, data_type: DataType, path: str) -> np.ndarray:
    """One JSON value as a one-element array of ``data_type``."""
    if data_type.is_float:
        return _narrow(np.array([expect_float(value, path)]), data_type, [value], lambda k: path)
    low, high = data_type.integer_range
    return np.array([expect_integer(value, path, low, high)], dtype=data_type.numpy)


def _narrow(doubles: np.ndarray, data_type: DataType, items: list[object], at: Callable[[int], str]) -> np.ndarray:
    """float64 values in ``data_type``; a finite value that would become infinite is an error at ``at(k)``."""
    with np.errstate(over="ignore"):
        # DxDispatch converts FLOAT16 values through float32 (double -> float -> half).
        narrowed = doubles if data_type == DataType.FLOAT64 else doubles.astype(np.float32)
        typed = narrowed.astype(data_type.numpy)
    overflow = np.isfinite(doubles) & ~np.isfinite(typed)
    if overflow.any():
        k = int(np.argmax(overflow))
        raise model_error(at(k), f"must be representable in {data_type.name} (it would become infinite)", items[k])
    return typed


def _from_file(value: object, path: str, declared: DataType | None, resource_path: str,
               model_dir: Path) -> tuple[DataType, FileValues]:
    obj = expect_object(value, path, FILE_FIELDS)
    source_field = child(path, "sourcePath")
    source = resolve_input(check_path(expect_string(obj["sourcePath"], source_field), source_field), model_dir)
    if source.suffix.lower() in IMAGE_SUFFIXES:
        raise model_error(source_field, "must be a .npy or raw binary file (images are not supported)", str(source))
    try:
        mode = os.stat(source).st_mode  # before opening: opening a named pipe would wait for a writer
        if not stat.S_ISREG(mode):
            raise model_error(source_field, "must name a regular file", f"{source}, {file_kind(mode)}")
        with open(source, "rb") as file:
            if source.suffix.lower() == ".npy":
                values = _npy_values(file, source, source_field)
            else:
                if declared is None:
                    raise model_error(child(resource_path, "initialValuesDataType"),
                                      "is required for a raw binary file", "nothing")
                size = os.fstat(file.fileno()).st_size
                values = FileValues(source, source_field, 0, size, declared.numpy, (size // declared.size,))
    except OSError as error:
        raise model_error(source_field, "must name a readable file", f"{source} ({error.strerror})") from None
    data_type = DataType.parse(values.file_dtype)
    if declared is not None and declared != data_type:
        raise model_error(child(resource_path, "initialValuesDataType"),
                          f"must match the data type of {source.name} ({data_type.name})", declared.name)
    if values.nbytes == 0:
        raise model_error(source_field, "must name a file holding at least one value", "an empty file")
    if values.nbytes % data_type.size:
        raise model_error(source_field, f"must hold a whole number of {data_type.name} values "
                          f"({data_type.size} bytes each)", f"{values.nbytes} bytes")
    return data_type, values


_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")


def _npy_values(file: BinaryIO, source: Path, path: str) -> FileValues:
    """A .npy file's header, checked: its magic bytes, version, data type and length."""
    head = file.read(len(_NPY_MAGIC))
    if head.startswith(_ZIP_MAGICS):
        raise model_error(path, "must name a .npy file", f"{source}, an .npz archive (a zip file)")
    if head != _NPY_MAGIC:
        raise model_error(path, "must name a .npy file", f"{source}, which does not start as one")
    file.seek(0)
    try:
        version = np.lib.format.read_magic(file)
        if version == (1, 0):
            shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(file)
        elif version == (2, 0):
            shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(file)
        else:
            raise ValueError(f"version {version[0]}.{version[1]} (1.0 and 2.0 are read)")
    except ValueError as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise model_error(path, "must name a valid .npy file", f"{source} ({reason})") from None
    try:
        DataType.parse(dtype)
    except OpenDMLError:
        raise model_error(path, "must name a .npy file of a DirectML data type", f"dtype {dtype}") from None
    data_offset = file.tell()
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    available = os.fstat(file.fileno()).st_size - data_offset
    if available < nbytes:
        raise model_error(path, f"must name a complete .npy file ({nbytes} bytes of values for shape "
                          f"{tuple(shape)})", f"{available} bytes in {source}")
    return FileValues(source, path, data_offset, nbytes, dtype, tuple(shape), bool(fortran_order))

