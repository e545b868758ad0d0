"""Procedural physics problems with exact seven-tag solutions (the data model and the solver).

A `Template` is declarative: sampled givens (value ranges in display units), a chain of equations
in sympy syntax, each defining one new quantity, the target, the principle, and wrong laws for
conceptual errors. A `Derivation` is one worked solution of one instance: which target the
solver read, which principle and equations it used, the values it identified and every computed
value. Rendering a derivation gives the seven-tag text; the error injector (inject.py) edits a
derivation at one step and recomputes everything after it, so later steps follow from the error.

Numbers are carried in SI. Values are shown with 4 significant figures and the chain is computed
from the shown values, so every line of a rendered solution can be re-checked from the lines above.
"""
from __future__ import annotations

import functools
import hashlib
import math
import random
import re
from dataclasses import dataclass, field, replace

from verifiers.units import get_ureg, to_absolute

SIG = 4


def fmt(x: float) -> str:
    """4 significant figures, plain decimal when reasonable (no '+' in exponents)."""
    if x == 0:
        return "0"
    s = f"{x:.{SIG}g}"
    if "e" in s:
        m, e = s.split("e")
        return f"{m}e{int(e)}"
    return s


def shown(x: float) -> float:
    return float(fmt(x))


@dataclass(frozen=True)
class Given:
    sym: str
    name: str
    lo: float
    hi: float
    unit: str  # display unit in the question, a pint unit string
    digits: int = 2  # significant figures of the sampled value
    integer: bool = False


@dataclass(frozen=True)
class Const:
    sym: str
    name: str
    value: float  # SI
    unit: str  # SI unit string


@dataclass(frozen=True)
class Eq:
    sym: str
    expr: str  # sympy syntax, in the symbols of givens, constants and earlier equations
    name: str
    unit: str  # SI unit of the result (pint string), e.g. "m/s"


@dataclass(frozen=True)
class WrongLaw:
    """A conceptual error: a wrong law (principle text changed: the error is at step 2) or a
    formula outside its validity with the right principle named (step 3)."""
    eqs: dict  # sym -> replacement expr
    principle: str | None = None
    note: str = ""


@dataclass(frozen=True)
class Template:
    name: str
    topic: str
    question: str  # format string: {sym} -> given as "3.0 m/s"
    principle: str
    givens: tuple
    eqs: tuple
    target: str
    wrong: tuple = ()
    consts: tuple = ()
    alt: Eq | None = None  # what a misread target would compute (default: the first intermediate)
    tier: int = 3  # curriculum tier (r3bench.procgen.tiers): 1 integers, 2 decimals/prefixes, 3 the full bank

    @property
    def difficulty(self) -> int:
        return len(self.eqs)

    def eq(self, sym: str) -> Eq:
        for e in self.eqs + ((self.alt,) if self.alt else ()):
            if e.sym == sym:
                return e
        raise KeyError(sym)


@dataclass
class Derivation:
    target: str  # the symbol the solver set out to find
    target_name: str
    principle: str
    eqs: list  # [Eq] used, in order
    values: dict  # sym -> SI value as identified (step 4)
    units: dict  # sym -> SI unit string of every given/const
    sub_override: dict = field(default_factory=dict)  # (eq index, sym) -> wrong value used in substitution
    calc_factor: dict = field(default_factory=dict)  # eq index -> slip factor applied to the result
    results: list = field(default_factory=list)  # computed values, one per eq

    def compute(self):
        known = dict(self.values)
        self.results = []
        for i, e in enumerate(self.eqs):
            env = dict(known)
            for (j, sym), v in self.sub_override.items():
                if j == i:
                    env[sym] = v
            val = shown(lambdify(e.expr, tuple(symbols(e.expr)))(*[env[s] for s in symbols(e.expr)]))
            if i in self.calc_factor:
                val = shown(val * self.calc_factor[i])
            self.results.append(val)
            known[e.sym] = val
        return self

    @property
    def answer(self) -> float:
        return self.results[-1]

    @property
    def answer_unit(self) -> str:
        return self.eqs[-1].unit


@dataclass(frozen=True)
class Problem:
    id: str
    template: str
    topic: str
    difficulty: int
    question: str
    answer: str  # "28.0 m" (SI), what the checker compares against
    answer_value: float
    answer_unit: str
    solution: str  # seven-tag reference solution
    givens: dict  # sym -> [display value, display unit]
    split: str = "train"
    tier: int = 3

    def to_dict(self):
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


# --- expression helpers --------------------------------------------------------------------------

_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_FUNCS = {"sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "exp", "log", "pi", "E", "abs", "Abs"}


@functools.lru_cache(maxsize=None)
def symbols(expr: str) -> tuple:
    seen = []
    for s in _IDENT.findall(expr):
        if s not in _FUNCS and s not in seen:
            seen.append(s)
    return tuple(seen)


@functools.lru_cache(maxsize=None)
def lambdify(expr: str, syms: tuple):
    code = compile(expr.replace("^", "**"), "<eq>", "eval")
    ns = {"sqrt": math.sqrt, "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin,
          "acos": math.acos, "atan": math.atan, "exp": math.exp, "log": math.log, "pi": math.pi,
          "abs": abs, "Abs": abs}
    return lambda *vals: float(eval(code, dict(ns), dict(zip(syms, vals))))  # noqa: S307 - our own templates only


def substitute(expr: str, env: dict) -> str:
    """`u*t + a*t**2/2` with u=3, t=4, a=2 -> `3*4 + 2*4**2/2` (negative values parenthesised)."""
    def rep(m):
        s = m.group(0)
        if s in env:
            v = fmt(env[s])
            return f"({v})" if v.startswith("-") or "e" in v else v
        return s
    return _IDENT.sub(rep, expr)


# --- instances -----------------------------------------------------------------------------------

def _sample(g: Given, rng: random.Random) -> float:
    if g.integer:
        return float(rng.randint(int(g.lo), int(g.hi)))
    x = rng.uniform(g.lo, g.hi)
    return float(f"{x:.{g.digits}g}")


def to_si(value: float, unit: str) -> tuple[float, str]:
    u = get_ureg()
    q = to_absolute(u.Quantity(value, unit)).to_base_units()
    return float(q.magnitude), _unit_str(q.units)


@functools.lru_cache(maxsize=None)
def _unit_str(units) -> str:
    s = f"{units:~}"
    return s.replace(" ", "").replace("**", "^") if s else ""


def display_q(value: float, unit: str) -> str:
    u = get_ureg()
    sym = f"{u.Unit(unit):~}".replace(" ", "").replace("**", "^") if unit not in ("", "dimensionless") else ""
    v = f"{int(value)}" if float(value).is_integer() and abs(value) < 1e6 else fmt(value)
    sym = "L" if sym == "l" else sym
    if sym == "deg" or sym == "°":
        return f"{v}°"
    return f"{v} {sym}".strip()


def reference(t: Template, raw: dict) -> Derivation:
    """The correct derivation for sampled display values `raw` (sym -> display value)."""
    values, units = {}, {}
    for g in t.givens:
        values[g.sym], units[g.sym] = to_si(raw[g.sym], g.unit)
        values[g.sym] = shown(values[g.sym])
    for c in t.consts:
        values[c.sym], units[c.sym] = c.value, c.unit
    target = t.eq(t.target)
    return Derivation(target=t.target, target_name=target.name, principle=t.principle, eqs=list(t.eqs),
                      values=values, units=units).compute()


def integer_ok(d: Derivation) -> bool:
    """Tier 1: every computed value is an integer below 10^4 (shown exactly with 4 significant figures)."""
    return all(float(x).is_integer() and abs(x) < 1e4 for x in d.results)


def instance(t: Template, rng: random.Random, tries: int = 20) -> tuple[dict, Derivation]:
    tries = tries if t.tier != 1 else 10 * tries  # tier 1 rejects draws whose answer is not an integer
    for _ in range(tries):
        raw = {g.sym: _sample(g, rng) for g in t.givens}
        try:
            d = reference(t, raw)
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
        if all(math.isfinite(x) and x != 0 for x in d.results) and (t.tier != 1 or integer_ok(d)):
            return raw, d
    raise ValueError(f"template {t.name}: no valid instance in {tries} tries (check its ranges)")


def question_text(t: Template, raw: dict) -> str:
    q = t.question.format(**{g.sym: display_q(raw[g.sym], g.unit) for g in t.givens})
    if t.consts:
        q += " Use " + ", ".join(f"{c.sym} = {fmt(c.value)} {c.unit}" for c in t.consts) + "."
    return q


def problem_id(t: Template, raw: dict) -> str:
    key = t.name + "|" + "|".join(f"{k}={raw[k]!r}" for k in sorted(raw))
    return f"{t.name}-{hashlib.sha1(key.encode()).hexdigest()[:10]}"


def with_changes(d: Derivation, **kw) -> Derivation:
    """A copy of `d` with fields replaced and the chain recomputed."""
    nd = replace(d, **{"eqs": list(d.eqs), "values": dict(d.values), "units": dict(d.units),
                       "sub_override": dict(d.sub_override), "calc_factor": dict(d.calc_factor), **kw})
    return nd.compute()
