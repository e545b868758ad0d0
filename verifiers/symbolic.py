"""Symbolic answer equivalence: LaTeX (math-verify's latex2sympy2_extended) or sympy syntax.

Equivalence is tested by simplification of the difference, with a numeric-sampling fallback
(random positive values for the free symbols). Symbol names are normalised so that `\\epsilon_0`,
`epsilon_0` and `epsilon_{0}` are one symbol.
"""
from __future__ import annotations

import random
import re

MAX_LEN = 500


def _norm_name(name: str) -> str:
    return re.sub(r"[\\{}\s]", "", name)


def parse_expr(text: str):
    """Parse LaTeX or sympy syntax to a sympy expression with normalised symbol names (or raise ValueError)."""
    import sympy

    s = text.strip().strip("$")
    if len(s) > MAX_LEN:
        raise ValueError("expression too long")
    if re.search(r"\^\s*\{?[^}]*\^", s) or re.search(r"\*\*[^*]*\*\*", s):
        raise ValueError("exponent tower rejected")
    if "=" in s:
        s = s.split("=")[-1]
    expr = None
    if "\\" in s or "{" in s or "^" in s:
        from latex2sympy2_extended import latex2sympy
        from latex2sympy2_extended.latex2sympy2 import ConversionConfig

        try:
            # physics symbols are case-sensitive (G vs g, M vs m): keep case
            expr = latex2sympy(s, conversion_config=ConversionConfig(lowercase_symbols=False))
        except Exception as e:  # the parser raises many types; report as unparseable
            raise ValueError(f"latex parse failed: {type(e).__name__}") from None
    else:
        from sympy.parsing.sympy_parser import (convert_xor, implicit_multiplication_application,
                                                parse_expr as _pe, standard_transformations)
        try:
            expr = _pe(s, transformations=standard_transformations + (implicit_multiplication_application, convert_xor),
                       evaluate=True)
        except Exception as e:  # sympy's parser raises SyntaxError, TokenError, TypeError...
            raise ValueError(f"sympy parse failed: {type(e).__name__}") from None
    if not isinstance(expr, sympy.Basic):
        raise ValueError("not an expression")
    subs = {sym: sympy.Symbol(_norm_name(sym.name), positive=True) for sym in expr.free_symbols}
    return expr.xreplace(subs)


def equivalent(a, b, samples: int = 6, tol: float = 1e-6) -> tuple[bool, str]:
    """(equal, reason) for two sympy expressions: numeric sampling first, then simplify."""
    import sympy

    names = sorted({s.name for s in a.free_symbols | b.free_symbols})
    syms = {n: sympy.Symbol(n, positive=True) for n in names}
    a = a.xreplace({s: syms[s.name] for s in a.free_symbols})
    b = b.xreplace({s: syms[s.name] for s in b.free_symbols})
    rng = random.Random(0)
    for _ in range(samples):
        point = {syms[n]: sympy.Float(rng.uniform(0.5, 2.5)) for n in names}
        try:
            va, vb = complex(a.evalf(subs=point)), complex(b.evalf(subs=point))
        except (TypeError, ValueError, ZeroDivisionError):
            break
        if abs(va - vb) > tol * max(1.0, abs(vb)):
            return False, "symbolic mismatch (numeric sampling)"
    else:
        return True, "symbolic match (numeric sampling)"
    try:
        return (sympy.simplify(a - b) == 0), "symbolic match (simplify)"
    except (TypeError, ValueError, RecursionError):
        return False, "symbolic comparison failed"
