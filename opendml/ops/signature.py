"""A declared operator's functions in the front ends, with their own signatures: ``clip(x, min, max, *,
scale_bias=None, out=None, device=None)``.

Each function takes the operator's keyword fields (``Api.keywords``) as named parameters, as a function written
out would: Python binds a call's arguments (and refuses wrong ones with its TypeError) at no cost to the front
end, where a ``*args, **kwargs`` function binding them itself paid on every call (a repeated functional call on
small arrays costs a few microseconds in all, ``functional.fastpath``), and ``help()`` and ``inspect.signature``
show the real parameters. So the function is compiled from its source, as ``dataclasses`` makes ``__init__``:
the parameters from the declaration, the body from the front end (its own names start with ``_``, which no
field's keyword does).

>>> from opendml.ops import BY_NAME
>>> f = define("clip", BY_NAME["ELEMENT_WISE_CLIP"].api.keywords, "return (x, min, max, scale_bias)\\n", {}, {})
>>> import inspect; str(inspect.signature(f)), f(1, 2, 3)
('(x, min, max, *, scale_bias=None)', (1, 2, 3, None))
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .definition import REQUIRED, Field


def define(name: str, keywords: Sequence[Field], body: str, module: dict[str, Any], closure: Mapping[str, Any], *,
           every_positional: bool = False, trailing: Sequence[str] = (),
           annotations: Mapping[str, str] | None = None, arrays: Sequence[str] = ("x",)) -> Callable[..., Any]:
    """``def name(x, <keywords>, *, <trailing>=None): <body>`` (``arrays``: the tensors' parameters, ``a, b`` for a
    binary operator), a function of ``module`` (the front end's
    globals: a name found there is looked up at each call, as in the module's own functions) whose other names
    are ``closure``'s values.

    A FLOAT field may be given by position, the others by keyword only (every field by position where
    ``every_positional``: the graph builder's DirectMLX-style functions); a field without a default is
    required. ``trailing``: keyword-only parameters defaulting to None (``out``, ``device``).
    ``annotations``: the parameters' (and ``return``'s), as ``help()`` shows them.
    """
    defaults = {f"_default_{f.python}": f.default for f in keywords if f.default is not REQUIRED}
    parameters = list(arrays)
    keyword_only = False
    for f in keywords:
        if not (every_positional or f.positional or keyword_only):
            parameters.append("*")
            keyword_only = True
        parameters.append(f.python if f.default is REQUIRED else f"{f.python}=_default_{f.python}")
    if trailing and not keyword_only:
        parameters.append("*")
    parameters += [f"{p}=None" for p in trailing]
    source = (f"def _make({', '.join([*closure, *defaults])}):\n    def {name}({', '.join(parameters)}):\n"
              f"{textwrap.indent(body, ' ' * 8)}    return {name}\n")
    made: dict[str, Any] = {}
    exec(source, module, made)
    function: Callable[..., Any] = made["_make"](**closure, **defaults)
    function.__qualname__ = name  # pickled by reference: the module that exports it sets ``__module__``
    function.__annotations__ = dict(annotations or {})
    return function


def arguments(keywords: Sequence[Field]) -> str:
    """The source of a tuple of the keyword fields' values, in order: ``(min, max, scale_bias, )``."""
    return "(" + "".join(f"{f.python}, " for f in keywords) + ")"
