"""Plain-text math expressions parsed as data, never executed.

Model output and data files reach the checker and the step verifier as text. This module turns a
calculator-style expression (``2*pi*sqrt(l/g)``, ``1.5E+8``, ``x^2 - 3x``) into a sympy object or a
float *without* ``eval``, ``exec``, ``sympify`` or ``parse_expr`` (sympy's parsers call ``eval``):

1. a tokenizer accepts only numbers, ASCII names, ``+ - * / ^ ** ( ) ,`` and spaces, and inserts the
   implicit multiplications (``2x``, ``2 pi``, ``2(x+1)``, ``(a)(b)``, ``m g h``, ``x(y+1)``);
2. ``ast.parse(mode="eval")`` builds a syntax tree from the rebuilt token string (parsing runs no
   code);
3. a walk over a whitelist of node types (number constants, names, unary +/-, + - * / **, calls of
   the whitelisted functions with one positional argument) builds the result directly.

Everything else is refused with :class:`ExprError` and a reason: attributes, subscripts, lambdas,
comprehensions, strings, keywords such as ``if``/``lambda``, dunder names, unknown characters,
exponent towers that would build huge numbers, more than ``max_len`` characters, deep nesting.

Implicit multiplication: a function name must be followed by ``(`` (``sin x`` is refused); any other
name followed by ``(`` is a product (``m(g+a)`` is ``m*(g+a)``), as a calculator would read it.
``^`` is power (as in LaTeX and calculators), never XOR.

>>> parse("2 pi sqrt(l/g)")
2*pi*sqrt(l/g)
>>> evaluate("v^2/(2*g)", {"v": 3.0, "g": 9.81})  # doctest: +ELLIPSIS
0.458...
"""
from __future__ import annotations

import ast
import math
import re
from typing import Any, Callable, Iterable, Mapping

__all__ = ["ExprError", "parse", "evaluate", "evaluate_objects", "FUNCTIONS", "CONSTANTS"]

MAX_DEPTH = 300         # syntax-tree depth (long sums are left-nested chains)
MAX_PARENS = 30         # nesting of parentheses
MAX_EXPONENT = 1000     # |numeric exponent| allowed on a symbolic base
MAX_DIGITS = 5000       # decimal digits a number built from number ** number may reach
MAX_LITERAL_EXP = 400   # |e| in a literal such as 1e-400

FUNCTIONS = ("sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "arcsin", "arccos", "arctan",
             "exp", "log", "ln", "abs")
CONSTANTS = ("pi", "e")

# unicode look-alikes models write; mapped before tokenising (everything else non-ASCII is refused)
_CHARS = {"\u2212": "-", "\u00d7": "*", "\u22c5": "*", "\u00b7": "*", "\u03c0": "pi", "\u2013": "-"}

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<op>\*\*|//|[-+*/^(),])
""", re.VERBOSE)


class ExprError(ValueError):
    """The text is not an expression of the whitelisted grammar (the message says why)."""


def _tokens(text: str, max_len: int) -> list[tuple[str, str]]:
    if not isinstance(text, str):
        raise ExprError("not a string")
    if len(text) > max_len:
        raise ExprError(f"expression longer than {max_len} characters")
    for k, v in _CHARS.items():
        text = text.replace(k, v)
    out: list[tuple[str, str]] = []
    pos = 0
    depth = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ExprError(f"character not allowed: {text[pos]!r}")
        pos = m.end()
        kind = m.lastgroup
        tok = m.group()
        if kind == "ws":
            out.append(("ws", " "))
            continue
        if kind == "name" and tok.startswith("__"):
            raise ExprError(f"name not allowed: {tok}")
        if kind == "op" and tok == "//":
            raise ExprError("operator not allowed: //")
        if tok == "(":
            depth += 1
            if depth > MAX_PARENS:
                raise ExprError("nesting too deep")
        elif tok == ")":
            depth -= 1
        out.append((kind, tok))
    return out


def _is_atom_end(kind: str, tok: str) -> bool:
    return kind in ("num", "name") or tok == ")"


def _is_atom_start(kind: str, tok: str) -> bool:
    return kind in ("num", "name") or tok == "("


def _rebuild(text: str, max_len: int) -> str:
    """Token string with explicit '*' for implicit products and '**' for '^'."""
    toks = _tokens(text, max_len)
    parts: list[str] = []
    prev: tuple[str, str] | None = None
    for kind, tok in toks:
        if kind == "ws":
            continue
        if prev is not None and _is_atom_end(*prev) and _is_atom_start(kind, tok):
            pk, pt = prev
            if pk == "name" and pt in FUNCTIONS:
                if tok != "(":
                    raise ExprError(f"function {pt} needs parentheses")
            elif kind == "num" and pk == "num":
                raise ExprError("two numbers side by side")
            else:
                parts.append("*")
        if prev is not None and prev[0] == "name" and prev[1] in FUNCTIONS and tok != "(":
            raise ExprError(f"function {prev[1]} needs parentheses")
        parts.append("**" if tok == "^" else tok)
        prev = (kind, tok)
    if prev is not None and prev[0] == "name" and prev[1] in FUNCTIONS:
        raise ExprError(f"function {prev[1]} needs parentheses")
    if not parts:
        raise ExprError("empty expression")
    return " ".join(parts)


def _tree(text: str, max_len: int) -> tuple[ast.AST, str]:
    src = _rebuild(text, max_len)
    try:
        tree = ast.parse(src, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError) as e:
        raise ExprError(f"syntax error ({type(e).__name__})") from None
    # depth check without recursion, before the recursive walk
    stack = [(tree.body, 1)]
    while stack:
        node, d = stack.pop()
        if d > MAX_DEPTH:
            raise ExprError("nesting too deep")
        stack.extend((c, d + 1) for c in ast.iter_child_nodes(node))
    return tree.body, src


class _Ops:
    """Leaf and operator callbacks for one target (sympy objects or floats)."""

    def num(self, literal: str): ...
    def name(self, ident: str): ...
    def call(self, fname: str, arg): ...
    def neg(self, a): return -a
    def add(self, a, b): return a + b
    def sub(self, a, b): return a - b
    def mul(self, a, b): return a * b
    def div(self, a, b): return a / b
    def pow(self, a, b): return a ** b


def _check_literal(lit: str) -> None:
    m = re.search(r"[eE]([+-]?\d+)$", lit)
    if m and abs(int(m.group(1))) > MAX_LITERAL_EXP:
        raise ExprError(f"exponent of literal {lit} out of range")


def _walk(node: ast.AST, src: str, ops: _Ops):
    if isinstance(node, ast.Constant):
        if type(node.value) not in (int, float):
            raise ExprError(f"constant not allowed: {type(node.value).__name__}")
        lit = ast.get_source_segment(src, node) or repr(node.value)
        _check_literal(lit)
        return ops.num(lit)
    if isinstance(node, ast.Name):
        return ops.name(node.id)
    if isinstance(node, ast.UnaryOp):
        v = _walk(node.operand, src, ops)
        if isinstance(node.op, ast.USub):
            return ops.neg(v)
        if isinstance(node.op, ast.UAdd):
            return v
        raise ExprError(f"operator not allowed: {type(node.op).__name__}")
    if isinstance(node, ast.BinOp):
        fn = {ast.Add: ops.add, ast.Sub: ops.sub, ast.Mult: ops.mul, ast.Div: ops.div,
              ast.Pow: ops.pow}.get(type(node.op))
        if fn is None:
            raise ExprError(f"operator not allowed: {type(node.op).__name__}")
        return fn(_walk(node.left, src, ops), _walk(node.right, src, ops))
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise ExprError("call of a non-whitelisted function")
        if node.keywords or len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
            raise ExprError(f"{node.func.id} takes exactly one argument")
        return ops.call(node.func.id, _walk(node.args[0], src, ops))
    raise ExprError(f"syntax not allowed: {type(node).__name__}")


# ---------------------------------------------------------------- sympy target
class _SympyOps(_Ops):
    def __init__(self, symbols: Iterable[str] | None):
        import sympy

        self.sp = sympy
        self.allowed = None if symbols is None else set(symbols)
        self.funcs = {"sqrt": sympy.sqrt, "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan,
                      "asin": sympy.asin, "acos": sympy.acos, "atan": sympy.atan, "arcsin": sympy.asin,
                      "arccos": sympy.acos, "arctan": sympy.atan, "exp": sympy.exp, "log": sympy.log,
                      "ln": sympy.log, "abs": sympy.Abs}

    def num(self, lit):
        sp = self.sp
        if re.fullmatch(r"\d+", lit):
            return sp.Integer(int(lit))
        return sp.Rational(lit)  # exact decimal: 0.5 -> 1/2, 1.5E+8 -> 150000000

    def name(self, ident):
        sp = self.sp
        if self.allowed is not None and ident in self.allowed:
            return sp.Symbol(ident)
        if ident == "pi":
            return sp.pi
        if ident == "e":
            return sp.E
        if ident in FUNCTIONS:
            raise ExprError(f"function {ident} used as a value")
        if self.allowed is not None:
            raise ExprError(f"unknown name: {ident}")
        return sp.Symbol(ident)

    def call(self, fname, arg):
        return self.funcs[fname](arg)

    def _digits(self, x) -> float:
        """Decimal digits of a sympy number (numerator or denominator, whichever is longer)."""
        sp = self.sp
        if isinstance(x, sp.Rational):
            return max(abs(x.p).bit_length(), abs(x.q).bit_length()) * 0.30103
        try:
            v = abs(complex(x.evalf(15)))
        except (TypeError, ValueError):
            return float("inf")
        return abs(math.log10(v)) if v > 0 else 0.0

    def pow(self, a, b):
        sp = self.sp
        if b.is_number:
            try:
                bv = abs(complex(b.evalf(15)))
            except (TypeError, ValueError):
                raise ExprError("exponent cannot be evaluated") from None
            if a.is_number:
                if bv * max(self._digits(a), 1.0) > MAX_DIGITS:
                    raise ExprError("power too large")
            elif bv > MAX_EXPONENT:
                raise ExprError("exponent too large")
        elif a.is_number and a not in (sp.E,) and self._digits(a) > MAX_EXPONENT:
            raise ExprError("base too large for a symbolic exponent")
        return a ** b


def parse(text: str, *, symbols: Iterable[str] | None = None, max_len: int = 500):
    """Parse a plain-text expression into a sympy expression, never evaluating the text as code.

    ``symbols``: when given, the only names allowed besides ``pi`` and ``e`` (a name in ``symbols``
    wins over the constant, so ``symbols=["e"]`` makes ``e`` a symbol). When None, every ASCII name
    that is not a dunder becomes a ``sympy.Symbol``.

    Raises :class:`ExprError` for anything outside the grammar and for results that are not finite
    (``1/0``). Symbols are created without assumptions; callers normalise them as they need.

    >>> parse("1.5E+8 * x^2")
    150000000*x**2
    """
    import sympy

    node, src = _tree(text, max_len)
    try:
        expr = _walk(node, src, _SympyOps(symbols))
    except ExprError:
        raise
    except (ArithmeticError, TypeError, ValueError, RecursionError, MemoryError) as e:
        raise ExprError(f"cannot build expression ({type(e).__name__})") from None
    if not isinstance(expr, sympy.Expr):
        raise ExprError("not an expression")
    if expr.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        raise ExprError("expression is not finite")
    return expr


# ---------------------------------------------------------------- float target
class _ObjOps(_Ops):
    def __init__(self, env: Mapping[str, Any], funcs: Mapping[str, Callable]):
        self.env = env
        self.funcs = funcs

    def num(self, lit):
        return float(lit)

    def name(self, ident):
        if ident in self.env:
            return self.env[ident]
        if ident == "pi":
            return math.pi
        if ident == "e":
            return math.e
        raise ExprError(f"unknown name: {ident}")

    def call(self, fname, arg):
        return self.funcs[fname](arg)


_MATH = {"sqrt": math.sqrt, "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin,
         "acos": math.acos, "atan": math.atan, "arcsin": math.asin, "arccos": math.acos,
         "arctan": math.atan, "exp": math.exp, "log": math.log, "ln": math.log, "abs": math.fabs}


def evaluate_objects(text: str, env: Mapping[str, Any], funcs: Mapping[str, Callable] | None = None,
                     *, max_len: int = 500):
    """Evaluate the same grammar over arbitrary objects (e.g. pint quantities for a dimension check).

    Numbers become floats, names are looked up in ``env`` (then ``pi``, ``e``), functions in
    ``funcs`` (default: the math module's). Exceptions raised by the objects' own operators
    propagate unchanged (a pint DimensionalityError is an answer, not a parse failure); only
    grammar violations raise :class:`ExprError`.
    """
    node, src = _tree(text, max_len)
    f = dict(_MATH)
    if funcs:
        f.update({k: v for k, v in funcs.items() if k in FUNCTIONS})
    return _walk(node, src, _ObjOps(env, f))


def evaluate(text: str, env: Mapping[str, float], *, max_len: int = 500) -> float:
    """Evaluate a plain-text expression with floats (math module); names must be in ``env`` or be
    ``pi`` / ``e``. Overflow, division by zero, domain errors, complex or non-finite results raise
    :class:`ExprError`; nothing else escapes.

    >>> evaluate("2 pi sqrt(l/g)", {"l": 1.0, "g": 9.81})  # doctest: +ELLIPSIS
    2.006...
    """
    for k, v in env.items():
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            raise ExprError(f"value of {k} is not a number")
    try:
        v = evaluate_objects(text, {k: float(v) for k, v in env.items()}, max_len=max_len)
    except ExprError:
        raise
    except OverflowError:
        raise ExprError("overflow") from None
    except ZeroDivisionError:
        raise ExprError("division by zero") from None
    except (ValueError, TypeError) as e:  # math domain error; complex ** results then used in math
        raise ExprError(f"math error ({type(e).__name__}: {e})") from None
    if isinstance(v, complex):
        raise ExprError("complex result")
    if not isinstance(v, float) or not math.isfinite(v):
        raise ExprError("result is not a finite number")
    return v
