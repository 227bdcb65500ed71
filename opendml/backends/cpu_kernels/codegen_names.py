"""The names of the code ``codegen`` generates (``_Names``: operands ``a{k}``, outputs ``o``, ``o1``..., scalars),
its two limits (``CHUNK``, ``HOISTED_MAX``), and the lines that both ``run`` (``codegen_runs``) and the row walks
(``codegen_kernels``) write: the hoisting patterns of the other operands and the stores of ``value``'s result.
"""

from __future__ import annotations

import itertools

CHUNK = 512  # elements a checked run computes in vector code before it redoes the marked ones

HOISTED_MAX = 3  # other operands beyond which the runs are one generic loop (2**n loops would take minutes to compile)


class _Names:
    """The generated code's argument lists: operands ``a{k}``, outputs ``o``, ``o1``... (``outs``), scalars."""

    def __init__(self, ops: tuple[int, ...], params: int, outputs: int = 1) -> None:
        self.ops = ops
        self.lead, self.others = ops[0], ops[1:]
        self.q = [f"q{k}" for k in range(params)]
        self.outs = [""] + [str(j) for j in range(1, outputs)]  # suffixes: o, o1, o2...
        # Too many other operands for a loop per hoisting pattern: one loop over blocks, each other operand read
        # from a view of its run or, where it is one value, from a buffer holding it (``_views``).
        self.generic = len(self.others) > HOISTED_MAX

    def other(self, k: int, at: str) -> str:
        """Other operand ``k``'s element at index ``at`` of a contiguous run (not hoisted); in a generic run, at
        ``at`` of the block's view ``x{k}``."""
        return f"x{k}[{at}]" if self.generic else f"r{k}[{at}]"

    def buffers(self) -> list[str]:
        """A generic run's buffers, one per other operand (``CHUNK`` elements, made once per ``kernel`` call)."""
        return [f"t{k}" for k in self.others] if self.generic else []

    def out(self, pattern: str) -> list[str]:
        """``pattern`` for each output (``{j}``: its suffix)."""
        return [pattern.format(j=j) for j in self.outs]

    def each(self, pattern: str) -> list[str]:
        return [pattern.format(k=k) for k in self.ops]

    def call(self, *groups: list[str] | str) -> str:
        items: list[str] = []
        for g in groups:
            items += [g] if isinstance(g, str) else g
        return ", ".join(items)


def _combinations(names: _Names) -> list[tuple[int, ...]]:
    """The other operands hoisted in each specialised loop, most hoisted first (the last: none). Past
    ``HOISTED_MAX`` other operands, one loop, none hoisted (``names.generic``: each read through a view)."""
    if names.generic:
        return [()]
    found = []
    for hoisted in itertools.product((True, False), repeat=len(names.others)):
        found.append(tuple(k for k, h in zip(names.others, hoisted) if h))
    return found


def _branch(c: int, count: int, hoisted: tuple[int, ...]) -> str:
    """The test of combination ``c`` of ``count`` (``_combinations``' order: earlier ones already failed)."""
    if c == count - 1:
        return "else:"
    return f"{'if' if c == 0 else 'elif'} {' and '.join(f'd{k} == 0' for k in hoisted)}:"


def _stores(names: _Names, targets: list[str], call: str, pad: str) -> list[str]:
    """Lines storing ``value``'s result (``call``) into ``targets``, one per output."""
    if len(targets) == 1:
        return [f"{pad}{targets[0]} = {call}"]
    return [f"{pad}w = {call}"] + [f"{pad}{target} = w[{j}]" for j, target in enumerate(targets)]
