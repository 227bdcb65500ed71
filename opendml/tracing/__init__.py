"""``opendml.compile``: a function of arrays, traced once per signature into one compiled graph.

A call's signature is each array argument's kind, dtype, shape and strides (and whether a description can
state its layout) and every other argument's exact value. A new signature runs the function once on traced
arrays: the functional API's functions, given one, add a node to a Graph instead of running, with the same
descriptions as on arrays (so results are bit-identical). The graph is compiled once and cached; each call
binds the arrays where they lie (copies where the functional API copies) and returns new arrays.

``tracer``: the traced array, and what it refuses; ``functions``: the functional API's calls on traced arrays
(the "traced" front end of ``opendml.front_ends``); ``compiled``: ``compile`` and the function it makes.
"""

from __future__ import annotations

from .compiled import CompiledFunction, compile
from .tracer import Tracer

__all__ = ["CompiledFunction", "Tracer", "compile"]
