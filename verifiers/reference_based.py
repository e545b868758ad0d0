"""The symbolic step verifier (backend "symbolic"): the first wrong step of a seven-tag solution and its
error class, checked against a seven-tag reference solution; without one, verifiers.reference_free.

    verify_symbolic(question, solution, reference) -> StepVerdict    (verifiers.steps.verify dispatches here)

StepVerdict.first_error is 0 when every step is right, else the 1-based position of the first wrong
step among the format's seven steps (seventag.TAGS; the paper's e, with n = 7). error_class is
"MC" (miscomprehension), "CM" (conceptual misapplication), "CE" (calculation error) or "FORMAT":
the format itself is broken - a missing, empty, unclosed, nested, duplicated or out-of-order tag,
no tags at all, an over-long output, several different boxed answers, a non-finite number. FORMAT
is booked apart from MC/CM/CE (r3bench.results.errors), rewarded with the minimum (verifiers.rewards) and
answered with a request for the format (verifiers.feedback), never with the MC re-read prompt.
The format is checked first and, when broken, decides the verdict: a broken solution cannot earn
the reward of a content error placed before the break.

The symbolic backend is deterministic and offline. With a seven-tag reference (the procedural bank
gives an exact one) it checks, in the order of the text (step by step, line by line):

  step 1 (MC)  the asked quantity - the reference's quantity its box states, with its name words
               from the reference's analysis - is what the analysis says is asked, and its list of
               givens names neither the asked quantity nor a kind of quantity the problem never states
  step 2 (CM)  the principle names the same law as the reference (step_reading.same_law: law keys such
               as 'energy_cons' or 'friction', contradictions such as 'frictionless' caught, two laws
               that deny each other), and its own formula, where it states one, is no bare calculation,
               dimensionally consistent and true at the problem's values (_principle_formula; a formula
               that holds passes under any name)
  step 3 (CM)  each governing equation - in any arrangement, solved for its one unknown
               (step_reading.governing) - gives, at the true values, the reference's value for its
               quantity, and is dimensionally consistent (pint); an identity (`s = s`) is no law
  step 4 (MC)  each identified value is the reference's (matched by name, or by value and unit when
               the symbol is renamed) or a number of the question (raw or in SI)
  step 5 (CE)  each substitution equals its own equation at the solution's own values (or at the true
               ones: a step that follows from an earlier error is not counted again)
  step 6 (CE)  each calculation result equals its substitution
  step 7 (CE)  the final answer equals the last calculation (units converted) and, read by
               verifiers.check over the whole text, the reference's answer (a wrong answer whose steps
               all check is an error here, not "no verdict")

LaTeX and plain notation, units in any form the answer checker reads, prose inside tags and
renamed symbols are read by verifiers.step_reading. Without a seven-tag reference the reference-free
mode (verifiers.reference_free) runs; where it cannot place an error it returns valid=False with a reason.

Where things live: the verdict type and the step numbering in verifiers.verdict, the format check in
verifiers.tag_format, the checks both symbolic modes share (dimensions, laws, steps 5-7) in
verifiers.step_checks; the entry (verify, the backend table) in verifiers.steps, which imports this module.
"""
from __future__ import annotations

import math
import re

from verifiers import seventag
from verifiers import step_reading as P
from verifiers.step_checks import (UNIT_AFTER_NUMBER, check_arithmetic, dependency_order, dimension_ok, not_a_law,
                                   split_juxtaposed, units_dropped, units_to_si, written_units_ok)
from verifiers.tag_format import boxed_all, format_error
from verifiers.reference_free import CONST_REL_TOL, CONSTANTS, unit_constants, verify_reference_free
from verifiers.units import get_ureg
from verifiers.verdict import StepVerdict, at_step


# --- the symbolic backend with a reference ----------------------------------------------------------

_ASK = re.compile(r"\b(ask|asks|asked|find|finding|determine|calculate|compute|need|needed|want|wanted|required"
                  r"|unknown|seek|sought|what|how|goal|target)\b", re.I)
_SYN = {"distance": ("far", "displacement", "distance"), "speed": ("fast", "velocity", "speed"),
        "velocity": ("fast", "speed", "velocity"), "time": ("long", "time", "duration"),
        "height": ("high", "height"), "length": ("long", "length"), "buoyant": ("upthrust", "buoyant", "buoyancy"),
        "force": ("force", "upthrust", "push", "pull", "tension"), "energy": ("energy",), "wavelength": ("wavelength",)}


def _sym_re(sym: str):
    """The symbol as a word; a subscript matches in either case (F_b, F_B)."""
    head, sep, sub = sym.partition("_")
    pat = re.escape(head) + (f"_(?i:{re.escape(sub)})" if sep else "")
    # not a unit after a number: 'after 2.8 s' does not name the distance s (issue 32)
    return re.compile(rf"(?<![\w'’\\])(?<!\d\s)(?<!\d\s\s)(?<!\d\\,){pat}(?![\w'’])")


def _asked_clause(pa: str) -> str:
    """The sentence(s) of an analysis that say what is asked (the whole text if none does)."""
    before_given = re.split(r"\b(?:given|known|data)\b\s*[:,]?", pa, maxsplit=1, flags=re.I)[0]
    sents = [s for s in re.split(r"(?<=[.;!?\n])\s+", pa) if _ASK.search(s)]
    if before_given.strip() and len(before_given) < len(pa):
        return before_given
    return " ".join(sents) if sents else pa


def _target_names(ref, target: str) -> set[str]:
    """Words naming the target in the reference's analysis: 'the distance travelled (s)' -> distance."""
    pa = P.symbol_text(ref.get("problem_analysis").content if ref.get("problem_analysis") else "")
    out = set()
    for m in re.finditer(rf"((?:[A-Za-z-]+\s+){{1,4}})\(\s*\$?{re.escape(target)}\$?\s*\)", pa):
        words = [w.lower() for w in m.group(1).split() if w.lower() not in ("the", "a", "an", "of", "its", "for")]
        out.update(w for w in words if len(w) > 3 and w not in ("asks", "problem", "find"))
    for w in list(out):
        out.update(_SYN.get(w, ()))
    return out


def _ref_eqs(ref) -> list:
    """The reference's governing equations, each solved for its quantity (a natural form such as
    `h = g t^2 / 2` with h given is read as the equation for t)."""
    vals = P.values(ref.get("value_identification"))
    eqs, _, _ = P.governing(ref.get("governing_equation"), {s for s, *_ in vals}, {s: v for s, v, *_ in vals})
    return eqs


def _ref_target(ref) -> str | None:
    """The reference's asked quantity: the quantity of its calculation whose value is its boxed answer (the last
    such), else its last governing equation's left side (a reference may end with a helper, `r = R + h`)."""
    fa = ref.get("final_answer").content if ref.get("final_answer") else ""
    box = boxed_all(fa)
    q = P.quantity(box[-1]) if box else None
    if q is not None:
        hit = [s for s, v, u, _, _ in P.values(ref.get("calculation")) if P.close(v, q[0]) and (u == q[1] or not q[1])]
        if hit:
            return hit[-1]
    eqs = _ref_eqs(ref)
    if eqs:
        return eqs[-1][0]
    m = re.search(r"\(([A-Za-z_][A-Za-z_0-9]*)\)", ref.get("problem_analysis").content if ref.get("problem_analysis") else "")
    return m.group(1) if m else None


# --- step 1: what the analysis says is asked ---------------------------------------------------------
# A careful grader reads the phrase that states the asked quantity ('Find the speed v', 'We need the time
# of flight', 'the quantity sought is ...', 'Unknown: t', 'The tension in the string is asked') and
# books a miscomprehension only when that phrase clearly names a DIFFERENT quantity: a quantity word of
# another dimension (the acceleration where a distance is asked, the frequency for a period), a
# contrasting qualifier (absolute for gauge pressure), or a symbol that the reference uses for another
# quantity it computes. An analysis that is silent or ambiguous about the asked quantity is no error.

# quantity words -> a unit of their dimension (compared with the reference target's unit by pint)
_KIND = {
    "speed": "m/s", "velocity": "m/s", "fast": "m/s",
    "time": "s", "duration": "s", "long": "s", "period": "s", "interval": "s", "delay": "s",
    "distance": "m", "displacement": "m", "height": "m", "high": "m", "far": "m", "length": "m", "range": "m",
    "wavelength": "m", "depth": "m", "deep": "m", "radius": "m", "diameter": "m", "separation": "m",
    "position": "m", "elongation": "m", "extension": "m", "compression": "m", "amplitude": "m",
    "acceleration": "m/s^2", "deceleration": "m/s^2",
    "force": "N", "tension": "N", "weight": "N", "upthrust": "N", "thrust": "N", "friction": "N", "push": "N",
    "pull": "N", "lift": "N", "drag": "N",
    "energy": "J", "work": "J", "heat": "J",
    "power": "W", "pressure": "Pa", "stress": "Pa",
    "current": "A", "voltage": "V", "emf": "V", "potential": "V",
    "charge": "C", "frequency": "Hz", "mass": "kg", "momentum": "kg*m/s", "impulse": "kg*m/s",
    "resistance": "ohm", "capacitance": "F", "inductance": "H", "density": "kg/m^3", "temperature": "K",
    "magnification": "", "efficiency": "", "index": "", "coefficient": "", "ratio": "",
    "angle": "rad", "torque": "N*m", "flux": "Wb", "field": None,  # 'field' alone: electric or magnetic
}
_HOW = {"far": "far", "fast": "fast", "long": "long", "high": "high", "deep": "deep",
        "much heat": "heat", "much energy": "energy", "much work": "work", "much charge": "charge",
        "much time": "time", "much force": "force", "much power": "power", "much current": "current"}
_CONTRAST = [("gauge", "absolute"), ("horizontal", "vertical"), ("initial", "final"), ("maximum", "minimum"),
             ("kinetic", "potential"), ("linear", "angular"), ("average", "instantaneous"),
             ("image", "object"), ("incidence", "refraction"), ("first", "second"), ("upper", "lower"),
             ("inner", "outer"), ("before", "after"), ("incoming", "target"),
             # a change against the state it leads to: the increase in length is not the final length
             ("change", "final"), ("increase", "final"), ("decrease", "final"), ("rise", "final"), ("drop", "final")]
#: qualifiers that say the same as the reference's ('largest' for 'maximum'); not a different quantity
_SAME_WORDS = {"largest", "greatest", "highest", "biggest", "maximum", "max", "smallest", "least", "lowest", "minimum",
               "min", "magnitude", "size"}
_FILLER = {"the", "a", "an", "its", "their", "his", "her", "magnitude", "size", "value", "amount", "strength",
           "total", "net", "mean", "resulting", "resultant", "required", "of", "for",
           "quantity", "unknown", "asked", "sought", "is", "to", "be", "found", "determine", "this", "that"}
_STOP = {"a", "an", "the", "of", "in", "at", "on", "is", "to", "by", "and", "or", "as", "for", "it", "be", "if"}
_CUE = re.compile(
    r"(?:\b(?:find|finding|determine|determining|calculate|calculating|compute|computing|obtain|evaluate"
    r"|estimate|need|needs|want|wants|wanted|require|requires|seek|seeks|looking\s+for|asked\s+for|asks\s+for"
    r"|ask\s+for|asks\s+about|asked\s+about|asks|asked|question\s+is|goal\s+is|aim\s+is|target\s+is"
    r"|task\s+is|(?:quantity|unknown)\s+(?:sought|asked|required|wanted|needed)\s+is|sought\s+is)\b"
    r"|\b(?:asked|unknown|find|target|goal|sought|required|wanted|to\s+find)\s*:)\s*", re.I)
_PASSIVE = re.compile(r"^(.{2,120}?)\s+(?:is|are)\s+(?:asked|required|sought|wanted|needed|unknown"
                      r"|to\s+be\s+(?:found|determined|calculated|computed))\b", re.I)


#: words that mark a quantity needed on the way to the asked one
#: ('first' only as the adverb that ends the phrase: 'the velocity of the first cart' is the asked one)
_INTERMEDIATE = re.compile(r"\bfirst\s*(?:[.,;:!)]|$)|\b(?:on the way|along the way|intermediate|beforehand|to begin with"
                           r"|as a step)\b", re.I)


def _ask_phrase(pa: str) -> str | None:
    """The phrase that states the asked quantity, None when the analysis states none."""
    text = P.symbol_text(pa).translate(P.SUBDIGITS)
    for sent in re.split(r"(?<=[.;!?\n])\s+", text):
        sent = re.split(r"\b(?:given|known|data)\b\s*(?::|,|\s(?:are|is)\b)|\bwe\s+know\b|;", sent,
                        maxsplit=1, flags=re.I)[0]
        m = re.search(r"\bhow\s+(much\s+\w+|far|fast|long|high|deep)\b", sent, re.I)
        c = _CUE.search(sent)
        if m and (not c or m.start() <= c.end() + 12):
            return _HOW.get(m.group(1).lower(), m.group(1).lower())
        p = _PASSIVE.match(sent.strip())
        if c and _INTERMEDIATE.search(sent[c.end():]):
            continue  # 'we need the wave speed v first', 'on the way we need E': an intermediate, not the asked one
        if c and re.search(r"[A-Za-z]", sent[c.end():]):
            return sent[c.end():]
        if p and not re.fullmatch(r"(?:we|i|it|you|this|that|what)", p.group(1).strip(), re.I):
            return p.group(1)
    return None


def _unit_dims(unit):
    try:
        return str(get_ureg()(unit or "dimensionless").dimensionality) if unit is not None else None
    except Exception:  # noqa: BLE001 - an unknown unit: no dimension to compare
        return None


def _head(phrase: str) -> tuple[str | None, str | None, list[str]]:
    """(first quantity word, the symbol written for the asked quantity, the name's words up to that
    symbol): 'the speed at the top (v_t) of ...' -> ('speed', 'v_t', ['speed', 'top'])."""
    # a number ends the name: what follows it is a given and its unit ('of a 0.50 kg ball')
    toks = re.findall(r"(?<![\w.])\d[\d.]*(?:e-?\d+)?|\|?[A-Za-z][A-Za-z0-9_]*\|?|[(),=;:]", phrase)[:24]
    words, sym, word, closed = [], None, None, False
    for i, w in enumerate(toks):
        lw = w.lower().strip("|")
        if w in ("=", ";") or w[0].isdigit() or lw in ("given", "where", "using"):
            break
        prev, nxt = (toks[i - 1] if i else ""), (toks[i + 1] if i + 1 < len(toks) else "")
        if _symbolish(w) and nxt != "=" and (
                (prev == "(" and nxt == ")") or (prev.lower() in _KIND and not closed)
                or (not words and all(t.lower() in _FILLER or t in "(,:" for t in toks[:i]))):
            sym = w.strip("|")
            break
        if closed or w in "(),:":
            closed = closed or w == ","
            continue
        if lw in ("from", "when", "if", "while", "after", "before", "that", "which", "so", "since", "because",
                  "with", "assuming", "and", "by"):
            closed = True
            continue
        if lw in _KIND and word is None:
            word = lw
        if lw not in _FILLER and lw not in _STOP:
            words.append(lw)
    return word, sym, words


def _symbolish(w: str) -> bool:
    w = w.strip("|")
    return bool(re.fullmatch(r"[A-Za-z](?:_[A-Za-z0-9]+|\d{1,2}[A-Za-z]?)?|[A-Za-z]{1,3}_[A-Za-z0-9]+|[A-Z]{2,3}|(?:lambda|theta"
                             r"|omega|rho|varepsilon|epsilon|phi|Phi|mu|sigma|tau|alpha|beta|gamma|Delta_\w+)\d?", w)) \
        and w.lower() not in _STOP and w.lower() not in _KIND and w.lower() not in _FILLER


def _check_target(sol, ref, tgt: str | None) -> str | None:
    """`tgt`: the reference's asked quantity (_ref_target)."""
    if not tgt:
        return None
    phrase = _ask_phrase(sol.get("problem_analysis").content)
    if phrase is None:
        return None  # silent about the asked quantity: nothing misread
    word, sym, mine = _head(phrase)
    if sym and _sym_re(tgt).fullmatch(sym):
        return None
    computed = {s for s, _, _ in _ref_eqs(ref) + P.equations(ref.get("calculation"))}
    rvals = {s: u for s, _, u, _, _ in P.values(ref.get("calculation")) + P.values(ref.get("value_identification"))}
    rphrase = _ask_phrase(ref.get("problem_analysis").content) if ref.get("problem_analysis") else None
    rword, _, rwords = _head(rphrase) if rphrase else (None, None, [])
    names = set(rwords) | _target_names(ref, tgt)
    for w in list(names):
        names.update(_SYN.get(w, ()))
    if sym and (sym in computed or sym in rvals):
        if word is None or _unit_dims(rvals.get(sym)) != _unit_dims(rvals.get(tgt)) or sym in computed:
            return f"problem_analysis takes {sym} for the asked quantity {tgt}"
    elif sym and names and [w for w in mine if w not in names and w not in _SAME_WORDS] and not (
            word and _unit_dims(_KIND.get(word)) and _unit_dims(_KIND.get(word)) == _unit_dims(rvals.get(tgt)
                                                                                       or _KIND.get(rword))):
        # a symbol of its own for a quantity named otherwise than the asked one: another quantity - unless its
        # quantity word has the asked quantity's dimension ('the surface gravitational acceleration g_M' for the
        # free-fall acceleration g): then the contrast and dimension checks below decide (judge the physics)
        return f"problem_analysis takes {' '.join(mine)} ({sym}) for the asked quantity {tgt}"
    if word is None:
        return None
    tdims = _unit_dims(rvals.get(tgt)) if tgt in rvals else None
    wdims = _unit_dims(_KIND.get(word))
    want = {d for d in (tdims, _unit_dims(_KIND.get(rword)) if rword else None) if d}
    if wdims and want and wdims not in want:
        return f"problem_analysis asks for the {word} where the {rword or tgt} ({tgt}) is asked"
    for a, b in _CONTRAST:
        for x, y in ((a, b), (b, a)):
            if x in names and y in mine and y not in names:
                return f"problem_analysis asks for the {y} {word} where the {x} one ({tgt}) is asked"
    return None


_GIVEN_LIST = re.compile(r"\b(?:given|known|data)\b\s*(?::|,|\s(?:are|is)\b)\s*(.{1,400})", re.I | re.S)
_GIVEN_ITEM = re.compile(r"^(?:the|a|an|its|his|her)?\s*([A-Za-z][A-Za-z' -]{1,60}?)\s*\(?\$?\\?"
                         r"([A-Za-z][A-Za-z_0-9{}]*)\$?\)?$")
_QTY = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?(?:\s*(?:[eE][-+]?\d+|(?:x|×|\\times)\s*10\^\{?[-+]?\d+\}?))?)\s*"
                  r"([A-Za-zΩµ°][A-Za-zΩµ°/^*·0-9-]{0,14})")
#: symbols of constants a list of givens may name without the problem stating them
_CONSTANTS = {"g", "c", "h", "e", "G", "k", "k_e", "m_e", "m_p", "N_A", "R", "k_B", "epsilon_0", "mu_0", "sigma",
              "pi", "hbar", "rho_w", "c_w", "L_f", "L_v"}


def _question_dims(question: str) -> set:
    """The dimensions of the quantities the problem states (`13 cm`, `9.8 m/s^2`)."""
    out = set()
    for m in _QTY.finditer(P.symbol_text(question or "")[:4000]):
        q = P.quantity(f"{m.group(1)} {m.group(2)}")
        if q is not None and (d := _unit_dims(q[1])):
            out.add(d)
    return out


def _invented_given(sol, ref, question: str | None, tgt: str | None) -> str | None:
    """Step 1 lists as a given the asked quantity itself, or a quantity of a kind the problem states
    nowhere (a 'contact time' where only lengths are given): a misread problem (MC at step 1). Read only
    from an explicit list of givens (`Given: the radius r, the contact time t_c`), item by item; an item
    whose kind or symbol is not clear, a constant, or a symbol of the reference's givens is no error.
    `tgt`: the reference's asked quantity (_ref_target)."""
    pa = P.symbol_text(sol.get("problem_analysis").content).translate(P.SUBDIGITS)
    m = _GIVEN_LIST.search(pa)
    if not m or not question:
        return None
    phrase = _ask_phrase(pa)
    asked = _head(phrase)[1] if phrase else None
    rvals = {s for s, *_ in P.values(ref.get("value_identification"))}
    qdims = None
    tail = re.split(r"(?<=[.;!?])\s|\n", m.group(1))[0]
    for item in re.split(r",|;|\band\b", tail.strip().rstrip(".")):
        im = _GIVEN_ITEM.match(item.strip())
        if not im:
            continue
        words, sym = im.group(1).lower().split(), im.group(2)
        short = re.fullmatch(r"[a-z]{2}", sym) and sym not in _STOP and sym not in {"at", "up", "no", "km", "cm", "mm"}
        if not (_symbolish(sym) or short) or sym in rvals or sym in _CONSTANTS:
            continue
        if sym in {asked, tgt} - {None} and tgt not in rvals:
            return f"problem_analysis lists the asked quantity {sym} as a given"
        kind = next((w for w in reversed(words) if w in _KIND), None)
        if kind is None or words[-1] != kind or not _KIND.get(kind):
            continue
        if qdims is None:
            qdims = _question_dims(question)
        if qdims and _unit_dims(_KIND[kind]) not in qdims:
            return f"problem_analysis lists a given {' '.join(words)} ({sym}) that the problem does not state"
    return None


_MAX_QUANTITIES = 20


def _given_list(sol) -> str:
    """The analysis's explicit list of givens (`Given: m = 3.0 kg, v = 5.0 m/s.`), to its sentence's end; '' if none."""
    pa = P.symbol_text(sol.get("problem_analysis").content if sol.get("problem_analysis") else "")
    m = _GIVEN_LIST.search(pa)
    return re.split(r"(?<=[.;!?])\s|\n", m.group(1))[0] if m else ""


def _omitted_given(sol, sym: str, unit: str | None, question: str | None) -> str | None:
    """A value misread at step 4 whose given the analysis's explicit list of givens left out: the list states values,
    the problem states a quantity of that kind, and the list states none (`Given: m = 3.0 kg.`, then `v = 4.0 m/s` for a
    cart at 5.0 m/s): the problem was misread where its givens were taken in, step 1."""
    given = _given_list(sol)
    items = [x for x in re.split(r",|;|\band\b", given.strip().rstrip(".")) if x.strip()]
    if any(not re.search(r"\d", x) for x in items):
        return None  # an item in words ('its initial speed') may name the given: nothing shown to be left out
    listed = _quantities(given)
    if not listed or not unit or any(u == unit for _, u, _ in listed):
        return None
    if not any(u == unit for _, u, _ in _quantities(question or "")):
        return None
    return (f"problem_analysis lists the givens without the problem's {sym} ({unit}), and the value used for it "
            f"later is not the problem's")


def _quantities(text: str) -> list[tuple[float, str, str]]:
    """(SI value, SI unit, text) of each `number unit` a text writes (`340 g`, `0.10 m`, `500 nm`): the first
    _MAX_QUANTITIES candidates only (each read once), so that the time per solution stays bounded."""
    out, seen = [], set()
    for k, m in enumerate(_QTY.finditer(P.symbol_text(text or "")[:4000])):
        if k >= _MAX_QUANTITIES:
            break
        if m.group(0) in seen:
            continue
        seen.add(m.group(0))
        q = P.quantity(f"{m.group(1)} {m.group(2)}")
        if q is not None and q[1]:
            out.append((q[0], q[1], m.group(0)))
    return out


def _misread_value(sol, known: dict, question: str | None) -> str | None:
    """Step 1 restates a given with a value the problem does not give (`a cart of mass 340 kg` for a 340 g cart,
    `compressed by 1.0 cm` for 0.10 m): MC at step 1, where the misreading first shows. Judged only for a value
    whose unit the problem also states a quantity in (SI): it must be one of those, their sum or difference, or a
    value of the reference (a result restated is no misreading); temperatures are not judged (a melting or boiling
    point, 0 °C or 100 °C, is known, not given)."""
    qq = _quantities(question or "")
    if not qq:
        return None
    listed = {t for _, _, t in _quantities(_given_list(sol))}
    for v, u, text in _quantities(sol.get("problem_analysis").content):
        same = [x for x, uq, _ in qq if uq == u]
        if u == "kelvin" or any(P.close(v, x) for x in same) or any(P.close(v, kv) for kv, ku in known.values() if ku == u):
            continue
        if not same:
            # a value of a kind the problem states nowhere, listed among the givens (`Given: m = 3 kg, t = 2 s` for a
            # problem with no time): a given the problem does not have - unless it is a constant's value
            if text in listed and not any(P.close(v, c, 0.05) for cs in CONSTANTS.values() for c in cs):
                return f"problem_analysis lists {text.strip()} as given, a quantity the problem does not state"
            continue
        if any(P.close(v, abs(a - b)) or P.close(v, a + b) for i, a in enumerate(same) for b in same[i + 1:]):
            continue
        return f"problem_analysis states {text.strip()}, a value the problem does not give"
    return None


_FORMULA = re.compile(r"([^:;,.]{1,40}?=[^;,]{1,60}?)(?:[.;,]\s|[.;,]?$)")


def _formula_text(principle: str) -> str | None:
    """The text of the formula a principle states ('distance = speed x time'), cut at the first preposition after
    it, operator words as operators; None when it states none."""
    m = _FORMULA.search((principle or "").strip())
    if not m:
        return None
    f = re.split(r"\s(?:at|for|with|when|where|in|of|and|if|near|on|from|so|because|which)\s", m.group(1) + " ",
                 flags=re.I)[0]
    f = re.sub(r"\b(?:times|x|multiplied by)\b|×|·|\\cdot", "*", f, flags=re.I)
    f = re.sub(r"\b(?:over|divided by)\b", "/", f, flags=re.I)
    f = re.sub(r"\s+squared\b", "^2", f, flags=re.I)
    return re.sub(r"\*\*", "^", f)


def _formula(principle: str) -> str | None:
    """The formula a principle states ('distance = speed x time'), normalised; None when it states none."""
    f = _formula_text(principle)
    return re.sub(r"[\s*]+", "", f.lower()) if f is not None else None


def _kind_form(formula: str, units: dict) -> str | None:
    """A formula with every quantity replaced by a name for its dimension: a quantity word ('wave speed',
    'frequency') by its kind's (_KIND), a symbol by its unit's; other words ('wave', 'the') dropped. None when a
    name is neither, or a side is empty. 'wave speed = frequency * wavelength' and `v = f*lambda` read alike."""
    dims_name: dict = {}

    def name_of(dims):
        return dims_name.setdefault(dims, f"Q{len(dims_name)}")

    out = []
    for tok in re.findall(r"\\?[A-Za-z][A-Za-z0-9_{}]*|[^A-Za-z\\\s]+", formula):
        word = tok.lstrip("\\")
        if word not in units and len(word) > 3 and _symbolish(word):  # `lambda` may be written `lam` in the values
            word = next((k for k in sorted(units) if len(k) >= 3 and word.startswith(k)), word)
        if not word[:1].isalpha():
            out.append(tok)  # operators, brackets, numbers
        elif word.lower() in _KIND and _KIND[word.lower()] and not (word in units and len(word) <= 2):
            if not (d := _unit_dims(_KIND[word.lower()])):
                return None
            out.append(name_of(d))
        elif word in units and units[word] is not None:
            d = _unit_dims(units[word])
            if d is None:
                return None
            out.append(name_of(d))
        elif word in P.FUNCS or word == "pi":
            out.append(word)
        elif re.fullmatch(r"[A-Za-z]{3,}", word) and word.lower() not in _KIND and not _symbolish(word):
            continue  # a word of the name ('wave', 'the'), no quantity
        else:
            return None
    text = " ".join(out)
    return text if text.count("=") == 1 and all(x.strip() for x in text.split("=")) else None


def _same_relation(a: str, b: str, units: dict) -> bool:
    """Whether two formulas, read as relations between kinds of quantity (_kind_form), are the same law: the ratio
    of the sides is the same function of the quantities (or its reciprocal), at a few random points."""
    fa, fb = _kind_form(a, units), _kind_form(b, units)
    if fa is None or fb is None:
        return False
    import random
    rng = random.Random(0)
    try:
        names_ = set().union(*(P.names(side) for f in (fa, fb) for side in f.split("=")))
        for _ in range(3):
            env = {n: rng.uniform(0.5, 2.5) for n in names_}
            ra = P.evaluate(fa.split("=")[0], env) / P.evaluate(fa.split("=")[1], env)
            rb = P.evaluate(fb.split("=")[0], env) / P.evaluate(fb.split("=")[1], env)
            if not (P.close(ra, rb) or P.close(ra * rb, 1.0)):
                return False
    except (P.ExprError, ZeroDivisionError, OverflowError, ValueError):
        return False
    return True


#: law keys that name a quantity the law works with (not a setting): naming one the reference does not is using it
_LAW_IN_USE = {"refrigerator", "engine", "mean_life"}


def _wrong_law_stated_at_step_2(sol_principle: str, ref_principle: str, units: dict | None = None) -> str | None:
    """When an equation is wrong at step 3: the same wrong law is already written in the principle if the
    principle states a formula other than the reference principle's (the first error is where the text
    first shows it). None when either states no formula, or both state the same one - as written, or as a
    relation between the same kinds of quantity ('wave speed = frequency x wavelength' is `v = f lambda`: the
    principle is right and the equation beneath it is the first error)."""
    a, b = _formula(sol_principle), _formula(ref_principle)
    if a and b and a != b and not _same_relation(_formula_text(sol_principle), _formula_text(ref_principle),
                                                 units or {}):
        return f"the principle states {a} where the law that applies is {b}"
    return None


_CLAUSE = re.compile(r"[;:()\[\]]|\.\s|\.$|,\s|\s(?:gives|so|then|where|with|for|when|and|if|because|since|which|is|"
                     r"means|here|at|in|of|on)\s")
_NUMBER = re.compile(r"(?<![A-Za-z_])\d+\.?\d*(?:[eE][-+]?\d+)?")


_WORD_EQUALS = re.compile(r" (?:equals|is equal to|is the same as) ")
_OPERATOR_WORDS = re.compile(r"\b(?:times|per|over|divided|multiplied|product|ratio|sum|difference|change|plus|minus"
                             r"|square|half|twice|rate|loss|lost|gain|gained)\b")


def _expr_words(words: list[str], from_end: bool, env: dict) -> str | None:
    """The run of words at one end of a clause side that reads as an expression, else None. Before a formula's
    left side, prose words (three letters or more, no symbol with a value: 'The Galilean rule p') are dropped."""
    if from_end:
        i = 0
        while i < len(words) and re.fullmatch(r"[A-Za-z'-]{3,}", words[i]) and words[i] not in env \
                and words[i] not in P.FUNCS:
            i += 1
        words = words[i:]
    for k in range(min(len(words), 12), 0, -1):
        part = " ".join(words[-k:] if from_end else words[:k]).strip().rstrip(".")
        if not part:
            continue
        try:
            P.names(part)
        except P.ExprError:
            continue
        return part
    return None


def _principle_formula(principle: str, env: dict, units: dict) -> tuple[bool, str, bool] | None:
    """The principle's own formula judged (issue 32, round four): (holds, why, decisive). (False, why, True) when it writes a calculation
    with numbers only (`Wave speed = 9 m/s / 150 m`: no law) or a formula that is dimensionally
    inconsistent; (False, why, False) when a formula whose symbols all have true values does not hold at them
    (`M = M V`); (True, why, False) when such a formula holds; None when the principle states no formula that can be judged
    (its words, or symbols the solution never gives values). Read by the whitelisted parser, never eval."""
    raw = (principle or "")[:4000].replace("$", " ")  # a principle is a sentence or two: the rest is not read
    # 1. a calculation with numbers: sides whose only names are units written after numbers (`9 m/s / 150 m`)
    for clause in _CLAUSE.split(raw):
        if "=" not in clause or re.search(r"[<>!]=|==", clause):
            continue
        for side_t in clause.split("="):
            side = side_t.strip().rstrip(".")
            dropped = units_dropped(side)
            if len(_NUMBER.findall(side)) < 2 or dropped is None:
                continue
            # every number carries its unit (`760 m/s / 13 m/s`): a lone letter after a number (`5/2 R`) may
            # be a symbol, so one unit is not enough
            if len(UNIT_AFTER_NUMBER.findall(side)) - len(UNIT_AFTER_NUMBER.findall(dropped)) < 2:
                continue
            try:
                if P.names(_NUMBER.sub(" 1 ", dropped)):
                    continue
            except P.ExprError:
                continue
            return False, f"the principle writes a calculation with numbers (`{side}`), not a law", True
    # 2. two quantities of different dimensions said to be equal in words ('the total momentum equals the kinetic
    # energy'); a side that is a product, ratio or change ('mass times acceleration') is not judged
    low = raw.lower()
    for m in _WORD_EQUALS.finditer(low):  # a literal: linear in the text; the phrases around it are cut by hand
        lw = re.findall(r"[a-z']+", low[max(0, m.start() - 80):m.start()])[-6:]
        tail = re.split(r"[.;,:]", low[m.end():m.end() + 80])[0]  # the whole right side, to the clause end
        rw = re.findall(r"[a-z']+", re.sub(r"^\s*(?:the|its|a)\s", " ", tail))[:4]
        heads = []
        for words in (lw, rw):
            phrase = re.split(r"\s(?:of|at|in|on|from|for|to|when|with|by|and|so|which|that)\s", " ".join(words) + " ")
            cut = phrase[0].split()
            heads.append(cut[-1] if cut and cut[-1] in _KIND and _KIND[cut[-1]] else None)
        if all(heads) and not _OPERATOR_WORDS.search(tail) and not re.search(r"[*/×·(]", tail):
            da, db = _unit_dims(_KIND[heads[0]]), _unit_dims(_KIND[heads[1]])
            if da and db and da != db:
                return False, f"the principle equates {heads[0]} with {heads[1]}: quantities of different kinds", True
    # 3. a formula whose symbols have true values, as written (unit letters would be read as symbols here)
    holds = None
    for clause in _CLAUSE.split(raw):
        if "=" not in clause or re.search(r"[<>!]=|==", clause):
            continue
        sides = clause.split("=")
        for left_t, right_t in zip(sides, sides[1:]):
            left = _expr_words(left_t.split(), True, env)
            right = _expr_words(right_t.split(), False, env)
            whole = bool(left and right and right == right_t.strip().rstrip(".") and left_t.strip().endswith(left))
            if not left and right and (kind := (left_t.split() or [""])[-1].lower()) in _KIND and _KIND[kind]:
                # a quantity named in words on the left ('Wave speed = 2*v/lambda'): the one symbol of its kind
                dims = _unit_dims(_KIND[kind])
                cands = sorted(x for x in env if units.get(x) is not None and _unit_dims(units[x]) == dims)
                left = cands[0] if len(cands) == 1 else None
            if not left or not right:
                continue
            try:
                ln, rn = P.names(left), P.names(right)
            except P.ExprError:
                continue
            free = ln | rn
            if not free or free - set(env):
                continue
            try:
                a, b = P.evaluate(left, env), P.evaluate(right, env)
            except (P.ExprError, ZeroDivisionError, OverflowError, ValueError):
                continue
            # temperatures are left out: a difference read as an absolute temperature (30 °C as 303 K) or an offset
            # unit makes pint's verdict unreliable
            offset = any(re.search(r"kelvin|celsius|degC|fahrenheit", str(units.get(x) or "")) for x in free)
            if whole and not offset and len(ln) == 1 and left == next(iter(ln)) \
                    and dimension_ok(right, left, units) is False:
                return False, f"the principle's formula `{left} = {right}` is dimensionally inconsistent", True
            if not P.close(a, b) and not P.close(abs(a), abs(b)):  # a sign convention is no other law
                return False, (f"the principle's formula `{left} = {right}` does not hold at the problem's values "
                               f"({a:.4g} vs {b:.4g})"), False
            if not (ln == {left.strip()} and rn == {right.strip()}):  # `M = m`: one quantity renamed, no law
                holds = (True, f"the principle's formula `{left} = {right}` holds at the problem's values", False)
    return holds


#: values a problem states in words: an angle of 90 degrees ('at right angles', 'perpendicular'), 0 ('parallel',
#: 'from rest', 'dropped')
_IMPLIED = [(re.compile(r"perpendicular|right angles?|at 90|normal to", re.I), (90.0, math.pi / 2)),
            (re.compile(r"\bparallel\b|from rest|at rest|is dropped|dropped from|released from|starts? from rest", re.I),
             (0.0,))]


def _derived_given(sym: str, v: float, chains: dict, qnums: list[float]) -> bool:
    """A value line that shows its own arithmetic on the problem's numbers (`t = 30*4.0 min = 120 min = 2.0 h`):
    an earlier part of the chain, every number of it given (raw or in SI), read in SI, equals the value."""
    for part in chains.get(sym, [])[:-1]:
        si = units_to_si(part) or part
        try:
            if P.names(si):
                continue
            x = P.evaluate(si, {})
        except P.ExprError:
            continue
        nums = [float(t) for t in re.findall(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", part)]
        if nums and all(P.given(t, qnums) for t in nums) and P.close(x, v):
            return True
    return False


def _standard_constant(sym: str, v: float, question: str) -> bool:
    """A physical constant under its own symbol at its own value (`μ₀ = 4π × 10⁻⁷ T·m/A`, `h = 6.626e-34 J s`):
    the value the problem states for it as an expression, or, where the problem states none, the constant's own
    value (the reference-free CONSTANTS table)."""
    if sym not in CONSTANTS:
        return False
    stated = re.search(rf"(?<![A-Za-z_]){re.escape(sym)}\s*=\s*([^,;()=]{{1,60}})", P.symbol_text(question or ""))
    if stated:  # the problem states it as an expression (`mu_0 = 4 pi x 10^-7 T m/A`): that value, no other
        q = P.quantity(stated.group(1))
        return q is not None and P.close(v, q[0])
    return any(P.close(v, c, CONST_REL_TOL) for c in CONSTANTS[sym])


def _implied_numbers(question: str) -> list[float]:
    return [x for rx, xs in _IMPLIED if rx.search(question) for x in xs]


def _law_with_values(rhs: str, goal, qnums) -> bool:
    """The law written with the problem's numbers put in (`s = 28 m/s * 43 s` for s = v t): two or more numbers,
    every one a number of the question, whose combination is the true value. The answer alone (`s = 1204 m`) is
    no law; neither is a combination that gives another value."""
    nums = re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", rhs)
    if goal is None or len(nums) < 2 or not qnums or not all(P.given(float(x), qnums) for x in nums):
        return False
    try:
        return P.close(P.evaluate(rhs, {}), goal[0])
    except P.ExprError:
        return False


def _governing_error(sol_eqs, rels, idents, known, target, true_env, units,
                     instances: set = frozenset(), qnums=()) -> tuple[int, str, bool] | None:
    """Step 3's first error (3, why, movable), or None; fills true_env with each equation's true value on the
    way. movable: a wrong law, which is placed at step 2 when the principle already states it."""
    if idents:
        return 3, idents[0][1], False
    if not sol_eqs:
        return 3, "no governing equation of the form `quantity = expression`", False
    for i, (lhs, parts, _) in enumerate(sol_eqs):
        rhs = parts[-1]
        goal = known.get(lhs) or (known.get(target) if i == len(sol_eqs) - 1 and target else None)
        try:  # a value with its unit written into the law (`s = 24 m*t`): the unit letters are no symbols
            stray = P.names(rhs) - set(true_env) - set(known) - {e[0] for e in sol_eqs}
            dropped = units_dropped(rhs) if stray else None
            if dropped is not None and not P.names(dropped) & stray:
                si = units_to_si(rhs)  # `-13.6 eV / n^2`: the number and its unit, in SI
                rhs = si if si is not None and not P.names(si) & stray else dropped
        except P.ExprError:
            pass
        numeric = False
        if lhs not in instances and (why := not_a_law(lhs, rhs)):  # a law at one index is a number, rightly
            if not _law_with_values(rhs, goal, qnums):
                return 3, why, False
            numeric = True  # the law with the values put in: the units written beside its numbers must fit
            if written_units_ok(parts[-1], (goal or (None, None))[1]) is False:
                return 3, f"the equation for {lhs} is dimensionally inconsistent", True
        try:
            val = P.evaluate(rhs, true_env)
        except P.ExprError:
            val = None
        if val is not None and goal is not None and not P.close(val, goal[0]):
            return 3, (f"the equation for {lhs} gives {val:.4g} where the law that applies gives "
                       f"{goal[0]:.4g}"), True
        if val is not None:
            true_env[lhs] = goal[0] if goal is not None else val
        if goal is not None:
            units.setdefault(lhs, goal[1])
        if not numeric and dimension_ok(rhs, lhs, units) is False:
            return 3, f"the equation for {lhs} is dimensionally inconsistent", True
    for left, right, _ in rels:  # relations among known quantities: both sides at the true values
        try:
            a, b = P.evaluate(left, true_env), P.evaluate(right, true_env)
        except P.ExprError:
            continue
        if not P.close(a, b):
            return 3, f"`{left} = {right}` does not hold at the true values ({a:.4g} vs {b:.4g})", True
    unused = _unused_relations(sol_eqs, rels, known, target, true_env)
    if len(unused) > MAX_UNUSED_RELATIONS:
        return 3, (f"the governing equation states {len(unused)} relations that the working to the asked quantity "
                   f"does not use ({', '.join(unused[:4])}{', ...' if len(unused) > 4 else ''}): a list of laws, "
                   f"not the problem's"), False
    return None


#: relations a governing-equation step may state beside those the working uses (a law in its general form, a
#: balance written before its solved form): the committed real and hand-written solutions state at most two
MAX_UNUSED_RELATIONS = 2


def _unused_relations(sol_eqs, rels, known, target, true_env) -> list[str]:
    """The relations of the governing-equation step that lead nowhere (issue 54, the shotgun step: a dozen laws
    listed beside the right one, each unchecked because its symbols have no values): an equation whose quantity
    is neither a quantity of the reference nor needed, through the other equations, by one that is (or by the
    last, the solution's asked quantity), and a relation without values whose symbols no needed equation, given
    or reference quantity has. A list of laws the working never uses is no step of the solution."""
    if not sol_eqs:
        return []

    def names(expr):
        try:
            return P.names(expr)
        except P.ExprError:
            return set()

    roots = {k for k, (lhs, _, _) in enumerate(sol_eqs) if lhs in known or lhs == target} | {len(sol_eqs) - 1}
    needed, want = set(), set()
    todo = sorted(roots)
    while todo:
        k = todo.pop()
        if k in needed:
            continue
        needed.add(k)
        want |= names(sol_eqs[k][1][-1])
        todo += [j for j, (lhs, _, _) in enumerate(sol_eqs) if j not in needed and lhs in want]
    out = [f"{lhs} = {parts[-1]}" for k, (lhs, parts, _) in enumerate(sol_eqs) if k not in needed]
    have = want | {sol_eqs[k][0] for k in needed} | set(known) | set(true_env)
    for left, right, _ in rels:
        free = names(left) | names(right)
        if free and free - have:
            out.append(f"{left} = {right}")
    return out


#: a number with at most one unit token (`90 degrees`, `0 m/s`, `9.8 m/s^2`), nothing more
_PLAIN_VALUE = re.compile(r"[-+]?\s*\d+(?:\.\d+)?(?:[eE][-+]?\d+)?\s*(?:°|[A-Za-zµΩ°]+(?:\^-?\d+)?"
                          r"(?:/[A-Za-zµΩ]+(?:\^-?\d+)?)?)?")


def _values_among_equations(eqs, svals, true_env, units, target, question) -> list:
    """A governing-equation line that states a value of the problem (`theta = 90 degrees` for a wire at right
    angles to the field) beside the law is a value identified there, not a law that is a bare number: it is moved
    to the values (svals, true_env, units updated). Only a number the problem gives (or implies: 90 degrees for
    'perpendicular'), for a symbol that is not the asked quantity; the answer written as the law stays a law."""
    qnums = P.numbers_in(question or "") + _implied_numbers(question or "")
    have = {s for s, *_ in svals}
    out = []
    for lhs, parts, line in eqs:
        rhs = parts[-1]
        q = P.quantity(rhs) if len(parts) == 1 and _PLAIN_VALUE.fullmatch(rhs.strip()) else None
        if q is not None and lhs != target and any(s_ == lhs and P.close(q[0], v_) for s_, v_, *_ in svals):
            continue  # `with theta = 90° so tau = r F`: a value the value step identifies too, restated beside the law
        if q is not None and qnums and lhs != target and lhs not in have and P.given(q[0], qnums):
            svals.append((lhs, q[0], q[1], rhs, -1))
            true_env.setdefault(lhs, q[0])
            units.setdefault(lhs, q[1])
            have.add(lhs)
            continue
        out.append((lhs, parts, line))
    return out


def _indexed_laws(eqs, givens: set) -> list:
    """A law written for any index (`E_n = -13.6 eV / n^2`) and used at given indices by the other equations
    (`E_photon = E_3 - E_2`): the law at each index used is an equation of its own (`E_3 = -13.6 eV / (3)^2`), put
    before the law in general symbols (which, its index never identified, is then a statement of the law).
    Returns (equations, the names of the laws at an index)."""
    out, instances = list(eqs), set()
    for lhs, parts, line in eqs:
        m = re.fullmatch(r"([A-Za-z]+)_([a-z])", lhs)
        if not m or m.group(2) in givens:
            continue
        try:
            if m.group(2) not in P.names(parts[-1]):
                continue
            used = set().union(*(P.names(p[-1]) for _, p, _ in eqs))
        except P.ExprError:
            continue
        for name in sorted(used):
            k = re.fullmatch(rf"{m.group(1)}_(\d+)", name)
            if k and name not in {e[0] for e in out}:
                inst = re.sub(rf"(?<![\w\\]){m.group(2)}(?!\w)", f"({k.group(1)})", parts[-1])
                out.insert(out.index((lhs, parts, line)), (name, [inst], line))
                instances.add(name)
    return out, instances


#: a number as prose writes it (`0.02`, `1.0e-3`, `2.5 x 10^3`), then the words after it that may be its unit
_PROSE_NUMBER = re.compile(r"(?<![\w.^{])[-+−]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+−]?\d+|\s*(?:×|x|\\times)\s*10\s*\^?\s*\{?[-+−]?\d+\}?)?")
_PROSE_UNITS = [(re.compile(r"\bcubic\s+(?:metres?|meters?)\b", re.I), "m^3"),
                (re.compile(r"\bsquare\s+(?:metres?|meters?)\b", re.I), "m^2"),
                (re.compile(r"\bcubic\s+(?:centimetres?|centimeters?)\b", re.I), "cm^3"),
                (re.compile(r"\bper\s+(?=[a-zµ°])", re.I), "/ "), (re.compile(r"\s*/\s*"), "/")]


def _prose_quantities(text: str) -> list[tuple[float, str, str]]:
    """Every `number unit` of prose (`the block's volume is 0.02 cubic metres`, `mass 12 kg`), as (SI value, SI
    unit, text); numbers without a unit are left out (they cannot be told apart)."""
    t = P.symbol_text(text or "")
    for rx, rep in _PROSE_UNITS:
        t = rx.sub(rep, t)
    out = []
    for k_, m in enumerate(_PROSE_NUMBER.finditer(t[:4000])):
        if k_ >= 40:  # a flood of numbers: the first forty are read (each costs a few unit look-ups)
            break
        toks = re.match(r"\s*([^\s,;()]+(?:\s+[^\s,;()]+){0,2})", t[m.end():m.end() + 40])
        toks = toks.group(1).split() if toks else []
        for k in range(len(toks), 0, -1):
            unit = " ".join(toks[:k]).rstrip(".:")
            if not re.match(r"[A-Za-zµΩ°]", unit):
                continue
            q = P.quantity(f"{m.group(0)} {unit}")
            if q is not None and q[1]:
                out.append((q[0], q[1], f"{m.group(0)} {unit}"))
                break
    return out


def _values_in_prose(sol, svals, known: dict, names_used: set) -> list:
    # known: the reference's givens (symbol -> (SI value, SI unit)); a quantity it computes is never taken from prose
    """Values the solution states in prose, bullets or its analysis rather than as `symbol = value` lines (`the
    displaced volume is 0.02 m^3`, `mass 12 kg, acceleration 2.5 m/s^2`), for the symbols its equations use and
    never identify: each such symbol of the reference's kind (its unit, by name or by the name's head: rho_water
    for rho) takes the quantity of that unit the solution writes - the one nearest the true value where several
    are. Symbols written side by side (`ma`) are read as their letters. Returns new (symbol, value, unit, text, -1)."""
    have = {s_ for s_, *_ in svals}
    heads = {}
    for k_, (v_, u_) in known.items():
        heads.setdefault(k_.split("_")[0], (v_, u_))
    want = {}
    for name in sorted(names_used - have):
        letters = list(name) if len(name) > 1 and name not in known and all(ch in known for ch in name) else [name]
        for x in letters:
            ref = known.get(x) or (heads.get(x.split("_")[0]) if "_" in x else None)
            if x not in have and ref is not None and ref[1]:
                want[x] = ref
    if not want:
        return []
    # the value step first: a value it misreads (`the volume is 0.2 m^3`) is not excused by the analysis's 0.02
    sources = [_prose_quantities(sol.get(t).content or "") for t in ("value_identification", "problem_analysis")
               if sol.get(t)]
    taken = [(v_, u_) for _, v_, u_, *_ in svals]
    out = []
    for x, (tv, tu) in want.items():
        for found in sources:
            cands = [c for c in found if c[1] == tu and not any(P.close(c[0], v_) and c[1] == u_ for v_, u_ in taken)]
            if cands:
                pick = next((c for c in cands if P.close(c[0], tv)), cands[0])
                out.append((x, pick[0], pick[1], pick[2], -1))
                taken.append((pick[0], pick[1]))
                break
    return out


def _equation_names(step) -> set:
    """Every name the lines of a step use (on either side of `=`), for the lines that read as expressions."""
    out = set()
    for ln in P.lines(step):
        for side in ln.split("="):
            try:
                out |= P.names(side)
            except P.ExprError:
                continue
    return out


#: a product of two one-letter symbols given a value as one quantity: `h f = 4.0 eV`, `m·g = 20 N` (`hf = ...` is one name)
_PRODUCT_GIVEN = re.compile(r"(?:^|(?<=[\n,;]))[ \t$-]*([A-Za-z])(?:[ \t]*[·*][ \t]*|[ \t]+)([A-Za-z])[ \t]*=[ \t]*[-+]?\d", re.M)


def _products_as_one(text: str) -> str:
    """A product given one value in the value step (`h f = 4.0 eV`: the photon energy) is one quantity wherever it is
    written (`KE = h f - phi` uses it): written `hf` throughout, so its factors need no values of their own."""
    m = re.search(r"<value_identification>(.*?)</value_identification>", text or "", re.S)
    if not m:
        return text
    for a, b in sorted({(x.group(1), x.group(2)) for x in _PRODUCT_GIVEN.finditer(m.group(1)[:4000])})[:4]:
        text = re.sub(rf"(?<![\w\\]){a}[ \t]*[·*]?[ \t]*{b}(?![\w])", a + b, text)
    return text


def verify_symbolic(question: str, solution: str, reference: str) -> StepVerdict:
    bad = format_error(solution)
    if bad is not None:
        return bad
    solution, reference = _products_as_one(solution), _products_as_one(reference)
    ref = seventag.parse(reference or "")
    if ref.n == 0 or format_error(reference) is not None:
        return verify_reference_free(question, solution, reference or None)
    sol = seventag.parse(solution)
    n = sol.n
    get = sol.get
    # 1. the asked quantity
    target = _ref_target(ref)
    why = _check_target(sol, ref, target) or _invented_given(sol, ref, question, target)
    if why:
        return at_step(1, why, n)
    # 2. the principle: judged after the equations are read (its formula is checked at the true values)
    principle, ref_principle = get("principle").content, ref.get("principle").content
    law_ok, law_why = P.same_law(principle, ref_principle)
    # reference data: true values (SI) of the givens and of every computed quantity
    rvals = {s: (v, u) for s, v, u, _, _ in P.values(ref.get("value_identification"))}
    known = dict(rvals)
    for s, v, u, _, _ in P.values(ref.get("calculation")):
        known[s] = (v, u)
    if (why := _misread_value(sol, known, question)):
        return at_step(1, why, n)
    svals = P.values(get("value_identification"))
    eq_names = _equation_names(get("governing_equation"))
    svals += _values_in_prose(sol, svals, rvals, eq_names)
    # the solution's symbols mapped onto the reference's: by name, else by value and unit
    true_env, units = {}, {}
    for s, v, u, _, _ in svals:
        if u or v != 0:  # a bare 0 (`u_2 = 0`) tells no unit: it is zero in any (the dimension check skips it)
            units[s] = u
        if s in known and (known[s][1] == u or not u):
            true_env[s] = known[s][0]
            continue
        m = next((r for r, (rv, ru) in rvals.items() if ru == u and P.close(rv, v)), None)
        true_env[s] = rvals[m][0] if m else v
    for s, (v, u) in known.items():
        if u or v != 0:
            units.setdefault(s, u)
    # a physical constant the values are measured in (`v = 0.80 c`) is identified at its value
    consts = unit_constants((get("value_identification").content or "") + "\n" + (question or ""),
                            eq_names - {s for s, *_ in svals})
    for s, v in consts.items():
        true_env[s] = v
        units.setdefault(s, P.unit_of(f"1 {s}"))
    # a quantity given as a multiple of such a constant (`v/c = 0.80`) is identified: its value, that multiple
    raw_consts = {s: 1.0 for s in consts}
    for a, b, x, i in P.ratio_values(get("value_identification")):
        if b in consts and a not in {s for s, *_ in svals}:
            u = units[b]
            svals.append((a, x * consts[b], u, f"{x:g} {b}", i))
            units[a], raw_consts[a] = u, x
            m = next((r for r, (rv, ru) in rvals.items() if ru == u and P.close(rv, x * consts[b])), None)
            true_env[a] = known[a][0] if a in known and known[a][1] == u else rvals[m][0] if m else x * consts[b]
    # 3. governing equations (any arrangement, solved for their quantity), at the true values
    givens = {s for s, *_ in svals} | set(consts)
    eqs, rels, idents = P.governing(get("governing_equation"), givens, {**{s: v for s, v, *_ in svals}, **consts})
    eqs = _values_among_equations(eqs, svals, true_env, units, target, question)
    eqs, instances = _indexed_laws(eqs, givens | {s for s, *_ in svals})
    sol_eqs = dependency_order(split_juxtaposed(eqs, givens | {s for s, *_ in svals}))
    step3 = _governing_error(sol_eqs, rels, idents, known, target, true_env, units, instances,
                             P.numbers_in(question or ""))
    # the principle's own formula at the true values (the solution's asked symbol stands for the target)
    penv = {s: v for s, (v, _) in known.items()}
    penv.update(true_env)
    if sol_eqs and target in known:
        penv.setdefault(sol_eqs[-1][0], known[target][0])
    formula = _principle_formula(principle, penv, units)
    if formula is not None and not formula[0] and (
            step3 is not None or formula[2] or not P.laws(principle) & P.laws(ref_principle) - P.CONTEXT_WORDS):
        # bare numbers or a dimensionally wrong formula; a formula that does not hold at the true values under
        # no law of the reference, or under a named law whose wrong equations follow (a named law's formula for
        # one part of the problem - `Q = m c dT` for one stage - may differ from the total: not judged alone)
        return at_step(2, formula[1], n)
    if not law_ok and not (formula and formula[0] and law_why.startswith(("the principle does not name",
                                                                          "the principle names nothing"))):
        return at_step(2, law_why, n)
    if step3 is not None:
        step, why, movable = step3
        # a principle whose own formula holds at the problem's values names the right law: the equation is the error
        if movable and not (formula and formula[0]) and (w2 := _wrong_law_stated_at_step_2(principle, ref_principle,
                                                                                             units)):
            return at_step(2, w2, n)
        extra = P.laws(principle) - P.laws(ref_principle) - P.CONTEXT_WORDS - P.OPTIONAL
        if movable and step == 3 and "gives" in why and extra & _LAW_IN_USE:
            # the wrong law the equation uses is the one the principle names beside the problem's (the half-life taken
            # as the mean lifetime): the first error is where the principle names it
            return at_step(2, f"the principle brings in {', '.join(sorted(extra & _LAW_IN_USE))}, which the problem's "
                              f"law does not use, and the equation written from it is wrong ({why})", n)
        return at_step(step, why, n)
    # 4. values: the reference's, or numbers of the question
    qnums = P.numbers_in(question or "") + _implied_numbers(question or "")
    chains = {e[0]: e[1] for e in P.equations(get("value_identification"))}
    for s, v, u, text, _ in svals:
        if s not in rvals and s in known and u and known[s][1] and u != known[s][1] and v:
            # a given put under the symbol of a quantity the problem asks for or derives (`s = 12 m/s` for the distance)
            return at_step(4, f"{s} is identified as {text}, which is not a quantity of the kind of {s} "
                              f"({known[s][1]})", n)
        if s in rvals and (rvals[s][1] == u or not u):
            if not P.close(v, rvals[s][0]):
                if (why := _omitted_given(sol, s, rvals[s][1], question)):
                    return at_step(1, why, n)
                return at_step(4, f"the value of {s} contradicts the problem ({text} vs {rvals[s][0]:.4g} "
                                  f"{rvals[s][1]})", n)
            continue
        if any(ru == u and P.close(rv, v) for rv, ru in rvals.values()):
            continue
        if qnums and not P.given(v, qnums) and not _derived_given(s, v, chains, qnums) \
                and not _standard_constant(s, v, question):
            if (why := _omitted_given(sol, s, u, question)):
                return at_step(1, why, n)
            return at_step(4, f"the value {s} = {text} appears nowhere in the problem", n)
    defined = {s for s, *_ in svals} | set(consts) | {lhs for lhs, _, _ in sol_eqs}
    general, first_missing = [], None
    for k, (lhs, parts, _) in enumerate(sol_eqs):
        try:
            free = P.names(parts[-1])
            if free - defined and (dropped := units_dropped(parts[-1])) is not None:
                free = P.names(dropped)  # a unit written after a number (`-13.6 eV / n^2`) is no symbol
        except P.ExprError:
            continue
        missing = sorted(free - defined)
        if missing:
            first_missing = first_missing or (lhs, missing[0])
            general.append(k)
    if general and len(general) < len(sol_eqs):
        # the law stated in general symbols beside the working equations (`W = KE_f - KE_i`, `L_before = L_after`,
        # `Phi = B*A` with B1 and B2 given, `A = pi*d^2/4` for both pipes): a statement of the law, not an equation
        # the solution evaluates - the other equations carry the working (issue 32, round four)
        sol_eqs = [e for k, e in enumerate(sol_eqs) if k not in general]
    elif first_missing:
        lhs, name = first_missing
        ref_eqs = _ref_eqs(ref)
        ref_names = set(known) | {e[0] for e in ref_eqs}
        for e in ref_eqs:
            try:
                ref_names |= P.names(e[1][-1])
            except P.ExprError:
                pass
        if name not in ref_names and re.search(rf"(?<![\w\\]){re.escape(name)}(?!\w)", principle):
            # a quantity the problem does not have, brought in by the principle's own law ('wave speed = 2 tan(phi)'):
            # the law is wrong where it is first written, not a value left unidentified
            return at_step(2, f"the principle's law uses {name}, a quantity the problem does not have", n)
        return at_step(4, f"{name} is used in the equation for {lhs} but its value is never identified", n)
    # one quantity's law written twice (`tau = r F sin(theta)`, then with theta = 90° `tau = r F`): both held at step 3;
    # the working follows the last form
    sol_eqs = [e for k, e in enumerate(sol_eqs) if e[0] not in {x[0] for x in sol_eqs[k + 1:]}]
    rfa = ref.get("final_answer").content if ref.get("final_answer") else ""
    rbox = boxed_all(rfa)
    return check_arithmetic(sol, sol_eqs, {**consts, **{s: v for s, v, *_ in svals}}, true_env, n, known.get(target),
                            solution, (rbox[-1] if rbox else rfa.strip()) or None, question,
                            raw_extra=raw_consts)
