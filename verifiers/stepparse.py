"""Reading the lines of a seven-tag solution as data: expressions, quantities, laws. Never executes text.

Shared by the symbolic step verifier with a reference (verifiers.steps) and the reference-free mode
(verifiers.stepref). Everything a model writes goes through three readers:

  expr_text(s)     LaTeX or plain notation -> one plain calculator expression (``\\frac{a}{b}`` ->
                   ``(a)/(b)``, ``\\sqrt{x}`` -> ``sqrt(x)``, ``\\cdot``/``\\times``/``×`` -> ``*``,
                   ``^{..}`` -> ``^(..)``, unicode superscripts, ``\\left(``, ``\\,``)
  evaluate(s, env) the value of such an expression, by verifiers.safeexpr: the text is parsed with
                   ``ast.parse`` (which runs no code) and the tree is walked over a whitelist (numbers,
                   names in ``env``, unary +/-, + - * / **, one-argument calls of the math functions);
                   anything else raises ExprError. The same walk runs on pint quantities for the
                   dimension check (safeexpr.evaluate_objects).
  quantity(s)      ``value unit`` in any form the answer checker reads (``9.8 m/s^2``,
                   ``9.8\\,\\mathrm{m\\,s^{-2}}``, ``48 cm``, ``2.0 \\times 10^3 kg``) -> (SI value, SI unit)
                   via ``verifiers.answer.canonical``.
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable, Mapping

from verifiers import safeexpr
from verifiers.answer import canonical
from verifiers.answer import close as _checker_close
from verifiers.config import CheckConfig


FUNCS = {"sqrt": math.sqrt, "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin,
         "acos": math.acos, "atan": math.atan, "arcsin": math.asin, "arccos": math.acos, "arctan": math.atan,
         "exp": math.exp, "log": math.log, "ln": math.log, "abs": abs}
CONSTS = {"pi": math.pi}
MAX_EXPR = 400
_IDENT = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
NONFINITE = re.compile(r"(?<![A-Za-z_])(?:nan|inf|infinity|infty)(?![A-Za-z_])|∞|\\infty", re.I)


ExprError = safeexpr.ExprError  # one error type for "not an expression of the grammar / no value"
_DEFAULT = CheckConfig()


# --- notation -------------------------------------------------------------------------------------

_SUP = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_GREEK = ("alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "theta", "lambda", "mu", "nu", "rho",
          "sigma", "tau", "phi", "omega", "eta", "kappa", "Delta", "Omega", "Phi")


_UGREEK = {ord(k): v for k, v in {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon",
                                          "θ": "theta", "λ": "lambda", "μ": "mu", "ν": "nu", "ρ": "rho",
                                          "σ": "sigma", "τ": "tau", "φ": "phi", "ω": "omega", "η": "eta",
                                          "κ": "kappa", "Δ": "Delta", "Ω": "Omega"}.items()}


_HALF = re.compile(r"_\{\s*1\s*/\s*2\s*\}|_\(1/2\)|_½")  # T_{1/2} -> T_half
_DELTA = re.compile(r"(?:\\Delta|Δ)\s*([A-Za-z])")  # \Delta T, ΔT -> Delta_T (one symbol)
_DEG = re.compile(r"(\d+(?:\.\d+)?)\s*(?:°|\^\s*\{?\\circ\}?|\\circ|\\degree|\s+deg(?:rees?)?\b)")


def _braced(s: str, i: int) -> tuple[str, int] | None:
    """Content of the {...} group starting at s[i] == '{' and the index after it."""
    if i >= len(s) or s[i] != "{":
        return None
    depth = 0
    for j in range(i, len(s)):
        depth += {"{": 1, "}": -1}.get(s[j], 0)
        if depth == 0:
            return s[i + 1:j], j + 1
    return None


def _latex_groups(s: str) -> str:
    """\\frac{a}{b} -> ((a)/(b)), \\sqrt{x} -> sqrt(x), \\sqrt[n]{x} -> (x)^(1/(n)), innermost first."""
    for _ in range(40):
        m = re.search(r"\\[dt]?frac\s*(?=\{)|\\sqrt\s*(?:\[([^\]]{1,20})\])?\s*(?=\{)", s)
        if not m:
            return s
        a = _braced(s, m.end())
        if a is None:
            raise ExprError("unbalanced braces")
        if m.group(0).lstrip("\\").startswith(("frac", "dfrac", "tfrac")):
            b = _braced(s, a[1])
            if b is None:
                raise ExprError("\\frac without a denominator")
            s = s[:m.start()] + f"(({_latex_groups(a[0])})/({_latex_groups(b[0])}))" + s[b[1]:]
        elif m.group(1):
            s = s[:m.start()] + f"(({_latex_groups(a[0])})^(1/({m.group(1)})))" + s[a[1]:]
        else:
            s = s[:m.start()] + f"sqrt({_latex_groups(a[0])})" + s[a[1]:]
    raise ExprError("expression too deeply nested")


def expr_text(s: str) -> str:
    """LaTeX or plain notation -> a plain calculator expression (text only; nothing is evaluated)."""
    s = (s or "").strip().strip("$").strip()
    if len(s) > MAX_EXPR:
        raise ExprError("expression too long")
    s = s.replace("−", "-").replace("–", "-").replace("π", " pi ").replace("√", "sqrt").replace("½", "(1/2)")
    s = _DELTA.sub(r"Delta_\1", _HALF.sub("_half", s)).translate(_UGREEK)
    s = _DEG.sub(r"(\1*pi/180)", s)  # 30° inside an expression: radians, as sin/cos expect
    s = re.sub(r"\\(?:left|right|big|Big|displaystyle)\b", "", s)
    s = re.sub(r"\\[,;:!]|\\quad|\\qquad|~", " ", s)
    s = re.sub(r"\\(?:mathrm|text|textrm|rm|mathit|operatorname)\s*\{([^{}]*)\}", r"\1", s)
    s = re.sub(r"\\cdot|\\times|×|·|⋅", "*", s)
    s = re.sub(r"\\(arcsin|arccos|arctan|sin|cos|tan|exp|ln|log|pi|" + "|".join(_GREEK) + r")(?![A-Za-z])(_?)",
               lambda m: f" {m.group(1)}{m.group(2) or ' '}", s)  # \rho_w stays one symbol
    s = _latex_groups(s)
    s = re.sub(r"([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda m: "^(" + m.group(1).translate(_SUP) + ")", s)
    s = re.sub(r"_\{([A-Za-z0-9]+)\}", r"_\1", s)  # v_{0} -> v_0
    s = s.replace("{", "(").replace("}", ")").replace("[", "(").replace("]", ")")
    if "\\" in s:
        raise ExprError(f"unknown LaTeX command in {s[:40]!r}")
    return _implicit(s)


_TOK = re.compile(r"\s*(?:(\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)|([A-Za-z_][A-Za-z_0-9]*)|(\*\*|[-+*/^(),]))")


def _implicit(s: str) -> str:
    """Insert the implicit products of written physics (``a t``, ``2 g h``, ``m(g+a)``, ``2pi``)."""
    out, pos, prev = [], 0, None
    s = s.strip()
    while pos < len(s):
        m = _TOK.match(s, pos)
        if not m or m.end() == pos:
            raise ExprError(f"unexpected character {s[pos:pos + 1]!r}")
        num, name, op = m.groups()
        kind = "num" if num else "name" if name else "op"
        tok = num or name or op
        starts = kind in ("num", "name") or tok == "("
        if prev is not None and starts:
            pk, pt = prev
            ends = pk in ("num", "name") or pt == ")"
            if ends and not (pk == "name" and pt in FUNCS and tok == "("):
                out.append("*")
        out.append(tok)
        prev, pos = (kind, tok), m.end()
    return " ".join(out).replace("^", "**")


# --- evaluation -----------------------------------------------------------------------------------

def names(text: str) -> set[str]:
    """The free names of an expression (function names and pi left out)."""
    return {n for n in _IDENT.findall(expr_text(text)) if n not in FUNCS and n not in CONSTS}


def evaluate_objects(text: str, env: Mapping[str, Any], funcs: Mapping[str, Callable] | None = None) -> Any:
    """The expression's value over the objects in `env` (e.g. pint quantities): safeexpr.evaluate_objects on
    the plain form of `text`. The objects' own errors (a pint DimensionalityError) propagate."""
    return safeexpr.evaluate_objects(expr_text(text), env, funcs, max_len=4 * MAX_EXPR)


def evaluate(text: str, env: Mapping[str, float]) -> float:
    """The finite float value of an expression (safeexpr.evaluate); ExprError when it cannot be had."""
    return safeexpr.evaluate(expr_text(text), {k: float(v) for k, v in env.items()}, max_len=4 * MAX_EXPR)


def close(a: float, b: float, rel: float | None = None) -> bool:
    """The checker's numeric equality (verifiers.answer.close with CheckConfig: rel_tol, and an absolute
    floor only when one number is 0), so that step checks and answer checks share one tolerance; `rel`
    overrides the relative tolerance (the physical-constant match in stepref: CheckConfig.const_rel_tol)."""
    return _checker_close(a, b, _DEFAULT if rel is None else CheckConfig(rel_tol=rel))


# --- quantities and lines -------------------------------------------------------------------------

def quantity(text: str) -> tuple[float, str] | None:
    """(SI value, SI unit) of `value unit` text, via the answer checker's reader; None when unreadable."""
    t = (text or "").strip().rstrip(".,;")
    if not t or len(t) > 200 or NONFINITE.search(t):
        return None
    got = canonical(f"\\boxed{{{t}}}", "numeric")
    return (float(got[0]), got[1]) if got else None


def lines(step) -> list[str]:
    """Lines of a step's content, with LaTeX line breaks and align markers removed."""
    if step is None:
        return []
    t = re.sub(r"\\begin\{[a-z*]+\}|\\end\{[a-z*]+\}|&", " ", step.content)
    t = t.replace("\\\\", "\n").replace(";", "\n")
    return [ln.strip().strip("$").strip() for ln in t.splitlines() if ln.strip().strip("$").strip()]


_LHS = re.compile(r"^\s*(?:[A-Za-z ,'()-]{0,60}?[:,]\s*)?(\\?[A-Za-z][A-Za-z_0-9{}\\^]*)\s*$")


def lhs_name(lhs: str) -> str | None:
    """The symbol on the left of `=` (prose before a colon dropped, LaTeX subscripts flattened)."""
    lhs = re.sub(r"^.*?:\s*", "", lhs.strip()) if ":" in lhs else lhs.strip()
    lhs = _DELTA.sub(r"Delta_\1", _HALF.sub("_half", lhs.strip("$ "))).replace("\\", "").translate(_UGREEK).strip()
    lhs = re.sub(r"_\{([A-Za-z0-9]+)\}", r"_\1", lhs)
    for g in _GREEK:
        lhs = re.sub(rf"^{g}(?=_|$)", g, lhs)
    return lhs if re.fullmatch(r"[A-Za-z][A-Za-z_0-9]*", lhs) else None


def equations(step) -> list[tuple[str, list[str], int]]:
    """(lhs symbol, [rhs parts of a chained `a = b = c`], line index) of a step's equation lines."""
    out = []
    for i, ln in enumerate(lines(step)):
        ln = re.sub(r"\\approx|≈|\\simeq", "=", ln)
        parts = [p.strip() for p in ln.split("=")]
        if len(parts) < 2:
            continue
        name = lhs_name(parts[0])
        if name and all(parts[1:]):
            out.append((name, parts[1:], i))
    return out


_NUM_START = re.compile(r"^\s*[-+]?\s*(?:\d|\.\d)")


def values(step) -> list[tuple[str, float, str, str, int]]:
    """(symbol, SI value, SI unit, text, line index) of each `name = number unit` line of a step."""
    out = []
    for name, parts, i in equations(step):
        rhs = parts[-1]
        if _NUM_START.match(rhs):
            q = quantity(rhs)
            if q is not None:
                out.append((name, q[0], q[1], rhs, i))
    return out


_WORDS = {"one": 1.0, "two": 2.0, "three": 3.0, "four": 4.0, "five": 5.0, "six": 6.0, "seven": 7.0, "eight": 8.0,
          "nine": 9.0, "ten": 10.0, "twice": 2.0, "double": 2.0, "triple": 3.0, "half": 0.5, "mole": 1.0}


def numbers_in(text: str) -> list[float]:
    """Every number of a text, raw and in SI when a unit follows it (`48 cm` gives 48 and 0.48), and the
    number words of a problem statement ('one mole', 'eight times', 'twice')."""
    out = [v for w, v in _WORDS.items() if re.search(rf"\b{w}\b", text or "", re.I)]
    t = re.sub(r"\\(?:mathrm|text|rm)\s*\{\s*~?\s*([^{}]*)\}", r" \1", text or "")
    t = re.sub(r"(\d)\s*\\times\s*10\s*\^\s*\{\s*([-+]?\d+)\s*\}", r"\1e\2", t)
    t = re.sub(r"(?<![\d.])10\s*\^\s*\{?\s*([-+−]?\d+)\s*\}?", lambda m: "1e" + m.group(1).replace("−", "-"), t)
    for m in re.finditer(r"(?<![\w.^{])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", t):  # not the 2 of m^2
        try:
            out.append(float(m.group(0)))
        except ValueError:
            continue
        words = re.match(r"\s*([A-Za-zµΩ°][^\s,;.)]*(?:\s+[A-Za-zµΩ°/^][^\s,;.)]*){0,2})", t[m.end():m.end() + 30])
        toks = words.group(1).split() if words else []
        for k in range(len(toks), 0, -1):
            q = quantity(f"{m.group(0)} {' '.join(toks[:k]).rstrip('/*·')}")
            if q is not None:
                out.append(q[0])
                break
    return out


def symbol_text(s: str) -> str:
    """Prose with its symbols in the verifier's spelling: θ2 -> theta2, $v_{0}$ -> v_0, \\Delta T -> Delta_T."""
    s = _DELTA.sub(r"Delta_\1", _HALF.sub("_half", s or "")).translate(_UGREEK)
    s = re.sub(r"_\{([A-Za-z0-9]+)\}", r"_\1", s)
    return re.sub(r"\\(?=[A-Za-z])|\$", "", s)


_RAW = re.compile(r"^\s*([-+−]?\s*(?:\d+\.?\d*|\.\d+)(?:[eE][-+−]?\d+)?"
                  r"(?:\s*(?:\\times|×|\*|\\cdot|·)\s*10\s*(?:\^|\*\*)\s*\{?\s*\(?[-+−]?\d+\)?\s*\}?|\s*×\s*10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?)")


def raw_number(text: str) -> float | None:
    """The number of a `value unit` text as written, in its own unit (`48 cm` -> 48, `3.9 \\times 10^{3} kg` -> 3900)."""
    m = _RAW.match(text or "")
    if not m:
        return None
    q = quantity(m.group(1))
    return q[0] if q is not None and not q[1] else None


def is_quantity(part: str) -> bool:
    """`number [unit]` (3.6 N, 5.02 \\times 10^{5} J, 10 g), as opposed to an expression (80/8, 1.8/0.50)."""
    m = _RAW.match(part or "")
    if not m:
        return False
    rest = part[m.end():].strip()
    return not rest or bool(re.match(r"[A-Za-zµΩ°\\%]", rest))


def given(v: float, qnums: list[float]) -> bool:
    """Whether a value is a number of the question, or the difference or sum of two of them (a
    temperature change 80 - 20 = 60 K, a total mass)."""
    if any(close(v, x) or close(-v, x) for x in qnums):  # a sign convention (v_i = -8 m/s toward the wall)
        return True
    q = qnums[:40]
    return any(close(v, abs(a - b)) or close(v, a + b) for i, a in enumerate(q) for b in q[i + 1:])


def unit_of(text: str) -> str | None:
    """SI unit string of a `value unit` text (pint base units), '' when dimensionless, None unreadable."""
    q = quantity(text)
    return None if q is None else q[1]


# --- principles: which law a sentence names -------------------------------------------------------

#: law or condition key -> pattern (lower-case text). A principle is read as the set of keys it names.
LAWS = {
    "newton2": r"newton'?s? (?:second|2nd) law|\bf\s*=\s*m\s*\*?\s*a\b|net force (?:equals|is) mass times|sum of (?:the )?forces",
    "const_accel": r"constant acceleration|uniform(?:ly)? accelerat|equations? of (?:uniformly accelerated )?motion|suvat|kinematic|free fall|falls? freely|projectile",
    "const_velocity": r"constant velocity|uniform motion|uniform velocity|constant speed along|distance\s*=\s*speed",
    "energy_cons": r"conservation of (?:mechanical |total )?energy|(?:mechanical |total )?energy (?:is )?conserv|energy conservation|potential energy (?:is )?(?:converted|turns|becomes|goes)|work.energy theorem",
    "momentum_cons": r"conservation of (?:linear )?momentum|momentum (?:is )?conserv|total momentum",
    "ke_cons": r"kinetic energy (?:is )?conserv|conserv\w* (?:of )?(?:the )?kinetic energy|(?<!in)elastic collision|equal kinetic energ",
    "inelastic": r"inelastic|stick together|move together|moving together|coalesce",
    "impulse": r"impulse",
    "momentum": r"\bmomentum\b",
    "friction": r"(?<!no )(?<!without )\bfriction(?!less)|\bmu\s*\*?\s*n\b|coefficient of friction",
    "frictionless": r"frictionless|without friction|no friction|smooth (?:surface|incline|plane)",
    "gravity_work": r"work (?:done )?against gravity",
    "work": r"\bwork\b",
    "spring": r"spring|hooke|elastic (?:potential )?energy",
    "centripetal": r"centripetal|circular motion",
    "gravitation": r"law of (?:universal )?gravitation|gravitational (?:force|field|attraction)|g\s*m\s*/\s*r",
    "kepler": r"kepler",
    "shm": r"simple harmonic|harmonic oscillat|pendulum|oscillat",
    "wave": r"\bwave|wavelength|frequency times|v\s*=\s*f\s*\*?\s*lambda",
    "ideal_gas": r"ideal gas",
    "first_law": r"first law of thermodynamics|first law",
    "const_volume": r"constant volume|isochoric|c_?v\b",
    "const_pressure": r"constant pressure|isobaric|c_?p\b",
    "isothermal": r"isotherm",
    "adiabatic": r"adiabatic",
    "carnot": r"carnot",
    "calorimetry": r"calorimetr|heat lost\b.*\bheat gained|heat gained\b.*\bheat lost|specific heat",
    "coulomb": r"coulomb'?s? law",
    "field": r"electric field",
    "capacitor": r"capacit",
    "ohm": r"ohm'?s? law|\bv\s*=\s*i\s*\*?\s*r\b",
    "series": r"\bseries\b",
    "parallel": r"\bparallel\b(?! plate)",
    "power": r"\bpower\b",
    "rc": r"\brc\b|charging|discharging",
    "ampere": r"amp[eè]re'?s? law|biot|magnetic field of",
    "lorentz": r"magnetic force|lorentz",
    "faraday": r"faraday|induced emf|motional emf|emf\s*=\s*b",
    "lens": r"lens|mirror equation",
    "snell": r"snell|refraction",
    "tir": r"total internal reflection|critical angle",
    "brewster": r"brewster",
    "interference": r"interference|double.slit|young",
    "photon": r"planck|photon energy|e\s*=\s*h\s*\*?\s*(?:f|nu|c)",
    "photoelectric": r"photoelectric|work function",
    "de_broglie": r"de ?broglie",
    "decay": r"radioactive|half.life|exponential decay",
    "linear_decay": r"linear decay|constant rate",
    "mass_energy": r"mass.energy|e\s*=\s*m\s*\*?\s*c",
    "bohr": r"bohr|energy levels?",
    "torque": r"torque|moment of force|rotational equilibrium",
    "buoyancy": r"archimedes|buoyan",
    "bernoulli": r"bernoulli",
    "continuity": r"continuity equation",
    "doppler": r"doppler",
}
#: pairs of keys that contradict each other: naming one where the reference names the other is a wrong law
CONFLICTS = [("friction", "frictionless"), ("series", "parallel"), ("const_volume", "const_pressure"),
             ("const_accel", "const_velocity"), ("inelastic", "ke_cons"), ("energy_cons", "gravity_work"),
             ("isothermal", "adiabatic"), ("decay", "linear_decay"), ("tir", "brewster")]
#: idealisations a principle may leave unsaid ('frictionless' is the default); contradicting them still fails
OPTIONAL = {"frictionless"}
_LAW_RE = {k: re.compile(v) for k, v in LAWS.items()}


def laws(text: str) -> set[str]:
    """The law/condition keys a principle names (LAWS), from its lower-cased text."""
    t = re.sub(r"[\\$]", " ", (text or "").lower())
    t = re.sub(r"\s+", " ", t)
    return {k for k, rx in _LAW_RE.items() if rx.search(t)}


def _words(s: str) -> set:
    return {w for w in re.findall(r"[a-z]+", (s or "").lower()) if len(w) > 3}


def same_law(principle: str, reference: str) -> tuple[bool, str]:
    """Whether a principle names the reference's law: (ok, why).

    Keys (LAWS) decide when the reference names any: every key of the reference must be named and no
    key may contradict one of the reference's (CONFLICTS: 'frictionless' against 'friction', series
    against parallel, ...). When the reference names no key: word overlap (Jaccard >= 0.5) accepts; a
    solution naming a known law is rejected; otherwise step 2 is not judged (step 3 checks the law).
    """
    a, b = laws(principle), laws(reference)
    for x, y in CONFLICTS:
        if (x in a and y in b and x not in b and y not in a) or (y in a and x in b and y not in b and x not in a):
            return False, f"the principle says {x if x in a else y} where {y if x in a else x} applies"
    b -= OPTIONAL  # an idealisation may go unsaid, but not be contradicted (checked above)
    if b:
        missing = sorted(b - a)
        return (not missing), ("names the same law" if not missing else
                               f"the principle does not name {', '.join(missing)}")
    wa, wb = _words(principle), _words(reference)
    if not wa:
        return False, "the principle names nothing"
    if len(wa & wb) / max(1, len(wa | wb)) >= 0.5:
        return True, "word overlap with the reference principle"
    if a:  # the reference's law is outside the table, the solution names one in it: another law
        return False, f"the principle names {', '.join(sorted(a))}, not the law of the reference"
    # neither names a law the table knows: a paraphrase cannot be told from another law by words alone,
    # so step 2 is not judged and the equations decide at step 3 (false alarms cost more than a step)
    return True, "not judged (no known law named): the governing equations are checked at step 3"
