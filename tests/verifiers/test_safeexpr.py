"""verifiers.safeexpr: plain-text math parsed from a whitelisted syntax tree, never executed."""
import math
import os

import pytest
import sympy

from verifiers.safeexpr import ExprError, evaluate, evaluate_objects, parse

x, y, l, g = sympy.symbols("x y l g")


@pytest.mark.parametrize("text,expected", [
    ("1+2*3", sympy.Integer(7)),
    ("2^3^2", sympy.Integer(512)),            # right-associative power, ^ is power not XOR
    ("2**10", sympy.Integer(1024)),
    ("-x + +y", -x + y),
    ("1e-3", sympy.Rational(1, 1000)),
    ("1.5E+8", sympy.Integer(150000000)),
    (".5", sympy.Rational(1, 2)),
    ("3/4", sympy.Rational(3, 4)),
    ("2x", 2 * x),
    ("2 pi", 2 * sympy.pi),
    ("2(x+1)", 2 * (x + 1)),
    ("(x)(y)", x * y),
    ("x y", x * y),
    ("x(y+1)", x * (y + 1)),
    ("2*pi*sqrt(l/g)", 2 * sympy.pi * sympy.sqrt(l / g)),
    ("ln(e)", sympy.Integer(1)),
    ("log(x)", sympy.log(x)),
    ("abs(-3)", sympy.Integer(3)),
    ("sin(pi/2) + cos(0) + tan(0) + asin(1) + acos(1) + atan(0)", 2 + sympy.pi / 2),
    ("exp(0)", sympy.Integer(1)),
    ("3\u00d710^8", sympy.Integer(300000000)),   # unicode times
    ("\u22122", sympy.Integer(-2)),              # unicode minus
    ("x^-1", 1 / x),
])
def test_parse_grammar(text, expected):
    assert sympy.simplify(parse(text) - expected) == 0


def test_parse_symbols_whitelist():
    assert parse("e*x", symbols=["e", "x"]) == sympy.Symbol("e") * x  # a listed name wins over the constant
    assert parse("pi*x", symbols=["x"]) == sympy.pi * x
    with pytest.raises(ExprError, match="unknown name"):
        parse("x*z", symbols=["x"])


ATTACKS = [
    "__import__('os').system('x')",
    "__import__",
    "().__class__",
    "().__class__.__bases__[0].__subclasses__()",
    "(lambda: 1)()",
    "lambda: 1",
    "9**9**9",
    "9^9^9",
    "10**10**10",
    "(10**1000)**1000",
    "2**(10**5)",
    "'a'*10**9",
    '"a"',
    "x.real",
    "x[0]",
    "[i for i in range(9)]",
    "{1: 2}",
    "x if y else z",
    "eval('1')",
    "exec('1')",
    "open('f')",
    "getattr(x, 'y')",
    "sin(x, y)",
    "sqrt(x=1)",
    "sqrt(*x)",
    "f(x)(y)(z)" + ")" * 3,
    "1/0",
    "x < 3",
    "x == 3",
    "x = 3",
    "x; y",
    "x // 2",
    "x % 2",
    "x @ y",
    "~x",
    "not x",
    "x and y",
    "True",
    "None",
    "1e999999",
    "1" * 501,
    "(" * 40 + "1" + ")" * 40,
    "-" * 400 + "1",
    "sin x",
    "sqrt",
    "2 3",
    "",
    "   ",
    "\u00e9t\u00e9",
]


@pytest.mark.parametrize("text", ATTACKS)
def test_attacks_refused(text, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ExprError):  # refused quickly, not after building a huge number: benchmarks/test_bench_deadlines.py
        parse(text)
    with pytest.raises(ExprError):
        evaluate(text, {"x": 1.0, "y": 2.0, "z": 3.0})
    assert os.listdir(tmp_path) == []  # nothing was run


@pytest.mark.parametrize("text", ["x**100000", "x^(10^4)", "(10^2000)^x"])
def test_symbolic_size_guards(text):
    with pytest.raises(ExprError, match="too large"):
        parse(text)  # evaluate() is not asked: a float power cannot grow without bound


def test_refusal_reasons_are_specific():
    with pytest.raises(ExprError, match="character not allowed"):
        parse("().__class__")
    with pytest.raises(ExprError, match="name not allowed"):
        parse("__import__")
    with pytest.raises(ExprError, match="too large"):
        parse("9**9**9")
    with pytest.raises(ExprError, match="longer than"):
        parse("x" * 600)
    with pytest.raises(ExprError, match="nesting"):
        parse("(" * 40 + "1" + ")" * 40)
    with pytest.raises(ExprError, match="not finite"):
        parse("1/0")


def test_max_len_is_a_parameter():
    assert parse("x+" * 260 + "1", max_len=1000) == 260 * x + 1
    with pytest.raises(ExprError, match="longer than"):
        parse("x+" * 260 + "1")


def test_evaluate_values():
    assert evaluate("v^2/(2*g)", {"v": 3.0, "g": 9.81}) == pytest.approx(9 / 19.62)
    assert evaluate("2 pi sqrt(l/g)", {"l": 1.0, "g": 9.81}) == pytest.approx(2 * math.pi * math.sqrt(1 / 9.81))
    assert evaluate("1.5E+8 * 2", {}) == 3e8
    assert evaluate("e", {}) == math.e
    assert evaluate("e", {"e": 1.6e-19}) == 1.6e-19  # env wins over the constant
    assert evaluate("abs(-2) + ln(e)", {}) == 3.0


@pytest.mark.parametrize("text,env,reason", [
    ("x", {}, "unknown name"),
    ("1/x", {"x": 0.0}, "division by zero"),
    ("sqrt(x)", {"x": -1.0}, "math error"),
    ("log(0)", {}, "math error"),
    ("exp(1000)", {}, "overflow"),
    ("10.0^400", {}, "overflow"),
    ("(-8)^(1/3)", {}, "complex"),
    ("x*1e300*1e300", {"x": 1.0}, "not a finite"),
    ("x", {"x": float("nan")}, "not a finite"),
])
def test_evaluate_errors(text, env, reason):
    with pytest.raises(ExprError, match=reason):
        evaluate(text, env)


def test_evaluate_rejects_non_number_env():
    with pytest.raises(ExprError):
        evaluate("x", {"x": "1"})


def test_evaluate_objects_with_pint():
    from verifiers.units import get_ureg

    u = get_ureg()
    q = {"v": u.Quantity(2.0, "m/s"), "t": u.Quantity(3.0, "s")}
    assert evaluate_objects("v*t", q).dimensionality == u.Quantity(1, "m").dimensionality
    import pint

    with pytest.raises(pint.DimensionalityError):  # the objects' own errors propagate
        evaluate_objects("v + t", q)


def test_no_eval_in_module():
    import inspect

    import verifiers.safeexpr as se

    src = inspect.getsource(se)
    for bad in ("eval(", "exec(", "sympify(", "parse_expr(", "compile("):
        assert bad not in src.replace("evaluate(", "").replace("evaluate_objects(", "").replace("ast.parse(", "").replace("re.compile(", "")


from hypothesis import given, settings, strategies as st  # noqa: E402

_ALPHA = "0123456789.eE+-*/^()_, xyzpisqrtlogabc\t"


@settings(max_examples=300, deadline=None)  # per-example deadline: benchmarks/test_bench_deadlines.py
@given(st.text(alphabet=_ALPHA, max_size=80) | st.text(max_size=80))
def test_any_text_parses_or_raises_exprerror(text):
    """Whatever the text, the only outcomes are a value or ExprError (never another exception)."""
    try:
        out = parse(text)
        assert isinstance(out, sympy.Expr)
    except ExprError:
        pass
    try:
        v = evaluate(text, {"x": 1.5, "y": 0.5, "z": 2.0})
        assert math.isfinite(v)
    except ExprError:
        pass
