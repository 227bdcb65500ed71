"""Doctest collection: modules that import an optional package are only collected where it is installed.

CuPy: the CUDA backend's modules. onnx (the ``onnx`` extra): the ONNX front end's modules and
tests/onnx_models.py (tests/test_onnx*.py then skip, saying so). Dask (the ``dask`` extra): the modules of
opendml/dask that import it and docs/dask.md (tests/test_dask.py then skips, saying so).
"""

from __future__ import annotations

import importlib.util

collect_ignore = [] if importlib.util.find_spec("cupy") else [
    "opendml/backends/cuda/backend.py",
    "opendml/backends/cuda/compiler.py",
    "opendml/backends/cuda/graphs.py",
    "opendml/backends/cuda/launch.py",
]

_NEED_ONNX = ["opendml/onnx/*.py", "opendml/onnx/ops/*.py", "tests/onnx_models.py"]

_NEED_DASK = ["opendml/dask/api.py", "opendml/dask/blocks.py", "opendml/dask/elementwise.py", "opendml/dask/merge.py",
              "opendml/dask/reductions.py", "docs/dask.md"]

collect_ignore_glob = ([] if importlib.util.find_spec("onnx") else _NEED_ONNX) + \
    ([] if importlib.util.find_spec("dask") else _NEED_DASK)
