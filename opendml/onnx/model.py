"""Loading a model, checking it with onnx.checker, and reading the types its graph declares."""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Mapping
from typing import Any, TypeAlias

import numpy as np
import onnx
from onnx import ModelProto, TypeProto, ValueInfoProto, shape_inference

from ..errors import invalid
from . import types

_OWNER = "ONNX model"

ModelLike: TypeAlias = "ModelProto | str | os.PathLike[str] | bytes"


def load_model(model: ModelLike) -> ModelProto:
    """A ModelProto from itself, a path or serialized bytes, checked by onnx.checker.

    Every way of loading a model goes through here, so every failure to read or check one is one
    InvalidArgumentError, naming the file, the format it was read as and the reason.
    """
    read_from = ""
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        file_format = format_of(path)
        model = _read_file(path, file_format)
        read_from = f" (read from {path!r} as {file_format})"
    elif isinstance(model, bytes):
        try:
            model = onnx.load_from_string(model)
        except Exception as error:  # protobuf's DecodeError, and whatever else its parser raises
            raise invalid(_OWNER, "Bytes", "must be a serialized ModelProto (protobuf)", reason(error)) from None
    if not isinstance(model, ModelProto):
        raise invalid(_OWNER, "Model", "must be a ModelProto, a path or bytes", type(model).__name__)
    try:
        onnx.checker.check_model(model)
    except Exception as error:  # ValidationError; ValueError for a model past protobuf's 2 GiB
        raise invalid(_OWNER, "Model", "must pass onnx.checker", reason(error, named=False) + read_from) from None
    return model


def format_of(path: str) -> str:
    """The format onnx reads a file in, chosen by its extension as ``onnx.load`` chooses it: ``json``,
    ``textproto``, ``onnxtxt``, else ``protobuf``."""
    found = onnx.serialization.registry.get_format_from_file_extension(os.path.splitext(path)[1])
    return str(found or "protobuf")


def _read_file(path: str, file_format: str) -> ModelProto:
    try:
        with warnings.catch_warnings():  # onnx warns on every read of its onnxtxt format that it is experimental
            warnings.filterwarnings("ignore", "The onnxtxt format is experimental", UserWarning)
            return onnx.load(path, format=file_format)
    except Exception as error:  # each of onnx's parsers raises errors of its own: protobuf's DecodeError,
        # json_format's and text_format's ParseError, onnx.parser's, UnicodeDecodeError, OSError, MemoryError
        extension = os.path.splitext(path)[1]
        chosen = f" (from its extension {extension!r})" if file_format != "protobuf" else ""
        raise invalid(_OWNER, "Path", "must name a readable ONNX file",
                      f"{path!r} read as {file_format}{chosen}: {reason(error)}") from None


_REASON_LIMIT = 400  # characters of a parser's message kept (protobuf's JSON errors list every field of the message)


def reason(error: BaseException, *, named: bool = True) -> str:
    """An exception as one line: its class (where ``named``) and its message's lines joined, without the file
    name an OSError repeats and without a closing period (the message adds one)."""
    detail = error.args[0] if len(error.args) == 1 else None
    if isinstance(error, OSError) and error.strerror:
        text = error.strerror
    elif isinstance(detail, bytes):  # onnx.parser's ParseError holds its message as bytes
        text = detail.decode("utf-8", "replace")
    else:
        text = str(error)
    text = " ".join(line.strip() for line in text.splitlines() if line.strip()).rstrip(".")
    if len(text) > _REASON_LIMIT:
        text = text[:_REASON_LIMIT].rstrip() + " ..."
    if not named:
        return text or type(error).__name__
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def tensor_type(type_proto: TypeProto) -> tuple[int, tuple[int | None, ...] | None] | None:
    """(element type, shape) of a tensor type, None dims unknown; None when it is not a tensor."""
    if type_proto.WhichOneof("value") != "tensor_type":
        return None
    tensor = type_proto.tensor_type
    if not tensor.HasField("shape"):
        return tensor.elem_type, None
    return tensor.elem_type, tuple(d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim)


def inferred_types(model: ModelProto) -> dict[str, tuple[int, tuple[int | None, ...] | None]]:
    """Every value's declared or inferred tensor type (ONNX's shape inference; declared types alone
    where inference fails, since the check it serves must not depend on it)."""
    with contextlib.suppress(Exception):
        model = shape_inference.infer_shapes(model)
    graph = model.graph
    found: dict[str, tuple[int, tuple[int | None, ...] | None]] = {}
    for info in [*graph.input, *graph.value_info, *graph.output]:
        typed = tensor_type(info.type)
        if typed is not None:
            found[info.name] = typed
    for tensor in graph.initializer:
        found[tensor.name] = (tensor.data_type, tuple(tensor.dims))
    return found


def required_inputs(model: ModelProto) -> list[ValueInfoProto]:
    """Graph inputs the caller must give (an input with an initializer of its name has a default)."""
    initialized = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in initialized]


def check_feeds(model: ModelProto, inputs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The caller's inputs as arrays, each of the type and shape its graph input declares."""
    if not isinstance(inputs, Mapping):
        raise invalid(_OWNER, "inputs", "must be a mapping of input names to arrays", type(inputs).__name__)
    declared = {i.name: i for i in model.graph.input}
    unknown = [name for name in inputs if name not in declared]
    if unknown:
        raise invalid(_OWNER, "inputs", f"must name graph inputs ({', '.join(declared) or 'none'})",
                      ", ".join(map(str, unknown)))
    missing = [i.name for i in required_inputs(model) if i.name not in inputs]
    if missing:
        raise invalid(_OWNER, "inputs", "must give every graph input without an initializer",
                      f"none for {', '.join(missing)}")
    return {name: _check_feed(declared[name], value) for name, value in inputs.items()}


def _check_feed(info: ValueInfoProto, value: Any) -> np.ndarray:
    array = np.asarray(value)
    if not array.dtype.isnative:  # a big-endian array is its values, as everywhere else: converted, not refused
        array = array.astype(array.dtype.newbyteorder("="))
    field = f"Input '{info.name}'"
    typed = tensor_type(info.type)
    if typed is None:
        raise invalid(_OWNER, field, "must be a tensor input", info.type.WhichOneof("value"))
    elem_type, shape = typed
    got = types.onnx_type_of(array.dtype)
    if got == 0 or (elem_type and got != elem_type):
        wanted = types.type_name(elem_type) if elem_type else "an ONNX tensor type"
        raise invalid(_OWNER, field, f"must have type {wanted}", f"{array.dtype}")
    if shape is not None and (len(shape) != array.ndim
                              or any(d is not None and d != n for d, n in zip(shape, array.shape))):
        wanted = "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"
        raise invalid(_OWNER, field, f"must have shape {wanted}", f"shape {list(array.shape)}")
    return array
