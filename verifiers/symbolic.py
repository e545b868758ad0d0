"""Symbolic answers parsed as data and compared: no eval, no sympify, no parse_expr of text.

Parsing (:func:`parse`):
- LaTeX (anything with a backslash or braces) goes to math-verify's parser, latex2sympy2_extended,
  an ANTLR grammar that builds sympy objects (it never evaluates the text), with its
  "malformed operators" normalisation so that ``\\frac13`` and ``\\sqrt3`` parse;
- plain text (``q_1*q_2/(4*pi*epsilon_0*r**2)``, ``v^2/(2a)``) goes to :mod:`verifiers.safeexpr`,
  which builds sympy objects from a whitelisted syntax tree;
- ``lhs = rhs`` where ``lhs`` is a name is an assignment (the value is ``rhs``); a chain
  ``a = b = c`` is worth its last member; any other equation is a relation, as are ``<``, ``\\le``,
  ``\\geq``, ``\\neq``... (math-verify's conventions, tests/test_all.py ``test_relations_math``);
- results with ``nan`` / ``zoo`` (``\\frac{1}{0}``), powers too large to compute, or multi-letter
  words that are neither a known symbol name nor split-able into single letters (``banana``) are
  refused with a reason.

Comparison (:func:`equivalent`) follows math-verify's grader: constants compare numerically with
the checker's numeric tolerance (``CheckConfig.rel_tol``); expressions with free symbols by numeric
sampling at random positive points (``CheckConfig.sym_rel_tol``), then ``simplify`` of the
difference; sets (and ``\\pm``) as unordered collections, tuples in order, intervals by end points
and openness, relations after moving every term to one side (``x < 3`` is ``3 > x``; two equations
are equal when one side-difference is a constant multiple of the other).
"""
from __future__ import annotations

import math
import random
import re

from verifiers import safeexpr
from verifiers.config import CheckConfig

MAX_LEN = 500
MAX_DIGITS = 5000  # decimal digits a numeric power may reach (10^{10^{10}} is refused)

# single-letter-split names: greek letters and the multi-letter names physics answers use
KNOWN_NAMES = frozenset("""
alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa lambda mu nu xi omicron
pi rho sigma tau upsilon phi varphi chi psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi
Omega hbar ell
""".split())
_WORD_MIN = 4  # a name of this many letters that is not known is a word, not a product of symbols

_REL_OPS = [  # longest first; (token, canonical)
    (r"\leqslant", "<="), (r"\geqslant", ">="), (r"\leq", "<="), (r"\geq", ">="), (r"\neq", "!="),
    (r"\le", "<="), (r"\ge", ">="), (r"\ne", "!="), (r"\lt", "<"), (r"\gt", ">"),
    ("<=", "<="), (">=", ">="), ("!=", "!="), ("≤", "<="), ("≥", ">="), ("≠", "!="), ("<", "<"), (">", ">"),
]
_REL_RE = re.compile("|".join(re.escape(t) + (r"(?![a-zA-Z])" if t[0] == "\\" else "") for t, _ in _REL_OPS))
_REL_CANON = dict(_REL_OPS)


class ParseError(ValueError):
    """The text is not an expression this module reads (the message says why)."""


def _norm_name(name: str) -> str:
    name = re.sub(r"[\\{}\s]", "", name)
    return re.sub(r"^var(epsilon|phi|theta|rho|sigma|pi)", r"\1", name)


def _latexish(s: str) -> bool:
    return bool(re.search(r"[\\{}]", s))


def _clean(text: str) -> str:
    s = str(text).strip()
    s = re.sub(r"^\$+|\$+$", "", s).strip()
    s = re.sub(r"\\(?:left|right)(?![a-zA-Z])", "", s)
    s = re.sub(r"\\[,;:! ]|\\quad|\\qquad|~", " ", s)
    s = re.sub(r"\\(?:displaystyle|textstyle)", "", s)
    s = re.sub(r"\\[dtc]frac", r"\\frac", s)
    s = s.replace("\\$", "")
    if "\\approx" in s:  # "x = 1/3 \\approx 0.33": the exact value; "x \\approx 11": the value
        left, right = s.split("\\approx", 1)
        s = right if (not left.strip() or _NAME_RE.fullmatch(left.strip())) else left
    s = s.replace("±", r"\pm ").replace("∓", r"\mp ").replace("−", "-").replace("×", r"\times ")
    s = _unicode_math(s)
    s = re.sub(r"(?<![\d.,])(\d{1,3})((?:,\d{3})+)(?![\d,])", lambda m: m.group(1) + m.group(2).replace(",", ""), s)
    s = re.sub(r"\\var(epsilon|phi|theta|rho|sigma|pi)(?![a-zA-Z])", r"\\\1", s)
    s = re.sub(r"(?<![\\A-Za-z_{])([A-Za-z])(\d)(?![\d.])", r"\1_\2", s)  # v0 is v_0, never v*0
    # unit vectors: 3\hat{i} + 4\hat{j} is a linear combination of three named directions
    s = re.sub(r"\\(?:hat|vec|mathbf|boldsymbol)\s?\{\s?([ijk])\s?\}|\\hat\s([ijk])(?![A-Za-z])|([ijk])\u0302",
               lambda m: r" \mathit{U}_{" + (m.group(1) or m.group(2) or m.group(3)) + "hat} ", s)
    return s.strip().rstrip(".").strip()


_GREEK = {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "epsilon", "ζ": "zeta", "η": "eta",
          "θ": "theta", "κ": "kappa", "λ": "lambda", "μ": "mu", "µ": "mu", "ν": "nu", "ξ": "xi", "π": "pi",
          "ρ": "rho", "σ": "sigma", "τ": "tau", "φ": "phi", "ϕ": "phi", "χ": "chi", "ψ": "psi", "ω": "omega",
          "Γ": "Gamma", "Δ": "Delta", "Θ": "Theta", "Λ": "Lambda", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega",
          "ħ": "hbar"}
_SUPERS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


def _unicode_math(s: str) -> str:
    """Unicode that models write in plain text, as LaTeX: "λ/2", "ω²r", "√(2gh)", "ħ"."""
    if s.isascii():
        return s
    s = re.sub("[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+", lambda m: "^{" + m.group().translate(_SUPERS) + "}", s)
    s = re.sub(r"√\s?\(([^()]*)\)", r"\\sqrt{\1}", s)
    s = re.sub(r"√\s?([A-Za-z0-9.]+)", r"\\sqrt{\1}", s)
    s = re.sub("[" + "".join(_GREEK) + "]", lambda m: "\\" + _GREEK[m.group()] + " ", s)
    return s.replace("·", r" \cdot ").replace("⋅", r" \cdot ")


def _split_top(s: str, sep_re: re.Pattern) -> list[tuple[str, str | None]]:
    """Split at separators outside brackets: [(part, separator_before_next), ...]."""
    out, depth, start, i = [], 0, 0, 0
    while i < len(s):
        c = s[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            m = sep_re.match(s, i)
            if m:
                out.append((s[start:i], m.group()))
                i = start = m.end()
                continue
        i += 1
    out.append((s[start:], None))
    return out


_EQ_RE = re.compile(r"(?<![<>!=])=(?!=)")
_LIST_SEP = re.compile(r",|;|\\text\s*\{\s*(?:or|and)\s*\}|\\(?:vee|lor|quad|qquad)(?![a-zA-Z])|\bor\b|\band\b")
_TEXT_TAIL = re.compile(r"(?:(?:\s|\\[,;: ]|~)*\\(?:text|textbf|textnormal|textrm|mbox|mathrm|rm)\s*\{[^{}\\\d]*\})+\s*$")
# a plain unit with a slash after an expression: "sqrt(2 g h) m/s" (a lone letter stays: it may be a symbol)
_PLAIN_UNIT_TAIL = re.compile(r"(?<=[)}\w])\s(?:[A-Za-zµΩ]{1,3}(?:\^?-?\d)?/[A-Za-z]{1,3}(?:\^?\{?-?\d\}?)?|[A-Za-zµΩ]{1,3}\s?[A-Za-z]{1,2}\^\{?-\d\}?)\s*$")


def strip_unit_text(pred: str) -> str:
    """``\\frac{1}{3} \\text{meters}`` -> ``\\frac{1}{3}``: words after a predicted expression are
    decoration (math-verify drops them too); a reference keeps them, and a word in it is refused."""
    out = _TEXT_TAIL.sub("", pred).strip()
    out = _PLAIN_UNIT_TAIL.sub("", out).strip()
    return out or pred
_NAME_RE = re.compile(r"\\?[A-Za-z]+(?:_\{?[A-Za-z0-9]+\}?|_[A-Za-z0-9])?'*")


def parse(text: str, equation: str = "auto"):
    """sympy object (Expr, Relational, FiniteSet, Tuple, Interval) for an answer; raises ParseError.

    equation: how to read ``lhs = rhs`` -
      "auto"  (a reference): a name on the left is an assignment (``v = 3`` is 3), else an equation;
      "keep"  (a prediction against an equation): always an equation (``y = -x/2 + 3/4``);
      "value" (a prediction against anything else): the last member (``x = 5+5+1 = 11`` is 11).
    """
    s = _clean(text)
    if len(s) > MAX_LEN:
        raise ParseError("expression too long")
    if not s:
        raise ParseError("empty expression")
    parts = _split_top(s, _EQ_RE)
    if equation != "auto" and any(len(_split_top(p, _LIST_SEP)) > 1 for p, _ in parts[1:-1]):
        # "T = 2\pi\sqrt{l/g}, T = \pi\sqrt{l/g}" / "... \text{ or } T = ...": two answers, not the last
        raise ParseError("several assignments (a list or a hedge), not one answer")
    if len(parts) >= 3 and equation != "keep":
        s = parts[-1][0]
    elif len(parts) >= 2:
        lhs, rhs = parts[0][0].strip(), parts[-1][0].strip()
        if equation == "value" or (equation == "auto" and _NAME_RE.fullmatch(lhs)):
            s = rhs
        else:
            import sympy

            return sympy.Eq(_parse_side(lhs), _parse_side(rhs), evaluate=False)
    rel = _split_top(s, _REL_RE)
    if len(rel) == 2:
        import sympy

        lhs, op = rel[0]
        a, b = _parse_side(lhs), _parse_side(rel[1][0])
        return {"<": sympy.Lt, "<=": sympy.Le, ">": sympy.Gt, ">=": sympy.Ge, "!=": sympy.Ne}[
            _REL_CANON[op]](a, b, evaluate=False)
    if len(rel) > 2:
        raise ParseError("compound inequality not supported")
    return _parse_side(s)


def _unbalanced_braces(s: str) -> str | None:
    """Where the braces of LaTeX do not pair up (escaped ``\\{``/``\\}`` are literal), else None."""
    opened, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            i += 2  # \{, \} and \\ are characters, not groups
            continue
        if c == "{":
            opened.append(i)
        elif c == "}":
            if not opened:
                return f"unbalanced braces in LaTeX: the '}}' at character {i + 1} closes no '{{'"
            opened.pop()
        i += 1
    if opened:
        return f"unbalanced braces in LaTeX: the '{{' at character {opened[-1] + 1} is never closed"
    return None


def _latex_error(s: str, e: Exception) -> str:
    """Why the LaTeX parser refused a text, in words: braces that do not pair up, else the
    parser's own message with the place it points at (its message is the text, then a caret line)."""
    why = _unbalanced_braces(s)
    if why:
        return why
    lines = str(e).strip("\n").split("\n")
    msg = lines[0].strip().rstrip(".")[:100] or type(e).__name__
    if len(lines) >= 3 and re.fullmatch(r"~*\^", lines[2]):
        echo, pos = lines[1], len(lines[2]) - 1
        msg += " at the end" if pos >= len(echo.rstrip()) else f" at {echo[pos:pos + 20]!r}"
    return f"latex parse failed: {msg}"


def _number(text: str):
    """A digit string as an exact sympy number, built here: latex2sympy's own number parsing hands the
    digits to sympy.Number(str), that is to sympify (eval); this replaces it (installed below)."""
    import sympy

    t = text.replace(" ", "")
    if "," in t and t.startswith("0"):
        t = t.replace(",", ".")  # "0,111" is a decimal comma (latex2sympy's own rule)
    t = t.replace(",", "")
    m = re.fullmatch(r"(\d*)(?:\.(\d*))?", t)
    if not m or not (m.group(1) or m.group(2)):
        raise ParseError(f"not a number: {t[:20]!r}")
    whole, frac = m.group(1) or "0", m.group(2) or ""
    if len(whole) + len(frac) > 400:
        raise ParseError("number too long")
    return sympy.Rational(int(whole + frac), 10 ** len(frac)) if frac else sympy.Integer(int(whole))


def _install_number_parser() -> None:
    import latex2sympy2_extended.latex2sympy2 as l2s

    if getattr(l2s, "_r3bench_numbers", False):
        return
    l2s.convert_number = _number
    l2s._Latex2Sympy.parse_number = lambda self, text: _number(text)
    l2s._r3bench_numbers = True


_FUNC_WORDS = frozenset("sin cos tan sec csc cot log ln exp max min deg det lim arg sinh cosh tanh sqrt".split())


# functions a model writes without the backslash in LaTeX-ish text ("2 v0^2 sinθ cosθ / g" becomes
# "sin\theta cos\theta" once its unicode is LaTeX): the LaTeX parser would read "sin" as s*i*n
_LATEX_FUNCS = frozenset("sin cos tan sec csc cot sinh cosh tanh ln log exp arcsin arccos arctan".split())
# the argument of a function written without parentheses: one symbol, maybe with a coefficient and a
# subscript ("\sin\theta", "\cos 2\theta", "sin x_0"), or a number ("ln 2"); not when a power or a product follows
_BARE_ARG = re.compile(r"\s?(\d{0,3}(?:\\(?:" + "|".join(sorted(KNOWN_NAMES, key=len, reverse=True)) + r")(?![A-Za-z])"
                       r"|[A-Za-z](?![A-Za-z]))(?:\s?_\s?(?:\{[^{}]{1,10}\}|[A-Za-z0-9]))?"
                       r"|\d{1,6}(?:\.\d{1,6})?(?![\d.]))"  # a number alone: "ln 2 / λ" is ln(2)/λ, never ln(2/λ)
                       r"(?=\s{0,3}(?:[-+*/)=,]|\\(?:cdot|times|" + "|".join(sorted(_LATEX_FUNCS)) + r")(?![A-Za-z])"
                       r"|(?:" + "|".join(sorted(_LATEX_FUNCS)) + r")(?![A-Za-z])|$))")


def _function_call(name: str, s: str, i: int, out: list) -> int:
    """Writes \\name, with its bare one-symbol argument in parentheses ("\\cos\\theta / g" is cos(θ)/g, as
    a reader takes it, never cos(θ/g)); returns the index after what was consumed."""
    m = _BARE_ARG.match(s, i)
    if m:
        out.append(f"\\{name}({m.group(1).strip()}) ")
        return m.end()
    out.append(f"\\{name} ")
    return i


def _split_letters(s: str, latex: bool) -> str:
    """Short runs of letters that are no known name are products of one-letter symbols, split before
    parsing so that a power binds to its own letter: "mv^2" is m v^2, never (mv)^2. Subscripts,
    command names and the arguments of \\text / \\mathrm / \\mathit / \\operatorname stay."""
    out, i, n = [], 0, len(s)
    while i < n:
        c = s[i]
        if latex and c == "\\":
            m = re.match(r"\\([A-Za-z]+)\s?", s[i:])
            if not m:
                out.append(s[i:i + 2])
                i += 2
                continue
            if m.group(1) in _LATEX_FUNCS:
                i = _function_call(m.group(1), s, i + len(m.group(1)) + 1, out)
                continue
            out.append(m.group())
            i += m.end()
            if m.group(1) in ("text", "mathrm", "mathit", "operatorname", "textrm", "mbox", "rm") and i < n and s[i] == "{":
                j = s.find("}", i)
                j = n - 1 if j < 0 else j
                out.append(s[i:j + 1])
                i = j + 1
            continue
        if c == "_":
            m = re.match(r"_\s?(?:\{[^{}]*\}|[A-Za-z0-9])|_[A-Za-z0-9_]*", s[i:])
            out.append(m.group())
            i += m.end()
            continue
        if c.isalpha() and c.isascii():
            m = re.match(r"[A-Za-z]+", s[i:])
            w = m.group()
            nxt = s[i + len(w):i + len(w) + 1]
            if latex and w in _LATEX_FUNCS:
                i = _function_call(w, s, i + len(w), out)
                continue
            fn = next((f for f in ("sinh", "cosh", "tanh", "sin", "cos", "tan") if w.endswith(f)), None) \
                if latex and 4 <= len(w) <= 7 and w not in KNOWN_NAMES else None
            if fn and len(w) - len(fn) <= 3 and nxt in ("\\", " ") and w[:len(w) - len(fn)] not in KNOWN_NAMES:
                # "mgsin\theta": one-letter symbols written against a bare function, m g sin(θ)
                out.append(" ".join(w[:len(w) - len(fn)]) + " ")
                i = _function_call(fn, s, i + len(w), out)
                continue
            if 2 <= len(w) <= 3 and w not in KNOWN_NAMES and w not in _FUNC_WORDS and nxt != "_" and \
                    not (not latex and nxt == "("):
                out.append(" ".join(w) + " ")
            else:
                out.append(w)
            i += len(w)
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _charge_e(s: str) -> bool:
    """True when `e` is written as a quantity (the elementary charge: e^2/(4\\pi\\epsilon_0 r), e V), not as
    the base of an exponential with a symbolic or negative exponent (e^{-t/RC})."""
    if not re.search(r"(?<![\\A-Za-z])e(?![A-Za-z])", s):
        return False
    return not re.search(r"(?<![\\A-Za-z])e\s?(?:\^|\*\*)\s?(?:\{[^{}]*[A-Za-z\-\\][^{}]*\}|-|\(|[A-Za-z\\])", s)


def _e_as_symbol(expr):
    import sympy

    e = sympy.Symbol("e")
    expr = expr.replace(lambda x: isinstance(x, sympy.exp) and x.args[0].is_number, lambda x: e ** x.args[0])
    return expr.xreplace({sympy.E: e})


def _wraps(s: str) -> bool:
    """The bracket at s[0] closes at s[-1] (so "(a+b)(c+d)" is not one group)."""
    depth = 0
    for i, c in enumerate(s):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0 and i != len(s) - 1:
                return False
    return depth == 0


def _parse_side(s: str):
    import sympy

    s = s.strip()
    if not s:
        raise ParseError("empty side")
    m = re.fullmatch(r"\\langle(.*)\\rangle|⟨(.*)⟩", s)
    if m:
        s = "(" + (m.group(1) if m.group(1) is not None else m.group(2)) + ")"
    if len(s) >= 5 and s[0] in "([" and s[-1] in ")]" and _wraps(s.replace("[", "(").replace("]", ")")):
        parts = [p for p, _ in _split_top(s[1:-1], re.compile(","))]
        if len(parts) >= 2 and all(p.strip() for p in parts):
            items = [_parse_side(p) for p in parts]
            if len(items) == 2 and (s[0] == "[" or s[-1] == "]"):
                return sympy.Interval(items[0], items[1], left_open=s[0] == "(", right_open=s[-1] == ")")
            return sympy.Tuple(*items)
    latex = _latexish(s) or bool(re.search(r"\d,\d", s))
    charge = _charge_e(s)
    s = _split_letters(s, latex)
    if latex:
        _install_number_parser()
        from latex2sympy2_extended import latex2sympy
        from latex2sympy2_extended.latex2sympy2 import ConversionConfig
        from latex2sympy2_extended.math_normalization import NormalizationConfig

        try:
            # physics symbols are case-sensitive (G vs g, M vs m): keep case
            expr = latex2sympy(s, normalization_config=NormalizationConfig(
                basic_latex=True, units=False, malformed_operators=True, nits=False, boxed="none",
                equations=False), conversion_config=ConversionConfig(lowercase_symbols=False))
        except RecursionError:
            raise ParseError("latex parse failed: too deeply nested") from None
        except Exception as e:  # noqa: BLE001 - the ANTLR parser raises bare Exception; reported as a reason
            raise ParseError(_latex_error(s, e)) from None
        if isinstance(expr, sympy.Basic) and re.search(r"(?<![\\A-Za-z])I(?![A-Za-z])", s):
            expr = expr.xreplace({sympy.I: sympy.Symbol("I")})  # physics: I is a current, not sqrt(-1)
    else:
        try:
            expr = safeexpr.parse(s, max_len=MAX_LEN)
        except safeexpr.ExprError as e:
            raise ParseError(f"expression refused: {e}") from None
    if isinstance(expr, (list, tuple)):
        expr = sympy.Tuple(*expr)
    if not isinstance(expr, sympy.Basic):
        raise ParseError("not an expression")
    if charge:
        expr = _e_as_symbol(expr)
    _guard(expr)
    return _names(expr)


def _digits(x) -> float:
    import sympy

    if isinstance(x, sympy.Rational):
        return max(abs(x.p).bit_length(), abs(x.q).bit_length()) * 0.30103
    v = abs(complex(x.evalf(15)))
    return abs(math.log10(v)) if v > 0 else 0.0


def _guard(expr) -> None:
    """Refuse non-finite values and powers whose evaluation would not fit in memory or time."""
    import sympy

    if expr.has(sympy.nan, sympy.zoo):
        raise ParseError("expression is not finite (nan / complex infinity)")
    if isinstance(expr, sympy.Expr) and expr.has(sympy.oo, -sympy.oo):
        raise ParseError("expression is infinite")
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, sympy.Pow) and node.exp.is_number:
            try:
                e = abs(complex(node.exp.evalf(15)))
                big = e * max(_digits(node.base), 1.0) > MAX_DIGITS if node.base.is_number else e > 1000
            except (TypeError, ValueError, OverflowError, ArithmeticError):
                big = True
            if big:
                raise ParseError("exponent tower or power too large")


def _names(expr):
    """Normalise symbol names (``\\epsilon_0``, ``epsilon_{0}`` -> ``epsilon_0``), split short
    multi-letter names into letters (``mgh`` -> m*g*h, as sympy's split_symbols would) and refuse
    words (``banana``): a reference such as "banana m/s" is prose, not a product of symbols."""
    import sympy

    subs = {}
    for sym in expr.free_symbols:
        name = _norm_name(sym.name)
        base = name.split("_")[0].rstrip("'")
        if len(base) > 1 and base.isalpha() and base not in KNOWN_NAMES and "_" not in name:
            if len(base) >= _WORD_MIN:
                raise ParseError(f"{name!r} is a word, not a symbol")
            subs[sym] = sympy.Mul(*[sympy.Symbol(c) for c in base])
        elif len(base) >= _WORD_MIN and base.isalpha() and base not in KNOWN_NAMES:
            raise ParseError(f"{name!r} is a word, not a symbol")
        elif name != sym.name:
            subs[sym] = sympy.Symbol(name)
    return expr.xreplace(subs) if subs else expr


# ---------------------------------------------------------------- comparison
_DEFAULT = CheckConfig()  # the checker's default tolerances (a request's own come through equivalent's arguments)


def _close(a: complex, b: complex, rel: float) -> bool:
    """a: the prediction's value, b: the reference's."""
    if a == 0 and b != 0:  # an exact zero is never a nonzero gold, however small (1.6e-19 C)
        return False
    if b == 0:  # relative to nothing: an absolute floor, only here
        return abs(a - b) <= _DEFAULT.zero_tol
    return abs(a - b) <= rel * max(abs(a), abs(b))


def _numbers(a, b, rel_tol: float):
    try:
        va, vb = complex(a.evalf(30)), complex(b.evalf(30))
    except (TypeError, ValueError, ArithmeticError):
        return None
    if not all(math.isfinite(z.real) and math.isfinite(z.imag) for z in (va, vb)):
        return False, "not a finite number"
    ok = _close(va, vb, rel_tol)
    return ok, "numeric match" if ok else "numeric mismatch"


_WIDE_SAMPLES = 3


def _expr_equal(a, b, rel_tol: float, sym_tol: float, samples: int = 6) -> tuple[bool, str]:
    import sympy

    if not (a.free_symbols or b.free_symbols):
        got = _numbers(a, b, rel_tol)
        if got is not None:
            return got
    names = sorted({s.name for s in a.free_symbols | b.free_symbols})
    syms = {n: sympy.Symbol(n, positive=True) for n in names}
    a = a.xreplace({s: syms[s.name] for s in a.free_symbols})
    b = b.xreplace({s: syms[s.name] for s in b.free_symbols})
    rng = random.Random(0)
    for _ in range(samples):
        point = {syms[n]: sympy.Float(rng.uniform(0.5, 2.5)) for n in names}
        try:
            va, vb = complex(a.evalf(20, subs=point)), complex(b.evalf(20, subs=point))
        except (TypeError, ValueError, ArithmeticError):
            break
        if not all(math.isfinite(z.real) and math.isfinite(z.imag) for z in (va, vb)):
            break
        if not _close(va, vb, sym_tol):
            return False, "symbolic mismatch (numeric sampling)"
    else:
        # points spread over four decades as well: a term that vanishes on [0.5, 2.5] only
        # (floor(l/10), exp(-1000 l), 1e-6 (l-1)^20, 1e-7 y) is not the reference
        for _ in range(_WIDE_SAMPLES):
            point = {syms[n]: sympy.Float(10 ** rng.uniform(-2, 2)) for n in names}
            try:
                va, vb = complex(a.evalf(20, subs=point)), complex(b.evalf(20, subs=point))
            except (TypeError, ValueError, ArithmeticError):
                continue
            if not all(math.isfinite(z.real) and math.isfinite(z.imag) for z in (va, vb)):
                continue
            if not _close(va, vb, sym_tol):
                return False, "symbolic mismatch (numeric sampling, wide range)"
        return True, "symbolic match (numeric sampling)"
    try:
        ok = sympy.simplify(a - b) == 0
    except (TypeError, ValueError, ArithmeticError, RecursionError, AttributeError):
        return False, "symbolic comparison failed"
    return ok, "symbolic match (simplify)" if ok else "symbolic mismatch (simplify)"


def _side_diff(r):
    """Relation -> (kind, lhs - rhs) with > and >= turned round (x < 3 and 3 > x are one relation)."""
    import sympy

    if isinstance(r, (sympy.StrictGreaterThan, sympy.GreaterThan)):
        return ("<" if isinstance(r, sympy.StrictGreaterThan) else "<="), r.rhs - r.lhs
    kind = {sympy.StrictLessThan: "<", sympy.LessThan: "<=", sympy.Equality: "=", sympy.Unequality: "!="}[type(r)]
    return kind, r.lhs - r.rhs


def _relation_equal(a, b, rel_tol, sym_tol) -> tuple[bool, str]:
    import sympy

    ka, da = _side_diff(a)
    kb, db = _side_diff(b)
    if ka != kb:
        return False, f"relation mismatch ({ka} vs {kb})"
    if da == 0 or db == 0:
        return False, "degenerate relation"
    ratio = sympy.simplify(da / db)  # one side-difference a constant multiple of the other
    if ratio.free_symbols:
        ok, why = _expr_equal(da, db, rel_tol, sym_tol)
        return ok, "relation " + why
    try:
        r = complex(ratio.evalf(15))
    except (TypeError, ValueError, ArithmeticError):
        return False, "relation comparison failed"
    if abs(r.imag) > _DEFAULT.zero_tol or r.real == 0:
        return False, "relation mismatch"
    ok = r.real > 0 or ka in ("=", "!=")
    return ok, "relation match" if ok else "relation mismatch (direction)"


def _collection(x):
    import sympy

    if isinstance(x, sympy.FiniteSet):
        return "set", list(x.args)
    if isinstance(x, sympy.Tuple):
        return "tuple", list(x.args)
    return None, None


def equivalent(a, b, rel_tol: float = _DEFAULT.rel_tol, sym_tol: float = _DEFAULT.sym_rel_tol) -> tuple[bool, str]:
    """(equal, reason) for two parsed answers (pred first, reference second)."""
    import sympy

    ka, ea = _collection(a)
    kb, eb = _collection(b)
    if ka or kb:
        if ka is None:
            ka, ea = "set", [a]
        if kb is None:
            kb, eb = "set", [b]
        if len(ea) != len(eb):
            return False, f"{kb} of {len(eb)} elements vs {len(ea)}"
        if ka == "tuple" and kb == "tuple":
            ok = all(equivalent(x, y, rel_tol, sym_tol)[0] for x, y in zip(ea, eb))
            return ok, "tuple match" if ok else "tuple mismatch"
        left = list(eb)
        for x in ea:  # unordered: each pred element matches a distinct reference element
            hit = next((i for i, y in enumerate(left) if equivalent(x, y, rel_tol, sym_tol)[0]), None)
            if hit is None:
                return False, "set mismatch"
            left.pop(hit)
        return True, "set match"
    if isinstance(a, sympy.Interval) or isinstance(b, sympy.Interval):
        if not (isinstance(a, sympy.Interval) and isinstance(b, sympy.Interval)):
            return False, "interval vs non-interval"
        if (a.left_open, a.right_open) != (b.left_open, b.right_open):
            return False, "interval openness mismatch"
        ok = all(x == y or (x.is_finite and y.is_finite and equivalent(x, y, rel_tol, sym_tol)[0])
                 for x, y in ((a.start, b.start), (a.end, b.end)))
        return ok, "interval match" if ok else "interval mismatch"
    ra, rb = isinstance(a, sympy.core.relational.Relational), isinstance(b, sympy.core.relational.Relational)
    if ra or rb:
        if not (ra and rb):
            return False, "relation vs expression"
        return _relation_equal(a, b, rel_tol, sym_tol)
    if not (isinstance(a, sympy.Expr) and isinstance(b, sympy.Expr)):
        return False, f"cannot compare {type(a).__name__} with {type(b).__name__}"
    return _expr_equal(a, b, rel_tol, sym_tol)


def constant_value(e) -> float:
    """Real value of a parsed constant expression (``\\frac{1}{2}``, ``2\\pi``); ParseError if none."""
    import sympy

    if not isinstance(e, sympy.Expr):
        raise ParseError("not a single value")
    if e.free_symbols:
        raise ParseError("expression has free symbols: " + ", ".join(sorted(s.name for s in e.free_symbols))[:100])
    try:
        v = complex(e.evalf(30))
    except (TypeError, ValueError, ArithmeticError):
        raise ParseError("expression does not evaluate to a number") from None
    if abs(v.imag) > _DEFAULT.zero_tol * max(1.0, abs(v.real)):  # a rounding residue, not a complex value
        raise ParseError("expression is complex")
    if not math.isfinite(v.real):
        raise ParseError("expression is not finite")
    return v.real
