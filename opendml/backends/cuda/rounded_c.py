"""The CUDA C of the correctly rounded functions (``opendml.rounded``): for each function and precision an
expression uses, a device function ``rounded_exp_float32(v)`` — CUDA's double function (or the catalog's own
device function of a formula, ``RoundedFunction.c_source``, emitted before it), the rounding test and
rounding of ``opendml.rounded.method`` spelled in C, and a binary search of the function's hard cases, which
the source holds as constant arrays. Each is guarded by a macro, so a source may carry it more than once."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ... import expr as ex
from ...rounded import FUNCTIONS, NEAR, PRECISIONS
from ...rounded.tables import hard_cases

# The steps of opendml.rounded.method on a double's bits (``rounded_parts``), and the rounding itself.
METHOD = r"""#ifndef ROUNDED_METHOD
#define ROUNDED_METHOD
__device__ __forceinline__ void rounded_parts(long long bits, int base, int lowest, long long& significand,
                                              int& field, int& k) {
    const long long magnitude = bits & 0x7FFFFFFFFFFFFFFFLL;
    field = (int)(magnitude >> 52);
    significand = magnitude & 0xFFFFFFFFFFFFFLL;
    if (field == 0) field = 1; else significand |= 1LL << 52;
    k = base + (lowest > field ? lowest - field : 0);
    if (k > 60) k = 60;
}
__device__ __forceinline__ long long rounded_distance(long long bits, int base, int lowest, double top) {
    long long significand; int field, k;
    rounded_parts(bits, base, lowest, significand, field, k);
    if (ldexp((double)significand, field - 1075) >= top) return 1LL << 62;  // rounds to infinity (FAR)
    const long long low = significand & ((1LL << k) - 1);
    const long long half = 1LL << (k - 1);
    return low > half ? low - half : half - low;
}
__device__ __forceinline__ double rounded_round(long long bits, int base, int lowest, double top) {
    long long significand; int field, k;
    rounded_parts(bits, base, lowest, significand, field, k);
    long long kept = significand >> k;
    const long long low = significand & ((1LL << k) - 1);
    const long long half = 1LL << (k - 1);
    if (low > half || (low == half && (kept & 1))) kept += 1;
    double magnitude = ldexp((double)kept, field - 1075 + k);
    if (magnitude >= top) magnitude = __longlong_as_double(0x7FF0000000000000LL);
    return bits < 0 ? -magnitude : magnitude;
}
#endif
"""


def function_name(node: ex.Function) -> str:
    return f"rounded_{node.name.lower()}_{node.precision.name.lower()}"


def _array(name: str, values: np.ndarray) -> str:
    words = ", ".join(f"{int(v)}u" for v in values)
    return f"__device__ const unsigned int {name}[{len(values)}] = {{{words}}};\n"


def _search(name: str, count: int) -> str:
    """The lookup of ``v``'s bits among ``count`` sorted hard cases (none: no lookup)."""
    if count == 0:
        return ""
    return f"""if (rounded_distance(bits, base, lowest, top) <= {NEAR}) {{
        const unsigned int key = __float_as_uint(v);
        int lo = 0, hi = {count - 1};
        while (lo < hi) {{ const int mid = (lo + hi) >> 1; if ({name}_in[mid] < key) lo = mid + 1; else hi = mid; }}
        if ({name}_in[lo] == key) return __uint_as_float({name}_out[lo]);
    }}
    """


def function(node: ex.Function) -> str:
    """The device function of one Function node's function and precision, with its tables."""
    name, grid = function_name(node), PRECISIONS[node.precision.name]
    cases = hard_cases(node.name, node.precision.name)
    tables = _array(f"{name}_in", cases.inputs) + _array(f"{name}_out", cases.results) if len(cases.inputs) else ""
    narrow = "__double2float_rn(rounded_round(bits, base, lowest, top))"
    rounding = "__double2float_rn(y)" if grid.name == "FLOAT32" else narrow
    search = _search(name, len(cases.inputs))
    # The grid's constants where the search or the rounding reads them (an unused one is a warning, an error here).
    grid_constants = "" if not search and grid.name == "FLOAT32" else (
        f"const int base = {grid.base}, lowest = {grid.lowest};\n    const double top = {grid.top!r};\n    ")
    guard = name.upper()
    return f"""{FUNCTIONS[node.name].c_source}#ifndef {guard}
#define {guard}
{tables}__device__ __forceinline__ float {name}(float v) {{
    const double y = {FUNCTIONS[node.name].c}((double)v);
    const long long bits = __double_as_longlong(y);
    if ((bits & 0x7FF0000000000000LL) == 0x7FF0000000000000LL) return __double2float_rn(y);  // NaN, +-inf
    {grid_constants}{search}return {rounding};
}}
#endif
"""


def helpers(roots: Iterable[ex.Expr]) -> str:
    """The device functions the Function nodes of ``roots`` call (none: empty)."""
    found = {node: None for root in roots for node in ex.nodes(root) if isinstance(node, ex.Function)}
    if not found:
        return ""
    kinds = {(n.name, n.precision): n for n in found}
    return METHOD + "".join(function(n) for n in kinds.values())
