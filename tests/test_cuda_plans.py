"""The CUDA backend's layout algebra and reduction plans, which need no GPU to check."""

from __future__ import annotations

import math

import pytest

from opendml.backends.cuda.plan import plan_argmin
from opendml.backends.layout import collapse, split_axes
from opendml.tensor import element_offsets, packed_strides


@pytest.mark.parametrize(("sizes", "strides"), [
    ([2, 3, 4], [[12, 4, 1], [12, 4, 1]]), ([256, 64], [[64, 1], [0, 1]]), ([2, 1, 4], [[0, 5, 0]]),
    ([3, 5, 7], [[80, 14, 2], [35, 7, 1]]), ([4, 1, 1], [[1, 9, 9], [1, 1, 1]]), ([1, 1], [[3, 4]]),
])
def test_collapse_walks_the_same_elements_in_the_same_order(sizes, strides) -> None:
    layout = collapse(sizes, strides)
    assert math.prod(layout.sizes) == math.prod(sizes)
    for before, after in zip(strides, layout.strides):
        assert (element_offsets(sizes, before) == element_offsets(layout.sizes, after)).all()


def test_collapse_merges_packed_tensors_into_one_dimension() -> None:
    sizes = [2, 3, 4, 5]
    assert collapse(sizes, [packed_strides(sizes)] * 3).sizes == (120,)


def test_split_axes_orders_reduced_elements_row_major() -> None:
    sizes, strides = [512, 1024, 512], packed_strides([512, 1024, 512])
    kept, reduced = split_axes(sizes, strides, [1, 1, 1], [2, 0])
    assert kept.sizes == (1024,) and kept.strides == ((512,), (1,))
    assert reduced.sizes == (512, 512) and reduced.strides == ((524288, 1),)


@pytest.mark.parametrize(("sizes", "axes", "family", "group", "split"), [
    ([16384, 16384], [1], "rows", 256, False),
    ([16384, 16384], [0], "columns", 1, True),
    ([1048576, 256], [1], "rows", 32, False),
    ([2**28], [0], "rows", 256, True),
    ([512, 1024, 512], [0, 2], "rows", 256, True),
    ([64, 1048576], [0], "columns", 1, False),
])
def test_plans_follow_the_shape(sizes, axes, family, group, split) -> None:
    strides = packed_strides(sizes)
    out_strides = packed_strides([1 if k in axes else n for k, n in enumerate(sizes)])
    kept, reduced = split_axes(sizes, strides, out_strides, axes)
    plan = plan_argmin(sizes, strides, axes, kept, reduced, sm_count=132)
    assert (plan.family, plan.group, plan.splits > 1) == (family, group, split)
    assert plan.chunk * plan.splits >= plan.length > plan.chunk * (plan.splits - 1)
