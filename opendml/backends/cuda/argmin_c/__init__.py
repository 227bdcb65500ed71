"""ARGMIN and ARGMAX kernel templates: hand-tuned scans, warp and block merges, and a combine pass for split
rows. One engine serves both operators under either NanPolicy: the comparison is data (``Order``, a lowering of
``ops.arg_order``), the rest of every template the same.

The modules, by concept:

- ``operands``: the plan, the kept and reduced layouts, how each operand is loaded and each extra output
  stored along a load, and the alignments those need;
- ``comparison``: the comparison (``Order``) and the values compared: their C type, the PTX min, max and equality
  helpers, the best of several values;
- ``scan``: the scan of one take per element (a candidate per output, or per element of a 16-byte load);
- ``steps``: columns of a computed float value, a candidate per step of rows and a rescan;
- ``merge``: candidates merged over a warp or a block, split rows merged by their scan's last warp, and the
  combine pass;
- ``ballot``: the min-and-ballot scan of rows of a computed value;
- ``kernel``: the reduction kernel, which takes the ballot scan or the scan of one take per element.

The value each element contributes is the ``value`` device function lowered from the KernelSpec's element
expression (expr_c.py): the element itself for ARGMIN alone, so it inlines to the plain load it replaces;
a fused prologue's expression over several operands otherwise. The InputTensor (operand 0) leads: the plan
follows its layout and its 16-byte loads. Every other operand's element comes from the same position
through its own strides (kept and reduced layouts carry them all): an operand constant along the whole
reduction of an output (a per-row scale of a last-axis reduction, a per-tensor one) is loaded once per
output before the scan; one constant along a 16-byte load's elements once per load; one varying along them
with stride 1 by aligned words of the same elements, else element by element.

Extra outputs (``KernelSpec.extra``, a fused kernel's intermediates that are graph outputs) are computed by
``value`` beside the value compared and stored where it is computed, by the thread that scans the element,
in every plan: each element of each extra is written once (pieces of split reductions cover disjoint
ranges; the combine pass writes none), whether its value is NaN or not. Each extra has the InputTensor's
sizes and its own strides, which join the layouts like an operand's; along one load's elements it is stored
by aligned words where it has stride 1, else element by element. A load then holds 16 bytes of the widest
extra output, not 16 bytes of the InputTensor (plan.py): each thread stores one 16-byte word per load beside
its neighbours', so a warp's store instruction writes 512 contiguous bytes. H100, row 5 of
benchmarks/graphs.py (UINT8 [65536, 4096] -> DEQUANTIZE_LINEAR -> CLIP, the FLOAT32 clipped tensor an output,
ARGMIN of it): 0.845 ms with 16-byte loads of UINT8, whose 64 bytes of FLOAT32 a thread stored by four words
64 bytes apart from the next thread's, against 0.495 ms with 4-byte loads (the floor: 0.46 ms).
"""

from __future__ import annotations

from .ballot import BALLOT_BLOCKS_PER_SM, BALLOT_MIN_LOADS, ballot_kernel, uses_ballot
from .comparison import BEATS_HELPERS, BEST_HELPERS, EQ_HELPERS, INDEX_REDUCTIONS, Order, order, packed, tail, union
from .kernel import argmin_kernel
from .merge import CLUSTER_HELPERS, argmin_combine_kernel, one_pass, partials_per_output
from .operands import Extra, Operand, alignments, extras, is_prologue, layouts, operands, plan
from .scan import LOADED_BYTES, VECTOR_UNROLL, lanes
from .steps import COLUMN_BLOCKS_PER_SM, factor_functions, groups_rows, stored_order

__all__ = [
    "BALLOT_BLOCKS_PER_SM", "BALLOT_MIN_LOADS", "BEATS_HELPERS", "BEST_HELPERS", "CLUSTER_HELPERS",
    "COLUMN_BLOCKS_PER_SM", "EQ_HELPERS", "INDEX_REDUCTIONS", "LOADED_BYTES", "VECTOR_UNROLL", "Extra", "Operand",
    "Order", "alignments", "argmin_combine_kernel", "argmin_kernel", "ballot_kernel", "extras", "factor_functions",
    "groups_rows", "is_prologue", "lanes", "layouts", "one_pass", "operands", "order", "packed",
    "partials_per_output", "plan", "stored_order", "tail", "union", "uses_ballot",
]
