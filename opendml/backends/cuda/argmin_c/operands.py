"""The plan of an ARGMIN or ARGMAX kernel and the layout of what it reads and writes: the kept and reduced
layouts of the InputTensor, the output, the other operands and the extra outputs; the form each operand's
load and each extra output's store takes along a load (one value, aligned words, or element by element); the
alignments those need; and the C that loads or stores them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .... import expr as ex
from ....dtypes import DataType
from ....kernels.spec import KernelSpec
from ....tensor import TensorDesc
from ...layout import Layout, split_axes
from ..codegen import C_TYPE
from ..elementwise_c import FLOAT_WORD, WORD
from ..plan import ArgMinPlan, plan_argmin


def layouts(spec: KernelSpec, inputs: Sequence[TensorDesc | None], output: TensorDesc,
            extra_outputs: Sequence[TensorDesc] = ()) -> tuple[Layout, Layout]:
    """The kept layout (strides of the InputTensor, the output, then each other present operand, then each
    extra output) and the reduced one (the InputTensor's, the others', the extra outputs'), merged only
    where every operand and extra output allows it."""
    assert spec.reduction is not None
    x = inputs[0]
    assert x is not None  # InputTensor is required
    others = [desc.effective_strides for desc in inputs[1:] if desc is not None]
    others += [desc.effective_strides for desc in extra_outputs]
    return split_axes(x.sizes, x.effective_strides, output.effective_strides, spec.reduction.axes, others)


def is_prologue(spec: KernelSpec) -> bool:
    """Whether the values compared are computed (a fused prologue), not the InputTensor's elements."""
    return not (isinstance(spec.element, ex.Load) and spec.element.operand == 0)


def plan(spec: KernelSpec, x: TensorDesc, kept: Layout, reduced: Layout, sm_count: int,
         clusters: int = 1) -> ArgMinPlan:
    """The plan of ``spec``'s reduction over the InputTensor ``x`` on a GPU of ``sm_count`` multiprocessors
    whose thread-block clusters hold at most ``clusters`` blocks (1: none)."""
    assert spec.reduction is not None
    stored = max((value.type.size for value in spec.extra), default=0)
    return plan_argmin(x.sizes, x.effective_strides, spec.reduction.axes, kept, reduced, sm_count,
                       x.data_type.size, is_prologue(spec), shared_by_rows(kept, reduced), stored, clusters)


def shared_by_rows(kept: Layout, reduced: Layout) -> bool:
    """Whether the operands besides the InputTensor are the same for every output and some of them varies
    along the reduction: a warp scanning several rows then loads them once for all (plan.py)."""
    others_kept, others_reduced = kept.strides[2:], reduced.strides[1:]
    return not any(any(s) for s in others_kept) and any(any(s) for s in others_reduced)


@dataclass(frozen=True)
class Operand:
    """An operand of the element besides the InputTensor, and how the scan reads it."""

    slot: int
    type: DataType
    kept: tuple[int, ...]  # strides over the kept layout
    reduced: tuple[int, ...]  # strides over the reduced layout
    form: str  # along one load's elements: "one" value, aligned "words", or "elements" one by one
    stride: int  # between one load's elements

    @property
    def constant(self) -> bool:
        """The same for the whole reduction of an output: loaded once, before the scan."""
        return not any(self.reduced)

    def loaded_bytes(self, vector: int) -> int:
        """Bytes held per scan position, when loaded there."""
        if self.constant:
            return 0
        return self.type.size * (1 if self.form == "one" else vector)


def operands(spec: KernelSpec, plan: ArgMinPlan, kept: Layout, reduced: Layout) -> list[Operand]:
    """The present operands after the InputTensor (kept strides from index 2, reduced from 1), each with the
    form its load takes under ``plan``."""
    found = []
    present = [(k, t) for k, t in enumerate(spec.inputs) if t is not None and k > 0]
    for n, (slot, data_type) in enumerate(present):
        kept_strides, reduced_strides = kept.strides[2 + n], reduced.strides[1 + n]
        if plan.vector == 1:
            found.append(Operand(slot, data_type, kept_strides, reduced_strides, "one", 0))
            continue
        # Along a load: the innermost reduced dimension (rows) or the innermost kept one (columns).
        rows = plan.family == "rows"
        stride = reduced_strides[-1] if rows else kept_strides[-1]
        others = (kept_strides + reduced_strides[:-1]) if rows else (kept_strides[:-1] + reduced_strides)
        chunk = plan.vector * data_type.size
        if stride == 0:
            form = "one"
        elif stride == 1 and all(s * data_type.size % min(16, chunk) == 0 for s in others):
            form = "words"
        else:
            form = "elements"
        found.append(Operand(slot, data_type, kept_strides, reduced_strides, form, stride))
    return found


@dataclass(frozen=True)
class Extra:
    """An extra output: where the scan stores each element's value of ``spec.extra[number - 1]``."""

    number: int  # 1, 2...: the output's place after the main one
    type: DataType
    kept: tuple[int, ...]  # strides over the kept layout
    reduced: tuple[int, ...]  # strides over the reduced layout
    form: str  # along one load's elements: aligned "words", or "elements" one by one
    stride: int  # between one load's elements

    def words(self, vector: int) -> tuple[str, int]:
        """The word one load's elements are stored by, and how many. FLOAT32 by float4 (or float2): the
        compiler splits a uint4 store of float values into 4-byte stores."""
        chunk = vector * self.type.size
        words = FLOAT_WORD if self.type is DataType.FLOAT32 else WORD
        return words[min(16, chunk)], max(1, chunk // 16)


def extras(spec: KernelSpec, plan: ArgMinPlan, kept: Layout, reduced: Layout) -> list[Extra]:
    """The extra outputs (their strides follow the present operands' in both layouts), each with the form
    its stores take under ``plan``."""
    first_kept, first_reduced = len(kept.strides) - len(spec.extra), len(reduced.strides) - len(spec.extra)
    found = []
    for j, stored in enumerate(spec.extra):
        kept_strides, reduced_strides = kept.strides[first_kept + j], reduced.strides[first_reduced + j]
        size, form, stride = stored.type.size, "elements", 0
        if plan.vector > 1:
            # Along a load: the innermost reduced dimension (rows) or the innermost kept one (columns).
            rows = plan.family == "rows"
            stride = reduced_strides[-1] if rows else kept_strides[-1]
            others = (kept_strides + reduced_strides[:-1]) if rows else (kept_strides[:-1] + reduced_strides)
            if stride == 1 and all(s * size % min(16, plan.vector * size) == 0 for s in others):
                form = "words"
        found.append(Extra(j + 1, stored.type, kept_strides, reduced_strides, form, stride))
    return found


def alignments(spec: KernelSpec, plan: ArgMinPlan, kept: Layout, reduced: Layout) -> list[tuple[int, int]]:
    """(position, bytes) of each address ``plan``'s loads and stores need aligned: the InputTensor's 16-byte
    loads, any other operand's words and any extra output's words. Positions count the present operands,
    then the extra outputs."""
    if plan.vector == 1:
        return []
    in_type = spec.inputs[0]
    assert in_type is not None  # InputTensor is required
    needed = [(0, plan.vector * in_type.size)]
    found = operands(spec, plan, kept, reduced)
    for position, operand in enumerate(found, start=1):
        if operand.form == "words":
            needed.append((position, min(16, plan.vector * operand.type.size)))
    for position, extra in enumerate(extras(spec, plan, kept, reduced), start=1 + len(found)):
        if extra.form == "words":
            needed.append((position, min(16, plan.vector * extra.type.size)))
    return needed


def _fetch(operand: Operand, name: str, offset: str, vector: int) -> tuple[list[str], Callable[[int], str]]:
    """Statements loading ``operand``'s elements of one position into ``name``, and element ``e``'s value."""
    c_type = C_TYPE[operand.type]
    pointer = f"((const {c_type}*)p{operand.slot})"
    if operand.form == "one":
        return [f"const {c_type} {name} = {pointer}[{offset}];"], lambda e: name
    if operand.form == "elements":
        lines = [f"const {c_type} {name}_{e} = {pointer}[{offset} + {e * operand.stride}ull];" for e in range(vector)]
        return lines, lambda e: f"{name}_{e}"
    chunk = vector * operand.type.size
    word, count = WORD[min(16, chunk)], max(1, chunk // 16)
    lines = [f"union {{ {word} w[{count}]; {c_type} e[{vector}]; }} {name};"]
    lines += [f"{name}.w[{j}] = ((const {word}*)(p{operand.slot} + ({offset}) * {operand.type.size}ull))[{j}];"
              for j in range(count)]
    return lines, lambda e: f"{name}.e[{e}]"


def _hoisted(others: Sequence[Operand], vector: int) -> tuple[str, dict[int, Callable[[int], str]]]:
    """Loads of the operands constant along the reduction, once per output group, and their values."""
    lines: list[str] = []
    values: dict[int, Callable[[int], str]] = {}
    for operand in others:
        if operand.constant:
            fetched, values[operand.slot] = _fetch(operand, f"h{operand.slot}", f"kk{operand.slot}", vector)
            lines += fetched
    return "".join(f"\n        {line}" for line in lines), values


def _held(extra: Extra, name: str, vector: int) -> str:
    """The declaration of the registers one load's elements of ``extra`` are computed into."""
    c_type = C_TYPE[extra.type]
    if extra.form == "words":
        word, count = extra.words(vector)
        return f"union {{ {word} w[{count}]; {c_type} e[{vector}]; }} {name};"
    return f"struct {{ {c_type} e[{vector}]; }} {name};"


def _stores(extra: Extra, name: str, offset: str, vector: int) -> list[str]:
    """Statements storing one load's elements of ``extra``, held in ``name``, from element ``offset``."""
    pointer = f"pout{extra.number}"
    if extra.form == "words":
        word, count = extra.words(vector)
        return [f"(({word}*)({pointer} + ({offset}) * {extra.type.size}ull))[{w}] = {name}.w[{w}];"
                for w in range(count)]
    c_type = C_TYPE[extra.type]
    return [f"(({c_type}*){pointer})[{offset} + {e * extra.stride}ull] = {name}.e[{e}];" for e in range(vector)]
