"""Error injection at a known step with a known class; later steps follow from the error.

Classes (the paper's error taxonomy) and the steps where each is injected:
  MC  miscomprehension: the target misread (step 1) or a given value misread (step 4)
  CM  conceptual: a wrong law (step 2: the principle and its equation) or a formula outside its
      validity under the right principle (step 3)
  CE  calculation: a value substituted wrongly (step 5) or an arithmetic slip (step 6)
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace

from r3bench.procgen.core import Derivation, Template, shown, symbols, to_si, with_changes

CLASSES = {"MC": (1, 4), "CM": (2, 3), "CE": (5, 6)}
CLASS_NAMES = {"MC": "miscomprehension", "CM": "conceptual", "CE": "calculation"}
SLIPS = (10.0, 0.1, 2.0, 0.5)


class InjectError(ValueError):
    """This template cannot take this error at this step (e.g. no wrong law declared)."""


@dataclass(frozen=True)
class Injected:
    derivation: Derivation
    first_error: int
    error_class: str
    description: str


def _differs(a: Derivation, b: Derivation) -> bool:
    if a.answer_unit != b.answer_unit:
        return True
    x, y = a.answer, b.answer
    return math.isfinite(x) and abs(x - y) > 0.02 * max(abs(y), 1e-300)


def _mc_target(t: Template, d: Derivation, rng):
    alt = t.alt or (t.eqs[0] if len(t.eqs) > 1 else None)
    if alt is None:
        raise InjectError(f"{t.name}: no alternative target to misread")
    syms = [e.sym for e in t.eqs]
    eqs = list(t.eqs[: syms.index(alt.sym) + 1]) if alt.sym in syms else [alt]
    return with_changes(d, target=alt.sym, target_name=alt.name, eqs=eqs), \
        f"read the target as the {alt.name} ({alt.sym})"


def _mc_value(t: Template, d: Derivation, rng):
    g = rng.choice(t.givens)
    display = float(d.values[g.sym])
    si_factor = to_si(1.0, g.unit)[0]
    offset = abs(to_si(2.0, g.unit)[0] - 2 * si_factor) > 1e-9  # degC, degF: not a plain factor
    if abs(si_factor - 1.0) > 1e-9 and not offset:
        raw = shown(display / si_factor)  # the number as printed, its unit conversion forgotten
        wrong, why = raw, f"used {g.sym} in {g.unit} as if it were SI"
    else:
        f = rng.choice(SLIPS)
        wrong, why = shown(display * f), f"misread {g.sym} (x{f:g})"
    values = dict(d.values)
    values[g.sym] = wrong
    return with_changes(d, values=values), why


def _cm(t: Template, d: Derivation, rng, step):
    laws = [w for w in t.wrong if (w.principle is not None) == (step == 2)]
    if not laws:
        raise InjectError(f"{t.name}: no wrong law declared for step {step}")
    w = rng.choice(laws)
    eqs = [replace(e, expr=w.eqs[e.sym]) if e.sym in w.eqs else e for e in d.eqs]
    return with_changes(d, eqs=eqs, principle=w.principle or d.principle), w.note or "wrong law"


def _ce_sub(t: Template, d: Derivation, rng):
    i = rng.randrange(len(d.eqs))
    sym = rng.choice(symbols(d.eqs[i].expr))
    known = dict(d.values)
    known.update({e.sym: r for e, r in zip(d.eqs[:i], d.results[:i])})
    f = rng.choice(SLIPS)
    over = dict(d.sub_override)
    over[(i, sym)] = shown(known[sym] * f)
    return with_changes(d, sub_override=over), f"substituted {sym} x{f:g} in {d.eqs[i].sym}"


def _ce_calc(t: Template, d: Derivation, rng):
    i = rng.randrange(len(d.eqs))
    f = rng.choice(SLIPS)
    cf = dict(d.calc_factor)
    cf[i] = f
    return with_changes(d, calc_factor=cf), f"arithmetic slip x{f:g} in {d.eqs[i].sym}"


def inject(t: Template, d: Derivation, cls: str, step: int | None = None, rng: random.Random | None = None,
           tries: int = 12) -> Injected:
    """An erroneous copy of the reference derivation `d`, first wrong at `step` (or a step of `cls`)."""
    if cls not in CLASSES:
        raise InjectError(f"unknown error class {cls!r} (MC, CM, CE)")
    rng = rng or random.Random(0)
    steps = CLASSES[cls] if step is None else (step,)
    if any(s not in CLASSES[cls] for s in steps):
        raise InjectError(f"class {cls} is injected at steps {CLASSES[cls]}, not {step}")
    last = None
    for _ in range(tries):
        s = rng.choice(steps)
        try:
            if s == 1:
                nd, why = _mc_target(t, d, rng)
            elif s == 4:
                nd, why = _mc_value(t, d, rng)
            elif s in (2, 3):
                nd, why = _cm(t, d, rng, s)
            elif s == 5:
                nd, why = _ce_sub(t, d, rng)
            else:
                nd, why = _ce_calc(t, d, rng)
        except InjectError as e:
            last = e
            if step is not None or len(steps) == 1:
                raise
            steps = tuple(x for x in steps if x != s) or steps
            continue
        except (ValueError, ZeroDivisionError, OverflowError) as e:  # e.g. sqrt of a negative
            last = e
            continue
        if all(math.isfinite(x) for x in nd.results) and _differs(nd, d):
            return Injected(nd, s, cls, why)
    raise InjectError(f"{t.name}: could not inject {cls} at {steps} ({last or 'answer unchanged'})")
