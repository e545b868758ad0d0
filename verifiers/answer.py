"""Unit-aware answer checker (numeric / integer / symbolic / mcq / mcq_multi / text). Never raises.

Model output is data: nothing here evaluates it. Numbers and units are read with regular
expressions and pint's unit parser; constant expressions in plain text with
:mod:`verifiers.safeexpr`; LaTeX and symbolic answers with :mod:`verifiers.symbolic`
(latex2sympy2_extended), inside the isolated worker pool of :mod:`verifiers.worker`.

Graders followed: JEEBench's official ``compute_metrics.py`` (dair-iitd/jeebench, ``compute_score``)
for the ``jeebench`` mode; math-verify's conventions (huggingface/Math-Verify) for percent,
thousands separators, relations and sets.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import re
import threading
import time
import tokenize
from dataclasses import dataclass

from verifiers import safeexpr, symbolic, worker
from verifiers.config import CheckConfig
from verifiers.extract import (CONDITION_VAR, CORRECTION, FINALLY, NUMBER_WORD, answer_sentence, clean_answer, SENT_END, collapse_space,
                               digit_notations,
                               extract_boxed, last_boxed, letters_in, listed_options, number_words, prepare, qualified_after, read_answer,
                               read_letters, statements)
from verifiers.units import get_ureg, to_absolute

MAX_LEN = 2000


@dataclass(frozen=True)
class Verdict:
    equivalent: bool
    score: float
    reason: str
    kind: str
    pred_canonical: str | None = None
    ref_canonical: str | None = None
    answer: str | None = None  # the committed answer read from the output (None when none was read)

    def to_dict(self):
        return dataclasses.asdict(self)


def close(a: float, b: float, cfg: CheckConfig = CheckConfig()) -> bool:
    """The checker's numeric equality, for every caller that compares numbers (step verifier, rewards).

    Finite numbers only. jeebench modes: |a - b| <= cfg.jee_abs_tol (JEEBench compute_metrics.py);
    abs_tol set: |a - b| <= abs_tol; otherwise |a - b| <= rel_tol * max(|a|, |b|), or, when one of
    them is 0, |a - b| <= zero_tol (physics values of 1e-19 are compared relatively, never absolutely).

    >>> close(12.4, 12.5), close(13.0, 12.5)
    (True, False)
    """
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError, OverflowError):
        return False
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    if cfg.mode in ("jeebench", "jeebench_marks"):
        return abs(a - b) <= cfg.jee_abs_tol  # exactly the official float comparison
    if cfg.abs_tol is not None:
        return abs(a - b) <= cfg.abs_tol
    if a == 0 or b == 0:  # no scale to be relative to; only here does an absolute floor apply
        return abs(a - b) <= cfg.zero_tol
    return math.isclose(a, b, rel_tol=cfg.rel_tol)


# minus signs and dashes that models write for "-": "–5" is -5, never 5, and "5–6 m/s" is a range
# (refused as a hedge); a dash before a space is punctuation ("Speed — 5 m/s")
_DASH = re.compile("[\u2212\u2010\u2011\u2012\u2013\u2014\u2015\ufe63\uff0d](?=\\.?\\d)|\u2212")
_DASH_PUNCT = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\ufe63\uff0d]")
_SUP = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SIUNITX = {
    "kilo": "k", "mega": "M", "giga": "G", "milli": "m", "micro": "µ", "nano": "n", "pico": "p", "centi": "c",
    "metre": "m", "meter": "m", "gram": "g", "second": "s", "ampere": "A", "kelvin": "K", "mole": "mol",
    "newton": "N", "joule": "J", "watt": "W", "volt": "V", "ohm": "Ω", "coulomb": "C", "farad": "F",
    "henry": "H", "tesla": "T", "hertz": "Hz", "pascal": "Pa", "electronvolt": "eV", "litre": "L",
    "liter": "L", "degreeCelsius": "degC", "degree": "degree", "radian": "rad", "hour": "h", "minute": "min",
}
_PREFIXES = tuple(_SIUNITX[p] for p in ("kilo", "mega", "giga", "milli", "micro", "nano", "pico", "centi"))


def _siunitx(unit: str) -> str:
    """`\\kilo\\gram\\per\\metre\\squared` -> `kg/m**2`."""
    out = ""
    for name, lit in re.findall(r"\\([a-zA-Z]+)|([^\\]+)", unit):
        if lit:
            out += lit
        elif name == "per":
            out += "/"
        elif name in ("squared", "cubed"):
            out += "**2" if name == "squared" else "**3"
        elif name in _SIUNITX:
            if out and out[-1] not in "/*" and not out.endswith(_PREFIXES):
                out += "*"
            out += _SIUNITX[name]
        else:
            out += "\\" + name
    return out.replace("*/", "/")


def _thousands(s: str) -> str:
    """1,200 -> 1200 and 1{,}200 / 1\\,200 -> 1200 (groups of three); 1000,99 / 0,111 -> decimal comma
    (math-verify tests/test_all.py test_number_extraction)."""
    # "1.234,5": points between groups of three and a decimal comma (the German/European writing)
    s = re.sub(r"(?<![\d.,])([1-9]\d{0,2})((?:\.\d{3})+),(\d+)(?![\d.,])",
               lambda m: m.group(1) + m.group(2).replace(".", "") + "." + m.group(3), s)
    s = re.sub(r"(?<![\d.,])([1-9]\d{0,2})((?:,\d{3})+)(?![\d,])", lambda m: m.group(1) + m.group(2).replace(",", ""), s)
    if re.fullmatch(r"[-+]?[1-9]\d{0,2}(?: \d{3})+(?:\.\d+)?", s.strip()):
        s = s.replace(" ", "")  # "1 000" (math-verify test_number_extraction), as the whole answer
    # "1 200 J", "12 000 J.": groups of three before a unit or the end, never "5 6" (a list)
    s = re.sub(r"(?<![\d.,])([1-9]\d{0,2})((?: \d{3})+)(?![\d.,]| \d)(?=\s?(?:[A-Za-zµΩ°]|$|[.;]\s|[.;]$))",
               lambda m: m.group(1) + m.group(2).replace(" ", ""), s)
    return re.sub(r"(?<![\d.,])(\d+),(\d{1,2}|(?<=\b0,)\d+)(?![\d,])", r"\1.\2", s)


_UNICODE_UNITS = str.maketrans({"\u2103": "°C", "\u2109": "°F", "\u212a": "K", "\u2126": "Ω", "\u212b": "Å",
                                "\u03bc": "µ", "\u2219": "*", "\u2022": "*", "\u00f7": "/"})


def _siunitx_all(s: str) -> str:
    """\\qty{5}{\\meter\\per\\second} / \\SI{..}{..} -> "5 m/s"; \\si{\\meter} -> "m"; \\num{5} -> 5."""
    s = re.sub(r"\\(?:SI|qty|SIrange|quantity)\s?\{([^{}]*)\}\s?\{([^{}]*)\}", lambda m: m.group(1) + " " + _siunitx(m.group(2)), s)
    return re.sub(r"\\(?:si|unit)\s?\{([^{}]*)\}", lambda m: " " + _siunitx(m.group(1)), s)


_SIGNED_UNITS = re.compile(r"(\d\s)((?:[A-Za-zµΩ]{1,3}(?:[-+]\d)?\s){0,4}[A-Za-zµΩ]{1,3}[-+]\d)(?![\w.*^/])")
_SIGNED_EXP = re.compile(r"([A-Za-zµΩ]{1,3})([-+]\d)")


def _unit_spellings(s: str) -> str:
    """Unit spellings models write that pint does not read as meant: "5 ms^-1" is m/s (never per
    millisecond), "36 kmph", "4 Nm", "3 Kg", "72 Km/h", "J/kgK", "5 G" (gauss), "1 AU", "light-year"."""
    s = re.sub(r"\b(k?m)s(?=\s?\*\*\s?\(\s?-)", r"\1 s", s)
    s = re.sub(r"\bkmph\b|\bkmhr\b", "km/h", s)
    s = re.sub(r"\bNm\b", "N*m", s)
    s = re.sub(r"\bkgm\b(?!\*\*)", "kg*m", s)
    s = re.sub(r"\bK(?=(?:g|m|J|W|N|Hz|V|Pa|mol|cal|eV)\b)", "k", s)
    s = re.sub(r"/\s?(kg|g|mol)\s?\*?\s?K\b", r"/(\1*K)", s)
    s = re.sub(r"(?<=\d)\s?G(?=\s*$|[\s.,;)])", " gauss_si", s)
    s = re.sub(r"\bAU\b", "astronomical_unit", s)
    s = re.sub(r"\blight[- ]years?\b", "light_year", s)
    # "kg/m3", "g/cm3", "0.25 m3": a length unit with a bare 2 or 3 is its square or cube
    s = re.sub(r"(?<![\w.])((?:[kcmµu]?m))([23])(?![\w.^*])", r"\1**(\2)", s)
    # "5 m s-1", "9.8 m s-2", "1000 kg m-3", "8.3 J mol-1 K-1": units written with signed exponents after a
    # space (the exponent of each unit of the run, never "5 - 1")
    s = _SIGNED_UNITS.sub(lambda m: m.group(1) + _SIGNED_EXP.sub(r"\1**(\2)", m.group(2)), s)
    s = re.sub(r"\bmins\b", "min", s)
    s = re.sub(r"\bsecs?\b", "s", s)
    return re.sub(r"\bhrs\b", "h", s)


_VULGAR = {"½": "1/2", "⅓": "1/3", "⅔": "2/3", "¼": "1/4", "¾": "3/4", "⅕": "1/5", "⅖": "2/5", "⅗": "3/5", "⅘": "4/5",
           "⅙": "1/6", "⅚": "5/6", "⅛": "1/8", "⅜": "3/8", "⅝": "5/8", "⅞": "7/8"}
_VULGAR_RE = re.compile(r"(\d?)([" + "".join(_VULGAR) + "])")


def _fractions(s: str, grouped: bool = False) -> str:
    """Unicode fractions: "½" is 1/2, "1¾" the mixed number (1+3/4), "2⁄3" (a fraction slash) 2/3.
    grouped: a lone one as a parenthesised quotient too ("¾L" is (3/4)·L, never 3/(4L))."""
    s = s.replace("\u2044", "/")
    return _VULGAR_RE.sub(lambda m: f"({m.group(1)}+{_VULGAR[m.group(2)]})" if m.group(1) else
                          f"({_VULGAR[m.group(2)]})" if grouped else _VULGAR[m.group(2)], s)


# a unit in square brackets after a number (an engineering convention): never an interval ("[2, 4]" has a
# comma and starts with a digit) or an option list
_BRACKET_UNIT = re.compile(r"(?<=\d)\s?\[\s?([A-Za-zµΩ°%][^\[\],;=\n]{0,30}?)\s?\]")


def _norm(s: str) -> str:
    s = _fractions(collapse_space(s).translate(_UNICODE_UNITS))
    s = re.sub(r"\^\s*\{\s*\\circ\s*\}", "°", s)  # 25^{\circ}\mathrm{C}: a degree sign, never a power
    s = _siunitx_all(s)
    s = re.sub(r"(?<=\d)\s?[xX]\s?(?=10\s?(?:\^|\*\*))", "*", s)  # 1.2 X 10^-3, 1.6x10^-19
    s = re.sub(r"(?<=10)\s?\^\s?(?=\(\s?[-+]?\d)", "**", s)  # 10^(-19): a parenthesised exponent
    s = re.sub(r"(?<=\d)!", " factorial", s)  # 3! is no 3
    s = re.sub(r"(?<=\d)\.\.+(?=\s?\d)", " .. ", s)  # 2..5 is a range
    s = re.sub(r"(?<![\d.,/])(\d+) (\d+)/(\d+)(?![\d./])", r"(\1+\2/\3)", s)  # a mixed number, 1 1/2
    s = s.replace("\\$", " ").replace("$", " ").strip()  # math delimiters and currency
    s = _DASH_PUNCT.sub(" - ", _DASH.sub("-", s)).strip()
    s = re.sub(r",\s*\\!\s*", ",", s.replace("{,}", ",")).replace("\\!", "")
    s = re.sub(r"(?<=\d)\\[,;: ](?=\d{3}\b)", "", s)  # 12\,000
    s = re.sub(r"\\SI\{([^{}]*)\}\{([^{}]*)\}", lambda m: m.group(1) + " " + _siunitx(m.group(2)), s)
    s = re.sub(r"\\[,;:! ]", " ", s)
    s = _BRACKET_UNIT.sub(r" \1", s)  # "9.90 [m/s]", "9.90\ [m/s]": the unit in square brackets
    for _ in range(4):
        s = re.sub(r"\^\s*\{([^{}]*)\}", r"**(\1)", s)
    for _ in range(4):
        s = re.sub(r"\\(?:mathrm|text|textrm|textnormal|textbf|rm|mathit|operatorname|si|num|mbox|mathbf|boldsymbol|bm|"
                   r"textit|emph|mathsf)\s*\{([^{}]*)\}",
                   r" \1", s)
    # a unit written as a fraction: 5 \frac{\text{km}}{\text{s}} is 5 km/s, never a bare 5 read in the
    # reference's unit (\frac{3}{4}, with no letter, is left to the expression reader)
    s = re.sub(r"\\[dt]?frac\s*\{([^{}]*[A-Za-zµΩ][^{}]*|\s*1\s*)\}\s*\{([^{}]*[A-Za-zµΩ][^{}]*)\}", r" (\1)/(\2)", s)
    s = re.sub(r"\{\s*\\(?:rm|mathrm|text)\s+([^{}]*)\}", r" \1", s)  # {\rm km/s}
    s = re.sub(r"(?:\\quad|\\qquad|\\displaystyle|\\left|\\right)(?![a-zA-Z])|~", " ", s)  # not \\rightarrow
    s = re.sub(r"\^\s*\{?\\circ\}?|\\circ|\\degree", "°", s)
    s = s.replace("\\mu", "µ").replace("\\Omega", "Ω").replace("\\AA", "Å").replace("\\%", "%")
    s = re.sub(r"\s*\b(?:percentage|percent|pct)\b", "%", s)
    s = re.sub(r"\s*\b(?:per[ -]?mille|per[ -]?mil|permill)\b", "‰", s)  # 5 per mille is 0.5%
    s = re.sub(r"\\cdot|\\times|×|·|⋅", "*", s)
    s = re.sub(r"([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda m: "**(" + m.group(1).translate(_SUP) + ")", s)
    for _ in range(4):  # innermost first: 10^{10^{10}} -> 10**(10**(10)), refused as a tower below
        s = re.sub(r"\^\s*\{([^{}]*)\}", r"**(\1)", s)
    s = re.sub(r"\^\s*(-?[\w.]+)", r"**(\1)", s)
    s = re.sub(r"°\s*C\b", " degC", s)
    s = re.sub(r"°\s*F\b", " degF", s)
    s = s.replace("°", " degree")
    s = re.sub(r"µ\s+(?=[A-Za-zΩ])", "µ", s)  # "\\mu F" -> "µF"
    s = re.sub(r"\bgauss\b|\bGs\b", "gauss_si", s)  # the SI-world gauss, 1e-4 T (pint's is CGS-Gaussian)
    s = _unit_spellings(s)
    s = _thousands(s)
    return re.sub(r"\s+", " ", s.replace("{", "").replace("}", "")).strip()


_NUM = re.compile(r"\s*([-+]?)\s*(\d+(?:\.\d*)?|\.\d+)(?:\s*[eE]\s*([-+]?\d+))?")
_POW = re.compile(r"\s*(?:\*|x)?\s*10\s*\*\*\s*\(?\s*([-+]?\d+)\s*\)?")
_TOWER = re.compile(r"\*\*\s*\(?\s*[-+]?\d+(?:\.\d+)?\s*\)?\s*\*\*|\*\*\s*\(\s*[^()]*\*\*")


def _read_number(t: str, pos: int = 0):
    """(value, end) of the number written at t[pos:] (3.0*10**(8), 1.5e-3, 10**(8)); None if none."""
    m = _NUM.match(t, pos)
    if not m:
        return None
    sign, mant, e = m.groups()
    exp = int(e) if e else 0
    end = m.end()
    if mant == "10" and not e and re.match(r"\s*\*\*", t[end:]):
        mant, end = "1", m.start(2)
    p = _POW.match(t, end)
    if p:
        exp += int(p.group(1))
        end = p.end()
    if abs(exp) > 300:
        raise ValueError("exponent too large")
    return float(mant) * 10.0 ** exp * (-1 if sign == "-" else 1), end


def parse_quantity(s: str):
    """-> (value, unit_str|None, percent) for text that is a number and maybe a unit (cached);
    ValueError with the reason otherwise."""
    return _parse_num(s)


def clear_caches() -> None:
    """Forget the numbers and units parsed in this process (benchmarks time cold checks with it;
    verifiers.worker.clear_caches does the same in the workers)."""
    _parse_num.cache_clear()


@functools.lru_cache(maxsize=4096)
def _parse_num(s: str):
    """-> (value, unit_str|None, percent) for text that is a number and maybe a unit; ValueError (reason)."""
    if len(s) > MAX_LEN:
        raise ValueError("input too long")
    t = _norm(s)
    if "=" in t:
        parts = t.split("=")
        # "x = 5 + 5 + 1 = 11" is 11; "v1 = 25 m/s, v2 = 30 m/s" lists two values (read as a sentence)
        if any(re.search(r"\d[^,;]*[,;]|\d.*\b(?:or|and)\b", p) for p in parts[1:-1]):
            raise ValueError("several values")
        t = parts[-1]
    if _TOWER.search(t):
        raise ValueError("exponent tower rejected")
    got = _read_number(t)
    if got is None:
        raise ValueError("no number")
    val, end = got
    rest = t[end:].strip().lstrip("*").strip()
    if rest == "%":
        return val / 100.0, None, True
    if rest == "‰":
        return val / 1000.0, None, False
    return val, (rest or None), False


_UNIT_CHARS = re.compile(r"[\w °*/()\-+.]+")


def _quantity(val, unit):
    t0 = time.monotonic()
    u = get_ureg()
    _extend([time.monotonic() - t0])  # building the registry (once per process) is no check's work
    unit = unit.strip()
    if len(unit) > 100 or re.search(r"\d{3,}", unit) or not _UNIT_CHARS.fullmatch(unit) or \
            unit.count("(") != unit.count(")") or re.search(r"\bpi\b|π|\*\*\s*\(?\s*[-+]?\d+\s*\)?\s*\*\*", unit):
        raise ValueError(f"unit {unit[:40]!r} not understood")
    import pint

    try:
        units = u.parse_units(unit)
    except (pint.errors.PintError, AttributeError, TypeError, SyntaxError, ValueError, KeyError, IndexError,
            AssertionError, tokenize.TokenError, RecursionError):
        # pint's tokenizer raises TokenError / AssertionError on some strings: a reason, not a crash
        raise ValueError(f"unit {unit[:40]!r} not understood") from None
    return to_absolute(u.Quantity(val, units))


def _canon(q):
    b = q.to_base_units()
    return f"{b.magnitude:.6g} {b.units}"


def _strip_text(r: str) -> str:
    r = r.strip().strip("$").strip()
    return re.sub(r"^\\(?:text|textbf|mathrm|textnormal)\{([^{}]*)\}$", r"\1", r).strip()


_RELATION = re.compile(r"[<>≤≥≠]|\\(?:leq?|geq?|neq?|lt|gt)(?![a-zA-Z])|!=")


def infer_kind(ref: str) -> str:
    r = (ref or "").strip()
    if _tuple_parts(r):
        return "numeric"
    if re.fullmatch(r"[-+]?\d+(?:\.\d+)?\s?(?:mg|ma|mc|mv|mgh|mgl|mgL|kx|kq|qE|qB|qV|mr|ml)", r):
        return "symbolic"  # "2mg" is 2 m g (a physics gold), never 2 milligrams
    if re.fullmatch(r"\(?[A-Z]\)?", r):
        return "mcq"
    if letters_in(r, "ABCDEFGH") and len(set(letters_in(r, "ABCDEFGH"))) > 1:
        return "mcq_multi"
    if re.fullmatch(r"[-+]?\d+", r):
        return "integer"
    if _RELATION.search(r) or ("=" in r and not re.fullmatch(r"\s*\$?\s*\\?[A-Za-z]\w*(?:_\{?\w+\}?)?\s*", r.split("=")[0])):
        return "symbolic"  # an inequality or an equation (2x + z = 1) is compared as a relation
    if re.fullmatch(r"[A-Za-z][A-Za-z' -]*", _strip_text(r)) and not re.search(r"\b[a-zA-Z]\b", _strip_text(r)):
        return "text"
    try:
        _, unit, _ = _parse_num(r)
    except ValueError:
        if not _UNIT_VECTOR.search(r) and _const_with_unit(r, CheckConfig(isolate=False), in_process=True):
            return "numeric"  # "5\\sqrt{2}\\ \\mathrm{m/s}": a constant and a unit
        if re.search(r"\\pi|π", r) and not isinstance(_constant_value(r, CheckConfig(), in_process=True), str):
            return "numeric"  # an angle in pi (\\frac{\\pi}{2}) is a number: 90° states it
        return "symbolic" if re.search(r"[\\^*/=_()<>]|\b[a-zA-Z]\b|\d", r) else "text"
    if unit is None:
        return "numeric"
    try:
        _quantity(1.0, unit)
        return "numeric"
    except ValueError:
        if not _UNIT_VECTOR.search(r) and _const_with_unit(r, CheckConfig(isolate=False), in_process=True):
            return "numeric"  # "5\\sqrt{2}\\ \\mathrm{m/s}": a constant and a unit
        # "2 \\pi \\sqrt{l/g}" starts with a number but is an expression
        return "symbolic" if re.search(r"[\\^*/=_]|\b[a-zA-Z]\b", r) else "text"


def _score(ok, kind, cfg, answered=True):
    if cfg.mode == "jeebench_marks":
        if ok:
            return 3.0
        # JEE Advanced marks -1 for a wrong single-choice answer; Integer / Numeric answers carry no
        # negative marks (JEEBench's scores follow the exam)
        return -1.0 if (answered and kind == "mcq") else 0.0
    return 1.0 if ok else 0.0


def _v(ok, kind, cfg, reason, pc=None, rc=None, answered=True):
    return Verdict(bool(ok), _score(ok, kind, cfg, answered), reason, kind, pc, rc)


def _option_letters(text: str, options: dict, cfg) -> set:
    """The letters whose option text the answer text states: the same words, else the same value
    (numeric options, compared by the checker: "30 m/s" states "108 km/h")."""
    said = getattr(_CLOCK, "answer", None)
    try:
        return _option_letters_of(text, options, cfg)
    finally:
        _CLOCK.answer = said  # the nested checks read the option texts, not the output


_OPT_WRAP = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mathit|textnormal|operatorname)\s?\{([^{}]*)\}")
_OPT_SPACE = re.compile(r"\\[,;:! ]|~|\\(?:quad|qquad)\b")


def _option_norm(s: str) -> str:
    """An option's text as a grader compares it: LaTeX text wrappers, spacing and math delimiters left
    out ("(C) $2.22 \\pm 0.02 ~mm$" writes "$2.22 \\pm 0.02 \\mathrm{~mm}$")."""
    return _text_norm(_OPT_SPACE.sub(" ", _OPT_WRAP.sub(r"\1", s)).replace("$", " "))


def _option_letters_of(text: str, options: dict, cfg) -> set:
    t = _option_norm(text)
    same = {k for k, o in options.items() if _option_norm(str(o)) == t}
    if same or not re.search(r"\d", text):
        return same
    out = set()
    for k, o in options.items():
        o = str(o)
        if infer_kind(o) in ("numeric", "integer"):
            try:
                if _check(text, o, "numeric", cfg).equivalent:
                    out.add(k)
            except _Timeout:
                raise
            except Exception:  # noqa: BLE001 - an option that cannot be read is no match
                pass
    return out


def _telling(opt: str) -> bool:
    """An option text long enough to be recognised in an explanation: eight characters or more, or a
    word or words ("doubled"; never a bare number or letter, which working repeats)."""
    return len(opt) >= 8 or re.fullmatch(r"[a-z]{4,}(?: [a-z]+)*", opt) is not None


def _is_quantity(text: str) -> bool:
    """The text is a number with an optional unit, and nothing else."""
    try:
        _, u, _ = _parse_num(text)
    except ValueError:
        return False
    return u is None or _unit_ok(u)


# "all of the above", "All of the options are correct", "all four": every option
_ALL_ABOVE = re.compile(r"(?i)(?:\(?[A-H]\)?[.:)]?\s)?all\s(?:of\s)?(?:the\s)?(?:above|options|choices|statements|answers"
                        r"|(?:three|four|five)(?:\s(?:options|choices|statements))?|of\sthem)"
                        r"(?:\s(?:are|is)\s(?:all\s)?(?:correct|right|true))?\s?[.!]?")


def _check_mcq(pred, ref, kind, cfg, options=None):
    multi = kind == "mcq_multi"
    valid = "ABCDEFGH"
    g = frozenset(letters_in(ref, valid) or [])
    rc = "".join(sorted(g))
    if options is not None and not (isinstance(options, dict) and all(
            isinstance(k, str) and len(k) == 1 and k in valid for k in options)):
        return _v(False, kind, cfg, "options must map option letters (A-H) to their text", None, rc, answered=False)
    rl = read_letters(pred, valid) if isinstance(pred, str) else None
    if rl is None:
        return _v(False, kind, cfg, "no letter extracted", None, rc, answered=False)
    _CLOCK.answer = " ".join(rl.letters) if rl.letters else rl.text
    if rl.refused:
        return _v(False, kind, cfg, f"pred refused: {rl.refused}", "".join(rl.letters), rc)
    got = list(rl.letters)
    if not got and rl.text and _ALL_ABOVE.fullmatch(rl.text.strip()) or \
            options and multi and len(set(got)) == 1 and _ALL_ABOVE.fullmatch(_option_norm(str(options.get(got[0], "")))):
        # "All of the above (are correct)": the option that says so (single answer), or every option (several
        # answers: the options given, else the ones the output lists, else A-D); for several answers an option
        # whose text is "all of the above" stands for every option (the reference may name it or not)
        known = options or (listed_options(pred) if isinstance(pred, str) else None) or dict.fromkeys("ABCD", "")
        says = [k for k, o in known.items() if _ALL_ABOVE.fullmatch(_option_norm(str(o)))]
        if multi:
            got = sorted(set(known) - (set(says) - g))
        elif len(says) == 1:
            got = says
    opts = options or (listed_options(pred) if rl.rest and isinstance(pred, str) else None)
    if opts and rl.rest and len(set(got)) == 1:
        # "B\n\nThe proton is deflected in the +y-direction" where that is option C's text, "Answer: C.
        # The kinetic energy is doubled." where "doubled" is option A: the explanation after the letter
        # states another option (and not its own), so the output commits to neither
        said = _option_norm(rl.rest)
        other = sorted(k for k, o in opts.items() if k != got[0] and _telling(_option_norm(str(o)))
                       and f" {_option_norm(str(o))} " in f" {said} ")
        own = _option_norm(str(opts.get(got[0], "")))
        if other and not (_telling(own) and f" {own} " in f" {said} "):
            return _v(False, kind, cfg, f"letter {got[0]} explained with the text of option {''.join(other)}",
                      got[0], rc)
    if options:
        if got and rl.text and len(set(got)) == 1:
            named = _option_letters(rl.text, options, cfg)
            if named and got[0] not in named:
                return _v(False, kind, cfg, f"letter {got[0]} written with the text of option "
                          f"{''.join(sorted(named))}", got[0], rc)
            if not named and got[0] in options and _is_quantity(rl.text):
                # "(C) 30.52 m" where option C is 45°: the letter and the value disagree
                return _v(False, kind, cfg, f"letter {got[0]} written with a value that is not option "
                          f"{got[0]}'s", got[0], rc)
        if not got and rl.text and not re.search(r"(?i)\b(?:option|choice)s?\s?\(?\d", rl.text):
            named = _option_letters(rl.text, options, cfg)  # "option 2" numbers an option, states no value
            if len(named) == 1 or (multi and named):
                got = sorted(named)
    elif got and rl.text and len(set(got)) == 1 and isinstance(pred, str):
        # no options given: the option list the output writes out itself ("A) 1.0 m/s  B) 2.0 m/s ...
        # Answer: D) 2.0 m/s"); a letter written with another listed option's text is no commitment
        listed = listed_options(pred)
        named = _option_letters(rl.text, listed, cfg) if listed else set()
        if named and got[0] not in named and _option_norm(rl.text) != _option_norm(listed.get(got[0], "")):
            return _v(False, kind, cfg, f"letter {got[0]} written with the text of listed option "
                      f"{''.join(sorted(named))}", got[0], rc)
    elif not got and rl.text and isinstance(pred, str):
        # no letter, no options given: the answer states the text of one option of the list the output
        # writes out itself ("A) 2.0 m/s  B) 3.1 m/s  C) 4.43 m/s ... The answer is 4.43 m/s.")
        # only a text that is an option's words or a value alone ("option 3", "KE = 20 J. The third option
        # is correct" name options otherwise, never by value)
        listed = listed_options(pred)
        named = _option_letters(rl.text, listed, cfg) if listed and (_is_quantity(rl.text) or any(
            _option_norm(str(o)) == _option_norm(rl.text) for o in listed.values())) else set()
        if len(named) == 1 or (multi and named):
            got = sorted(named)
    got = frozenset(got)
    if not multi:
        if not got:
            return _v(False, kind, cfg, "no letter extracted", None, rc, answered=False)
        if len(got) > 1:  # "BD" for a single-answer question is not "B"
            return _v(False, kind, cfg, "several letters chosen for a single-answer question",
                      "".join(sorted(got)), rc)
        ok = got == g
        return _v(ok, kind, cfg, "letter match" if ok else "letter mismatch", "".join(got), rc)
    pc = "".join(sorted(got))
    if not got:
        return Verdict(False, 0.0, "no letters extracted", kind, None, rc)
    ok = got == g
    wrong = bool(got - g)
    # JEEBench compute_metrics.py compute_score, MCQ(multiple): 1 exact, 0.25 per option when all
    # chosen are correct, 0 with any wrong option; exam marks +4 / +1 per option / -2
    if cfg.mode == "jeebench":
        sc = 1.0 if ok else (0.0 if wrong else 0.25 * len(got))
    elif cfg.mode == "jeebench_marks":
        sc = 4.0 if ok else (-2.0 if wrong else 1.0 * len(got))
    else:
        sc = 1.0 if ok else 0.0
    return Verdict(ok, sc, "exact set" if ok else ("wrong option chosen" if wrong else "partial set"), kind, pc, rc)


KINDS = ("numeric", "integer", "symbolic", "mcq", "mcq_multi", "text")


class _Timeout(Exception):
    """The check's deadline (CheckConfig.timeout_s, counted from the call) has passed."""


_CLOCK = threading.local()  # this thread's check: its deadline and the answer it read


def _tick() -> None:
    d = getattr(_CLOCK, "deadline", None)
    if d is not None and time.monotonic() > d:
        raise _Timeout()


def _extend(waited: list) -> None:
    """Waiting for a worker (or its cold start, importing sympy) is not the check's own work."""
    d = getattr(_CLOCK, "deadline", None)
    if d is not None and waited:
        _CLOCK.deadline = d + sum(waited)


def _left(cfg) -> float:
    """Seconds left to this check (the worker gets them as its hard limit)."""
    d = getattr(_CLOCK, "deadline", None)
    left = cfg.timeout_s if d is None else d - time.monotonic()
    if left <= 0:
        raise _Timeout()
    return left


def check(pred, ref, kind=None, cfg: CheckConfig = CheckConfig(), *, options=None) -> Verdict:
    """Compare a raw model output with a reference answer.  Never raises on model output.

    kind: one of KINDS, or None to infer it from the reference.  options: for multiple choice, an
    optional {letter: option text} mapping - an option's text (or value) written without its letter
    is read as that letter, and a letter written with another option's text is refused.
    One deadline, ``cfg.timeout_s`` from the call, covers every stage (extraction, number and unit
    reading in this process, the symbolic worker); past it the verdict says "timeout".  The known
    failure modes of each kind return reasoned verdicts in their own code; the last guard below
    turns a checker bug into a recorded "internal error" verdict rather than a crashed eval or RL run.
    The verdict's ``answer`` is the committed answer read from the output.
    """
    if kind is not None and kind not in KINDS:
        return Verdict(False, 0.0, f"unknown kind {kind!r} (expected one of {', '.join(KINDS)})", str(kind))
    outer = getattr(_CLOCK, "deadline", None)
    _CLOCK.deadline = time.monotonic() + cfg.timeout_s if outer is None else outer
    _CLOCK.answer = None
    try:
        v = _check(pred, ref, kind, cfg, options)
    except _Timeout:
        v = Verdict(False, _score(False, kind or "?", cfg, answered=False),
                    f"timeout: the check exceeded its deadline of {cfg.timeout_s:g} s", kind or "unknown")
    except Exception as e:  # noqa: BLE001 - see docstring: a recorded verdict, counted, never a silent 0
        v = Verdict(False, _score(False, kind or "?", cfg, answered=False),
                    f"internal error: {type(e).__name__}: {str(e)[:80]}", kind or "unknown")
    finally:
        if outer is None:
            _CLOCK.deadline = None
    ans = getattr(_CLOCK, "answer", None)
    return dataclasses.replace(v, answer=ans[:MAX_LEN] if isinstance(ans, str) else None) if outer is None else v


def canonical(pred, kind: str, ref: str | None = None):
    """A hashable canonical form of a raw model answer, for voting (maj@k); None when none is found.

    numeric/integer: (SI magnitude rounded to 4 significant figures, SI unit); a bare number is read
    in `ref`'s unit when a reference is given.  mcq/mcq_multi: the sorted letters.  Others: the
    normalised answer text.  Never raises.
    """
    try:
        if kind in ("mcq", "mcq_multi"):
            rl = read_letters(pred, "ABCDEFGH") if isinstance(pred, str) else None
            if rl is None or rl.refused:
                return None
            return "".join(sorted(set(rl.letters))) or None
        r = read_answer(pred) if isinstance(pred, str) else None
        a = r.answer if r is not None and r.refused is None else None
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
    except Exception:  # noqa: BLE001 - a vote key is best effort; None means "no vote"
        return None


def _text_norm(s: str) -> str:
    s = _strip_text(s)
    return re.sub(r"[\s.,;:!\"'`*$]+", " ", s.casefold()).strip()


_LATEXISH = re.compile(r"\\[a-zA-Z]+|\^|\bsqrt\(|\bpi\b|π|√|\d\s*/\s*\d|[()]")


def _unit_ok(u: str) -> bool:
    try:
        _quantity(1.0, u)
        return True
    except ValueError:
        return False


def _pred_number(a, cfg):
    """(value, unit|None) read off the extracted answer, or a reason string.

    Refused first: relations, ``±``, bounds (``at least 5 N``), rejected values (``5 is
    impossible``; a value negated while another is stated, ``30, not 25``, reads the other).
    1. the whole answer is a number with an optional unit (``9.8 m/s^2``, ``3.0 \\times 10^{8} m/s``);
    2. the whole answer is a constant expression (``3/4``, ``\\frac{3}{4}``, ``2\\pi``, ``\\sqrt3``):
       its value (plain text by safeexpr in-process, LaTeX in the worker);
    3. a constant expression and a unit (``2/3 m/s``, ``5\\sqrt{2}\\,\\text{N}``, ``2\\pi rad/s``);
    4. a sentence: the last complete number in it, when it stands alone (``The speed is 3.0 \\times
       10^{8} m/s in vacuum`` reads 3e8 m/s); a number that is part of an expression (``4`` in
       ``(3\\hat{i} + 4\\hat{j})``, ``3`` in ``10/3``, ``1`` in ``(1+m/N)``) is no value.
    """
    # "5 thousand", "1.2 times 10 to the power -3", "2\\frac{1}{4}", "3!": the digit notations of
    # verifiers.extract.digit_notations, as plain numbers
    a = digit_notations(_fractions(collapse_space(a)))
    # "5√2 m/s", "√3": the root sign over a number or a parenthesis is sqrt() ("5√2" is 5·√2, never 2)
    a = re.sub(r"√\s?([-+]?\d+(?:\.\d+)?(?![\d.])|(?=\())", lambda m: f" sqrt({m.group(1)})" if m.group(1) else " sqrt", a)
    if _RELATION.search(a) or _NOT_CMD.search(a):
        return "an inequality is not a value"
    plain = collapse_space(_TEXT_CMD.sub(r" \1 ", a))  # the answer with its text commands' words as words
    hedge = _HEDGED_VALUE.search(plain)
    if hedge:
        return f"a value offered with a doubt, a disavowal or a multiple is not a committed answer: {hedge.group()!r}"
    kept, negated = _drop_negated(plain)
    if negated and not re.search(r"\d", kept):
        return "a negated value is not an answer"  # "\\text{not } 5 \\text{ m/s}"
    if negated and _NUMBER_TOKEN.findall(kept) and set(_NUMBER_TOKEN.findall(kept)) <= set(
            _NUMBER_TOKEN.findall(" ".join(m.group() for rx in (_NEG_AFTER, _NEG_BEFORE, _NEG_VERB)
                                           for m in rx.finditer(plain)))):
        # "v = 5 m/s. 5 m/s doesn't work.": every value left is one the output rejects
        return "a negated value is the only value stated"
    if _MALFORMED_NUMBER.search(a):
        return "a malformed number (two decimal points, a digit group after a decimal) is no value"
    if re.search(r"\\(?:pm|mp)(?![a-zA-Z])|[±∓]|\+/-|\+-(?=\s*\d)", a):
        return "a value with a \u00b1 is two values (or an uncertainty), not one value"
    if _bounded(a) or _bounded(plain):
        return "a bound is not a value"
    if qualified_after(a) or qualified_after(plain):
        return "a bound, range or comparison after the value is not a value"
    for bm in _BRACKETED.finditer(plain):
        if not _unit_ok(bm.group(1)) and not _unit_ok(_norm(bm.group(1))) and not _REMARK_OK.fullmatch(bm.group(1).strip()):
            return f"a bracketed remark is not a unit: [{bm.group(1)[:20]}]"
    if re.search(r"\d\s?!(?!=)", a):  # "25!" (past 20!), "3!!": a factorial not read
        return "a factorial is not the value written under it"
    if re.search(r"(?i)\b(?:otherwise|or else|else)\b", a) and re.search(r"\d", a):
        return "a value for each case (otherwise ...) is no one answer"
    # "9 m when t = 3 s", "4 m/s at t = 2 s": the condition written after the value is no part of it
    a = _CONDITION_AFTER.sub("", a)
    a, negated = _drop_negated(a)
    if negated and not re.search(r"\d", a):
        return "a negated value is not an answer"
    if not re.search(r"\d", a) and NUMBER_WORD.search(a):
        a = number_words(a)
    first_err = None
    try:
        v, u, _ = _parse_num(a)
    except ValueError as e:
        first_err = str(e)
    else:
        # "9.8 m/s^2 downward" is 9.8 m/s^2; "25 m/s or 30 m/s" is not 25 m/s (read below as a hedge)
        if u is None or _unit_ok(u):
            return v, u
        words = u.split()
        if words[0].lower() == "per":  # "5 per second" is 5 s^-1, never a bare 5 read in the reference's unit
            for n in range(min(len(words), 3), 1, -1):
                cand = " ".join(words[1:n]).rstrip(".,;:)")
                if cand and not any(_PROSE.fullmatch(w) for w in words[1:n]) and _unit_ok(f"1/({cand})") and \
                        not _quantity(1.0, f"1/({cand})").dimensionless:
                    return v, f"1/({cand})"
        for n in (4, 3):  # "meters per second, per the problem statement", "... per second relative to the cart"
            if len(words) >= n and words[1] == "per" and not re.search(r"[.,;:)]", " ".join(words[:n - 1])):
                cand = " ".join(words[:n]).rstrip(".,;:)")
                if not _PROSE.fullmatch(words[n - 1].rstrip(".,;:)")) and _unit_ok(cand):
                    return v, cand
        if len(words) > 1 and not _spans(u):
            k = 1  # "5 m s**(-1) upward": the longest unit prefix; "m/s in vacuum" is m/s (not m/s * inch)
            while k < min(len(words) - 1, 4) and not _PROSE.fullmatch(words[k]) and \
                    (not words[k].isalpha() or len(words[k]) <= 2):
                k += 1
            for k in range(k, 0, -1):
                if _unit_ok(" ".join(words[:k])):
                    return v, " ".join(words[:k])
    expr_err = None
    if _LATEXISH.search(a) or first_err is None:
        c = _constant_value(a, cfg)
        if not isinstance(c, str):
            return c, None
        if _NOT_REAL.search(c):  # "\\sqrt{-25}", "\\infty - 25": an expression whose value is no real
            return f"as an expression: {c}"  # number; never the last number written in it (25)
        expr_err = c
        cu = _const_with_unit(a, cfg)
        if cu is not None:
            return cu
        side = _last_side(a) if "\\" in a else None  # LaTeX chains only
        if side is not None:
            # "$|\\vec v| = \\sqrt{5^2+5^2} = 5\\sqrt{2}\\ \\mathrm{m/s}$", "$= \\frac12$": an equation
            # chain states its value on its last side (a constant, maybe with a unit)
            # a bare constant only where nothing precedes the "=" ("$= \\frac12$"); after working, only a
            # constant written with its unit ("= 20 \\times \\sqrt{3}/2" may be a coefficient)
            c = _constant_value(side, cfg) if not a.split("=")[0].strip(" $") else "working before it"
            if not isinstance(c, str):
                return c, None
            cu = _const_with_unit(side, cfg)
            if cu is not None:
                return cu
    got = _last_number(a)
    if isinstance(got, tuple):
        return got
    why = got or first_err or "no number with a unit"
    return f"{why}; as an expression: {expr_err}" if expr_err else why


def _last_side(a: str):
    """The last side of an equation chain written at the top level (outside braces, brackets and
    parentheses), or None: no top-level "=", a middle side that lists values ("v1 = 25, v2 = 30"), or an
    empty last side.  One linear scan."""
    depth, cuts = 0, []
    for i, ch in enumerate(a):
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth = max(depth - 1, 0)
        elif ch == "=" and depth == 0:
            cuts.append(i)
    if not cuts:
        return None
    bounds = [-1] + cuts
    mids = [a[bounds[k] + 1:bounds[k + 1]] for k in range(1, len(bounds) - 1)]
    if any(re.search(r"\d[^,;]*[,;]|\d.*\b(?:or|and)\b|\\(?:quad|qquad|text)\b", p) for p in mids):
        return None
    side = a[cuts[-1] + 1:].strip()
    return side or None


# words in square brackets after a value: a unit ("9.9 [m/s]") or a remark that keeps the value ("[rounded]");
# any other word ("5 [max]", "5 [wrong] m/s") qualifies the value and is never dropped
_BRACKETED = re.compile(r"\[([^\[\]\n\d]{0,40}[A-Za-z][^\[\]\n]{0,40})\]")
_REMARK_OK = re.compile(r"(?i)(?:rounded|approx\.?|approximately|approximate|exact|exactly|estimated?|to \d+ (?:s\.?f\.?|sig\.? ?figs?"
                        r"|significant figures|d\.?p\.?|decimal places)|\d+ (?:s\.?f\.?|sig\.? ?figs?|significant figures))")


_CONDITION_AFTER = re.compile(r"(?<=[\w)}])\s?,?" + CONDITION_VAR + r"\s?=\s?[-+]?\.?\d[^=,;]{0,30}$")


# "\\not=", "\\not\\approx", "\\not 5": a struck relation or value
_NOT_CMD = re.compile(r"\\not(?![a-zA-Z])|¬")
# words in the answer that doubt, disown or multiply its value ("maybe 5 m/s", "5 m/s (guess)", "5 m/s (wrong)",
# "anything but 5 m/s", "twice 5 m/s"); "most likely", "approximately" state the value and stay
_HEDGED_VALUE = re.compile(
    r"(?i)\b(?:maybe|perhaps|possibly|probably|presumably|unsure|not (?:sure|certain|confident)|uncertain|unverified"
    r"|unconfirmed|tentative(?:ly)?|guess(?:ed|ing)?|wrong|incorrect|anything but|other than|or not|unless|would be"
    r"|naive(?:ly)?)\b|\b(?:twice|thrice|half of|double|triple)\s?[$(]?\s?[-+]?\.?\d")
# "3.23.2", "5.2.5" (two decimal points in one digit run), "3.2 000" (a thousands group after a decimal part)
_MALFORMED_NUMBER = re.compile(r"(?<![\d.])\d+\.\d+\.\d|(?<![\d.])\d+\.\d+ \d{3}(?![\d.])")


def _bounded(a: str) -> bool:
    """A bound word before the answer's first number ("at least 5 N"); "5 m/s over 2 s" is a value."""
    m = _BOUND.search(a)
    return m is not None and not re.search(r"\d", a[:m.start()])


_TEXT_CMD = re.compile(r"\\(?:text|mathrm|textrm|textbf|mbox)\s?\{([^{}]*)\}")
# a bound written before a value: "at least 5 N", "more than 3 m/s", "up to 10 J", "over 100 K"
_BOUND = re.compile(
    r"\b(?:at (?:least|most)|(?:no|not) (?:more|less|greater|fewer|smaller|larger|higher|lower) th[ae]n"
    r"|(?:more|less|greater|fewer|smaller|larger|higher|lower|bigger) th[ae]n|up to|exceeds?|exceeding"
    r"|above|below|over|under|beyond|upwards of|in excess of|as (?:much|high|low|little|large|small) as)"
    r" (?:about |approximately |roughly |around )?(?=[-+$(]?\\?\(?\s?[-+]?\.?\d)", re.I)
_NUMBER_RX = r"(?:(?<![\d.,])[-+]?\d[\d.,]*(?:\s?(?:\\times|x|\*)\s?10\^?\{?[-+]?\d+\}?)?|zero|nothing|negative|positive)"
_UNIT_RX = r"(?: ?[A-Za-zµΩ°][\w/^{}*·\-]{0,12})?"
_NEG_BEFORE = re.compile(
    r"\b(?:not|cannot be|can't be|can not be|isn't|is no|never|reject(?:ed|s)?|discard(?:ed|s)?|rule out"
    r"|exclude[sd]?|eliminate[sd]?) (?:equal to |be |the value |a value of )?" + _NUMBER_RX + _UNIT_RX
    + r"(?![\w.]*\d)", re.I)
_NEG_AFTER = re.compile(
    _NUMBER_RX + _UNIT_RX + r"(?: (?:is|are|was|would be|seems) (?:not (?:possible|correct|right|valid|allowed|physical"
    r"|the\b)|wrong|incorrect|false|impossible|invalid|unphysical|rejected|ruled out|excluded|discarded)\b"
    # "5 doesn't work", "5 m/s fails": the output says the value it wrote does not hold
    r"| (?:does|do|did|will|would)(?:n't|n’t| not) (?:work|hold|fit|satisfy|make sense)\b| fails\b"
    # "5 - no, that is false", "5 m/s, no.": a "no" right after the value takes it back ("5 N, no friction" does not)
    r"|\s?[-–—,;:]?\s?no(?:pe)?\b(?=\s?(?:[-–—,.;:!]|$)))", re.I)


# a value the output says it had first and then replaced: "at first I got 8.1 m/s, but ...", "3.2 m at first"
_SUPERSEDED = re.compile(
    r"\b(?:at first|initially|originally)\b,?(?: I| we)?(?: (?:found|got|had|obtained|computed|calculated|wrote))? "
    r"(?:that )?(?:it (?:was|is) )?" + _NUMBER_RX + _UNIT_RX + r"(?![\w.]*\d)"
    r"|" + _NUMBER_RX + _UNIT_RX + r" (?:at first|initially|originally)\b", re.I)


# "does not reach 20 m; it only rises to 12.8 m": a value after a negated verb, closed by its clause
# ("does not reach 20 m or 12.8 m" negates both, and is left whole)
_NEG_VERB = re.compile(
    r"\b(?:does|do|did|will|would|can|could)(?: not|n't|n’t) [a-z]{2,12}(?: up to| as (?:high|far|much) as)? "
    + _NUMBER_RX + _UNIT_RX + r"(?![\w.]*\d)(?=\s?(?:[;,]|\.(?:\s|$)|$|\s(?:but|it|instead|only)\b))", re.I)


_NUMBER_TOKEN = re.compile(r"(?<![\d.])\d+(?:\.\d+)?")


def _drop_negated(a: str):
    """The answer with its rejected values cut out ("30, not 25" -> "30, ;"), and whether any was."""
    a, k = _SUPERSEDED.subn(" ; ", a)
    out, n = _NEG_AFTER.subn(" ; ", a)
    out, m = _NEG_BEFORE.subn(" ; ", out)
    out, v = _NEG_VERB.subn(" ; ", out)
    return out, bool(n or m or k or v)


_UNIT_TAIL = re.compile(r"(?:\\(?:text|mathrm|rm|textrm|mbox|unit|si)\s?\{[^{}]*\}\s?)+$")


def _const_with_unit(a: str, cfg, in_process: bool = False):
    """(value, unit) of a constant expression followed by a unit ("2/3 m/s", "\\frac{10}{3}\\,\\text{m/s}",
    "2\\pi rad/s"), or None."""
    t = a.strip()
    if len(t) > 300:
        return None
    cuts = set()
    m = _UNIT_TAIL.search(t)
    if m:
        cuts.add(m.start())
    for sm in re.finditer(r"(?:\\[,;: ]|~|\s)+", t):
        cuts.add(sm.start())
    for i in sorted(cuts, reverse=True)[:6]:
        head = re.sub(r"(?:\\[,;:! ]|~|\s)+$", "", t[:i]).strip()
        tail = t[i:].strip()
        if not head or not re.search(r"[A-Za-zµΩ°℃]", tail) or not re.search(r"\d|\\pi|π", head):
            continue
        try:
            _, u, _ = _parse_num("1 " + tail)
        except ValueError:
            continue
        if u is None or not _unit_ok(u):
            continue
        bare = re.sub(r"\\[A-Za-z]+|\b(?:pi|sqrt|sin|cos|tan|ln|log|exp|e)\b", "", head)
        if re.search(r"[A-Za-z]", bare):
            continue  # a head with a symbol in it is no constant: no worker round trip
        c = _constant_value(head, cfg, in_process)
        if not isinstance(c, str):
            return c, u
    return None


# reasons (worker and safeexpr) that say the text is an expression whose value is no real number
_NOT_REAL = re.compile(r"complex|not finite|infinite|\bnan\b|math (?:domain )?error|overflow|division by zero")
# between the last two numbers of a sentence (after the first number's unit): a list or a hedge
_HEDGE = re.compile(r"^\s*$|[,;|~…&\[(]|\.\.|(?:^|\s)-(?:\s|$)|\\(?:quad|qquad|vee|lor|to|[rR]ightarrow|text)(?![a-zA-Z])"
                    r"|\b(?:or|and|to|vs|versus|nor|else|otherwise|alternatively|maybe|perhaps|possibly|either|und|oder|through|thru"
                    r"|till|until|but)\b",
                    re.I)


_PROSE = re.compile(r"in|at|on|of|for|to|the|a|an|and|or|is|as|by|per|from|with|it|its|if|so|up|we", re.I)


def _unit_after_box(pred: str, a: str):
    """The unit written right after the last \\boxed{} when the box holds the (unit-less) answer, or None."""
    if "\\boxed" not in pred and "\\fbox" not in pred:
        return None
    content, end = last_boxed(pred)
    if content is None or content.strip() != a.strip() or end < 0:
        return None
    # "$\\boxed{5}$ km": the dollar that closes the box's math span comes before the unit
    tail = re.split(r"\n|\$(?!\s*\\)|(?<=[^\d\s])\.(?:\s|$)|,\s", re.sub(r"^\}*\s?\$(?![\s\\]*\d)", " ", pred[end:end + 80]))[0]
    tail = re.sub(r"^\s*(?:\\[,;:! ]|~|\\quad|\$)*\s*", "", tail)
    if not tail or not re.match(r"[\\A-Za-zµΩ°(\[{]", tail):
        return None
    got = _parse_num("1 " + tail) if not re.match(r"\s*[-+]?\d", tail) else None
    if not got or got[1] is None:
        return None
    u = got[1]
    if _unit_ok(u):
        return u
    words = u.split()
    for k in range(min(len(words), 4), 0, -1):
        if _PROSE.fullmatch(words[k - 1]):
            continue
        if _unit_ok(" ".join(words[:k])) and not any(_PROSE.fullmatch(w) for w in words[:k]):
            return " ".join(words[:k])
    return None


def _spans(t: str) -> list:
    """[(value, end, start)] of the complete numbers in normalised text t (never an exponent's digits);
    [] when a number cannot be read (exponent too large)."""
    spans, covered = [], 0
    for m in re.finditer(r"(?<![\w.])(?<!\*\*\()(?<!\*\*)(?<!\*\*\([-+])[-+]?\.?\d", t):  # not an exponent's digits
        if m.start() < covered:
            continue
        try:
            got = _read_number(t, m.start())
        except ValueError:
            return []
        if got is None:
            continue
        spans.append((got[0], got[1], m.start()))
        covered = got[1]
    return spans


_OPERAND_BEFORE = re.compile(r"(?:(?:\b[A-Za-z]|\d|[)}])\s?[-+]|[/*^÷(]|\*\*|\\[A-Za-z]+)\s?$")
_OPERAND_AFTER = re.compile(r"\s?(?:[/^÷!(‰]|\*(?!\s?10\b)|\\(?!,|;|:| |text|mathrm|rm|quad|qquad)|[A-Za-z]\s?[/*^(]|[-+]\s?[\d(\\A-Za-z])")


_LABEL_BEFORE = re.compile(r"(?i)\b(?:step|part|eq\.|equation|question|problem|case|example|fig\.|figure|item)\s?#?$")


def _last_number(a: str):
    """(value, unit|None) of the last number written in a sentence; a reason string when that number is
    part of an expression or a list; None when there is no number."""
    t = _norm(a)
    if _TOWER.search(t):
        return None
    spans = _spans(t)
    if not spans:
        return None
    v, end, start = spans[-1]
    if len(spans) > 1 and t[spans[-2][1]:start].strip() == "/" and float(v).is_integer() and v != 0 \
            and float(spans[-2][0]).is_integer() and re.fullmatch(r"\d+", t[start:end].strip()):
        # "stretches 3/4 m": a fraction of two whole numbers standing alone is its value (the checks
        # below still refuse one inside a longer expression, "2 + 3/4 m", "3/4 x")
        v, start, spans = spans[-2][0] / v, spans[-2][2], spans[:-1]
    if _LABEL_BEFORE.search(t[max(0, start - 16):start]):
        return "a step, part or equation number is a label, not a value"
    rest = t[end:].strip().lstrip("*").strip() if not t[end:].lstrip().startswith("**") else t[end:].strip()
    word = rest.split(" ")[0] if rest else ""
    word = word if word and _unit_ok(word) else word.rstrip(".,;:)")
    unit_next = bool(word) and _unit_ok(word)
    if unit_next and " per " in rest[:60] and not re.search(r"(?i) per (?:cycle|revolution|rev|turn|oscillation)s?\b", rest[:60]):
        # "twenty kilometres per hour", "9.8 meters per second squared": a unit spelt in words is the
        # longest run of words that is one unit ("m/s in vacuum" stays m/s)
        words = re.split(r"[.,;:)](?:\s|$)", rest, maxsplit=1)[0].split(" ")[:6]
        for k in range(len(words), 1, -1):
            cand = " ".join(words[:k]).rstrip(".,;:)")
            if not any(_PROSE.fullmatch(w) and w.lower() != "per" for w in words[:k]) and _unit_ok(cand):
                word = cand
                break
    if _OPERAND_BEFORE.search(t[:start]) or (not unit_next and _OPERAND_AFTER.match(t[end:])) or \
            (t[end:end + 1].isalpha() and not unit_next):
        return "the last number is part of an expression, not a value"
    if len(spans) > 1:
        between = t[spans[-2][1]:spans[-1][2]]
        first, _, after = between.strip().partition(" ")
        if first and _unit_ok(first.rstrip(",;")):
            between = between.strip()[len(first.rstrip(",;")):]
        if _HEDGE.search(between):
            # "1, 200 J" / "4 or 3" / "2 to 3" / "25 m/s or 30 m/s" / "v1 = 25 m/s, v2 = 30 m/s" / "5 6":
            # lists or hedges, not the last number
            return "several values (a list or a hedge)"
    if rest.startswith("%"):
        return v / 100.0, None
    if rest.startswith("‰"):
        return v / 1000.0, None
    if word and (unit_next or rest.rstrip(".,;:") == word):
        return v, word  # "5 blorgs" ends the answer: its unit, checked (and refused) by the caller
    if re.fullmatch(r"(?i)thousand|million|billion|trillion|hundred|lakh|crore|dozen|kilo|mega|giga|milli|micro|nano", word):
        return v, word  # "5 thousand m/s" is not a bare 5 read in the reference's unit: refused by the caller
    return v, None


_LATEX_WORDS = {"pi": "pi", "sqrt": "sqrt", "sin": "sin", "cos": "cos", "tan": "tan", "ln": "ln", "log": "log",
                "exp": "exp", "cdot": "*", "times": "*", "left": "", "right": "", "arcsin": "asin",
                "arccos": "acos", "arctan": "atan"}


def _latex_plain(a: str) -> str | None:
    """Plain-text form of simple LaTeX constants for safeexpr, or None when it is not simple.

    Only \\frac{..}{..}, \\sqrt{..}, ^{..}, the words above and braces are rewritten; anything
    else (\\sqrt[3], \\frac12, environments) returns None and goes to the LaTeX parser."""
    s = a.strip().strip("$").strip()
    if len(s) > 200:
        return None
    for _ in range(12):  # innermost groups first
        t = re.sub(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}", r"((\1)/(\2))", s)
        t = re.sub(r"\\sqrt\s*\{([^{}]*)\}", r"sqrt(\1)", t)
        t = re.sub(r"\^\s*\{([^{}]*)\}", r"^(\1)", t)
        if t == s:
            t = re.sub(r"(?<![A-Za-z])\{([^{}]*)\}", r"(\1)", s)  # a bare group, once nothing else applies
        if t == s:
            break
        s = t
    s = re.sub(r"\\[,;:! ]", " ", s)

    def word(m):
        w = _LATEX_WORDS.get(m.group(1))
        return None if w is None else f" {w} "
    out = []
    for piece in re.split(r"(\\[A-Za-z]+)", s):
        if piece.startswith("\\"):
            w = word(re.match(r"\\([A-Za-z]+)", piece))
            if w is None:
                return None
            out.append(w)
        else:
            out.append(piece)
    s = "".join(out)
    return None if re.search(r"[\\{}\[\]]", s) else s


def _constant_value(a, cfg, in_process: bool = False):
    """float for a constant expression ("3/4", "\\frac{1}{2}", "2\\pi"), else a reason string.
    in_process: never the worker (reading a reference's kind)."""
    if not re.search(r"\d|\\pi|\bpi\b|π", a) or len(a) > 300:
        return "no number"
    if "\\" not in a and "{" not in a:
        try:
            return safeexpr.evaluate(_norm(a), {})
        except safeexpr.ExprError as e:
            return f"unparseable: {e}"
    plain = _latex_plain(a)
    if plain is not None:  # simple LaTeX (\frac{1}{2}, 2\pi, \sqrt{2}): in-process, no worker round trip
        try:
            return safeexpr.evaluate(plain, {})
        except safeexpr.ExprError:
            pass  # the LaTeX parser in the worker decides
    if in_process:
        return "not a simple constant"
    if cfg.isolate:
        try:
            waited = []
            try:
                r = worker.numeric_value(a, _left(cfg), waited)
            finally:
                _extend(waited)
        except worker.WorkerTimeout:
            return f"timeout after {cfg.timeout_s:g} s"
        except worker.WorkerError as err:
            return f"worker failed: {err}"
    else:
        r = worker.handle({"op": "value", "expr": a})
    return r["error"] if "error" in r else r["value"]


_UNIT_VECTOR = re.compile(r"\\(?:hat|vec|mathbf)\s?\{?\s?[ijk]\b|[ijk]\u0302")


_INDEXED = re.compile(r"(?<![A-Za-z0-9_\\.])([A-Za-z])(\d{1,2})(?![\d.])")
_HBAR = re.compile(r"\\hbar(?![a-zA-Z])|\\hslash(?![a-zA-Z])|ħ")
_H_ALONE = re.compile(r"(?<![A-Za-z\\])h(?![A-Za-z])")


def _symbolic_forms(a: str, ref: str):
    """Writings a grader reads as the same symbols, for both sides: a letter with a number written after
    it is indexed ("v0^2" is v_0^2, never v·0^2), a unicode fraction is its value in parentheses ("¾ L"
    is (3/4)·L), and ħ is h/(2π) when the other side writes h and not ħ (h/2π is ħ's definition)."""
    a = _fractions(a, grouped=True)
    a, ref = _indexed(a), _indexed(ref)
    for x, y in ((a, ref), (ref, a)):
        if _HBAR.search(x) and not _HBAR.search(y) and _H_ALONE.search(y) and not _H_ALONE.search(x):
            x2 = _HBAR.sub(r"(\\frac{h}{2\\pi})" if "\\" in x else "(h/(2π))", x)
            a, ref = (x2, ref) if x is a else (a, x2)
            break
    return a, ref


_TEXT_OPEN = re.compile(r"\\(?:mathrm|text|textrm|textit|mathit|rm|operatorname|mbox)\s?\{[^{}]{0,40}$")


def _indexed(s: str) -> str:
    """"v0" -> "v_{0}" outside text commands (\\mathrm{v0} is left to the parser)."""
    return _INDEXED.sub(lambda m: m.group() if _TEXT_OPEN.search(s, max(0, m.start() - 60), m.start())
                        else f"{m.group(1)}_{{{m.group(2)}}}", s)


def _check_symbolic(a, ref, kind, cfg):
    a, ref = _symbolic_forms(a, ref)
    if _UNIT_VECTOR.search(ref):  # a vector's unit is its components' unit: (3\hat{i} + 4\hat{j})\,\mathrm{N}
        ref = symbolic.strip_unit_text(ref)
    req = {"op": "compare", "pred": a, "ref": ref, "rel_tol": cfg.rel_tol, "sym_tol": cfg.sym_rel_tol}
    if not cfg.isolate:
        r = worker.handle(req)
    else:
        try:
            waited = []
            try:
                r = worker.pool().call(req, _left(cfg), waited)
            finally:
                _extend(waited)
        except worker.WorkerTimeout:
            return _v(False, kind, cfg, f"timeout: symbolic comparison exceeded {cfg.timeout_s:g} s", a, ref)
        except worker.WorkerError as e:
            return _v(False, kind, cfg, f"symbolic worker failed: {e}", a, ref)
    return _v(r["ok"], kind, cfg, r["why"], r.get("pc"), r.get("rc"))


_FINALLY = FINALLY
# a sentence after the answer that concludes ("So ...") or states the value under a condition ("(If friction
# is included: 6 m/s)", "With air drag, ...")
_CONCLUSION = re.compile(r"(?i)\s*\(?\s*(?:so|thus|therefore|hence|consequently|in conclusion|if|when|with|without)\b,?\s?")


def _conflicting_commit(pred: str, a: str, end: int, cfg):
    """Two committed statements (a box, the final-answer tag, "Final answer:", "The answer is") whose
    values disagree, with no correction cue between them: the output never commits to one value
    ("\\boxed{5 m/s} ... The answer is 7 m/s"). The same value restated ("1500 J", "1.5 kJ") agrees."""
    body = prepare(pred)
    st = [x for x in statements(body) if x[3] in ("tag", "box", "sentence") and x[1] <= end]
    if len(st) < 2:
        return None
    last_start = st[-1][0]
    # one pass each (a check per statement over the text between would be quadratic): where the last
    # digit or "=" and the last correction cue before the last statement are
    last_digit = max(body.rfind(c, 0, last_start) for c in "0123456789=")
    last_cue = -1
    for rx in (CORRECTION, _FINALLY):
        for m in rx.finditer(body, 0, last_start):
            last_cue = max(last_cue, m.start())
    for s, e, ans, src in st[:-1]:
        _tick()
        if src == "box" and last_digit >= e:
            continue  # a boxed intermediate result, with working after it, is no commitment
        if not ans or ans == a or e > last_start or last_cue >= e:
            continue
        try:
            _parse_num(ans)
            vo = _check(ans, a, "numeric", cfg)
        except _Timeout:
            raise
        except Exception:  # noqa: BLE001 - a statement that is no value cannot disagree
            continue
        if not vo.equivalent and "mismatch" in vo.reason:
            return f"two committed answers disagree ({ans[:40]!r} and {a[:40]!r})"
    return None


_LIST_SPLIT = re.compile(r"\s?[,;]\s|\s(?:or|and|i\.e\.?,?|≈|\\approx)\s")


def _remaining_root(pred: str, cfg):
    """"x = 1.5 m or x = -0.5 m. Since x must be positive, discard -0.5 m.": the last sentence only
    rejects one of the two values the sentence before offers; the answer is the other one (None when
    the sentences are not of that form)."""
    body = prepare(pred).strip()
    ends = [m.end() for m in SENT_END.finditer(body)]
    if ends and ends[-1] >= len(body):
        ends = ends[:-1]
    if not ends or len(body) > 4000:
        return None
    cut = ends[-1]
    prev_start = ends[-2] if len(ends) > 1 else 0
    last, prev = body[cut:], body[prev_start:cut].strip().rstrip(".")
    rej = [m for rx in (_NEG_BEFORE, _NEG_AFTER) for m in rx.finditer(last) if re.search(r"\d", m.group())]
    if len(rej) != 1 or re.search(r"\d", last[:rej[0].start()] + last[rej[0].end():]):
        return None
    val = re.search(_NUMBER_RX + _UNIT_RX, rej[0].group())
    cands = [p.split("=")[-1].strip() for p in _LIST_SPLIT.split(prev) if p.strip()]
    if val is None or len(cands) != 2:
        return None
    same = []
    for c in cands:
        _tick()
        try:
            same.append(_check(c, val.group().strip(), "numeric", cfg).equivalent)
        except _Timeout:
            raise
        except Exception:  # noqa: BLE001 - a candidate that cannot be read: not this form
            return None
    return cands[same.index(False)] if sorted(same) == [False, True] else None


def _every_value_matches(a: str, ref: str, cfg):
    """An answer that states several values ("83,720 J, or about 83.7 kJ") is the reference only if every
    value it states is (restatements in other units); a hedge of two different values never is."""
    pieces = [p for p in _LIST_SPLIT.split(a) if p.strip()]
    if not 2 <= len(pieces) <= 6:
        return None
    n = 0
    for p in pieces:
        if not re.search(r"\d", p):
            if NUMBER_WORD.search(p) or not re.fullmatch(r"[A-Za-z\s.]*", p):
                return None
            continue  # "... 83.7 kJ, which is reasonable": words, no value
        _tick()
        v = _check(p, ref, "numeric", cfg)
        if not v.equivalent:
            return None
        n += 1
    return f"all {n} values stated match" if n >= 2 else None


# the last sentence of an output that states a value ("The speed is 7 m/s.", "v = 7 m/s"), unless it sets up, checks
# or notes something ("where the initial speed is 3 m/s", "Check: ...", "Note that ...", "If ...")
_SETTLES = re.compile(r"\b(?:is|are|equals|becomes|comes to)\b|=")
_NOT_SETTLED = re.compile(r"(?i)\s*[(\[]?\s*(?:where|here|note|check|checking|verify|verification|given|assum\w*|suppose|if|when"
                          r"|with|without|for (?:comparison|reference|example)|compare|e\.g\.|i\.e\.|the initial|initially"
                          r"|(?:this|that|it) (?:is|was)|which|since|because|as)\b")


def _conclusion_after(pred: str, a: str, end: int, cfg):
    """A concluding sentence after the committed answer ("So 17 N.", "Thus the normal force is 4.0 N.")
    that states another value of the answer's dimension: the output ends on that value, so the answer
    is not committed (a conclusion of another dimension is another quantity; the same value agrees)."""
    body = prepare(pred)
    if end < 0 or end >= len(body):
        return None
    start, concl, last = end, [], None
    for stop, nxt in itertools.chain(((m.start(), m.end()) for m in SENT_END.finditer(body, end)),
                                     ((len(body), len(body)),)):
        sent = body[start:stop]
        start = nxt
        if not re.search(r"\d", sent):
            continue
        c = _CONCLUSION.match(sent)
        if c is not None:
            concl.append((sent, c))
        last = sent if c is None else None
    if last is not None and _SETTLES.search(last) and not _NOT_SETTLED.match(last):
        # "\\boxed{5 m/s} ... Using energy instead, v = 7 m/s. The speed is 7 m/s.": the output ends on a statement
        # of another value (its last sentence with a number), and settles on that one
        concl.append((last, re.match(r"", last)))
    for sent, c in concl[-4:]:  # the last few conclusions (a flood of "So 5 N." costs one check each)
        _tick()
        cand = clean_answer(answer_sentence(sent[c.end():]))
        if _states_another_value(cand, a, cfg):
            return f"a conclusion after the answer states another value ({cand[:40]!r})"
    return None


def _states_another_value(text: str, a: str, cfg) -> bool:
    """Whether `text` reads as a value of the answer's dimension other than the answer `a` (a text that
    is no value, or a value of another dimension, disagrees with nothing)."""
    try:
        vo = _check(text, a, "numeric", cfg)
    except _Timeout:
        raise
    except Exception:  # noqa: BLE001 - a text that is no value cannot disagree
        return False
    return not vo.equivalent and vo.reason.startswith("numeric mismatch")


def _working_loop(pred: str):
    """An output that ends in working repeated over and over ("&= 16 \\times 2^{-2}" line after line, "= 5 = 5 =
    5 ...") with no answer statement never commits: its repeated number is no answer.  A repeated line with words
    ("The energy is 36 J.") is an answer sentence, read by _loop_disagrees."""
    body = prepare(pred).rstrip()
    lines = [ln.strip() for ln in body.splitlines()[-40:] if ln.strip()]
    if not lines:
        return None
    chunks = lines if len(lines) >= 4 else [c.strip() for c in lines[-1].split("=")[-40:] if c.strip()]
    if len(chunks) < 4:
        return None
    rep, last = chunks[-2], chunks[-1]
    if last != rep and not (rep.startswith(last) and len(last) < len(rep)):
        return None  # the last copy may be cut off
    n = 1
    while n < len(chunks) - 1 and chunks[-2 - n] == rep:
        n += 1
    words = re.sub(r"\\[A-Za-z]+|\b(?:sin|cos|tan|sqrt|exp|log|ln)\b", " ", rep)
    if n < 4 or re.search(r"[A-Za-z]{3,}", words):
        return None
    try:  # "n = 4" line after line states its value each time: a loop that agrees on it
        _, u, _ = _parse_num(rep.split("=")[-1].strip(" &$.\\"))
        if u is None or _unit_ok(u):
            return None
    except ValueError:
        pass
    return f"the output ends in a loop of working ({rep[:40]!r} repeated), with no answer stated"


def _loop_disagrees(pred: str, a: str, cfg):
    """An output that repeats the sentence of its answer three or more times ("The energy is 36 J." over
    and over, a loop) commits to its value only when every complete copy states it: a copy with another
    value ("The energy is 3.6 J.") leaves the loop committed to none."""
    body = prepare(pred)
    i = body.rfind(a)
    if i <= 0:
        return None
    st = max(body.rfind(". ", 0, i), body.rfind("\n", 0, i), body.rfind("! ", 0, i), body.rfind("? ", 0, i)) + 1
    frame = body[st:i].strip()[-80:]
    if len(frame) < 6 or not re.search(r"[A-Za-z]{2}", frame):
        return None
    values, p = set(), body.find(frame)
    count = 0
    while p >= 0 and count < 1000:
        count += 1
        q = p + len(frame)
        m = SENT_END.search(body, q, min(len(body), q + 200))
        if m is not None:  # a copy cut off before its sentence ends states nothing
            values.add(body[q:m.start()].strip())
        p = body.find(frame, q)
    if count < 3 or len(values) < 2:
        return None
    for v in sorted(values)[:20]:
        _tick()
        if v and v != a and _states_another_value(v, a, cfg):
            return f"the output repeats its answer's sentence with another value ({v[:40]!r}): a loop"
    return None


def _check(pred, ref, kind, cfg, options=None):
    ref = str(ref)
    if "\\boxed" in ref or "\\fbox" in ref:  # a reference written as a solution line
        ref = extract_boxed(ref) or ref
    vec = _vector_parts(ref) if kind in (None, "numeric") and "@" not in ref else None
    kind = kind or ("numeric" if vec else infer_kind(ref))
    if kind in ("mcq", "mcq_multi"):
        return _check_mcq(pred, ref, kind, cfg, options)
    r = read_answer(pred) if isinstance(pred, str) else None
    a = r.answer if r is not None else None
    _tick()
    if a is None:
        return _v(False, kind, cfg, "no answer extracted", answered=False)
    _CLOCK.answer = a
    if len(a) > MAX_LEN:
        # "3.1111...1" with thousands of decimals: digits past the 30th significant one change nothing at
        # any tolerance the checker uses (a tiny "0.000...01" keeps all its digits: it is not zero)
        a = re.sub(r"(\.0*[1-9]\d{0,29})\d+", r"\1", a)
    if len(a) > MAX_LEN:
        return _v(False, kind, cfg, "input too long")
    if r.refused:
        return _v(False, kind, cfg, f"pred refused: {r.refused}", a, ref)
    if kind in ("numeric", "integer") and r.source in ("tag", "box", "sentence") and isinstance(pred, str):
        why = _conflicting_commit(pred, a, r.end, cfg) or _conclusion_after(pred, a, r.end, cfg)
        _CLOCK.answer = a
        if why:
            return _v(False, kind, cfg, f"pred refused: {why}", a, ref)
    if kind in ("numeric", "integer") and r.source in ("tail", "sentence") and isinstance(pred, str):
        why = (_working_loop(pred) if r.source == "tail" else None) or _loop_disagrees(pred, a, cfg)
        _CLOCK.answer = a
        if why:
            return _v(False, kind, cfg, f"pred refused: {why}", a, ref)
    ref_iv = _interval(ref, strict=True) if kind in ("symbolic", "numeric") else None
    if ref_iv is not None:
        got_iv = _check_interval(a, ref_iv, kind, cfg)
        _CLOCK.answer = a
        if got_iv is not None:
            return got_iv
    tup = _tuple_parts(ref)
    if tup is None and kind != "symbolic":
        tup = vec  # "(3\\hat{i} + 4\\hat{j}) N": the tuple of its components
    if tup is not None and kind != "symbolic" and len(tup) == 2 and any(
            rx.fullmatch(a.strip().strip("$").strip().rstrip(".")) for rx in (_CHAIN, _WORDS_RANGE)):
        # "2 s < t < 5 s" against "(2, 5) s": an inequality chain (or a range in words whose ends are
        # said to be in or out) answers the pair as an open interval
        got_iv = _check_interval(a, (tup[0], tup[1], False, False), kind, cfg)
        _CLOCK.answer = a
        if got_iv is not None:
            return got_iv
    if tup is not None and kind != "symbolic":
        return _check_tuple(a, tup, kind, cfg, pad=tup is vec)
    if kind == "symbolic":
        return _check_symbolic(a, ref, kind, cfg)
    if kind == "text":
        ok = _text_norm(a) == _text_norm(ref)
        return _v(ok, kind, cfg, "text match" if ok else "text mismatch", _text_norm(a)[:200], _text_norm(ref)[:200])
    try:
        rv, ru, rpct = _parse_num(ref)
        if ru is not None and not _unit_ok(ru):
            raise ValueError(f"unit {ru[:40]!r} not understood")
    except ValueError as e:
        c = _constant_value(ref, cfg)
        if isinstance(c, str):
            cu = _const_with_unit(ref, cfg)
            if cu is None:
                return _v(False, kind, cfg, f"reference unparseable as {kind}: {e}", a, ref)
            c, ru = cu
        else:
            ru = None
        rv, rpct = c, False
    _tick()
    got = _pred_number(a, cfg)
    _tick()
    if isinstance(got, str) and got.startswith(("a negated value", "several values")) and r.source == "tail" \
            and isinstance(pred, str):
        rest = _remaining_root(pred, cfg)
        _CLOCK.answer = a
        if rest is not None:
            a, got = rest, _pred_number(rest, cfg)
            _CLOCK.answer = a
    if isinstance(got, str) and got.startswith("several values") and kind == "numeric":
        same = _every_value_matches(a, ref, cfg)
        _CLOCK.answer = a
        if same:
            return _v(True, kind, cfg, f"numeric match ({same})", a, ref)
    if isinstance(got, str):
        return _v(False, kind, cfg, f"pred unparseable: {got}", a, ref)
    pv, pu = got
    if pu is None and isinstance(pred, str):
        pu = _unit_after_box(pred, a)  # "\\boxed{5}\\text{ km/s}" is 5 km/s, never a bare 5 read in m/s
    offset = pu is not None and ru is not None and (_offset_temp(pu) or _offset_temp(ru))
    if pv == 0 and rv != 0 and not offset:  # 0 °C is 273.15 K: zero only on an absolute scale
        # an exact 0 matches only a gold that is zero within its own declared precision, and a gold
        # written with a nonzero digit is not (always answering 0 would score on every 1e-19 gold)
        return _v(False, kind, cfg, "an exact zero against a nonzero reference", repr(pv), repr(rv))
    if rv == 0 and pv != 0 and kind != "integer" and not offset:
        # a zero gold is matched by zero only: "3e-18 J" is a nonzero value, however small
        return _v(False, kind, cfg, "a nonzero value against a zero reference", repr(pv), repr(rv))
    if kind == "integer" and pu is not None and ru is not None and _unit_ok(pu) and _unit_ok(ru):
        # "114 N*kg" against "114 m/s^2": an integer answer's unit must be of the reference's dimension (and
        # is converted to the reference's unit: "2 km" is 2000 against "2000 m")
        pq, rq = _quantity(pv, pu), _quantity(rv, ru)
        if pq.dimensionality != rq.dimensionality:
            return _v(False, kind, cfg, f"dimension mismatch: {pq.dimensionality} vs {rq.dimensionality}",
                      _canon(pq), _canon(rq))
        pv = pq.to(rq.units).magnitude
    if kind == "integer":
        ok = close(pv, rv, cfg) if cfg.mode != "default" else abs(pv - rv) < cfg.int_tol
        return _v(ok, kind, cfg, "integer match" if ok else "integer mismatch", repr(pv), repr(rv))
    if ru is None and pu is not None and re.search(r"\\pi|π", ref) and _unit_ok(pu):
        q = _quantity(pv, pu)
        if q.dimensionless and str(q.units) != "dimensionless":
            pv, pu = q.to("radian").magnitude, None  # 90° against \frac{\pi}{2}: an angle in radians
    if ru is None:
        # a percent reference accepts 28 and 0.28 for 28% (math-verify test_percent_notation)
        ok = close(pv, rv, cfg) or (rpct and pu is None and close(pv / 100.0, rv, cfg))
        return _v(ok, kind, cfg, "numeric match" if ok else "numeric mismatch", repr(pv), repr(rv))
    rq = _quantity(rv, ru)
    try:
        if pu is None and rq.dimensionless and str(rq.units) not in ("radian", "dimensionless") and \
                not re.search(r"\\pi(?![a-zA-Z])|π|\bpi\b", a):  # a multiple of π is in radians
            # a bare number against an angle in degrees (or turns) says neither degrees nor radians:
            # "0.785" for 45° is read as radians by some graders and as 0.785° by others, "45" the other way
            return _v(False, kind, cfg, "a bare number against an angle in degrees: its unit is not stated", a,
                      _canon(rq))
        if pu is None:
            # a bare number is read in the reference's unit (a number against radians is in radians)
            pq = _quantity(pv, "radian") if rq.dimensionless else _quantity(pv, ru)
        else:
            pq = _quantity(pv, pu if _unit_ok(pu) else pu.split()[0])
    except ValueError as e:
        return _v(False, kind, cfg, f"pred {e}", a, _canon(rq))
    if pq.dimensionality != rq.dimensionality and isinstance(pred, str) and r.source in ("sentence", "tail"):
        # "The maximum height is 20 m and the time of flight is 4 s." for the height: the sentence states two
        # quantities, each named; the one of the reference's dimension is the answer (when only one is)
        other = _quantity_of_dimension(pred, a, rq, cfg)
        _CLOCK.answer = a
        if other is not None:
            pq = other
            if kind == "numeric" and not offset:
                ok = close(pq.to(rq.units).magnitude, rq.magnitude, cfg)
                return _v(ok, kind, cfg, ("numeric match" if ok else "numeric mismatch") + " (the quantity of the "
                          "reference's dimension, of two stated)", _canon(pq), _canon(rq))
    if pq.dimensionality != rq.dimensionality:
        return _v(False, kind, cfg, f"dimension mismatch: {pq.dimensionality} vs {rq.dimensionality}", _canon(pq), _canon(rq))
    if offset and isinstance(pred, str) and _temperature_change(pred, a, r.end):
        # "the temperature rises by 20 K" against "20 °C": a difference, one kelvin per degree Celsius
        try:
            pq, rq = _as_difference(pv, pu), _as_difference(rv, ru)
        except ValueError as e:
            return _v(False, kind, cfg, f"pred {e}", a, _canon(rq))
        ok = close(pq.to(rq.units).magnitude, rq.magnitude, cfg)
        return _v(ok, kind, cfg, "numeric match (temperature difference)" if ok else
                  "numeric mismatch (temperature difference)", _canon(pq), _canon(rq))
    ok = close(pq.to(rq.units).magnitude, rq.magnitude, cfg)
    return _v(ok, kind, cfg, "numeric match" if ok else "numeric mismatch", _canon(pq), _canon(rq))


# the clauses of a sentence that names two quantities ("The maximum height is 20 m and the time of flight is 4 s")
_CLAUSES = re.compile(r",?\s(?:and|while|whereas)\s|[;,]\s")
_NAMED_VALUE = re.compile(r"(?i)^\s?(?:the\s)?[A-Za-z][\w\s'’-]{0,40}?\s(?:is|was|equals|becomes|of)\s|^\s?\\?[A-Za-z]\w{0,8}\s?=\s?")


def _quantity_of_dimension(pred: str, a: str, rq, cfg):
    """The one quantity of rq's dimension that the answer's sentence names, when it names two or more quantities
    of different dimensions, each in a clause of its own ("<name> is <value>"); None otherwise."""
    body = prepare(pred)
    i = body.rfind(a)
    if i < 0:
        return None
    st = max(body.rfind(". ", 0, i), body.rfind("\n", 0, i), body.rfind("! ", 0, i), body.rfind("? ", 0, i)) + 1
    stop = SENT_END.search(body, i + len(a))
    sent = body[st:stop.start() if stop else len(body)]
    if len(sent) > 400 or _ALTERNATIVE_WORDS.search(sent):
        return None
    clauses = [c for c in _CLAUSES.split(sent) if re.search(r"\d", c)]
    if not 2 <= len(clauses) <= 4:
        return None
    found, dims = [], set()
    for c in clauses:
        _tick()
        m = _NAMED_VALUE.match(c)
        if m is None:
            return None  # a value with no name of its own ("20 m and 4 s") is a list
        got = _pred_number(clean_answer(c[m.end():]), cfg)
        if isinstance(got, str) or got[1] is None or not _unit_ok(got[1]):
            return None
        q = _quantity(*got)
        dims.add(str(q.dimensionality))
        if q.dimensionality == rq.dimensionality:
            found.append(q)
    return found[0] if len(found) == 1 and len(dims) == len(clauses) else None


_ALTERNATIVE_WORDS = re.compile(r"(?i)\b(?:or|either|maybe|perhaps|possibly|if|unless|otherwise|alternatively|not)\b")


def _offset_temp(unit: str) -> bool:
    """Whether a unit is a temperature on a scale with an offset zero (°C, °F)."""
    try:
        return str(get_ureg().parse_units(unit.strip())) in ("degree_Celsius", "degree_Fahrenheit")
    except Exception:  # noqa: BLE001 - pint raises many kinds on odd strings: not an offset unit
        return False


def _as_difference(val, unit: str):
    """A temperature read as a difference: °C and °F as their degree sizes, in kelvin."""
    name = str(get_ureg().parse_units(unit.strip()))
    unit = {"degree_Celsius": "delta_degC", "degree_Fahrenheit": "delta_degF"}.get(name, unit)
    u = get_ureg()
    return u.Quantity(val, u.parse_units(unit)).to(u.kelvin)


# a change of temperature stated just before the value ("rises by 20 K", "the change is 15 °C", "ΔT =
# 20 K"); "rises to 40 °C", "the final temperature ... after the increase is 40 °C" state a temperature
_TEMP_CHANGE = re.compile(
    r"(?i)(?:\b(?:rises?|rose|risen|falls?|fell|fallen|drops?|dropped|increases?d?|decreases?d?|changes?d?|difference"
    r"|(?:(?:heat|cool|warm|rais|lower)(?:s|ed|es)?|goes up|goes down|went up|went down) by)\b|Δ|\\Delta\b|\bdelta\b)"
    r"([^.;\n\d]{0,40})[-+\u2212]?\d[\d.,]*[^\d\n]{0,20}$")  # the first value after the cue ends the sentence
_NOT_CHANGE = re.compile(r"(?i)\b(?:to|reach(?:es|ed)?|final|becomes?|at|initial)\b")
_FINAL_TEMP = re.compile(r"(?i)\b(?:final|initial|equilibrium|boiling|melting|freezing)\b")


def _temperature_change(pred: str, a: str, end: int) -> bool:
    """Whether the sentence that states the answer says it is a change of temperature."""
    text = prepare(pred)
    head = text[:end] if 0 < end <= len(text) else text
    i = head.rfind(a)
    ctx = head[max(0, i - 80): i + len(a)] if i >= 0 else head[-120:]
    ctx = ctx[-160:]
    ctx = re.split(r"[.!?;]\s|\n", ctx)[-1]  # the sentence of the value
    m = _TEMP_CHANGE.search(ctx)
    return m is not None and not _NOT_CHANGE.search(m.group(1)) and not _FINAL_TEMP.search(ctx)


_TUPLE = re.compile(r"\s*(?:\(|\\left\(|\\langle|⟨)(.*)(?:\)|\\right\)|\\rangle|⟩)\s*")


def _top_split(s: str) -> list:
    out, depth, start = [], 0, 0
    for i, c in enumerate(s):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(s[start:i])
            start = i + 1
    out.append(s[start:])
    return [p.strip() for p in out]


_TUPLE_UNIT = re.compile(r"\s*(?:\(|\\left\(|\\langle|⟨)(.*)(?:\)|\\right\)|\\rangle|⟩)([^()⟩]*)")


def _tuple_parts(text: str, strict: bool = True):
    """The components of a tuple of numbers with units, "(2 m/s, 3 m/s)", "\\langle 1, 2, 3 \\rangle", or
    with one unit after it for every component ("(2, 3) m/s": "2 m/s", "3 m/s"); None for anything else
    (a tuple of symbols or an interval is compared by the symbolic reader). strict: every component
    must be a number with a unit (a reference); else any constant ("(3/5, 4/5)", read by the checker)."""
    t = text.strip().strip("$").strip()
    if len(t) > MAX_LEN:
        return None
    m = _TUPLE.fullmatch(t)
    unit = None
    if not m:
        m = _TUPLE_UNIT.fullmatch(t)
        if not m or not m.group(2).strip():
            return None
        unit = re.sub(r"^(?:\\[,;: ]|~|\s)+", "", m.group(2)).strip()
        try:
            _, u, _ = _parse_num("1 " + unit)
        except ValueError:
            return None
        if u is None or not _unit_ok(u):
            return None
    if "," not in m.group(1):
        return None
    depth = 0
    for ch in m.group(1):  # "(1, 2) m or (3, 4) m" is two tuples, not one: the inside must balance
        depth += (ch in "([{") - (ch in ")]}")
        if depth < 0:
            return None
    parts = _top_split(m.group(1))
    if len(parts) < 2 or not all(parts):
        return None
    out = []
    for p in parts:
        try:
            _, u, _ = _parse_num(p)
        except ValueError:
            if strict or unit is None and not re.search(r"\d", p):
                return None
            u = None
        if u is not None and not strict and not _unit_ok(u):
            u = None  # "1/2": a constant, read by the checker
        if u is not None and (unit is not None or not _unit_ok(u)):
            return None  # "(2 m, 3 m) s" is no tuple of quantities
        out.append(f"{p} {unit}" if unit else p)
    return out


_UV_TOKEN = re.compile(r"\\(?:hat|vec|mathbf|boldsymbol|bm)\s?(?:\{\s?\\?([ijkxyz]|imath|jmath)\s?\}|\s\\?([ijkxyz]|imath|jmath)\b)"
                       r"|([ijkxyz])\u0302|([îĵ])")
_UV_AXIS = {"i": 0, "imath": 0, "x": 0, "î": 0, "j": 1, "jmath": 1, "y": 1, "ĵ": 1, "k": 2, "z": 2}
_UV_TERM = re.compile(r"\s?([-+])?\s?(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)?\s?\*?\s?@([012])\s?")


def _vector_parts(text: str):
    """The components of a combination of unit vectors ("3\\hat{i} - 4\\hat{j}", "(2\\hat{x} + \\hat{z}) N",
    "3i + 4j m/s"), as a tuple of quantities in the order x, y, z; None for anything else. Coefficients
    are plain numbers (a symbol or an expression is no component)."""
    t = text.strip().strip("$").strip()
    if len(t) > 300:
        return None
    t = re.sub(r"^(?:\\vec\s?\{?\s?[A-Za-z]\s?\}?|[A-Za-z](?:_\{?\w+\}?)?)\s?=\s?", "", t)  # "\\vec F = "
    body = _UV_TOKEN.sub(lambda m: "@" + str(_UV_AXIS[next(g for g in m.groups() if g)]), t)
    if "@" not in body:
        body = re.sub(r"(?<=[\d\s])([ijk])\b(?=\s*[-+)]|\s*$|\s+[A-Za-zµΩ])",
                      lambda m: "@" + str(_UV_AXIS[m.group(1)]), t)  # "3i + 4j N"
        if len(set(re.findall(r"@\d", body))) < 2:
            return None  # "2k" is a product (2 times k), not a vector along z
    last = body.rfind("@") + 2
    head, unit = body[:last], body[last:].strip()
    if unit.startswith(")") and head.lstrip().startswith(("(", "\\left(")):
        head, unit = re.sub(r"^\s?(?:\\left)?\(", "", head), re.sub(r"^\)\s?", "", unit)
    unit = re.sub(r"^(?:\\right\)|\\[,;: ]|~|\s)+", "", unit).strip()
    comp, pos = {}, 0
    for m in _UV_TERM.finditer(head):
        if m.start() != pos or (pos and not m.group(1)):
            return None  # something between the terms, or two terms with no sign between them
        axis = int(m.group(3))
        if axis in comp:
            return None
        comp[axis] = (-1 if m.group(1) == "-" else 1) * float(m.group(2) or 1)
        pos = m.end()
    if not comp or pos != len(head):
        return None
    if unit:
        try:
            _, u, _ = _parse_num("1 " + unit)
        except ValueError:
            return None
        if u is None or not _unit_ok(u):
            return None
    n = 3 if 2 in comp else 2
    return [f"{comp.get(i, 0.0):g} {unit}".strip() for i in range(n)]


_INF = r"[-+]?\s?(?:\\infty|∞|inf(?:inity)?)"
_END = r"(?:" + _INF + r"|[-+]?\s?\d[^,\[\]()]{0,40}?)"
_BRACKETS = re.compile(r"(?:[A-Za-z]\w{0,3}\s?(?:∈|\\in(?![a-z]))\s?)?(?:\\left)?([\[(])\s?(" + _END + r")\s?,\s?(" + _END
                       + r")\s?(?:\\right)?([\])])\s?([^,\[\]()]{0,30})")
_LESS = r"(<|≤|\\le(?:q)?(?![a-z])|\\lt(?![a-z])|<=)"
_CHAIN = re.compile(r"([-+]?\s?\d[\d.eE+\-]{0,20})\s?([^\s<≤\\\d]{0,12})\s?" + _LESS + r"\s?[A-Za-z]\w{0,3}\s?" + _LESS
                    + r"\s?([-+]?\s?\d[\d.eE+\-]{0,20})\s?([^<≤>≥]{0,30})")
_ONE_SIDE = re.compile(r"[A-Za-z]\w{0,3}\s?(>|≥|\\ge(?:q)?(?![a-z])|\\gt(?![a-z])|>=|<|≤|\\le(?:q)?(?![a-z])|\\lt(?![a-z])|<=)"
                       r"\s?([-+]?\s?\d[\d.eE+\-]{0,20})\s?([^<≤>≥]{0,30})")
_ABS = re.compile(r"\|\s?[A-Za-z]\w{0,3}\s?\|\s?" + _LESS + r"\s?(\d[\d.eE+\-]{0,20})\s?([^<≤>≥|]{0,30})")


_WORDS_RANGE = re.compile(
    r"(?i)(?:[A-Za-z ,]{0,40}?\b)?(?:from|between)\s([-+]?\d[\d.eE+\-]{0,20})\s?([A-Za-zµΩ°/]{0,10})\s(?:to|and)\s"
    r"([-+]?\d[\d.eE+\-]{0,20})\s?([A-Za-zµΩ°/]{0,12})\s?[,;(]?\s?"
    r"(both ends? (?:included|includ(?:ed|ing)|excluded|not included)|(?:inclusive|exclusive)(?: of both ends)?"
    r"|(?:including|excluding) both ends?|(?:closed|open) (?:at both ends|interval))\)?")


_NEGATED_BEFORE = re.compile(r"(?i)\b(?:not|never|no|nor|outside|except|excluding|beyond|neither)\b|n't\b|n’t\b")


def _interval(text: str, strict: bool):
    """(lo, hi, lo_closed, hi_closed) of an interval: "[0, 2] m", "x ∈ [2 s, 4 s]", "(0, \\infty)" and, when
    not strict (an answer), "1 < x ≤ 3", "0 ≤ t < 5 s", "x > 0" (to infinity), "|x| ≤ 1"; endpoints are texts
    with the unit after the interval given to each ("inf"/"-inf" for infinite ends). A reference must be
    bracketed with a square bracket or an infinite end (a bare "(1, 3)" is a tuple); None otherwise."""
    t = text.strip().strip("$").strip().rstrip(".")
    if len(t) > 200:
        return None

    def fin(e, unit):
        e = e.strip()
        if re.fullmatch(_INF, e):
            return "-inf" if e.lstrip().startswith("-") else "inf"
        return f"{e} {unit}".strip() if unit and not re.search(r"[A-Za-zµΩ°]", e) else e

    m = _BRACKETS.fullmatch(t)
    if m:
        lo_b, lo, hi, hi_b, unit = m.groups()
        if strict and lo_b == "(" and hi_b == ")" and not (re.fullmatch(_INF, lo.strip()) or re.fullmatch(_INF, hi.strip())):
            return None
        return fin(lo, unit.strip()), fin(hi, unit.strip()), lo_b == "[", hi_b == "]"
    if strict:
        return None
    m = _CHAIN.fullmatch(t)
    if m:
        lo, lo_u, op1, op2, hi, unit = m.groups()
        unit = unit.strip() or lo_u.strip()
        return fin(lo, unit), fin(hi, unit), op1 not in ("<", "\\lt"), op2 not in ("<", "\\lt")
    m = _ABS.fullmatch(t)
    if m:
        op, hi, unit = m.groups()
        closed = op not in ("<", "\\lt")
        return fin("-" + hi, unit.strip()), fin(hi, unit.strip()), closed, closed
    m = _WORDS_RANGE.fullmatch(t)
    if m and not _NEGATED_BEFORE.search(t[:m.start(1)]) and not re.search(r"(?i)\b(?:or|either|maybe|perhaps)\b", t[:m.start(1)]):
        # "from 2 to 5 s, both ends included": a range whose ends are said to be in or out
        lo, lo_u, hi, unit, how = m.groups()
        unit = (unit or "").strip() or (lo_u or "").strip()
        closed = not re.search(r"(?i)exclu|not included|excluded|open", how)
        return fin(lo, unit), fin(hi, unit), closed, closed
    m = _ONE_SIDE.fullmatch(t)
    if m:
        op, v, unit = m.groups()
        closed = op in ("≥", "≤", ">=", "<=") or op.startswith(("\\ge", "\\le"))
        if op in (">", "≥", ">=") or op.startswith(("\\g",)):
            return fin(v, unit.strip()), "inf", closed, False
        return "-inf", fin(v, unit.strip()), False, closed
    return None


def _check_interval(a: str, ref_iv, kind, cfg):
    """End points and openness of an interval answer against an interval reference; None when the answer
    is no interval (the caller goes on as before)."""
    got = _interval(a, strict=False)
    if got is None:
        m = re.search(r"(?:i\.e\.?,?|so|hence|thus|:)\s?(?=[\[(]|[A-Za-z]\w{0,3}\s?(?:∈|\\in\b))", a)
        got = _interval(a[m.end():], strict=False) if m else None  # "between t = 2 s and 4 s, i.e. [2, 4] s"
        if got is None:
            # "above 10 m for 2 s ≤ t ≤ 5 s": the interval that closes the sentence, after a word that
            # introduces it (the last few such words are tried)
            cues = [c.end() for c in re.finditer(r"\b(?:for|when|during|while|is|in|within)\s", a)][-4:]
            for c in reversed(cues):
                if _NEGATED_BEFORE.search(a[:c]):
                    break  # "it is not moving for 2 s < t < 5 s": a negated interval is no answer
                got = _interval(a[c:], strict=False)
                if got is not None and got[0] not in ("inf", "-inf") and got[1] not in ("inf", "-inf"):
                    break
                got = None
        if got is None:
            return None
    rc = f"{'[' if ref_iv[2] else '('}{ref_iv[0]}, {ref_iv[1]}{']' if ref_iv[3] else ')'}"
    if got[2:] != ref_iv[2:]:
        return _v(False, kind, cfg, "interval mismatch: open and closed ends differ", a, rc)
    for g, r in zip(got[:2], ref_iv[:2]):
        if g in ("inf", "-inf") or r in ("inf", "-inf"):
            if g != r:
                return _v(False, kind, cfg, "interval mismatch: end points differ", a, rc)
            continue
        v = _check(g, r, "numeric", cfg)
        if not v.equivalent:
            return _v(False, kind, cfg, f"interval mismatch: end point {g!r} vs {r!r}: {v.reason}", a, rc)
    return _v(True, kind, cfg, "interval match", a, rc)


_SUBSCRIPT = str.maketrans("₀₁₂₃₄₅₆₇₈₉ₓᵧ", "0123456789xy")
_ASSIGNED = re.compile(r"\s?(?:\\?[A-Za-z]{1,8}\s?(?:_\s?\{?\s?([A-Za-z0-9]{1,3})\s?\}?|([0-9xyz]))|([xyz]))\s?=\s?([^=]+)")


def _assigned_parts(a: str):
    """The values of one assignment per component, in order ("v_x = 3 m/s, v_y = 4 m/s", "v₁ = 1 m/s and
    v₂ = 3 m/s", the coordinates themselves: "x = 3, y = 4"): the subscripts must run in order (x, y, z or 1, 2, 3), else None (which is which is
    then the question's, not the checker's)."""
    if len(a) > 400 or a.rstrip(" .$").endswith("?"):
        return None  # "x = 3, y = 4?": a question, no commitment
    pieces = [p for p in re.split(r"\s?[,;]\s|\s(?:and)\s", a.translate(_SUBSCRIPT)) if p.strip()]
    if not 2 <= len(pieces) <= 3:
        return None
    # "The point is at x = 2 m and y = -1 m": words with no number before the first assignment are prose
    lead = re.fullmatch(r"[A-Za-z][A-Za-z ]{0,60}\s((?:\\?[A-Za-z]{1,8}\s?(?:_\s?\{?\s?[A-Za-z0-9]{1,3}\s?\}?)?)\s?=[^=]+)",
                        pieces[0].strip())
    if lead:
        said = pieces[0].strip()[:lead.start(1)]
        if _NEGATED_BEFORE.search(said) or re.search(r"(?i)\b(?:maybe|perhaps|possibly|either|if|could|might|would)\b", said):
            return None  # "It is not at x = 2 m and y = -1 m", "It might be at x = ...": no commitment
        # the words must state where it is ("The point is at", "The solution is", "It lands at"): "Try x = 3,
        # y = 4", "We reject x = 3 and y = 4", "The wrong guess is x = 3, y = 4" commit to nothing
        if not re.search(r"(?i)\b(?:is|are|at|be|becomes)\s?$", said) or re.search(
                r"(?i)\b(?:cannot|can't|wrong|incorrect|guess\w*|trial|initial|test\w*|try\w*|assum\w*|suppos\w*|reject\w*"
                r"|discard\w*|candidate|first|starting|estimate\w*)\b", said):
            return None
        pieces[0] = lead.group(1)
    subs, vals = [], []
    for p in pieces:
        m = _ASSIGNED.fullmatch(p.strip().rstrip("."))
        if not m:
            return None
        subs.append((m.group(1) or m.group(2) or m.group(3)).lower())  # "v_x = 3", "v1 = 3", "x = 3"
        val = m.group(4).strip()
        # each value is a value, maybe with its unit: "4 satisfy the first equation", "3 (rejected)" are not
        words = " ".join(re.findall(r"[A-Za-zµΩ°]+", re.sub(r"\\[A-Za-z]+", " ", val)))
        if words and (re.search(r"[A-Za-z]{2,}\)|\([^()]*[A-Za-z]{2,}", val) or not _unit_ok(words)):
            return None
        vals.append(val)
    order = [s[-1] for s in subs]
    if order not in (list("xyz"[:len(order)]), list("123"[:len(order)]), list("012"[:len(order)])):
        return None
    return vals


def _check_tuple(a, parts, kind, cfg, pad: bool = False):
    """Component-wise comparison, in order, of a tuple answer with a tuple reference (pad: the reference
    is a combination of unit vectors, whose missing axes are 0: "4\\hat{i} N" is (4, 0, 0) N)."""
    rc = "(" + ", ".join(parts) + ")"
    got = _tuple_parts(a, strict=False)
    if got is None:
        # "The point is at (50 cm, -20 cm)": words with no number before the tuple are prose
        m = re.match(r"[^\d()\\⟨]*?(?=\(|\\left\(|\\langle|⟨)", a)
        got = _tuple_parts(a[m.end():], strict=False) if m and m.end() else None
    if got is None:
        got = _assigned_parts(a)
    if got is None:
        got = _vector_parts(a)
        if got is not None and len(got) < len(parts):
            got = got + ["0"] * (len(parts) - len(got))  # "2\\hat{i} - \\hat{j}" against (2, -1, 0): no z part
    if got is None:
        return _v(False, kind, cfg, "pred is not a tuple", a, rc)
    if pad and 2 <= len(parts) < len(got) <= 3:
        unit = re.sub(r"^[-+\d.eE]+\s?", "", parts[0])
        parts = parts + [f"0 {unit}".strip()] * (len(got) - len(parts))
    if len(got) != len(parts):
        return _v(False, kind, cfg, f"tuple of {len(got)} against {len(parts)} components", a, rc)
    for i, (p, r) in enumerate(zip(got, parts)):
        v = _check(p, r, "numeric", cfg)
        if not v.equivalent:
            _CLOCK.answer = a
            return _v(False, kind, cfg, f"component {i + 1}: {v.reason}", a, rc)
    _CLOCK.answer = a
    return _v(True, kind, cfg, "tuple match", a, rc)
