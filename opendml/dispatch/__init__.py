"""``opendml dispatch``: run DxDispatch-style JSON models (resources, dispatchables, commands), with timing.

The pieces, each in its own module: ``reader`` (JSON as DxDispatch reads it), ``fields`` (typed reads
naming JSON paths), ``paths`` (file names checked, outputs confined), ``resources`` (buffers and
initial values), ``operators`` (the DirectML operators and their fields), ``dispatchables`` (operator
dispatchables), ``descriptions`` (DirectML operator descriptions to opendml descriptions), ``graphs``
(graph dispatchables: DML_GRAPH_DESC of operator dispatchables), ``commands``
(dispatch, print, writeFile), ``model`` (the whole file, checked before anything runs), ``runner``
(running it on a device), ``outputs`` (files put in place only when a run succeeds), ``timing`` and
``progress`` (DxDispatch's timing lines), ``schema`` (the JSON schema of a model), ``catalog`` (the
bundled examples) and ``cli``.

>>> from pathlib import Path
>>> from opendml.dispatch import Runner, load_model, make_device
>>> from opendml.dispatch.catalog import find_example
>>> model = load_model(find_example("clip1").path, output_dir=Path("."))
>>> Runner(model, make_device("cpu", "6_4")).run()  # doctest: +ELLIPSIS
Dispatch 'clip1': 1 iterations, ... ms median (CPU)
Resource 'y': -100, -100, -5, 0, 5, 2147483645, 2147483645
"""

from __future__ import annotations

from .errors import ModelError
from .model import Model, load_model, parse_model
from .runner import Runner, make_device
from .timing import TimingOptions

__all__ = ["Model", "ModelError", "Runner", "TimingOptions", "load_model", "make_device", "parse_model"]
