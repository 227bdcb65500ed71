"""The fuzz suite's collection. Its end-of-session report (``report``) is hooked in ``tests/conftest.py``:
pytest-xdist's controller, which prints it, loads that conftest but not this one."""

from __future__ import annotations

import contextlib
import importlib.util
import warnings

# The ONNX cases import onnx: without it, their doctest collection is skipped too (test_fuzz_onnx.py skips).
collect_ignore = [] if importlib.util.find_spec("onnx") else ["onnx_cases.py"]

# Hypothesis imports this module to report a failing example; where libcst is installed that import
# warns (DeprecationWarning from mypy_extensions), which pytest's filterwarnings = error would turn into
# an internal error hiding the failure itself. Imported here once, quietly.
with warnings.catch_warnings(), contextlib.suppress(ImportError):
    warnings.simplefilter("ignore", DeprecationWarning)
    import hypothesis.extra._patching  # noqa: F401
