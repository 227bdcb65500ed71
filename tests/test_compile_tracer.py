"""opendml.compile's traced arrays: every attribute and operation NumPy arrays have is either a static fact
of the signature (exact) or refused with an OpenDMLError at the first call, never silently answered.

The lists below are this test's own: a NumPy attribute that is in none of them fails the enumeration, so a
new NumPy release cannot add one that slips through.
"""

from __future__ import annotations

import copy
import math
import operator
import pickle
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import opendml as dml
from opendml.errors import OpenDMLError
from opendml.tracing import Tracer

# Known while tracing (the signature fixes them): checked against the eager result's.
STATIC = {"shape", "ndim", "size", "dtype"}
# Python's object machinery, kept from ``object`` (none reads or writes values).
KEPT = {"__class__", "__class_getitem__", "__dir__", "__doc__", "__getattribute__", "__init__", "__init_subclass__",
        "__new__", "__repr__", "__sizeof__", "__str__", "__subclasshook__"}
# Kept with a meaning of their own, checked by their own tests below.
SPECIAL = {"__hash__", "__format__", "__setattr__", "__delattr__"}

REFUSED = r"^opendml\.compile: traced array supports only the functional API"


def _traced(use: Callable[[Any], Any], x: np.ndarray | None = None) -> Any:
    """``use`` applied to a traced argmax of ``x`` inside a compiled function (its first call), and what it gave."""
    seen: list[Any] = []

    def body(x: Any) -> Any:
        y = dml.argmax(dml.clip(x, -1.0, 1.0), 1)
        seen.append(use(y))
        return y

    dml.compile(body)(np.ones((2, 3), np.float32) if x is None else x)
    return seen[0]


def _use(name: str) -> Callable[[Any], Any]:
    """Read attribute ``name``; call it where it is a method (NumPy's dispatch hooks with what NumPy passes)."""
    def use(t: Any) -> Any:
        value = getattr(t, name)
        if name == "__array_ufunc__":
            return value(np.add, "__call__", t, 1)
        if name == "__array_function__":
            return value(np.sum, (type(t),), (t,), {})
        return value() if callable(value) else value
    return use


@pytest.mark.parametrize("name", sorted(set(dir(np.ndarray)) - STATIC - KEPT - SPECIAL))
def test_every_other_ndarray_attribute_is_refused_at_the_first_call(name: str) -> None:
    if name.startswith("__"):  # operators and protocols are looked up on the type, never through __getattr__
        assert name in vars(Tracer)
    with pytest.raises(OpenDMLError, match=REFUSED) as e:
        _traced(_use(name))
    assert "Tracer(shape=(2, 1), dtype=int64)" in str(e.value)


def test_the_lists_cover_ndarray() -> None:
    assert set(dir(np.ndarray)) >= STATIC | KEPT | SPECIAL


@pytest.mark.parametrize("shape", [(), (5,), (2, 3), (4, 1, 3)])
def test_static_attributes_equal_numpy_s_for_arguments_and_results(shape: tuple[int, ...]) -> None:
    x = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    seen: dict[str, Any] = {}

    def body(x: Any) -> Any:
        y = dml.argmin(dml.clip(x, -1.0, 1.0), None)
        seen["x"] = {a: getattr(x, a) for a in STATIC}
        seen["y"] = {a: getattr(y, a) for a in STATIC}
        return y

    got = dml.compile(body)(x)
    for key, array in (("x", x), ("y", got)):
        assert seen[key] == {a: getattr(array, a) for a in STATIC}
        assert type(seen[key]["size"]) is int and type(seen[key]["ndim"]) is int


def _set_item(t: Any) -> None:
    t[0] = 1


def _del_item(t: Any) -> None:
    del t[0]


def _branch(t: Any) -> int:
    return 1 if t else 0


def _loop(t: Any) -> list[Any]:
    return [v for v in t]


def _in_place(t: Any) -> Any:
    t += 1
    return t


def _set_shape(t: Any) -> None:
    t.shape = (2,)


def _delete_shape(t: Any) -> None:
    del t.shape


def _new_attribute(t: Any) -> None:
    t.values = 1


@pytest.mark.parametrize("use, what", [
    (lambda t: t == 0, "operator == (__eq__)"),
    (lambda t: t != 0, "operator != (__ne__)"),
    (lambda t: 0 == t, "operator == (__eq__)"),  # noqa: SIM300 (the reflected comparison is the case)
    (lambda t: t == t, "operator == (__eq__)"),
    (lambda t: np.int64(0) == t, "NumPy's equal"),
    (lambda t: np.zeros((2, 1), np.int64) != t, "NumPy's not_equal"),
    (lambda t: t < 1, "operator < (__lt__)"),
    (lambda t: 1 >= t, "operator <= (__le__)"),  # noqa: SIM300
    (lambda t: t + 1, "operator + (__add__)"),
    (lambda t: 1 - t, "reflected operator - (__rsub__)"),
    (lambda t: t @ t, "operator @ (__matmul__)"),
    (lambda t: t << 1, "operator << (__lshift__)"),
    (lambda t: divmod(7, t), "reflected operator divmod() (__rdivmod__)"),
    (lambda t: pow(t, 2, 5), "operator ** (__pow__)"),
    (_in_place, "in-place operator += (__iadd__)"),
    (lambda t: -t, "operator unary - (__neg__)"),
    (lambda t: abs(t), "operator abs() (__abs__)"),
    (lambda t: ~t, "operator ~ (__invert__)"),
    (bool, "bool()"),
    (_branch, "bool()"),
    (lambda t: t and 1, "bool()"),
    (lambda t: not t, "bool()"),
    (len, "len()"),
    (iter, "iteration"),
    (_loop, "iteration"),
    (lambda t: 1 in t, "the in operator"),
    (lambda t: t[0], "indexing"),
    (_set_item, "item assignment"),
    (_del_item, "item deletion"),
    (int, "int()"),
    (float, "float()"),
    (complex, "complex()"),
    (operator.index, "use as an index"),
    (lambda t: range(t), "use as an index"),
    (lambda t: [1, 2][t], "use as an index"),
    (round, "round()"),
    (math.trunc, "math.trunc()"),
    (math.floor, "math.floor()"),
    (math.ceil, "math.ceil()"),
    (lambda t: sorted([t, t]), "operator < (__lt__)"),
    (lambda t: max(t, 0), "operator"),
    (lambda t: np.add(t, 1), "NumPy's add"),
    (lambda t: np.sum(t), "NumPy's sum"),
    (lambda t: np.where(t, 1, 0), "NumPy's where"),
    (np.asarray, "conversion to a NumPy array"),
    (np.array, "conversion to a NumPy array"),
    (lambda t: np.float32(t), "conversion to a NumPy array"),
    (np.from_dlpack, "DLPack export"),
    (copy.copy, "copy.copy()"),
    (copy.deepcopy, "copy.deepcopy()"),
    (pickle.dumps, "pickling"),
    (lambda t: f"{t:.3f}", "format() with spec '.3f'"),
    (_set_shape, "setting the attribute shape"),
    (_delete_shape, "deleting the attribute shape"),
    (_new_attribute, "setting the attribute values"),
    (lambda t: t.T, "the attribute .T"),
    (lambda t: t.astype(np.int32), "the attribute .astype"),
    (lambda t: t.copy(), "the attribute .copy"),
    (lambda t: t.reshape(-1), "the attribute .reshape"),
    (lambda t: t.nbytes, "the attribute .nbytes"),
    (lambda t: t.item(), "the attribute .item"),
    (lambda t: t.tolist(), "the attribute .tolist"),
    (lambda t: t.sum(), "the attribute .sum"),
    (lambda t: t.strides, "the attribute .strides"),
    (lambda t: getattr(t, "flags", None), "the attribute .flags"),
])
def test_operations_are_refused_at_the_first_call(use: Callable[[Any], Any], what: str) -> None:
    with pytest.raises(OpenDMLError, match=REFUSED) as e:
        _traced(use)
    assert what in str(e.value)
    assert "do this outside the compiled function" in str(e.value)


def test_memoryview_is_refused() -> None:
    # Python takes part in the buffer protocol from Python code only from 3.12 (__buffer__); before, memoryview
    # refuses a traced array itself, with a TypeError.
    expected: type[Exception] = OpenDMLError if sys.version_info >= (3, 12) else TypeError
    with pytest.raises(expected):
        _traced(memoryview)


def test_identity_hash_repr_and_empty_format() -> None:
    hashed, seen = _traced(lambda t: (hash(t) == hash(t) == object.__hash__(t), {t: 1}[t]))
    assert hashed and seen == 1
    assert _traced(lambda t: (repr(t), str(t), f"{t}")) == ("Tracer(shape=(2, 1), dtype=int64)",) * 3


def test_other_protocols_probe_as_absent() -> None:
    # Probes of protocols NumPy arrays do not have (Dask's, CUDA's) answer False, as for any object.
    assert _traced(lambda t: [hasattr(t, a) for a in ("__dask_graph__", "__cuda_array_interface__", "foo")]) \
        == [False, False, False]


def test_a_refusal_changes_nothing_cached() -> None:
    # The failed trace leaves no graph: a later call with a function that traces succeeds.
    compiled = dml.compile(lambda x, flag: dml.argmax(x, 1) if flag == "plain" else dml.argmax(x, 1) == 0)
    with pytest.raises(OpenDMLError, match=REFUSED):
        compiled(np.ones((2, 3), np.float32), "compare")
    assert compiled(np.array([[0, 2, 1]], np.float32), "plain").tolist() == [[1]]
