"""Unit-aware answer checker (numeric / integer / mcq / mcq_multi). Never raises."""
from __future__ import annotations

import dataclasses
import functools
import math
import re
from dataclasses import dataclass

from verifiers.extract import extract_answer, extract_letters, _letters_in

MAX_LEN = 2000


@dataclass(frozen=True)
class CheckConfig:
    rel_tol: float = 1e-2
    abs_tol: float | None = None
    mode: str = "default"  # default | jeebench | jeebench_marks
    timeout_s: float = 5.0  # hard limit for a symbolic comparison (killable worker subprocess)
    isolate: bool = True  # False: run sympy in-process (no hard limit; for debugging only)


@dataclass(frozen=True)
class Verdict:
    equivalent: bool
    score: float
    reason: str
    kind: str
    pred_canonical: str | None = None
    ref_canonical: str | None = None

    def to_dict(self):
        return dataclasses.asdict(self)


_SUP = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")


_SIUNITX = {
    "kilo": "k", "mega": "M", "giga": "G", "milli": "m", "micro": "µ", "nano": "n", "pico": "p", "centi": "c",
    "metre": "m", "meter": "m", "gram": "g", "second": "s", "ampere": "A", "kelvin": "K", "mole": "mol",
    "newton": "N", "joule": "J", "watt": "W", "volt": "V", "ohm": "Ω", "coulomb": "C", "farad": "F",
    "henry": "H", "tesla": "T", "hertz": "Hz", "pascal": "Pa", "electronvolt": "eV", "litre": "L",
    "liter": "L", "degreeCelsius": "degC", "degree": "degree", "radian": "rad", "hour": "h", "minute": "min",
}


def _siunitx(unit: str) -> str:
    """`\\kilo\\gram\\per\\metre\\squared` -> `kg/m**2`."""
    out, denom = "", False
    for tok in re.findall(r"\\([a-zA-Z]+)|([^\\]+)", unit):
        name, lit = tok
        if lit:
            out += lit
        elif name == "per":
            out += "/"
            denom = True
        elif name == "squared":
            out += "**2"
        elif name == "cubed":
            out += "**3"
        elif name in _SIUNITX:
            if out and out[-1] not in "/*" and not out.endswith(tuple(_SIUNITX[p] for p in ("kilo", "mega", "giga", "milli", "micro", "nano", "pico", "centi"))):
                out += "*"
            out += _SIUNITX[name]
        else:
            out += "\\" + name
    return out.replace("*/", "/")


def _norm(s: str) -> str:
    s = s.strip().strip("$").replace("−", "-")
    s = re.sub(r"\\SI\{([^{}]*)\}\{([^{}]*)\}", lambda m: m.group(1) + " " + _siunitx(m.group(2)), s)
    s = re.sub(r"\\[,;:! ]", " ", s)
    s = re.sub(r"\^\s*\{([^{}]*)\}", r"**(\1)", s)
    for _ in range(4):
        s = re.sub(r"\\(?:mathrm|text|textrm|rm|mathit|operatorname|si|num)\s*\{([^{}]*)\}", r"\1", s)
    s = re.sub(r"\\[,;:!]|\\quad|\\qquad|~|\\displaystyle|\\left|\\right", " ", s)
    s = re.sub(r"\^\s*\{?\\circ\}?|\\circ|\\degree", "°", s)
    s = s.replace("\\mu", "µ").replace("\\Omega", "Ω").replace("\\AA", "Å").replace("\\%", "%")
    s = re.sub(r"\\cdot|\\times|×|·|⋅", "*", s)
    s = re.sub(r"([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda m: "**(" + m.group(1).translate(_SUP) + ")", s)
    s = re.sub(r"\^\s*\{([^{}]*)\}", r"**(\1)", s)
    s = re.sub(r"\^\s*(-?[\w.]+)", r"**(\1)", s)
    s = re.sub(r"°\s*C\b", " degC", s)
    s = re.sub(r"°\s*F\b", " degF", s)
    s = s.replace("°", " degree")
    s = re.sub(r"µ\s+(?=[A-Za-zΩ])", "µ", s)  # "\\mu F" -> "µF"
    s = re.sub(r"\bgauss\b|\bGs\b", "gauss_si", s)  # the SI-world gauss, 1e-4 T (pint's is CGS-Gaussian)
    s = re.sub(r"(?<=\d),(?=\d{3}\b)", "", s)
    return s.replace("{", "").replace("}", "").strip()


_NUM = re.compile(r"^\s*([-+]?)\s*(\d+(?:\.\d*)?|\.\d+)(?:\s*[eE]\s*([-+]?\d+))?")
_POW = re.compile(r"^\s*(?:\*|x)?\s*10\s*\*\*\s*\(?\s*([-+]?\d+)\s*\)?")


@functools.lru_cache(maxsize=4096)
def _parse_num(s: str):
    """-> (value, unit_str|None, percent) or raises ValueError with a reason."""
    if len(s) > MAX_LEN:
        raise ValueError("input too long")
    t = _norm(s)
    if "=" in t:
        t = t.split("=")[-1]
    if re.search(r"\*\*\s*\(?[^)]*\*\*", t):
        raise ValueError("exponent tower rejected")
    m = _NUM.match(t)
    if not m:
        raise ValueError("no number")
    sign, mant, e = m.groups()
    exp = int(e) if e else 0
    rest = t[m.end():]
    if mant == "10" and not e and re.match(r"^\s*\*\*", rest):
        mant, rest = "1", "*" + "10" + rest
    p = _POW.match(rest)
    if p:
        exp += int(p.group(1))
        rest = rest[p.end():]
    if abs(exp) > 300:
        raise ValueError("exponent too large")
    val = float(mant) * 10.0 ** exp * (-1 if sign == "-" else 1)
    rest = rest.strip().lstrip("*").strip()
    if rest == "%":
        return val / 100.0, None, True
    return val, (rest or None), False


def _quantity(val, unit):
    from r3bench.units import get_ureg, to_absolute
    u = get_ureg()
    if len(unit) > 100 or re.search(r"\d{3,}", unit):
        raise ValueError("unit rejected")
    if "\\" in unit or re.search(r"\bpi\b", unit):
        raise ValueError(f"unit {unit[:40]!r} not understood")
    import pint

    try:
        units = u.parse_units(unit)
    except (pint.errors.PintError, AttributeError, TypeError, SyntaxError, ValueError, KeyError):
        raise ValueError(f"unit {unit[:40]!r} not understood") from None
    return to_absolute(u.Quantity(val, units))


def _canon(q):
    b = q.to_base_units()
    return f"{b.magnitude:.6g} {b.units}"


def infer_kind(ref: str) -> str:
    r = (ref or "").strip()
    if re.fullmatch(r"\(?[A-Z]\)?", r):
        return "mcq"
    if _letters_in(r, "ABCDEFGH") and len(set(_letters_in(r, "ABCDEFGH"))) > 1:
        return "mcq_multi"
    if re.fullmatch(r"[-+]?\d+", r):
        return "integer"
    try:
        _, unit, _ = _parse_num(r)
    except ValueError:
        return "symbolic" if re.search(r"[\\^*/=_()]|\b[a-zA-Z]\b", r) else "text"
    if unit is None:
        return "numeric"
    try:
        _quantity(1.0, unit)
        return "numeric"
    except ValueError:
        # "2 \\pi \\sqrt{l/g}" starts with a number but is an expression; prose is text
        return "symbolic" if re.search(r"[\\^*/=_]", r) else "text"


def _score(ok, kind, cfg, answered=True):
    if cfg.mode == "jeebench_marks":
        if not answered:
            return 0.0
        return 3.0 if ok else -1.0
    return 1.0 if ok else 0.0


def _v(ok, kind, cfg, reason, pc=None, rc=None, answered=True):
    return Verdict(bool(ok), _score(ok, kind, cfg, answered), reason, kind, pc, rc)


def _close(p, r, cfg):
    if not (math.isfinite(p) and math.isfinite(r)):
        return False
    if cfg.mode in ("jeebench", "jeebench_marks"):
        return abs(p - r) <= 0.01
    if cfg.abs_tol is not None:
        return abs(p - r) <= cfg.abs_tol
    return abs(p - r) <= cfg.rel_tol * abs(r) if r != 0 else abs(p) <= 1e-12


def _check_mcq(pred, ref, kind, cfg):
    multi = kind == "mcq_multi"
    valid = "ABCDEFGH"
    g = frozenset(_letters_in(ref, valid) or [])
    got = extract_letters(pred, multi=multi, valid=valid)
    if not multi:
        if not got:
            several = extract_letters(pred, multi=True, valid=valid)
            if len(several) > 1:
                return _v(False, kind, cfg, "several letters chosen for a single-answer question",
                          "".join(sorted(several)), "".join(sorted(g)))
            return _v(False, kind, cfg, "no letter extracted", None, "".join(sorted(g)), answered=False)
        ok = frozenset(got) == g
        return _v(ok, kind, cfg, "letter match" if ok else "letter mismatch", got, "".join(sorted(g)))
    pc, rc = "".join(sorted(got)), "".join(sorted(g))
    if not got:
        return Verdict(False, 0.0, "no letters extracted", kind, None, rc)
    ok = got == g
    wrong = bool(got - g)
    if cfg.mode == "jeebench":
        sc = 1.0 if ok else (0.0 if wrong else 0.25 * len(got))
    elif cfg.mode == "jeebench_marks":
        sc = 4.0 if ok else (-2.0 if wrong else 1.0 * len(got))
    else:
        sc = 1.0 if ok else 0.0
    return Verdict(ok, sc, "exact set" if ok else ("wrong option chosen" if wrong else "partial set"), kind, pc, rc)


KINDS = ("numeric", "integer", "symbolic", "mcq", "mcq_multi", "text")


def check(pred, ref, kind=None, cfg: CheckConfig = CheckConfig()) -> Verdict:
    """Compare a raw model output with a reference answer.  Never raises on model output.

    kind: one of KINDS, or None to infer it from the reference.  The known failure modes of each
    kind return reasoned verdicts in their own code; the last guard below turns a checker bug into a
    recorded "internal error" verdict rather than a crashed eval or RL run.
    """
    if kind is not None and kind not in KINDS:
        return Verdict(False, 0.0, f"unknown kind {kind!r} (expected one of {', '.join(KINDS)})", str(kind))
    try:
        return _check(pred, ref, kind, cfg)
    except Exception as e:  # noqa: BLE001 - see docstring
        return Verdict(False, _score(False, kind or "?", cfg),
                       f"internal error: {type(e).__name__}: {str(e)[:80]}", kind or "unknown")


def canonical(pred, kind: str, ref: str | None = None):
    """A hashable canonical form of a raw model answer, for voting (maj@k); None when none is found.

    numeric/integer: (SI magnitude rounded to 4 significant figures, SI unit); a bare number is read
    in `ref`'s unit when a reference is given.  mcq/mcq_multi: the sorted letters.  Others: the
    normalised answer text.  Never raises.
    """
    try:
        if kind in ("mcq", "mcq_multi"):
            got = extract_letters(pred, multi=True, valid="ABCDEFGH")
            return "".join(sorted(got)) or None
        a = extract_answer(pred) if isinstance(pred, str) else None
        if not a or len(a) > MAX_LEN:
            return None
        if kind in ("numeric", "integer"):
            got = _pred_number(a, CheckConfig())
            if isinstance(got, str):
                return None
            v, u = got
            if u is None and ref is not None:
                try:
                    _, u, _ = _parse_num(str(ref))
                except ValueError:
                    u = None
            if u is not None:
                try:
                    q = _quantity(v, u).to_base_units()
                except ValueError:
                    return None
                v, unit = q.magnitude, str(q.units)
            else:
                unit = ""
            if not math.isfinite(v):
                return None
            return (float(f"{v:.4g}"), unit)
        return _text_norm(a) or None
    except Exception:  # noqa: BLE001 - a vote key is best effort
        return None


def _text_norm(s: str) -> str:
    return re.sub(r"[\s.,;:!\"'`*$]+", " ", s.casefold()).strip()


_LATEXISH = re.compile(r"\\[a-zA-Z]+|\^|\bsqrt\(|\bpi\b")


def _pred_number(a, cfg):
    """(value, unit|None) read off the extracted answer, or a reason string."""
    latexish = bool(_LATEXISH.search(a))
    try:
        v, u, _ = _parse_num(a)
    except ValueError as e:
        first_err = str(e)
    else:
        if u is None or not latexish:
            return v, u
        try:
            _quantity(1.0, u)
            return v, u
        except ValueError:
            c = _constant_value(a, cfg)  # "2\\pi": a number followed by a constant, not a unit
            return (c, None) if not isinstance(c, str) else (v, u)
    if latexish:
        c = _constant_value(a, cfg)
        if not isinstance(c, str):
            return c, None
    # the extracted text may be a sentence ("the temperature is 25 °C"): read from its last number
    for m in reversed(list(re.finditer(r"(?<![\w.{])[-+]?\d", a))):
        try:
            v, u, _ = _parse_num(a[m.start():])
            return v, u
        except ValueError:
            continue
    if not latexish:
        c = _constant_value(a, cfg)
        if not isinstance(c, str):
            return c, None
        return f"{first_err}; as an expression: {c}"
    return first_err


def _constant_value(a, cfg):
    """float for a constant LaTeX/sympy expression ("\\frac{1}{2}", "2\\pi"), else a reason string."""
    if not re.search(r"\d|\\pi", a) or len(a) > 300:
        return "no number"
    if cfg.isolate:
        from verifiers import worker
        try:
            r = worker.numeric_value(a, cfg.timeout_s)
        except worker.WorkerTimeout:
            return f"timeout after {cfg.timeout_s:g} s"
        except worker.WorkerError as err:
            return f"worker failed: {err}"
    else:
        from verifiers import symbolic, worker
        r = worker._value(symbolic.parse_expr, a)
    return r["error"] if "error" in r else r["value"]


def _check_symbolic(a, ref, kind, cfg):
    if not cfg.isolate:
        from verifiers import symbolic
        try:
            pe, re_ = symbolic.parse_expr(a), symbolic.parse_expr(ref)
        except ValueError as e:
            return _v(False, kind, cfg, f"unparseable: {e}", a, ref)
        ok, why = symbolic.equivalent(pe, re_)
        return _v(ok, kind, cfg, why, str(pe), str(re_))
    from verifiers import worker
    try:
        r = worker.symbolic_compare(a, ref, cfg.timeout_s)
    except worker.WorkerTimeout:
        return _v(False, kind, cfg, f"timeout: symbolic comparison exceeded {cfg.timeout_s:g} s", a, ref)
    except worker.WorkerError as e:
        return _v(False, kind, cfg, f"symbolic worker failed: {e}", a, ref)
    return _v(r["ok"], kind, cfg, r["why"], r.get("pc"), r.get("rc"))


def _check(pred, ref, kind, cfg):
    ref = str(ref)
    kind = kind or infer_kind(ref)
    if kind in ("mcq", "mcq_multi"):
        return _check_mcq(pred, ref, kind, cfg)
    a = extract_answer(pred) if isinstance(pred, str) else None
    if a is None:
        return _v(False, kind, cfg, "no answer extracted", answered=False)
    if len(a) > MAX_LEN:
        return _v(False, kind, cfg, "input too long")
    if kind == "symbolic":
        return _check_symbolic(a, ref, kind, cfg)
    if kind == "text":
        ok = _text_norm(a) == _text_norm(ref)
        return _v(ok, kind, cfg, "text match" if ok else "text mismatch", _text_norm(a)[:200], _text_norm(ref)[:200])
    got = _pred_number(a, cfg)
    if isinstance(got, str):
        return _v(False, kind, cfg, f"pred unparseable: {got}", a, ref)
    pv, pu = got
    try:
        rv, ru, _ = _parse_num(ref)
    except ValueError as e:
        return _v(False, kind, cfg, f"reference unparseable as {kind}: {e}", a, ref)
    if kind == "integer":
        ok = (abs(pv - rv) <= 0.01) if cfg.mode != "default" else abs(pv - rv) < 1e-9
        return _v(ok, kind, cfg, "integer match" if ok else "integer mismatch", repr(pv), repr(rv))
    if ru is None:
        ok = _close(pv, rv, cfg)
        return _v(ok, kind, cfg, "numeric match" if ok else "numeric mismatch", repr(pv), repr(rv))
    try:
        rq = _quantity(rv, ru)
    except ValueError as e:
        return _v(False, kind, cfg, f"reference {e}", a, ref)
    cands = []
    try:
        if pu is None:
            # a bare number is read in the reference's unit, except against an angle: radians
            cands.append(_quantity(pv, "radian") if rq.dimensionless else _quantity(pv, ru))
        else:
            try:
                cands.append(_quantity(pv, pu))
            except ValueError:
                if " " not in pu.strip():
                    raise
                # "1.2 mA in the wire": the unit is the first word after the number
                cands.append(_quantity(pv, pu.split()[0]))
    except ValueError as e:
        return _v(False, kind, cfg, f"pred {e}", a, _canon(rq))
    for pq in cands:
        if pq.dimensionality != rq.dimensionality:
            return _v(False, kind, cfg, f"dimension mismatch: {pq.dimensionality} vs {rq.dimensionality}", _canon(pq), _canon(rq))
        if _close(pq.to(rq.units).magnitude, rq.magnitude, cfg):
            return _v(True, kind, cfg, "numeric match", _canon(pq), _canon(rq))
    return _v(False, kind, cfg, "numeric mismatch", _canon(cands[0]), _canon(rq))
