"""REDUCE's value functions on CUDA: the launches of one reduction, in order, with their sources, grids and
arguments, and the scratch they share. ``reduce_kernel`` launches them on the GPU; the tests run the same stages
on the host.

Every function is a scan that adds each piece of an output into its words, then a finish pass that turns the
words into the output and zeroes them. LOG_SUM_EXP scans twice: MAX's scan first, into words of its own
(``order``), whose largest element ``m`` the second scan reads to add the terms ``EXP(x - m)`` exactly; its finish
reads both and zeroes both.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...dtypes import DataType
from ...kernels.spec import KernelSpec
from ..layout import Layout
from . import reduce_c, reduce_finish_c, reduce_plan
from .reduce_plan import ReducePlan


@dataclass(frozen=True)
class Stage:
    """One launch: its CUDA C, what it does (for its title), its blocks, and its arguments' names in order:
    ``x`` (the InputTensor), ``out`` (the OutputTensor), or a scratch's name (``scratch``)."""

    source: str
    what: str
    grid: int
    args: tuple[str, ...]


def scratch(plan: ReducePlan, how: str) -> dict[str, int]:
    """The words of each scratch of a launch, by name: ``words`` (the outputs' accumulations), and for
    LOG_SUM_EXP ``order`` (MAX's two words an output)."""
    sizes = {"words": reduce_plan.scratch_words(plan, how)}
    if how == "logsumexp":
        sizes["order"] = plan.outputs * reduce_plan.WORDS["order"]
    return sizes


def stages(spec: KernelSpec, plan: ReducePlan, kept: Layout, reduced: Layout, output: DataType,
           sm_count: int) -> list[Stage]:
    """The launches of ``spec``'s reduction, in order."""
    how = reduce_plan.mode(spec)
    order = ("order",) if how == "logsumexp" else ()
    grid = reduce_plan.grid(plan, sm_count)
    scan = Stage(reduce_c.scan_kernel(spec, plan, kept, reduced), f"{plan.family} scan", grid, ("x", "words", *order))
    finish = Stage(reduce_finish_c.finish_kernel(spec, plan, kept, output), "finish",
                   reduce_plan.finish_grid(plan, sm_count), ("words", *order, "out"))
    if how != "logsumexp":
        return [scan, finish]
    largest = Stage(reduce_c.scan_kernel(spec, plan, kept, reduced, order=True), f"{plan.family} scan of the largest",
                    grid, ("x", "order"))
    return [largest, scan, finish]
