"""ARGMIN's and ARGMAX's CPU engines (Numba), one module a concept.

- ``spec``: what the engines take from a kernel specification (the reduction record, the element);
- ``keys``: the comparison keys (the lowering of ``ops.arg_order`` to integers), per-slot state, merges;
- ``plan``: how a call is shared out (plain Python, once per call);
- ``drivers``: the tasks, state merges, fills and index writes on Numba's threads;
- ``reduction``: which call runs a kernel specification, and its compile step;
- ``call``: a call of ARGMIN over its input's elements, start to finish (plan, states, drivers, output);
- ``prologue``: a call over a computed element (a fused chain feeding ARGMIN), ``extras`` one that also
  writes extra outputs;
- ``engines``: the kernels that reduce a task, by the elements they compare and the layout they take (see
  ``engines/__init__.py``).

Nothing is imported here: each module imports the ones it needs, and no import runs in a circle (a test
checks it: tests/test_argmin_modules.py).
"""
