"""The activations on the correctly rounded functions (docs/semantics.md 9f): SIGMOID, TANH, SOFTSIGN, GELU and
SOFTPLUS of Steepness 1 correctly rounded as a whole, the parameterised ones compositions of correctly rounded
steps. Each operator through the NumPy lowering of its expression, its reference and the CPU device, against
the independent model (tests/elementwise_oracle.py over tests/rounding_oracle.py's mpmath); the catalog's double
evaluations against mpmath within their proven bounds; a hypothesis property over the parameters."""

from __future__ import annotations

import math
from collections.abc import Callable
from importlib import resources

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opendml as dml
from opendml.kernels import numpy_lowering
from opendml.rounded import FUNCTIONS
from opendml.rounded.method import register_for_numba
from tests import elementwise_oracle as oracle
from tests.rounding_oracle import correctly_rounded

mpmath = pytest.importorskip("mpmath")


def _has_table(name: str) -> bool:
    return resources.files("opendml.rounded").joinpath("tables", f"{name}.npz").is_file()


def _needs(*names: str) -> pytest.MarkDecorator:
    missing = [n for n in names if not _has_table(n)]
    return pytest.mark.skipif(bool(missing), reason=f"no hard-case table for {missing} in this checkout yet")


# Each operator: its description maker (fields after the tensors), its oracle element and the tables it needs.
OPERATORS: dict[str, tuple[Callable[..., object], Callable[..., float], tuple[float, ...], tuple[str, ...]]] = {
    "ACTIVATION_SIGMOID": (dml.ActivationSigmoidDesc, oracle.rounded_activation("SIGMOID"), (), ("SIGMOID",)),
    "ACTIVATION_TANH": (dml.ActivationTanhDesc, oracle.rounded_activation("TANH"), (), ("TANH",)),
    "ACTIVATION_SOFTSIGN": (dml.ActivationSoftsignDesc, oracle.rounded_activation("SOFTSIGN"), (), ("SOFTSIGN",)),
    "ACTIVATION_GELU": (dml.ActivationGeluDesc, oracle.rounded_activation("GELU"), (), ("GELU",)),
    "ACTIVATION_SOFTPLUS": (dml.ActivationSoftplusDesc, oracle.softplus_element, (1.0,), ("SOFTPLUS",)),
    "ACTIVATION_SOFTPLUS steep": (dml.ActivationSoftplusDesc, oracle.softplus_element, (3.0,), ("SOFTPLUS",)),
    "ACTIVATION_PARAMETRIC_SOFTPLUS": (dml.ActivationParametricSoftplusDesc, oracle.parametric_softplus_element,
                                       (0.7, 1.3), ("SOFTPLUS",)),
    "ACTIVATION_ELU": (dml.ActivationEluDesc, oracle.elu_element, (0.3,), ("EXPM1",)),
    "ACTIVATION_CELU": (dml.ActivationCeluDesc, oracle.celu_element, (1.7,), ("EXPM1",)),
    "ACTIVATION_SCALED_ELU": (dml.ActivationScaledEluDesc, oracle.scaled_elu_element, (1.6732632, 1.050701),
                              ("EXPM1",)),
    "ACTIVATION_SCALED_TANH": (dml.ActivationScaledTanhDesc, oracle.scaled_tanh_element, (1.5, 0.6), ("TANH",)),
    "ACTIVATION_SWISH": (dml.ActivationSwishDesc, oracle.swish_element, (1.1,), ("SIGMOID",)),
}

EDGES = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 1e-45, -1e-45, 1e-8, -1e-8, 3.4028235e38,
                  -3.4028235e38, 17.328680, -17.328680, 88.72284, -103.97208, -14.0, -13.5, -9.0, -5.0, 4095.0,
                  2047.0, 15.942385, -87.33655], np.float32)


def _inputs(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    spread = np.ldexp(rng.uniform(-2, 2, count), rng.integers(-24, 8, count)).astype(np.float32)
    return np.concatenate([EDGES, spread])


def _expected(element: Callable[..., float], x: np.ndarray, type_name: str, fields: tuple[float, ...]) -> np.ndarray:
    return np.array([element(float(v), type_name, *fields) for v in x], np.float64)


def _same(got: np.ndarray, want: np.ndarray, x: np.ndarray, what: str) -> None:
    got64 = np.asarray(got, np.float64)
    same = ((got64 == want) & (np.signbit(got64) == np.signbit(want))) | (np.isnan(got64) & np.isnan(want))
    assert same.all(), f"{what}: {[(x[i], got64[i], want[i]) for i in np.flatnonzero(~same)[:5]]}"


@pytest.mark.parametrize("key", [pytest.param(k, marks=_needs(*v[3]), id=k) for k, v in OPERATORS.items()])
@pytest.mark.parametrize("data_type", [dml.DataType.FLOAT32, dml.DataType.FLOAT16], ids=["FLOAT32", "FLOAT16"])
def test_every_activation_matches_the_model(key: str, data_type: dml.DataType) -> None:
    """The expression's NumPy lowering and the operator's reference, against the model, at both types."""
    make, element, fields, _ = OPERATORS[key]
    with np.errstate(over="ignore"):  # FLOAT16: the largest values become infinities
        x = _inputs(80, sum(map(ord, key))).astype(data_type.numpy)
    t = dml.TensorDesc(data_type, [x.size])
    device = dml.Device("cpu")
    operator = device.create_operator(make(t, t, *fields))
    spec = operator.kernel_spec
    want = _expected(element, x.astype(np.float32), data_type.name, fields)
    with np.errstate(all="ignore"):
        _same(numpy_lowering.evaluate(spec.element, [x], spec.scalars), want, x, f"{key} {data_type.name} NumPy")
    definition = dml.ops.BY_NAME[key.split()[0]]
    _same(definition.reference([x], definition.prepare(make(t, t, *fields))), want, x, f"{key} reference")


@_needs("SIGMOID", "SOFTPLUS", "EXPM1")
def test_the_compiled_kernels_match_the_model() -> None:
    """The CPU device's compiled kernels (Numba) of a whole activation and of two compositions."""
    x = _inputs(60, 5)
    for key in ("ACTIVATION_SIGMOID", "ACTIVATION_SOFTPLUS steep", "ACTIVATION_CELU"):
        _, element, fields, _ = OPERATORS[key]
        function = getattr(dml, dml.ops.BY_NAME[key.split()[0]].api.python)
        _same(function(x, *fields, device=dml.Device("cpu")), _expected(element, x, "FLOAT32", fields), x, key)


# The double evaluations' errors, in ulps of the double, on FLOAT32 inputs: the bounds catalog.py proves (with
# this machine's libraries: glibc's exp, log1p and erfc, NumPy's exp).
BOUNDS = {"SIGMOID": 20, "SOFTPLUS": 10, "SOFTSIGN": 4, "GELU": 25, "EXPM1": 8}


def _ulps_from_exact(name: str, x: np.ndarray, y: np.ndarray) -> list[float]:
    f = FUNCTIONS[name].mp
    errors = []
    for v, got in zip(x.tolist(), y.tolist()):
        with mpmath.workprec(300):
            exact = (f if callable(f) else getattr(mpmath, f))(mpmath.mpf(v))
            if not mpmath.isfinite(exact) or abs(exact) < 2.0**-1022 or abs(exact) > 1.7e308:
                continue
            errors.append(float(abs(mpmath.mpf(got) - exact) / math.ulp(float(exact))))
    return errors


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_the_double_evaluations_stay_within_their_bounds(name: str) -> None:
    """NumPy's and the scalar (Numba-compiled) evaluations, against mpmath. GELU's inputs reach -15, where
    erfc's condition number is ~2 x**2: without the argument's correction the error there is over 100 ulps."""
    numba = pytest.importorskip("numba")
    rng = np.random.default_rng(11)
    x = np.concatenate([np.ldexp(rng.uniform(-2, 2, 300), rng.integers(-20, 6, 300)),
                        -rng.uniform(8, 15, 200)]).astype(np.float32).astype(np.float64)
    x = x[~_nudged_where(name, x)]  # there the value is moved NUDGE ulps on purpose (the next test)
    register_for_numba()
    scalar = numba.njit(lambda v, f=FUNCTIONS[name].scalar: f(v))
    with np.errstate(all="ignore"):
        for label, y in (("NumPy", FUNCTIONS[name].numpy(x)), ("scalar", np.array([scalar(v) for v in x]))):
            worst = max(_ulps_from_exact(name, x, y))
            assert worst <= BOUNDS[name], f"{name} {label}: {worst} ulps"


def _nudged_where(name: str, x: np.ndarray) -> np.ndarray:
    """Where catalog.py moves the leading term toward the tail (its docstring): GELU's large and tiny inputs,
    SOFTPLUS's large ones."""
    if name == "GELU":
        return (x >= 10.0) | ((np.abs(x) <= 2.0**-60) & (x != 0))
    if name == "SOFTPLUS":
        return x >= 40.0
    return np.zeros(x.shape, bool)


@pytest.mark.parametrize(("name", "x", "above"), [
    ("GELU", [10.0, 217.0625, 65504.0, 3e38], False), ("GELU", [1e-45, -1e-45, 2.0**-61, -3e-40], True),
    ("SOFTPLUS", [40.0, 217.0625, 3e38], True)])
def test_a_leading_term_is_moved_toward_its_tail(name: str, x: list[float], above: bool) -> None:
    """The double lies strictly on the tail's side of the leading term (x, or x / 2), within 2**-40 of it,
    and rounds as mpmath's exact value does at both precisions (217.0625 is a FLOAT16 midpoint, 1e-45 / 2 a
    FLOAT32 one)."""
    values = np.array(x, np.float32).astype(np.float64)
    lead = values * 0.5 if np.all(np.abs(values) < 1) else values
    for y in (FUNCTIONS[name].numpy(values), np.array([FUNCTIONS[name].scalar(v) for v in values])):
        assert ((y > lead) if above else (y < lead)).all()
        assert (np.abs(y - lead) <= 2.0**-40 * np.abs(lead)).all()
        for precision, fmt in (("FLOAT32", np.float32), ("FLOAT16", np.float16)):
            with np.errstate(over="ignore"):
                got = [float(fmt(v)) for v in y]
            assert got == [correctly_rounded(name, float(v), precision) for v in values]


def test_softplus_refuses_a_steepness_below_one() -> None:
    t = dml.TensorDesc(dml.DataType.FLOAT32, [4])
    for steepness in (0.5, math.nan):
        with pytest.raises(dml.OpenDMLError, match=r"ACTIVATION_SOFTPLUS.*Steepness.*at least 1"):
            dml.Device("cpu").create_operator(dml.ActivationSoftplusDesc(t, t, steepness))


def test_the_functional_names_and_keywords() -> None:
    """Declared once: each front end's name and DirectML's fields as snake_case keywords, with the pages' defaults."""
    keywords = {name: [f.python for f in dml.ops.BY_NAME[name].api.keywords] for name in OPERATORS
                if " " not in name}
    assert keywords["ACTIVATION_SWISH"] == ["sigmoid_input_scale"]
    assert keywords["ACTIVATION_SCALED_ELU"] == ["alpha", "gamma"]
    assert dml.ops.BY_NAME["ACTIVATION_TANH"].api.python == "activation_tanh"
    x = np.float32([-2.0, 0.0, 3.0])
    assert dml.swish(x).tobytes() == dml.swish(x, 1.0).tobytes()


@_needs("SOFTPLUS", "EXPM1", "SIGMOID", "TANH")
@settings(max_examples=25, deadline=None)
@given(key=st.sampled_from(["ACTIVATION_SOFTPLUS", "ACTIVATION_PARAMETRIC_SOFTPLUS", "ACTIVATION_ELU", "ACTIVATION_CELU",
                            "ACTIVATION_SCALED_ELU", "ACTIVATION_SCALED_TANH", "ACTIVATION_SWISH"]),
       fields=st.lists(st.floats(1.0, 4.0, width=32), min_size=2, max_size=2),
       x=st.lists(st.floats(width=32), min_size=1, max_size=8))
def test_compositions_match_the_model_for_any_parameters(key: str, fields: list[float], x: list[float]) -> None:
    """Any parameters (positive, Steepness at least 1), any float32 inputs: the composition's steps, each
    correctly rounded, as the model takes them."""
    make, element, default, _ = OPERATORS[key]
    chosen = tuple(fields[:len(default)])
    values = np.array(x, np.float32)
    t = dml.TensorDesc(dml.DataType.FLOAT32, [values.size])
    spec = dml.Device("cpu").create_operator(make(t, t, *chosen)).kernel_spec
    with np.errstate(all="ignore"):
        got = numpy_lowering.evaluate(spec.element, [values], spec.scalars)
    _same(got, _expected(element, values, "FLOAT32", chosen), values, key)
