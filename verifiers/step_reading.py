"""Reading the lines of a seven-tag solution as data: expressions, quantities, laws. Never executes text.

Shared by the symbolic step verifier with a reference (verifiers.reference_based) and the reference-free mode
(verifiers.reference_free). Everything a model writes goes through three readers:

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

import keyword
import math
import random
import re
from typing import Any, Callable, Mapping

from verifiers import safeexpr
from verifiers.answer import canonical
from verifiers.answer import close as _checker_close
from verifiers.config import CheckConfig
from verifiers.units import get_ureg


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
                                          "κ": "kappa", "Δ": "Delta", "Ω": "Omega", "Φ": "Phi", "Θ": "Theta",
                                          "Λ": "Lambda", "Ψ": "Psi", "ψ": "psi", "χ": "chi", "ξ": "xi",
                                          "ζ": "zeta"}.items()}


_HALF = re.compile(r"_\{\s*1\s*/\s*2\s*\}|_\(1/2\)|_½|(?<=[A-Za-z])½")  # T_{1/2} -> T_half
_DELTA = re.compile(r"(?:\\Delta|Δ|(?<![A-Za-z_\\])Delta(?=[ \t]))\s*(?:\\(Phi|Theta|theta|phi|lambda|omega|rho)(?![A-Za-z])|([A-Za-zΦΘΛΨφθλωρ]))")  # \Delta T, ΔT, Delta T -> Delta_T
_OHM = re.compile(r"([\d⁰¹²³⁴⁵⁶⁷⁸⁹)}])\s*(?:\\[,;: ]|~|\s)*(?:\\(?:mathrm|text|rm)\s*\{\s*(?:Ω|\\Omega)\s*\}|Ω|\\Omega(?![A-Za-z]))")
_DEG = re.compile(r"(\d+(?:\.\d+)?)\s*(?:°|\^\s*\{?\\circ\}?|\\circ|\\degree|\s+deg(?:rees?)?\b)")


def _delta_name(m) -> str:
    """`\\Delta T`, `ΔΦ`, `\\Delta\\Phi` -> Delta_T, Delta_Phi: one symbol."""
    return "Delta_" + (m.group(1) or m.group(2)).translate(_UGREEK)


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


#: a primed symbol (s' for an image distance, v'' ...): one name
_PRIME = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z](?:_[A-Za-z0-9]+)?)('+|′+)")
#: subscript digits -> plain digits (θ₂ -> θ2); the symbolic verifier reads its step-1 phrases with it too
SUBDIGITS = str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789")
_SUBSCRIPT = re.compile(r"([A-Za-z])([₀₁₂₃₄₅₆₇₈₉]+)")
#: a number times a power of ten written out (`x`, `X`, `*` after the \times and · replacements); the number
#: must start there (`x^2 * 10^3` is no mantissa 2)
_SCI = re.compile(r"(?<![\^\w.)])(\d+(?:\.\d+)?)\s*[xX*]\s*10\s*(?:\^|\*\*)\s*(?:\(\s*([-+]?\d+)\s*\)|([-+]?\d+))")


#: a Greek letter written as one character right before a one-letter symbol (`λL`, `ρV`): two symbols
_GREEK_BEFORE_LETTER = re.compile(r"([αβγδεθλμνρστφωηκ])(?=[A-Za-z](?![A-Za-z_]))")
#: a friction coefficient written `μk`, `μs`, `\\mu k` (not microseconds after a number): the one symbol mu_k, mu_s
_MU_KS = re.compile(r"(?<![\d.]\s)(?<![\d.])(?:μ|\\mu(?![A-Za-z]))\s?([ks])(?![A-Za-z_0-9])")
#: an `x` written as a times sign before a power of ten, after a factor that is no plain number (`4 pi x 10^-7`)
_TIMES_X = re.compile(r"(?<=[A-Za-z)}])\s+[xX]\s+(?=10\s*(?:\^|\*\*))")
#: an exponent written after such a factor (`4 pi e-7`): times ten to it
_BARE_EXP = re.compile(r"(?<=[A-Za-z)}])\s+[eE]([-+]\d+)(?![\w.])")


#: a number written with spaces (or thin spaces, `\\,`) between its groups of three digits (`117 600 Pa`,
#: `14\\,400`): one number, not the product 117 * 600; the leading group has 1-3 digits and stands after no
#: digit, point, letter or power (`0.5 200`, `v_2 500`, `10^3 200` stay products)
_THOUSANDS = re.compile(r"(?<![\w.,^])([1-9]\d{0,2})((?:(?:[ \u00a0\u2009\u202f]|\\,|\\ |~)\d{3})+)(?![\d.])")


def join_thousands(s: str) -> str:
    return _THOUSANDS.sub(lambda m: m.group(1) + re.sub(r"\D", "", m.group(2)), s)


def expr_text(s: str) -> str:
    """LaTeX or plain notation -> a plain calculator expression (text only; nothing is evaluated)."""
    s = (s or "").strip().strip("$").strip()
    if len(s) > MAX_EXPR:
        raise ExprError("expression too long")
    s = join_thousands(s)
    s = _HALF.sub("_half", s)  # T½, T_{1/2}: the half-life, one symbol (before ½ is read as a number)
    s = s.replace("−", "-").replace("–", "-").replace("π", " pi ").replace("½", "(1/2)")
    s = re.sub(r"[⁄∕÷]", "/", s).replace("∗", "*")  # fraction slash, division slash, obelus: a division
    s = re.sub(r"√\s*(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[A-Za-z_]\w*)", r"sqrt(\1)", s).replace("√", "sqrt")  # √9.18
    s = _OHM.sub(r"\1 ohm", s)  # 4 Ω, 4\,\Omega: the unit, not the Greek letter
    s = _MU_KS.sub(r"mu_\1", s)  # μk: the coefficient of kinetic friction, one symbol
    s = _GREEK_BEFORE_LETTER.sub(r"\1 ", s)  # λL: lambda times L, not the name lambdaL
    s = _DELTA.sub(_delta_name, _HALF.sub("_half", s)).translate(_UGREEK)
    # v₀, θ₁ -> v_0, theta_1; a subscript ends its name (`μ₀I` is mu_0 times I)
    s = _SUBSCRIPT.sub(lambda m: m.group(1) + "_" + m.group(2).translate(SUBDIGITS) + " ", s)
    s = _DEG.sub(r"(\1*pi/180)", s)  # 30° inside an expression: radians, as sin/cos expect
    s = re.sub(r"\\(?:left|right|big|Big|displaystyle)\b", "", s)
    # a magnitude written with bars: |x|, \left| x \right|, \lvert x \rvert -> abs(x) (innermost pair first)
    s = re.sub(r"\\[lr]?vert\b|\\\|", "|", s)
    for _ in range(4):
        t = re.sub(r"\|([^|]+)\|", r" abs(\1) ", s)
        if t == s:
            break
        s = t
    s = re.sub(r"\\[,;:! ]|\\quad|\\qquad|~", " ", s)
    s = _BARE_EXP.sub(r" * 10^(\1)", _TIMES_X.sub("*", s))  # 4 pi x 10^-7, 4 pi e-7: times a power of ten
    # a unit in \mathrm{} with a group inside (`\mathrm{m\,s^{-2}}`): its content
    s = re.sub(r"\\(?:mathrm|text|textrm|rm|mathit|operatorname)\s*\{((?:[^{}]|\{[^{}]*\})*)\}", r"\1", s)
    s = re.sub(r"\\cdot|\\times|×|·|⋅", "*", s)
    s = re.sub(r"\\(arcsin|arccos|arctan|sin|cos|tan|exp|ln|log|pi|" + "|".join(_GREEK) + r")(?![A-Za-z])(_?)",
               lambda m: f" {m.group(1)}{m.group(2) or ' '}", s)  # \rho_w stays one symbol
    s = _latex_groups(s)
    # an inverse function written as a power (`sin⁻¹`, `\sin^{-1}`, `tan^(-1)`): arcsin, not 1/sin
    s = re.sub(r"(?<![A-Za-z_])(sin|cos|tan)\s*(?:⁻¹|\^\s*\{\s*-\s*1\s*\}|\^\s*\(\s*-\s*1\s*\)|\^\s*-\s*1(?![\d.]))",
               r"a\1", s)
    # a function applied without parentheses (`sin theta_1`, `\sin\theta_1`, `cos 30`): its argument is the next
    # symbol or number
    s = re.sub(r"(?<![A-Za-z_])(sin|cos|tan|asin|acos|atan|arcsin|arccos|arctan|ln|log|exp|sqrt)\s+"
               r"(?=[A-Za-z_0-9.(])(?!\()([A-Za-z_][A-Za-z_0-9]*|\d+(?:\.\d+)?(?:\*pi/180)?)", r"\1(\2)", s)
    s = re.sub(r"([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda m: "^(" + m.group(1).translate(_SUP) + ")", s)
    s = re.sub(r"_\{([A-Za-z0-9]+)\}", r"_\1", s)  # v_{0} -> v_0
    # the common logarithm (`log₁₀(x)`, `\log_{10}(x)`, `log10(x)`): ln(x)/ln(10), not a name log_10 (`log` is ln)
    s = re.sub(r"(?<![A-Za-z_])log_?(?:10|\{10\}|\(10\))\s*(?=\()", "(1/ln(10))*ln", s)
    s = s.replace("{", "(").replace("}", ")").replace("[", "(").replace("]", ")")
    s = _SCI.sub(lambda m: f"({m.group(1)}e{m.group(2) or m.group(3)})", s)  # 6.674x10^-11, 8.99*10^9, 5.0·10^(-6): one number
    s = _PRIME.sub(lambda m: m.group(1) + "_prime" * len(m.group(2)), s)  # s', v'': primed symbols
    if "\\" in s:
        raise ExprError(f"unknown LaTeX command in {s[:40]!r}")
    return _KW_RE.sub(r"\1" + _KW_TAIL, _implicit(s))


# A symbol spelled as a Python keyword (`lambda` for a wavelength) made the whitelisted parser refuse the
# whole line, so a wrong wave law escaped the law check (issue 32): such a name is renamed to `lambda__kw`
# inside expressions; names() gives it back under its own spelling and evaluate() maps env keys the same way.
_KW_TAIL = "__kw"
_KW_RE = re.compile(r"(?<![A-Za-z_0-9])(" + "|".join(k for k in keyword.kwlist if k.islower()) + r")(?![A-Za-z_0-9])")


def _kw_env(env: Mapping[str, Any]) -> dict:
    return {(k + _KW_TAIL if _KW_RE.fullmatch(k) else k): v for k, v in env.items()}


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
    return {n[:-len(_KW_TAIL)] if n.endswith(_KW_TAIL) else n
            for n in _IDENT.findall(_NUMLIT.sub(" ", expr_text(text))) if n not in FUNCS and n not in CONSTS}


#: number literals (their exponent `e9` in `8.99e9` is no name)
_NUMLIT = re.compile(r"(?<![A-Za-z_0-9])(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def evaluate_objects(text: str, env: Mapping[str, Any], funcs: Mapping[str, Callable] | None = None) -> Any:
    """The expression's value over the objects in `env` (e.g. pint quantities): safeexpr.evaluate_objects on
    the plain form of `text`. The objects' own errors (a pint DimensionalityError) propagate."""
    return safeexpr.evaluate_objects(expr_text(text), _kw_env(env), funcs, max_len=4 * MAX_EXPR)


def evaluate(text: str, env: Mapping[str, float]) -> float:
    """The finite float value of an expression (safeexpr.evaluate); ExprError when it cannot be had."""
    return safeexpr.evaluate(expr_text(text), _kw_env({k: float(v) for k, v in env.items()}), max_len=4 * MAX_EXPR)


def close(a: float, b: float, rel: float | None = None) -> bool:
    """The checker's numeric equality (verifiers.answer.close with CheckConfig: rel_tol, and an absolute
    floor only when one number is 0), so that step checks and answer checks share one tolerance; `rel`
    overrides the relative tolerance (the physical-constant match in reference_free: CheckConfig.const_rel_tol)."""
    return _checker_close(a, b, _DEFAULT if rel is None else CheckConfig(rel_tol=rel))


# --- quantities and lines -------------------------------------------------------------------------

BRACKET_UNIT = re.compile(r"(\d)\s*\[\s*([^\[\]\d][^\[\]]{0,30}?)\s*\]")


#: money: a currency sign before a number (`$0.45`, `\\$0.15`, `€2`) or a currency after it (`0.45 dollars`, `0.15 $/kWh`)
_MONEY_BEFORE = re.compile(r"(?:\\?\$|€|£)\s*(?=\d)()")
_MONEY = re.compile(r"(\d)\s*(?:dollars?|euros?|USD|EUR|\\?\$|€|£)(?![A-Za-z])")
#: a number per unit: `12e-6 /K`, `0.5/s`, `3 per second`
_PER_UNIT = re.compile(r"(\d)\s*(?:/|\bper\s+)\s*(?=[A-Za-zµμ°Ω])")


#: a number of things counted (`100 nuclei`, `6.2e18 electrons`, `about 3 photons`): no unit
_COUNT_NOUN = re.compile(r"(\d)\s*(?:(?:undecayed|remaining|radioactive|parent|daughter|free)\s+)?(?:nuclei|nucleus|nuclides?"
                         r"|atoms?|molecules?|particles?|photons?|electrons?|protons?|neutrons?|ions?|counts?|decays?)\s*$",
                         re.I)


def quantity(text: str) -> tuple[float, str] | None:
    """(SI value, SI unit) of `value unit` text, via the answer checker's reader; None when unreadable."""
    t = (text or "").strip().rstrip(".,;")
    if not t or len(t) > 200 or NONFINITE.search(t):
        return None
    t = re.sub(r"(\d)\s*\[\s*[-1]?\s*\]\s*$", r"\1", t)  # 0.25 [-], [1], []: a dimensionless number
    t = re.sub(r"(\d)\s*\[\s*1\s*/\s*([^\[\]\d][^\[\]]{0,30}?)\s*\]", r"\1 /\2", t)  # [1/°C], [1/s]: per unit
    t = re.sub(r"(\d)\s*(?:\\[,;: ]|~)\s*(?=\[)", r"\1 ", t)  # `9.90\ [m/s]`: a LaTeX space before the bracket unit
    t = re.sub(r"(\d)\s*(?:\\(?:mathrm|text)\s*\{\s*dB\s*\}|dB|decibels?)\s*$", r"\1", t)  # 70 dB: the level, a plain number
    t = _COUNT_NOUN.sub(r"\1", t)  # 100 nuclei, 3.2e20 electrons: a count, a plain number
    t = BRACKET_UNIT.sub(r"\1 \2", t)  # 4 [m/s]: the unit in brackets (a convention of engineering texts)
    t = _MONEY.sub(r"\1", _MONEY_BEFORE.sub(r"\1", t))  # $0.45, 0.45 dollars: money, a plain number
    t = _PER_UNIT.sub(r"\1 1/", t)
    t = _BARE_EXP.sub(r" \\times 10^{\1}", _TIMES_X.sub(r" \\times ", t))  # 4 pi x 10^-7 T m/A, 4 pi e-7  # 12e-6 /K, 2.0 per s: per unit (the checker reads `per K` as no unit)
    # per degree Celsius (1/°C, °C^-1, /℃): a temperature interval, the same as per kelvin
    t = re.sub(r"(?:(?<=\s)1\s*)?/\s*(?:°\s*C|℃)", " K^-1", t)
    t = re.sub(r"(?:°\s*C|℃)\s*\^\s*\{?\s*-\s*1\s*\}?", "K^-1", t)
    got = canonical(f"\\boxed{{{t}}}", "numeric")
    return (float(got[0]), got[1]) if got else None


#: where one line may hold several assignments: a comma, `and`, `\\quad`, `\\text{and}` (at the top level only;
#: a thousands comma `1,200` is no place)
_ASSIGN_SEP = re.compile(r"\s*[·•]\s+|,\s*(?:and|\\q?quad)(?![A-Za-z])\s*|(?<!\d),|,(?!\d{3}(?!\d))|\s+and\s+|\\q?quad(?![A-Za-z])|\\text\s*\{\s*(?:,|and|,\s*and)?\s*\}")
#: a piece of a line that ends in a value (`= 10 μF = 1.0×10⁻⁵ F`): a number then at most a unit
_VALUE_END = re.compile(r"=\s*[-+−]?\s*(?:\d|\.\d)[^=]*$")
_ASSIGN_HEAD = re.compile(r"^\s*(?:(?:and|so|then|thus|hence|therefore|i\.e\.|with|where|taking|using|given|since)\s+)?"
                          r"\$*\s*", re.I)


def _assignment_start(piece: str) -> bool:
    """Whether a piece of a line begins an assignment `symbol = ...` (the left side one symbol, no prose)."""
    head = _ASSIGN_HEAD.sub("", piece)
    k = head.find("=")
    if k <= 0 or not head[k + 1:].strip(" $"):
        return False
    if _CONVERSION.match(head):  # `1 eV = 1.602e-19 J`: a conversion of units, a statement of its own
        return True
    left = _DELTA.sub(_delta_name, head[:k].strip(" $"))
    if _RATIO_LEFT.fullmatch(left):  # a ratio given as a value (`v/c = 0.80`)
        return True
    return bool(left) and not re.search(r"\s", left.replace("\\", "")) and lhs_name(left) is not None


#: a conversion of units: `1 eV = 1.602e-19 J`, `1 atm = 101325 Pa`
_CONVERSION = re.compile(r"\s*1(?:\.0*)?\s*[A-Za-zµΩ°]+\s*=\s*[\d.]")
#: the left side of a ratio given as a value: `v/c`, `T_2/T_1`
_RATIO_LEFT = re.compile(r"\s*([A-Za-z][A-Za-z_0-9]*)\s*/\s*([A-Za-z][A-Za-z_0-9]*)\s*")


def ratio_values(step) -> list[tuple[str, str, float, int]]:
    """(a, b, number, line) of each line of a step that gives a ratio as a pure number: `v/c = 0.80`."""
    out = []
    for i, ln in enumerate(lines(step)):
        parts = ln.split("=")
        m = _RATIO_LEFT.fullmatch(parts[0]) if len(parts) == 2 else None
        q = quantity(parts[1]) if m and _NUM_START.match(parts[1]) else None
        if m and q is not None and not q[1]:
            out.append((m.group(1), m.group(2), q[0], i))
    return out


def assignments(line: str) -> list[str]:
    """A line that holds several assignments (`t0 = 2.0 us, v = 0.80 c`, `$q_1 = 3\\,\\mu C$, $r = 0.2$ m`, `m = 2 kg
    and v = 3 m/s`) as one text per assignment. The line is cut at its top-level commas, `and` and `\\quad`
    (never inside brackets or braces, never in a thousands comma `1,200`), and a piece that does not itself start
    an assignment `symbol = ...` stays with the piece before it, so a tuple `(3, 4)`, a list of numbers or a
    clause of prose is not split off. One left-to-right pass: linear in the line's length."""
    cuts, depth, i, n = [], 0, 0, len(line)
    while i < n:
        ch = line[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0 and (ch in ",\\·•" or ch.isspace() and (i == 0 or not line[i - 1].isspace())) \
                and not (ch == "," and i and line[i - 1] == "\\"):  # `\,` is a LaTeX space, no separator
            m = _ASSIGN_SEP.match(line, i)  # a run of spaces is tried once, at its start
            if m and m.end() > i:
                cuts.append((i, m.end()))
                i = m.end()
                continue
        i += 1
    if not cuts:
        return [line]
    pieces, start = [], 0
    for a, b in cuts:
        pieces.append((start, a, b))
        start = b
    pieces.append((start, n, n))
    out, cur = [], None
    for a, b, c in pieces:
        text = line[a:b]
        # a middle dot parts two values (`C = 10 μF · V = 100 V`) only after a value, never a product (`P = F · v`)
        dot = a and line[a - 1:a].strip() == "" and line[:a].rstrip()[-1:] in "·•"
        if cur is not None and _assignment_start(text) and not (dot and not _VALUE_END.search(line[cur[0]:cur[1]])):
            out.append(cur)
            cur = None
        if cur is None:
            cur = (a, b)
        else:
            cur = (cur[0], b)
    out.append(cur)
    if len(out) < 2:
        return [line]
    return [_ASSIGN_HEAD.sub("", line[a:b]).replace("$", " ").strip() for a, b in out]


#: a remark in parentheses at the end of a line (no brackets inside it); tried only on a line ending in `)`, and
#: it starts at a `(` (no leading spaces in the pattern: a run of spaces is not rescanned from each of its places)
_REMARK = re.compile(r"\(([^()]{1,200})\)$")
#: an arrow between two equations of a line
_IMPLIES = re.compile(r"=>|⇒|⟹|→|\\(?:Rightarrow|Longrightarrow|implies|therefore|to)(?![A-Za-z])|∴")
#: a full stop that ends a sentence (no digit right after it: not a decimal point) before the next one
_SENTENCE_END = re.compile(r"\.[ \t]+(?=[A-Z])")
def _full_stop(s: str) -> str:
    """The text without the full stops (or commas) and spaces at its end: `F_b = rho*V*g.` (no regex: linear)."""
    s = s.rstrip()
    while s and s[-1] in ".,":
        s = s[:-1].rstrip()
    return s


#: a list marker before a line (`- m = 2 kg`, `* v = 3 m/s`, `• g = 9.8`, `1. m = 2 kg`, `(a) F = m a`): not part of it
_BULLET = re.compile(r"^(?:[-*•‣▪–]|\d{1,2}[.)]|\(?[a-hivx]{1,3}\))\s+(?=[A-Za-z\\$αβγδεθλμνρστφωηκΔΩΦ])")


#: a Markdown table row `| symbol | value |` (or `| quantity | symbol | value |`); rules `|---|` and headers give nothing
_TABLE_ROW = re.compile(r"^[ \t]*\|(.*)\|[ \t]*$", re.M)


#: Markdown bold around a formula or a name: `**` after no symbol, number or bracket (`v**2` is a power)
_BOLD = re.compile(r"(?<![\w)\]}*])\*\*(?=[^\s*])([^*\n]{1,200}?)(?<=[^\s*])\*\*(?![\w(*])")


def _table_row(m) -> str:
    cells = [c.strip() for c in m.group(1).split("|")]
    if len(cells) < 2 or any("=" in c for c in cells) or not _NUM_START.match(cells[-1]):
        return "" if all(re.fullmatch(r":?-*:?", c) for c in cells) else m.group(0) if any("=" in c for c in cells) else ""
    sym = cells[-2].strip("$* ")
    return f"{sym} = {cells[-1]}" if sym and len(sym) <= 30 else ""


def lines(step) -> list[str]:
    """Lines of a step's content, with LaTeX line breaks and align markers removed; a line that holds several
    assignments (`a = 1 m, b = 2 s`) gives one line each (assignments())."""
    if step is None:
        return []
    t = _TABLE_ROW.sub(_table_row, step.content)  # | R₁ | 6.0 Ω |: a Markdown table row of symbol and value
    t = _BOLD.sub(r"\1", t)  # **F_c = m v² / r**, **m** = 1200 kg: Markdown bold, not powers
    t = re.sub(r"\\begin\{[a-z*]+\}|\\end\{[a-z*]+\}|&", " ", t)
    t = t.replace("\\\\", "\n")
    t = re.sub(r"\\;", " ", t).replace(";", "\n")  # `\;` is a LaTeX space, not a separator
    t = _SENTENCE_END.sub("\n", t)  # 'F = 3.0 N. Then a = F/m': one sentence a line
    t = _IMPLIES.sub("\n", t)  # `m u = (m + M) v  =>  v = m u/(m + M)`: two equations
    out = []
    for ln in (a for raw in t.splitlines() for a in assignments(_BULLET.sub("", raw.strip()))):
        ln = _full_stop(ln.strip().strip("$").strip()).strip("$").strip()  # a sentence's full stop
        m = _REMARK.search(ln) if ln.endswith(")") else None
        if m and (re.search(r"[A-Za-z]{4,}", m.group(1)) or re.fullmatch(r"[A-Za-z]{3}", m.group(1).strip())) and _PROSE_WORD.search(m.group(1)) and "=" in ln[:m.start()] \
                and ("=" in m.group(1) or not (quantity(f"1 {m.group(1)}") or (0, ""))[1]):  # `J/(mol K)`, `(kelvin)`: a unit, not a remark
            ln = ln[:m.start()].rstrip()  # `u = 0 m/s (from rest)`, `dU = Q - W (W done by the gas)`: a remark
        if not ln:
            continue
        if ln.count("=") >= 2 and _SO_SPLIT.search(ln):  # `1/f = 1/u + 1/v, so 1/v = 1/f - 1/u`: two equations
            pieces = [_full_stop(p.strip()) for p in _SO_SPLIT.split(ln)]
            if len(pieces) > 1 and all("=" in p for p in pieces):
                out += pieces
                continue
        if "=" in ln and _PROSE_WORD.search(ln):
            # a sentence around the formulas ('Multiplying out, Q = 8372*60 = 502320 J, which is about 5.02e5 J'):
            # its clauses, the ones that hold a formula
            parts = [_full_stop(p.strip()) for p in _CLAUSE_SPLIT.split(ln) if p and "=" in p]
            if parts:
                out += parts
                continue
        out.append(ln)
    return out


#: a short connective between two equations of a line: `, so`, `; hence`, `, i.e.`
_SO_SPLIT = re.compile(r",\s*(?:so|hence|thus|then|therefore|i\.e\.)\s+|\s+(?:so|hence|thus|therefore)\s+(?=\S+\s*=)", re.I)
#: a word of prose (not a LaTeX command, function or Greek letter)
_PROSE_WORD = re.compile(r"(?<![\\A-Za-z_])(?!(?:sqrt|frac|text|mathrm|left|right|cdot|times|sin|cos|tan|"
                         r"arcsin|arccos|arctan|exp|log|ln|approx|circ|degree|" + "|".join(_GREEK) +
                         r")\b)[A-Z]?[a-z]{3,}\b")
#: where a sentence's clauses part: a comma before a word, `so`, `and`, `then`, `thus`, `hence`, `which`
_CLAUSE_SPLIT = re.compile(r",\s+(?=[A-Za-z]{2,}\b|\\?[A-Za-z][A-Za-z_0-9{}]*\s*=)|\s+(?:so|and|then|thus|hence|which|giving|gives)\s+", re.I)


_LHS = re.compile(r"^\s*(?:[A-Za-z ,'()-]{0,60}?[:,]\s*)?(\\?[A-Za-z][A-Za-z_0-9{}\\^]*)\s*$")


#: prose words before a formula on one line ('The distance is d = ...', 'which written out gives m1*u1 = ...'):
#: words of three letters or more, or the short words of a sentence, ahead of the formula's last token(s)
_PROSE_HEAD = re.compile(r"^(?:(?:[A-Za-z'-]{3,}|(?i:is|of|at|by|to|so|we|in|on|it|as|an|a))[,]?\s+)+(?=\S+\s*$)")


#: a function applied to a symbol (`sin θ2`, `\\cos(\\theta)`, `ln N`)
_FUNC_OF = re.compile(r"^\s*\\?(?:sin|cos|tan|sec|csc|cot|arcsin|arccos|arctan|asin|acos|atan|ln|log|exp|sqrt)(?![A-Za-z])")


def lhs_name(lhs: str) -> str | None:
    """The symbol on the left of `=` (prose before a colon dropped, LaTeX subscripts flattened)."""
    lhs = re.sub(r"^.*?:\s*", "", lhs.strip()) if ":" in lhs else lhs.strip()
    if _FUNC_OF.match(lhs):
        return None  # `sin θ2 = 0.333` gives the sine, not θ2: the function name is no prose before a symbol
    lhs = _PROSE_HEAD.sub("", _DELTA.sub(_delta_name, _MU_KS.sub(r"mu_\1", lhs)))  # 'The heat is Q' -> Q; 'Delta L' is one symbol
    lhs = re.sub(r"^(?:\\left\s*)?\|\s*(.+?)\s*(?:\\right\s*)?\|$", r"\1", lhs)  # |W| = ...: the magnitude named
    lhs = _DELTA.sub(_delta_name, _HALF.sub("_half", lhs.strip("$ "))).replace("\\", "").translate(_UGREEK).strip()
    lhs = _SUBSCRIPT.sub(lambda m: m.group(1) + "_" + m.group(2).translate(SUBDIGITS), lhs)
    lhs = _PRIME.sub(lambda m: m.group(1) + "_prime" * len(m.group(2)), lhs)
    lhs = re.sub(r"_\{([A-Za-z0-9]+)\}", r"_\1", lhs)
    for g in _GREEK:
        lhs = re.sub(rf"^{g}(?=_|$)", g, lhs)
    return lhs if re.fullmatch(r"[A-Za-z][A-Za-z_0-9]*", lhs) else None


#: an approximate equality, read as `=` (`v \approx 3.1 m/s`, `v ≈ 3.1`)
APPROX = re.compile(r"\\approx|≈|\\simeq")


def equations(step) -> list[tuple[str, list[str], int]]:
    """(lhs symbol, [rhs parts of a chained `a = b = c`], line index) of a step's equation lines."""
    out = []
    for i, ln in enumerate(lines(step)):
        ln = APPROX.sub("=", ln)
        parts = [p.strip() for p in ln.split("=")]
        if len(parts) < 2:
            continue
        name = lhs_name(parts[0])
        if not name and len(parts) >= 2 and all(parts) and (right := _bare_symbol(parts[-1])) \
                and not any(_bare_symbol(p) for p in parts[:-1]):
            # the unknown written on the right (`½ k x² = E`, `100 · 0.0225 J = 2.25 J = E`): E = ..., in order
            name, parts = right, [right] + parts[:-1]
        if name and all(parts[1:]):
            out.append((name, parts[1:], i))
    return out


_NUM_START = re.compile(r"^\s*[-+]?\s*(?:\d|\.\d)")


_BARE_C = re.compile(r"^\s*([-+]?\d+(?:\.\d+)?)\s*([CF])\s*$")


def values(step) -> list[tuple[str, float, str, str, int]]:
    """(symbol, SI value, SI unit, text, line index) of each `name = number unit` line of a step."""
    out = []
    for name, parts, i in equations(step):
        rhs = parts[-1]
        if _NUM_START.match(rhs):
            if re.fullmatch(r"T(?:_?\w+)?|Delta_T|theta(?:_\w+)?", name) and (m := _BARE_C.match(rhs)):
                # a temperature written `20 C` (not coulombs); a change `Delta_T = 60 C` is 60 K
                rhs = f"{m.group(1)} {'delta_deg' if name == 'Delta_T' else '°'}{m.group(2)}"
            q = quantity(rhs)
            if q is not None:
                out.append((name, q[0], q[1], rhs, i))
                # one value for several symbols: `m1 = m2 = 1.0e3 kg`
                out += [(other, q[0], q[1], rhs, i) for p in parts[:-1] if (other := _bare_symbol(p))]
    return out


def _bare_symbol(text: str) -> str | None:
    """The symbol a text is, when it is one symbol alone (`m_2`, `\\theta_1`), else None."""
    t = text.strip().strip("$ ")
    return lhs_name(t) if re.fullmatch(r"\\?[A-Za-zα-ωΑ-Ω][A-Za-z_0-9{}₀-₉]*", t) else None


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
    s = re.sub(r"\\(?:vec|hat|mathbf|boldsymbol|overrightarrow)\s*\{?\s*([A-Za-z])\s*\}?", r"\1", s or "")  # \vec F -> F
    s = _DELTA.sub(_delta_name, _HALF.sub("_half", _MU_KS.sub(r"mu_\1", s))).translate(_UGREEK)
    s = _SUBSCRIPT.sub(lambda m: m.group(1) + "_" + m.group(2).translate(SUBDIGITS), s)
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
    return not rest or bool(re.match(r"[A-Za-zµΩ°\\%]|\[\s*[A-Za-zµΩ°]", rest))  # `4 [m/s]`: the unit in brackets


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



# --- a question's lettered options ----------------------------------------------------------------

LETTERS = "ABCDEFGH"  # the option letters verifiers.answer reads (its mcq/mcq_multi check)
_OPTION_MARK = re.compile(r"(?:(?<=\s)|^)\(([A-H])\)\s*|^[ \t]*([A-H])[).:][ \t]+", re.M)
_CLAIM = re.compile(r"(?:^|\s)\$?\\?([A-Za-z][A-Za-z_0-9{}]*)\$?\s+(?:is|=|equals|was|will be)\s+(?:about\s+)?"
                    r"\$?([-+−]?\s*(?:\d|\.\d).*?)\$?\s*\.?\s*$")


def options(question: str) -> dict[str, str]:
    """The lettered options of a question, letter -> text: `(A) 189 m` on its own line or inline, or
    `A) 189 m`, `A. 189 m` at a line's start (r3bench.core.prompts writes `(A) ...` lines). The last run
    that starts at A and goes on in order (A, B, C, ...) is taken; {} when fewer than two options read."""
    q = question or ""
    marks = [(m.group(1) or m.group(2), m) for m in _OPTION_MARK.finditer(q)]
    run: list = []
    for letter, m in marks:
        if letter == "A":
            run = [(letter, m)]
        elif run and letter == LETTERS[len(run)]:
            run.append((letter, m))
    out = {}
    for k, (letter, m) in enumerate(run):
        end = run[k + 1][1].start() if k + 1 < len(run) else len(q)
        text = q[m.end():end]
        out[letter] = (text.split("\n", 1)[0] if k + 1 == len(run) else text).strip()
    return out if len(out) >= 2 else {}


def option_claim(text: str) -> tuple[str | None, float, str] | None:
    """What an option states: a value (`378 m` -> (None, 378.0, 'm')) or a quantity's value (`The distance
    travelled s is 378 m.` -> ('s', 378.0, 'm')), SI; None when it states neither (a word, an expression)."""
    t = (text or "").strip().rstrip(".")
    if _NUM_START.match(t):
        q = quantity(t)
        return (None, q[0], q[1]) if q else None
    m = _CLAIM.search(t)
    if not m:
        return None
    name = lhs_name(m.group(1))
    q = quantity(m.group(2))
    return (name, q[0], q[1]) if name and q else None

# --- principles: which law a sentence names -------------------------------------------------------

#: law or condition key -> pattern (lower-case text). A principle is read as the set of keys it names.
LAWS = {
    "newton2": r"newton'?s? (?:second|2nd) law|newton'?s? (?:ii|2|2nd|second)\b|second law of motion|\bn2l\b|\bf\s*=\s*m\s*\*?\s*a\b|net force (?:equals|is) mass times|(?:net|resultant) force\b[^.;]{0,40}?\b(?:equals|is|=) (?:the )?mass times|sum of (?:the )?forces",
    "const_accel": r"constant acceleration|uniform(?:ly)? accelerat|equations? of (?:uniformly accelerated )?motion|suvat|kinematic|projectile",
    # falling under gravity alone: the setting of a kinematics or an energy reference, and a name of the
    # constant-acceleration law (_SAME_LAW)
    "free_fall": r"free.fall|falls? freely|freely falling",
    "const_velocity": r"constant velocity|uniform motion|uniform velocity|constant speed along|distance\s*=\s*speed",
    "energy_cons": r"conservation of (?:mechanical |total )?energy|(?:mechanical |total )?energy (?:is )?conserv|energy conservation|potential energy (?:is )?(?:converted|turns|becomes|goes)|work.energy theorem",
    "momentum_cons": r"conservation of (?:linear )?momentum|momentum (?:is )?conserv|total momentum",
    # 'kinetic energy ... conserved' in one clause without a negation ('kinetic energies are also conserved'),
    # not 'kinetic energy is not conserved'
    "ke_cons": r"kinetic energ\w*(?:(?!\bnot\b|\bno\b|\bisn't\b|[.;,])[^.;,]){0,30}?\bconserv|conserv\w* (?:of )?(?:the )?"
               r"(?:total )?kinetic energy|(?<!in)elastic collision|equal kinetic energ",
    "inelastic": r"inelastic|stick together|move together|moving together|coalesce",
    "impulse": r"impulse",
    "momentum": r"\bmomentum\b",
    "friction": r"(?<!no )(?<!without )\bfriction(?!less)|\bmu\s*\*?\s*n\b|coefficient of friction",
    "frictionless": r"frictionless|without friction|no friction|smooth (?:surface|incline|plane)",
    "gravity_work": r"work (?:done )?against gravity",
    "work": r"\bwork\b|\bw\s*=\s*(?:int\b|∫)",
    "spring": r"spring|hooke|elastic (?:potential )?energy",
    "centripetal": r"centripetal|circular motion",
    "gravitation": r"law of (?:universal )?gravit|universal gravitation|gravitational (?:force|field|attraction|pull)"
                   r"|g\s*m\s*/\s*r|force of gravity|gravity force|weight (?:of [a-z ]{1,30})?(?:near|at|on) (?:the )?"
                   r"(?:earth|planet|moon|surface)|inverse.square law of gravit",
    "kepler": r"kepler",
    "shm": r"simple harmonic|harmonic oscillat|pendulum|oscillat",
    "wave": r"\bwave|wavelength|frequency times|v\s*=\s*f\s*\*?\s*lambda",
    # the gas laws by their discoverers name the ideal gas at one condition (Boyle: isothermal)
    "ideal_gas": r"ideal gas|boyle|charles'?s? law|gay.lussac|\bp\s*\*?\s*v\s*=\s*n\s*\*?\s*r\s*\*?\s*t\b|general gas (?:law|equation)"
                 r"|combined gas law",
    "first_law": r"first law of thermodynamics|(?<!newton's )(?<!newtons )(?<!newton )first law",
    "newton1": r"newton'?s? first law|newton'?s? (?:i|1|1st|first)\b(?! *(?:and|&|,))|law of inertia",
    "const_volume": r"constant volume|isochoric|c_?v\b|gay.lussac|(?:fixed|rigid|sealed) (?:volume|container)",
    "const_pressure": r"constant pressure|isobaric|c_?p\b|charles'?s? law|(?:fixed|same|unchanged) pressure",
    "isothermal": r"isotherm|boyle|(?:constant|fixed|same|unchanged) (?:temperature|t\b(?![-'’]))|temperature (?:is |stays |remains |held )?"
                  r"(?:constant|fixed|unchanged|the same)",
    "adiabatic": r"adiabatic",
    "carnot": r"carnot",
    # a refrigerator or heat pump's coefficient of performance is not an engine's efficiency
    "refrigerator": r"refrigerat|coefficient of performance|\bcop\b|heat pump",
    "engine": r"(?:engine|thermal|carnot|maximum|ideal) efficiency|efficiency of (?:an? |the )?(?:\w+ )?(?:heat )?engine|heat engine",
    # the mean lifetime tau = T_half / ln 2 is not the half-life
    "mean_life": r"mean (?:life|lifetime)|average (?:life|lifetime)|\blifetime\b|decay constant",
    "calorimetry": r"calorimetr|heat lost\b.*\bheat gained|heat gained\b.*\bheat lost|specific heat|sensible heat"
                   r"|\bq\s*=\s*m\s*\*?\s*c\s*\*?\s*(?:delta|Δ|d)",
    "latent": r"latent heat|heat of (?:fusion|vapori[sz]ation)|\bm\s*\*?\s*l_?(?:f|v)\b",
    "coulomb": r"\bcoulomb(?:'s)?\b(?!s)|electrostatic force between",
    "field": r"electric field",
    "capacitor": r"capacit(?!y)|capacity of (?:a|the) capacitor",  # 'heat capacity' is no capacitor
    # the surname alone ('Ohm', 'by Ohm: I = V/R') names the law; `4.0 ohm` after a number is the unit
    "ohm": r"ohm'?s? law|\bv\s*=\s*i\s*\*?\s*r\b|(?<![\d.]\s)(?<![\d.])\bohm(?:'s)?\b(?!s)",
    "series": r"\bseries\b",
    "parallel": r"\bparallel\b(?! plate)",
    # 'power' alone named the law for any text with the word ('Heat for a power source', issue 32): the key
    # needs the quantity named as a power of something, or its formula
    "power": r"(?:electric(?:al)?|mechanical|average) power|power (?:is|=|equals|dissipated|delivered|consumed"
             r"|supplied|used|drawn|output|input|developed|of the)|\bp\s*=\s*(?:v\s*\*?\s*i|i\s*\*?\s*v|i\s*\^\s*2"
             r"\s*\*?\s*r|v\s*\^\s*2\s*/\s*r|w\s*/\s*t|f\s*\*?\s*v|e\s*/\s*t)\b|rate of (?:doing )?work"
             r"|work (?:done )?per (?:unit )?time|joule heating|joule'?s? (?:first )?law",
    "rc": r"\brc\b|charging|discharging",
    "ampere": r"amp[eè]re'?s? (?:circuital )?law|biot|magnetic field of",
    "lorentz": r"magnetic force|lorentz(?! (?:contraction|factor|transformation))",
    "time_dilation": r"time dilation|dilated time|time is dilated|moving clocks? (?:run|runs|tick|ticks) slow",
    "length_contraction": r"length contraction|(?:lorentz|fitzgerald) contraction|contracted length",
    "faraday": r"faraday|induced emf|motional emf|emf\s*=\s*b",
    "lens": r"lens|mirror equation",
    "snell": r"snell|refraction",
    "tir": r"total internal reflection|critical angle",
    "brewster": r"brewster",
    "interference": r"interference|double.slit|young",
    # 'Planck's constant' is a constant a law uses, not the photon law (a de Broglie reference mentions it)
    "photon": r"planck(?!'?s? constant)|photon energy|e\s*=\s*h\s*\*?\s*(?:f|nu|c)",
    "photoelectric": r"photoelectric|work function",
    "de_broglie": r"de ?broglie",
    "decay": r"radioactive|half.life|exponential decay",
    "linear_decay": r"linear decay|constant rate",
    "mass_energy": r"mass.energy|e\s*=\s*m\s*\*?\s*c",
    "bohr": r"bohr|energy levels?",
    "torque": r"torque|moments? of (?:a )?force|(?:law|principle) of moments|rotational equilibrium|(?:second law|newton'?s? law) (?:for|of) rotation"
              r"|rotational (?:form of |analogue of )?newton|(?:tau|τ)\s*=\s*i\s*\*?\s*(?:alpha|α)",
    "buoyancy": r"archimedes|buoyan",
    "pascal": r"pascal'?s? (?:principle|law)|law of flotation|flotation law",
    "bernoulli": r"bernoulli|torricelli",
    "continuity": r"continuity|a_?1\s*\*?\s*v_?1\s*=\s*a_?2\s*\*?\s*v_?2|volume flow rate (?:is )?(?:the same|constant)",
    "doppler": r"doppler",
}
#: pairs of keys that contradict each other: naming one where the reference names the other is a wrong law
CONFLICTS = [("friction", "frictionless"), ("series", "parallel"), ("const_volume", "const_pressure"),
             ("const_accel", "const_velocity"), ("free_fall", "const_velocity"), ("inelastic", "ke_cons"),
             ("isothermal", "adiabatic"), ("decay", "linear_decay"), ("tir", "brewster"),
             ("time_dilation", "length_contraction"), ("refrigerator", "engine")]
#: pairs of laws that a principle cannot both name where the reference does not (one denies the other: an
#: inelastic collision where kinetic energy is conserved, a net force that is zero and accelerates the body)
BOTH_CONFLICT = [("inelastic", "ke_cons"), ("newton1", "newton2"), ("buoyancy", "pascal"), ("isothermal", "adiabatic"),
                 ("decay", "linear_decay"), ("tir", "brewster")]
#: idealisations a principle may leave unsaid ('frictionless' is the default); contradicting them still fails
OPTIONAL = {"frictionless"}
_LAW_RE = {k: re.compile(v) for k, v in LAWS.items()}


def laws(text: str) -> set[str]:
    """The law/condition keys a principle names (LAWS), from its lower-cased text."""
    t = re.sub(r"[\\$]", " ", (text or "").lower()).replace("²", "^2").replace("³", "^3")
    t = re.sub(r"\s+", " ", t)
    return {k for k, rx in _LAW_RE.items() if rx.search(t)}


#: keys a principle may add to the reference's without naming another law (the setting of a law, not a law)
CONTEXT_WORDS = {"momentum", "work", "series", "parallel", "frictionless", "field", "ideal_gas"}
#: keys a reference names as the setting of its law ('the collision is inelastic', 'the wavelength of a
#: particle'): a principle that names a law of the reference may leave them unsaid
_UNSAID = {"inelastic", "wave", "free_fall", "isothermal", "engine", "mean_life"}  # the setting: a phase change at constant temperature, a heat engine
#: two keys for one law: naming either names it
#: (free fall is motion at constant acceleration; the work done against gravity is the potential energy gained, the
#: energy balance of a lift)
_SAME_LAW = [("snell", "tir"), ("const_accel", "free_fall"), ("energy_cons", "gravity_work")]
#: a law whose statement is an instance of a more general one the reference also names: naming the law names
#: that one too, when the reference names both (an isothermal or adiabatic expansion's work is the first law's
#: setting; Einstein's photoelectric equation is energy conservation for one photon)
_INSTANCE_OF = {"isothermal": {"first_law"}, "adiabatic": {"first_law"}, "photoelectric": {"energy_cons"}}
_PARENS = re.compile(r"\([^()]*\)")
#: laws a principle may name besides the reference's (a law and the one that supplies its input: 'Newton's law of
#: gravitation gives the centripetal force'); more is a list of laws, not one (issue 32: the whole table passed)
MAX_EXTRA_LAWS = 2
_PRINCIPLE_FORMULA = re.compile(r"([^:;,=]{1,60})=([^:;,=]{1,80})")


def _circular(principle: str) -> str | None:
    """Why a principle's formula is circular (`a = m*a/m`: true for any values, it names no law), else None."""
    for m in _PRINCIPLE_FORMULA.finditer((principle or "").replace("$", "")):
        words = m.group(1).split()
        right = re.split(r"\.\s|\.$|\s(?:for|with|when|where|and|so|at)\s", m.group(2).strip())[0].strip().rstrip(".")
        for k in range(1, min(4, len(words)) + 1):  # the formula's left side: the last words before `=`
            left = " ".join(words[-k:])
            if right and identity(left, right):
                return f"the principle's formula `{left} = {right}` holds for any values: circular, it names no law"
    return None


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
    for k, general in _INSTANCE_OF.items():
        if k in a and k in b:
            a |= general & b
    # a law the reference names only inside parentheses explains the law it names outside them ('Bohr levels
    # and photon emission (energy conservation, Planck-Einstein relation)'): it may go unsaid when a law named
    # outside them is named
    outside = laws(_PARENS.sub(" ", reference or "")) if "(" in (reference or "") else b
    explained = b - outside if outside & a - CONTEXT_WORDS else set()
    if "free_fall" in a:  # a principle that says free fall names motion at constant acceleration
        a.add("const_accel")
    if (why := _circular(principle)):
        return False, why
    extra = a - b - OPTIONAL - CONTEXT_WORDS
    if b and len(extra) > MAX_EXTRA_LAWS:
        return False, f"the principle names {len(extra)} laws besides the one that applies ({', '.join(sorted(extra))})"
    for x, y in BOTH_CONFLICT:
        if x in a and y in a and not (x in b and y in b):
            return False, f"the principle names conflicting laws ({x} and {y})"
    for x, y in CONFLICTS:
        if (x in a and y in b and x not in b and y not in a) or (y in a and x in b and y not in b and x not in a):
            return False, f"the principle says {x if x in a else y} where {y if x in a else x} applies"
    b -= OPTIONAL  # an idealisation may go unsaid, but not be contradicted (checked above)
    if b:
        missing = sorted(b - a)
        if not missing:
            return True, "names the same law"
        # a reference often names its law with the setting or a word that is no second law ('momentum is
        # conserved; the collision is inelastic', 'the wavelength of a particle'): those may go unsaid when a
        # law of the reference is named and none contradicted; so may one of two names of one law (Snell's law
        # at 90 degrees is the critical-angle law). Every other law of the reference must be named.
        named = (a & b) - CONTEXT_WORDS
        unsaid = set(missing) - CONTEXT_WORDS - _UNSAID - explained
        for x, y in _SAME_LAW:
            if x in b and y in a or y in b and x in a:
                named |= {x, y} & a
                unsaid -= {x, y}
        if named and not unsaid:
            return True, f"names {', '.join(sorted(named))}, the law of the reference"
        return False, f"the principle does not name {', '.join(missing)}"
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


# --- governing equations in any arrangement -------------------------------------------------------

_IDENTITY_POINTS = 3


def _random_env(names_: set, rng) -> dict:
    return {n: rng.uniform(0.5, 2.5) for n in names_}


def identity(lhs: str, rhs: str) -> bool:
    """Whether `lhs = rhs` holds for every value of its symbols (`s = s`, `s = s + 0`, `a = m*a/m`): an
    identity says nothing checkable, so it is no law (issue 32). Decided numerically at random points."""
    try:
        free = names(lhs) | names(rhs)
    except ExprError:
        return False
    if not free:
        return False
    rng = random.Random(0)
    for _ in range(_IDENTITY_POINTS):
        env = _random_env(free, rng)
        try:
            a, b = evaluate(lhs, env), evaluate(rhs, env)
        except ExprError:
            return False
        if abs(a - b) > _DEFAULT.sym_rel_tol * max(1.0, abs(a), abs(b)):  # sampling with free symbols
            return False
    return True


def _sympy(text: str):
    """The sympy object of an expression, read by safeexpr.parse (whitelisted tree; never eval); every name is a
    symbol, `e` included (the electron charge in physics)."""
    plain = expr_text(text)
    syms = {n for n in _IDENT.findall(plain) if n not in FUNCS and n not in CONSTS}
    return safeexpr.parse(plain, symbols=syms, max_len=4 * MAX_EXPR)


def _invert(lhs, rhs, x):
    """rhs with the operations around the single occurrence of x in lhs undone (lhs = rhs solved for x)."""
    import sympy as sp

    for _ in range(40):
        if lhs == x:
            return rhs
        if lhs.is_Add or lhs.is_Mul:
            inner = [a for a in lhs.args if a.has(x)]
            if len(inner) != 1:
                return None
            rest = lhs.func(*[a for a in lhs.args if not a.has(x)])
            lhs, rhs = inner[0], (rhs - rest if lhs.is_Add else rhs / rest)
        elif lhs.is_Pow:
            b, e = lhs.args
            if b.has(x) and not e.has(x):
                lhs, rhs = b, rhs ** (1 / e)
            elif e.has(x) and not b.has(x):
                lhs, rhs = e, sp.log(rhs) / sp.log(b)
            else:
                return None
        elif isinstance(lhs, sp.exp):
            lhs, rhs = lhs.args[0], sp.log(rhs)
        elif isinstance(lhs, sp.log):
            lhs, rhs = lhs.args[0], sp.exp(rhs)
        elif isinstance(lhs, (sp.sin, sp.cos, sp.tan, sp.asin, sp.acos, sp.atan)):
            inv = {sp.sin: sp.asin, sp.cos: sp.acos, sp.tan: sp.atan, sp.asin: sp.sin, sp.acos: sp.cos,
                   sp.atan: sp.tan}[lhs.func]
            lhs, rhs = lhs.args[0], inv(rhs)
        else:
            return None
    return None


def solve_for(lhs: str, rhs: str, x: str) -> list[str]:
    """`lhs = rhs` solved for the symbol x, as expression texts of the calculator grammar (`h = g t^2/2` for t:
    ['sqrt(2)*sqrt(h/g)']); [] when it cannot be (x in several places beyond a quadratic, an unknown function).
    The sides are read by safeexpr.parse and rearranged as sympy objects: no text is evaluated."""
    import sympy as sp

    try:
        a, b = _sympy(lhs), _sympy(rhs)
    except (ExprError, RecursionError):
        return []
    X = next((s for s in (a.free_symbols | b.free_symbols) if s.name == (x + _KW_TAIL if _KW_RE.fullmatch(x) else x)), None)
    if X is None:
        return []
    f = a - b
    if not f.has(X):
        return []
    outs = []
    if a.has(X) != b.has(X):
        one, other = (a, b) if a.has(X) else (b, a)
        got = _invert(one, other, X)
        if got is not None:
            outs.append(got)
    if not outs:
        try:
            num = sp.together(f).as_numer_denom()[0]
            small = len(str(num)) < 300 and not any(  # expand((t + 1)^999) would run for long: not a quadratic
                x.is_Pow and x.exp.is_Number and abs(x.exp) > 4 for x in sp.preorder_traversal(num))
            poly = sp.Poly(sp.expand(num), X) if small else None
        except (sp.PolynomialError, sp.GeneratorsNeeded, ValueError, TypeError, RecursionError):
            poly = None
        if poly is not None and 1 <= poly.degree() <= 2 and not any(c.has(X) for c in poly.all_coeffs()):
            c = poly.all_coeffs()
            if len(c) == 2:
                outs.append(-c[1] / c[0])
            else:
                d = sp.sqrt(c[1] ** 2 - 4 * c[0] * c[2])
                outs += [(-c[1] + d) / (2 * c[0]), (-c[1] - d) / (2 * c[0])]
    texts = []
    for o in outs:
        if o.has(sp.I, sp.zoo, sp.nan) or len(str(o)) > 2 * MAX_EXPR:
            continue
        t = str(o).replace(_KW_TAIL, "")
        try:
            names(t)
        except ExprError:
            continue
        texts.append(t)
    return texts


#: words of three letters or more that are names of a formula, not prose
_NOT_PROSE = set(FUNCS) | set(CONSTS) | {g.lower() for g in _GREEK} | {"half"}


def _sides(line: str) -> tuple[str, str] | None:
    ln = APPROX.sub("=", line)
    parts = [p.strip() for p in ln.split("=")]
    if len(parts) < 2 or not all(parts):
        return None
    left = re.sub(r"^[A-Za-z ,'()-]{0,60}?:\s*", "", parts[0]) if ":" in parts[0] else parts[0]
    left = _DELTA.sub(_delta_name, left)  # `Delta L` is one symbol, not the word Delta before L
    words = left.split()
    for k in range(len(words)):  # prose before the formula ('The momentum balance gives m1*u1'): the words after it
        if not re.fullmatch(r"[A-Za-z'-]{3,},?|(?i:is|of|at|by|to|so|we|in|on|it|as|an|a)", words[k]):
            break
    else:
        k = len(words) - 1
    # prose runs on past a symbol ('After t the number left is N', 'f known, the lens law is 1/v'): the formula is
    # what follows its last word, where two words of prose or more come before it
    prose = [j for j, w in enumerate(words) if re.fullmatch(r"(?:[A-Za-z'-]{3,}|is|are|of|to|so),?", w)
             and w.rstrip(",").lower() not in _NOT_PROSE]
    if len(prose) >= 2 and max(k, 1) <= prose[-1] + 1 < len(words) and not re.match(r"[-+*/^=)]", words[prose[-1] + 1]):
        k = prose[-1] + 1
    if k:
        try:
            names(" ".join(words[k:]))
            left = " ".join(words[k:])
        except ExprError:
            pass
    return left, parts[-1]


UNIT_AFTER_NUMBER = re.compile(r"(\d)\s*(?:\\[,;: ]|~|\s)*(?:\\(?:mathrm|text|rm)\s*\{([^{}]{1,20})\}|\[([^\[\]]{1,20})\]"
                                r"|(?<=\s)([A-Za-zΩµ°][A-Za-zΩµ°/^0-9.*-]{0,15})(?![A-Za-z(]))")


def units_dropped(text: str) -> str | None:
    """The text with the units written after its numbers removed (`12 V / 4 Ω` -> `12 / 4`), when any were:
    the unit letters are not the symbols of the same name (V = 12 would make `12 V` 144)."""
    u = get_ureg()
    changed = False

    def drop(m):
        nonlocal changed
        unit = (m.group(2) or m.group(3) or m.group(4) or "").strip()
        tail = ""
        if m.group(4) and "*" in unit:  # `28 m/s*43 s`: the unit ends at the times sign before the next number
            unit, star, rest = unit.partition("*")
            tail = star + rest if re.match(r"[\d.]", rest) else ""
            unit = unit if tail else unit + star + rest
        try:
            u.parse_units(unit.replace("Ω", "ohm").replace("^", "**"))
        except Exception:  # noqa: BLE001 - not a unit: leave the text as written
            return m.group(0)
        changed = True
        return m.group(1) + " " + tail

    out = UNIT_AFTER_NUMBER.sub(drop, text)
    if changed and "*" in text:  # a unit cut at a times sign: the number after it may carry a unit of its own
        out = UNIT_AFTER_NUMBER.sub(drop, out)
    return out if changed else None


def governing(step, givens: set, env: Mapping[str, float] | None = None) -> tuple[list, list, list]:
    """The governing equations of a step in any arrangement: (eqs, relations, identities).

    eqs: (symbol, [expression], line) as equations() gives them, a natural form solved for its one unknown
    (`h = \\frac{1}{2} g t^2` with h given -> ('t', ['sqrt(2)*sqrt(h/g)'])); a natural form that a later line
    already solves for the same symbol is a relation only. relations: (lhs text, rhs text, line) of the lines
    that relate known quantities (checked at the true values, not in the arithmetic). identities: (line, why)
    of the lines that hold for any values (`s = s`, `s = s + 0`, `a = m*a/m`): no law.
    `givens`: the symbols with identified values; `env`: their values, to choose among a quadratic's roots.
    """
    eqs, rels, idents, defined = [], [], [], set()
    explicit = {e[0]: e[2] for e in equations(step)}
    known = set(givens) | set(explicit)
    for i, ln in enumerate(lines(step)):
        sd = _sides(ln)
        if sd is None:
            continue
        # a left side of symbols side by side (`PV = nRT` with P solved for by a later line) is their product,
        # though the line reads as an equation for the name `PV`
        left, right = juxtaposed(sd[0], known - {lhs_name(sd[0])}), juxtaposed(sd[1], known)
        if identity(left, right):
            idents.append((i, f"`{left} = {right}` holds for any values: an identity, not a law"))
            continue
        name = lhs_name(left)
        try:
            free_r = names(right)
            free_l = names(left) if name is None else {name}
            if free_r - known and (d := units_dropped(right)) is not None \
                    and not names(d) - known:
                free_r = names(d)  # `s = 28 m/s*43 s`: the units written after the numbers are no symbols
        except ExprError:
            if name:
                eqs.append((name, [p.strip() for p in APPROX.sub("=", ln).split("=")[1:]], i))
            continue
        if name and name not in free_r and (name not in givens or not (free_r - givens - defined)):
            eqs.append((name, [p.strip() for p in APPROX.sub("=", ln).split("=")[1:]], i))
            defined.add(name)
            continue
        unknown = (free_l | free_r) - givens - defined
        if name and name in free_r:
            unknown = {name}
        if len(unknown) != 1:
            rels.append((left, right, i))
            continue
        x = unknown.pop()
        if explicit.get(x, -1) > i:  # solved by a later line
            rels.append((left, right, i))
            continue
        cands = solve_for(left, right, x)
        if not cands:
            rels.append((left, right, i))
            continue
        pick = cands[0]
        if env and len(cands) > 1:
            for c in cands:
                try:
                    if evaluate(c, env) > 0:
                        pick = c
                        break
                except ExprError:
                    continue
        eqs.append((x, [pick], i))
        defined.add(x)
    return eqs, rels, idents


def juxtaposed(text: str, known: set) -> str:
    """`mgh`, `kx` written for products of known one-letter symbols, spelled apart (`m g h`); else the text."""
    try:
        free = names(text)
    except ExprError:
        return text
    for name in sorted(free - set(known), key=lambda x: (-len(x), x)):
        if len(name) > 1 and all(ch in known for ch in name):
            text = re.sub(rf"(?<![A-Za-z_\\]){name}(?![A-Za-z0-9_])", " ".join(name), text)  # `2gh` is 2 g h
    return text
