"""Whether a value is a Dask array, without importing Dask: a program that never imported ``dask.array``
holds no Dask array."""

from __future__ import annotations

import sys
from typing import Any


def is_dask_array(value: Any) -> bool:
    """Whether ``value`` is a Dask array (with or without Dask's array query planning)."""
    module = sys.modules.get("dask.array")
    return module is not None and isinstance(value, module.Array)


def any_dask(*values: Any) -> bool:
    """Whether any of ``values`` is a Dask array (one dictionary lookup when Dask was never imported)."""
    module = sys.modules.get("dask.array")
    if module is None:
        return False
    array_type = module.Array
    return any(isinstance(value, array_type) for value in values)
