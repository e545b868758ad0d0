"""Difficulty tiers of the procedural bank: a curriculum a 135M model can climb.

  tier 1  one formula, integer givens in SI units, an integer answer (F = m a with m = 3 kg,
          a = 4 m/s^2 -> 12 N); g = 10 m/s^2; short seven-tag solutions (~100-150 tokens)
  tier 2  the same formulas with decimals and unit prefixes (g, cm, km/h, mA, kJ, ...): the step
          from tier 1 is number handling and unit conversion, not new physics
  tier 3  the original bank (r3bench.procgen.templates): constants, trigonometry, multi-step chains

Tiers 1 and 2 are built from one list of formula families, so a family has a tier-1 and a tier-2
template (names t1_<family>, t2_<family>). Held-out templates (the template-level split): in each
tier and topic, the template whose family (or, in tier 3, template name) has the smallest sha1 is
held out: it is never in the train or validation split, only in test. The same family is held out
in tiers 1 and 2, so a held-out tier-2 formula was not seen in tier 1 either.
"""
from __future__ import annotations

import hashlib

from r3bench.procgen.core import Const as C
from r3bench.procgen.core import Eq as E
from r3bench.procgen.core import Given as G
from r3bench.procgen.core import Template as T
from r3bench.procgen.core import WrongLaw as W
from r3bench.procgen.templates import TEMPLATES as TIER3

TIERS = (1, 2, 3)
G10 = C("g", "gravitational acceleration", 10.0, "m/s^2")
G98 = C("g", "gravitational acceleration", 9.8, "m/s^2")


def _fam(key, topic, question, principle, eqs, target, wrong, g1, g2, consts=False, alt=None):
    """(tier-1 template, tier-2 template) of one formula family; g1/g2 are their givens."""
    t1 = T(f"t1_{key}", topic, question, principle, g1, eqs, target, wrong, (G10,) if consts else (), alt, tier=1)
    t2 = T(f"t2_{key}", topic, question, principle, g2, eqs, target, wrong, (G98,) if consts else (), alt, tier=2)
    return t1, t2


def _i(sym, name, lo, hi, unit):
    return G(sym, name, lo, hi, unit, integer=True)


NEWTON = "Newton's second law: the net force equals mass times acceleration, F = m a."
KE = E("K", "m*v**2/2", "kinetic energy", "J")
FAMILIES = [
    # --- kinematics ---------------------------------------------------------------------------
    _fam("distance", "kinematics", "A car drives at a constant speed of {v} for {t}. How far does it go?",
         "Uniform motion: distance = speed x time.", (E("s", "v*t", "distance travelled", "m"),), "s",
         (W({"s": "v*t/2"}, note="halved the distance"),
          W({"s": "v/t"}, principle="Uniform motion: distance = speed / time.", note="divided speed by time")),
         (_i("v", "speed", 2, 30, "m/s"), _i("t", "time", 2, 60, "s")),
         (G("v", "speed", 20, 110, "km/h"), G("t", "time", 1.5, 30, "min"))),
    _fam("final_speed", "kinematics",
         "A cyclist moving at {u} speeds up with a constant acceleration of {a} for {t}. What is the final speed?",
         "Kinematics of constant acceleration: v = u + a t.", (E("v", "u + a*t", "final speed", "m/s"),), "v",
         (W({"v": "a*t"}, note="forgot the initial speed"),
          W({"v": "u + a*t**2/2"}, principle="Kinematics of constant acceleration: v = u + a t^2 / 2.",
            note="used the distance formula for the speed")),
         (_i("u", "initial speed", 1, 10, "m/s"), _i("a", "acceleration", 1, 5, "m/s^2"), _i("t", "time", 1, 10, "s")),
         (G("u", "initial speed", 3, 40, "km/h"), G("a", "acceleration", 0.2, 3, "m/s^2"), G("t", "time", 0.5, 12, "s"))),
    _fam("average_speed", "kinematics", "A runner covers {d} in {t}. What is the average speed?",
         "Average speed = distance / time.", (E("v", "d/t", "average speed", "m/s"),), "v",
         (W({"v": "t/d"}, note="inverted the ratio"),
          W({"v": "d*t"}, principle="Average speed = distance x time.", note="multiplied instead of dividing")),
         (_i("d", "distance", 10, 400, "m"), _i("t", "time", 2, 80, "s")),
         (G("d", "distance", 0.2, 12, "km"), G("t", "time", 1.5, 60, "min"))),
    # --- dynamics -----------------------------------------------------------------------------
    _fam("newton2", "dynamics", "A net force accelerates a trolley of mass {m} at {a}. How large is the net force?",
         NEWTON, (E("F", "m*a", "net force", "N"),), "F",
         (W({"F": "m*a/2"}, note="halved the force"),
          W({"F": "m/a"}, principle="Newton's second law: force = mass / acceleration.", note="divided by the acceleration")),
         (_i("m", "mass", 1, 40, "kg"), _i("a", "acceleration", 1, 12, "m/s^2")),
         (G("m", "mass", 150, 950, "g"), G("a", "acceleration", 0.5, 9.5, "m/s^2"))),
    _fam("acceleration", "dynamics", "A net force of {F} acts on a box of mass {m}. What is its acceleration?",
         NEWTON, (E("a", "F/m", "acceleration", "m/s^2"),), "a",
         (W({"a": "m/F"}, note="inverted the ratio"),
          W({"a": "F*m"}, principle="Newton's second law: acceleration = force x mass.", note="multiplied by the mass")),
         (_i("F", "net force", 4, 200, "N"), _i("m", "mass", 1, 20, "kg")),
         (G("F", "net force", 0.5, 8, "kN"), G("m", "mass", 40, 900, "kg"))),
    _fam("weight", "dynamics", "What is the weight of a bag of mass {m}?",
         "Weight is the gravitational force on a mass: W = m g.", (E("W_g", "m*g", "weight", "N"),), "W_g",
         (W({"W_g": "m/g"}, note="divided by g"),
          W({"W_g": "m"}, principle="Weight equals mass.", note="confused weight with mass")),
         (_i("m", "mass", 1, 90, "kg"),), (G("m", "mass", 120, 990, "g"),), consts=True),
    # --- momentum -----------------------------------------------------------------------------
    _fam("momentum", "momentum", "A ball of mass {m} moves at {v}. What is its momentum?",
         "Linear momentum is mass times velocity: p = m v.", (E("p", "m*v", "momentum", "kg*m/s"),), "p",
         (W({"p": "m*v/2"}, note="halved the momentum"),
          W({"p": "m*v**2/2"}, principle="Momentum is the kinetic energy m v^2 / 2.", note="confused momentum with kinetic energy")),
         (_i("m", "mass", 1, 30, "kg"), _i("v", "speed", 1, 20, "m/s")),
         (G("m", "mass", 50, 900, "g"), G("v", "speed", 5, 90, "km/h")), alt=KE),
    _fam("impulse", "momentum", "A force of {F} pushes a cart for {t}. What impulse does it deliver?",
         "Impulse of a constant force: J = F t.", (E("J", "F*t", "impulse", "N*s"),), "J",
         (W({"J": "F/t"}, note="divided by the time"),
          W({"J": "F*t**2/2"}, principle="Impulse of a constant force: J = F t^2 / 2.", note="integrated the time twice")),
         (_i("F", "force", 2, 200, "N"), _i("t", "time", 1, 20, "s")),
         (G("F", "force", 0.2, 5, "kN"), G("t", "time", 5, 900, "ms"))),
    # --- work and energy ----------------------------------------------------------------------
    _fam("work", "work_energy", "A constant force of {F} pushes a crate {d} along its direction. How much work does it do?",
         "Work of a constant force along the displacement: W = F d.", (E("W_F", "F*d", "work done", "J"),), "W_F",
         (W({"W_F": "F*d/2"}, note="halved the work"),
          W({"W_F": "F/d"}, principle="Work = force / distance.", note="divided by the distance")),
         (_i("F", "force", 2, 200, "N"), _i("d", "distance", 1, 40, "m")),
         (G("F", "force", 0.2, 4, "kN"), G("d", "distance", 20, 900, "cm"))),
    _fam("kinetic_energy", "work_energy", "A cart of mass {m} moves at {v}. What is its kinetic energy?",
         "Kinetic energy: K = m v^2 / 2.", (KE,), "K",
         (W({"K": "m*v**2"}, note="dropped the 1/2"),
          W({"K": "m*v"}, principle="Kinetic energy is mass times velocity.", note="confused kinetic energy with momentum")),
         (_i("m", "mass", 2, 40, "kg"), _i("v", "speed", 1, 20, "m/s")),
         (G("m", "mass", 100, 950, "g"), G("v", "speed", 5, 90, "km/h")), alt=E("p", "m*v", "momentum", "kg*m/s")),
    _fam("potential_energy", "work_energy", "A box of mass {m} is lifted {h} above the floor. By how much does its potential energy rise?",
         "Gravitational potential energy near the ground: U = m g h.", (E("U", "m*g*h", "potential energy gained", "J"),), "U",
         (W({"U": "m*g*h/2"}, note="halved the energy"),
          W({"U": "m*h"}, principle="Potential energy = mass x height.", note="left out g")),
         (_i("m", "mass", 1, 50, "kg"), _i("h", "height", 1, 20, "m")),
         (G("m", "mass", 100, 950, "g"), G("h", "height", 20, 500, "cm")), consts=True,
         alt=E("W_g", "m*g", "weight", "N")),
    _fam("power", "work_energy", "A tractor pulls with a force of {F} at a steady {v}. What power does it deliver?",
         "Mechanical power of a constant force: P = F v.", (E("P", "F*v", "power", "W"),), "P",
         (W({"P": "F/v"}, note="divided by the speed"),
          W({"P": "F*v**2/2"}, principle="Power = F v^2 / 2.", note="used a kinetic-energy form")),
         (_i("F", "force", 10, 900, "N"), _i("v", "speed", 1, 10, "m/s")),
         (G("F", "force", 0.5, 9, "kN"), G("v", "speed", 3, 60, "km/h"))),
    # --- DC circuits --------------------------------------------------------------------------
    _fam("ohm_voltage", "dc_circuits", "A current of {I} flows through a resistor of {R}. What is the voltage across it?",
         "Ohm's law: V = I R.", (E("V", "I*R", "voltage", "V"),), "V",
         (W({"V": "I/R"}, note="divided by the resistance"),
          W({"V": "R/I"}, principle="Ohm's law: V = R / I.", note="inverted Ohm's law")),
         (_i("I", "current", 1, 10, "A"), _i("R", "resistance", 2, 200, "ohm")),
         (G("I", "current", 5, 900, "mA"), G("R", "resistance", 0.1, 9, "kiloohm"))),
    _fam("ohm_current", "dc_circuits", "A {V} battery is connected across a {R} resistor. What current flows?",
         "Ohm's law: I = V / R.", (E("I", "V/R", "current", "A"),), "I",
         (W({"I": "R/V"}, note="inverted the ratio"),
          W({"I": "V*R"}, principle="Ohm's law: I = V R.", note="multiplied by the resistance")),
         (_i("V", "voltage", 2, 240, "V"), _i("R", "resistance", 1, 40, "ohm")),
         (G("V", "voltage", 1.5, 24, "V"), G("R", "resistance", 0.2, 50, "kiloohm"))),
    _fam("electric_power", "dc_circuits", "A heater draws {I} from a {V} supply. What power does it use?",
         "Electric power: P = V I.", (E("P", "V*I", "power", "W"),), "P",
         (W({"P": "V/I"}, note="divided by the current"),
          W({"P": "V*I**2"}, principle="Electric power: P = V I^2.", note="squared the current")),
         (_i("I", "current", 1, 20, "A"), _i("V", "voltage", 2, 240, "V")),
         (G("I", "current", 20, 900, "mA"), G("V", "voltage", 1.5, 24, "V"))),
    _fam("charge", "dc_circuits", "A steady current of {I} flows for {t}. How much charge passes?",
         "Current is charge per time: Q = I t.", (E("Q", "I*t", "charge", "C"),), "Q",
         (W({"Q": "I/t"}, note="divided by the time"),
          W({"Q": "t/I"}, principle="Charge = time / current.", note="inverted the relation")),
         (_i("I", "current", 1, 20, "A"), _i("t", "time", 2, 300, "s")),
         (G("I", "current", 5, 900, "mA"), G("t", "time", 0.5, 30, "min"))),
    # --- waves --------------------------------------------------------------------------------
    _fam("wave_speed", "shm_waves", "A wave has frequency {f} and wavelength {lam}. How fast does it travel?",
         "Wave speed = frequency x wavelength.", (E("v", "f*lam", "wave speed", "m/s"),), "v",
         (W({"v": "f/lam"}, note="divided by the wavelength"),
          W({"v": "lam/f"}, principle="Wave speed = wavelength / frequency.", note="inverted the frequency")),
         (_i("f", "frequency", 2, 100, "Hz"), _i("lam", "wavelength", 1, 40, "m")),
         (G("f", "frequency", 0.2, 9, "kHz"), G("lam", "wavelength", 5, 90, "cm"))),
    _fam("wave_period", "shm_waves", "A wave travels at {v} with wavelength {lam}. What is its period?",
         "Wave period = wavelength / speed (T = lambda / v).", (E("T_p", "lam/v", "period", "s"),), "T_p",
         (W({"T_p": "v/lam"}, note="inverted the ratio"),
          W({"T_p": "lam*v"}, principle="Wave period = wavelength x speed.", note="multiplied instead of dividing")),
         (_i("lam", "wavelength", 10, 400, "m"), _i("v", "wave speed", 1, 20, "m/s")),
         (G("lam", "wavelength", 20, 900, "cm"), G("v", "wave speed", 1.5, 40, "m/s"))),
    # --- matter and heat ----------------------------------------------------------------------
    _fam("density_mass", "thermodynamics", "A block of volume {V} is made of a material of density {rho}. What is its mass?",
         "Density is mass per volume: m = rho V.", (E("m", "rho*V", "mass", "kg"),), "m",
         (W({"m": "rho/V"}, note="divided by the volume"),
          W({"m": "V/rho"}, principle="Mass = volume / density.", note="inverted the density")),
         (_i("V", "volume", 1, 8, "m^3"), _i("rho", "density", 100, 1200, "kg/m^3")),
         (G("V", "volume", 20, 900, "cm^3"), G("rho", "density", 0.5, 11, "g/cm^3"))),
    _fam("heat", "thermodynamics", "How much heat warms {m} of a liquid with specific heat {c} by {dT}?",
         "Heat for a temperature change: Q = m c dT.", (E("Q", "m*c*dT", "heat", "J"),), "Q",
         (W({"Q": "m*c/dT"}, note="divided by the temperature change"),
          W({"Q": "c*dT"}, principle="Heat for a temperature change: Q = c dT, independent of the mass.",
            note="left out the mass")),
         (_i("m", "mass", 1, 10, "kg"), _i("c", "specific heat", 100, 900, "J/(kg*K)"), _i("dT", "temperature rise", 1, 10, "K")),
         (G("m", "mass", 50, 900, "g"), G("c", "specific heat", 0.4, 4.2, "kJ/(kg*K)"), G("dT", "temperature rise", 2, 60, "K"))),
    _fam("pressure_force", "thermodynamics", "A gas at a pressure of {p} pushes on a piston of area {A}. What force does it exert?",
         "Pressure is force per area: F = p A.", (E("F", "p*A", "force", "N"),), "F",
         (W({"F": "p/A"}, note="divided by the area"),
          W({"F": "A/p"}, principle="Force = area / pressure.", note="inverted the pressure")),
         (_i("p", "pressure", 10, 900, "Pa"), _i("A", "area", 1, 10, "m^2")),
         (G("p", "pressure", 1.2, 250, "kPa"), G("A", "area", 5, 900, "cm^2"))),
]

TIER_TEMPLATES = {1: [f[0] for f in FAMILIES], 2: [f[1] for f in FAMILIES], 3: list(TIER3)}


def family(name: str) -> str:
    """t1_newton2 / t2_newton2 -> newton2; a tier-3 template is its own family."""
    return name[3:] if name[:3] in ("t1_", "t2_") else name


def _h(s: str) -> str:
    return hashlib.sha1(s.encode()).hexdigest()


def heldout_templates(tier: int) -> tuple[str, ...]:
    """Names of the test-only templates of a tier: per topic, the family with the smallest sha1."""
    by_topic: dict[str, list] = {}
    for t in TIER_TEMPLATES[tier]:
        by_topic.setdefault(t.topic, []).append(t)
    out = [min(ts, key=lambda t: _h(family(t.name))).name for ts in by_topic.values() if len(ts) >= 2]
    return tuple(sorted(out))
