"""One exception family, one phrasing.

Every error opendml raises is an :class:`OpenDMLError`. Messages follow DirectML's vocabulary and one
pattern: ``<OPERATOR>: <Field> <requirement>; got <actual>.``

Each class is also the Python exception a caller would catch for its kind of fault, as NumPy raises them: an
argument of the wrong type (a string for an axis, a list for ``out=``) is an :class:`InvalidArgumentTypeError`,
a ``TypeError``; a value of the right type that DirectML refuses (an axis out of range, a FLOAT64 array, a
negative size) is an :class:`InvalidArgumentError`, a ``ValueError``. Both are caught as ``OpenDMLError`` or
``InvalidArgumentError`` alike.
"""

from __future__ import annotations


class OpenDMLError(Exception):
    """Base class of every error raised by opendml."""


class InvalidArgumentError(OpenDMLError, ValueError):
    """A description or argument is invalid at every feature level (DirectML's E_INVALIDARG)."""


class InvalidArgumentTypeError(InvalidArgumentError, TypeError):
    """An argument or field of the wrong type (``axes="a"``, ``out=3``, a string for a FLOAT): a ``TypeError``,
    as Python and NumPy raise for one, and an :class:`InvalidArgumentError` (E_INVALIDARG) as every refusal."""


class UnsupportedFeatureLevelError(OpenDMLError):
    """A description is valid, but not at the device's feature level.

    ``required_level`` is the lowest feature level that would accept it.
    """

    def __init__(self, message: str, required_level: object = None) -> None:
        super().__init__(message)
        self.required_level = required_level


class BindingError(OpenDMLError, ValueError):
    """A buffer binding breaks a binding rule (alignment, size, range, count or overlap)."""


class OutOfMemoryError(OpenDMLError, MemoryError):
    """The device cannot hold an allocation of this size (DirectML's E_OUTOFMEMORY)."""


class BackendUnavailableError(OpenDMLError, RuntimeError):
    """The requested backend cannot run on this machine."""


class KernelUnsupportedError(OpenDMLError, NotImplementedError):
    """A kernel specification a backend has no kernel for: refused by name, never run as another kernel."""


def message(owner: str, field: str, requirement: str, got: object) -> str:
    """Format an error message in opendml's one pattern."""
    return f"{owner}: {field} {requirement}; got {got}."


def invalid(owner: str, field: str, requirement: str, got: object) -> InvalidArgumentError:
    return InvalidArgumentError(message(owner, field, requirement, got))


def invalid_type(owner: str, field: str, requirement: str, got: object) -> InvalidArgumentTypeError:
    """An argument of the wrong type (``invalid``'s message; a ``TypeError`` too)."""
    return InvalidArgumentTypeError(message(owner, field, requirement, got))


def binding_error(owner: str, field: str, requirement: str, got: object) -> BindingError:
    return BindingError(message(owner, field, requirement, got))


def out_of_memory(owner: str, field: str, requirement: str, got: object) -> OutOfMemoryError:
    return OutOfMemoryError(message(owner, field, requirement, got))


def kernel_unsupported(owner: str, field: str, requirement: str, got: object) -> KernelUnsupportedError:
    return KernelUnsupportedError(message(owner, field, requirement, got))
