"""opendml's fuzz suite: generated descriptions, bindings, functional calls, dispatch models and ONNX models.

Every case is judged by an oracle written here from SPEC.md and the documentation alone: ``rules``
decides accept or reject (support tables, description and binding rules), ``tests/elementwise_oracle.py``
and ``values`` give the expected bits. The number of examples per property is set by
``OPENDML_FUZZ_EXAMPLES`` (see ``settings``); CI runs a few dozen, a long run thousands.
"""
