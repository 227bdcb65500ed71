"""The kernels that reduce one task of an ARGMIN (ARGMAX) into per-slot (key, index) states.

Over the input's own elements:

- ``rows``: the last dimension reduced, run by run (``lanes``: its LLVM vector reductions, each vector lane
  keeping its own best);
- ``columns``: the last dimension kept, a running best per column, row after row.

Over a computed element (a fused prologue), each in a generated module per element expression:

- ``fast_rows``: FLOAT32 values, the last dimension reduced, computed in vector registers where they are
  compared (``vectors``: the element lowered to LLVM vectors);
- ``fast_columns``: FLOAT32 values, the last dimension kept, computed in the fold over each group of rows;
- ``boxes``: any element and layout: the values written into per-thread scratch tiles that ``rows`` and
  ``columns`` reduce unchanged (the generated module holds the fast tasks too).
"""
