"""What the step verifier's concept tests (test_steps_*.py) share: the problems they are written on (a question and
its seven-tag reference each), a solution made from a reference with some of its parts replaced, a procgen problem
of one template, the held-out items of heldout/round6 and heldout/round7 (development data now), and the
check of one table row.

A table row is (question, solution, reference, expected, reason, origin):

- expected: (first error, error class); the first error may be a tuple of the steps allowed (NOT_1: anything but
  a misread at step 1), the class ANY where the case does not pin it;
- reason: a fragment the verdict's explanation must contain ("" for none);
- origin: where the case comes from, as data ("round5": written in that round of hardening, in wordings of our
  own; "heldout6:w028": an item of that held-out set, whose gold label the row must agree with).

The pytest id of a row says what it checks.
"""
import functools
import json
import pathlib
from dataclasses import dataclass

import pytest

from verifiers import seventag
from verifiers.steps import verify

ANY = "any class"
NOT_1 = (0, 2, 3, 4, 5, 6, 7)  # anything but a misread at step 1
NOT_2 = (0, 1, 3, 4, 5, 6, 7)  # anything but a wrong law at step 2
OK = (0, None)

HELDOUT_DIR = pathlib.Path(__file__).resolve().parents[2] / "heldout"
HELDOUT = {"heldout6": HELDOUT_DIR / "round6" / "solutions_r6.jsonl",
           "heldout7": HELDOUT_DIR / "round7" / "solutions_r7.jsonl"}


def S(**parts) -> str:
    return seventag.render(parts)


def with_parts(ref: str, **parts) -> str:
    """`ref` with the parts given replaced (the others as they are, stripped)."""
    p = seventag.parse(ref)
    return S(**{t: parts.get(t, p.get(t).content.strip()) for t in seventag.TAGS})


def tmpl(name: str, seed: int = 0):
    """The procgen problem of one template."""
    from r3bench import procgen
    from r3bench.procgen.templates import BY_NAME

    return procgen.generate(n=1, seed=seed, templates=[BY_NAME[name]])[0]


def row(question: str, solution: str, reference: str, expected, why: str, origin: str, reason: str = ""):
    return pytest.param(question, solution, reference, expected, reason, origin, id=why)


@dataclass(frozen=True)
class Problem:
    question: str
    reference: str

    def with_(self, **parts) -> str:
        return with_parts(self.reference, **parts)

    def row(self, why: str, expected, origin: str, solution: str | None = None, reference: str | None = None,
            reason: str = "", **parts):
        """A table row on this problem: `solution` as given, or the reference with `parts` replaced."""
        sol = solution if solution is not None else self.with_(**parts)
        return row(self.question, sol, self.reference if reference is None else reference, expected, why, origin,
                   reason)


@functools.cache
def _heldout(name: str) -> dict:
    return {r["id"]: r for r in map(json.loads, HELDOUT[name].read_text(encoding="utf-8").splitlines()) if r}


def heldout(origin: str) -> dict:
    """The held-out item `origin` names ("heldout6:w028")."""
    name, item = origin.split(":")
    return _heldout(name)[item]


def heldout_row(origin: str, expected, why: str):
    r = heldout(origin)
    return row(r["question"], r["solution"], r["reference"], expected, f"{why} ({origin})", origin)


def check(question: str, solution: str, reference: str, expected, reason: str, origin: str):
    """One table row: the verdict is valid, its first error and class are the expected ones, its explanation says
    `reason`; a held-out item's exact expectation is its gold label."""
    step, cls = expected
    v = verify(question, solution, reference)
    assert v.valid, v
    assert v.first_error in (step if isinstance(step, tuple) else (step,)), v
    if cls != ANY:
        assert v.error_class == (cls if v.first_error else None), v
    assert reason in v.explanation, v
    if origin.startswith("heldout") and isinstance(step, int) and cls != ANY:
        r = heldout(origin)
        assert (r["first_error"], r["error_class"]) == expected, (origin, r["first_error"], r["error_class"])


# --- the problems ------------------------------------------------------------------------------------------------

OHM_9V = Problem(
    "A 9.0 V battery is connected across a 3.0 Ω resistor. What current flows through the resistor?",
    S(problem_analysis="We need the current through the resistor. Given: V = 9.0 V, R = 3.0 Ω.",
      principle="Ohm's law: the current equals the voltage divided by the resistance.",
      governing_equation="I = V/R", value_identification="V = 9.0 V\nR = 3.0 ohm",
      substitution="I = 9.0/3.0", calculation="I = 3.0 A", final_answer="\\boxed{3.0 A}"))

PEBBLE = Problem(
    "A pebble is dropped from rest from a bridge 11.25 m above the water (g = 10 m/s^2). How fast is it moving "
    "when it hits the water?",
    S(problem_analysis="We need the final speed of the pebble as it reaches the water. Given: it starts from rest, "
                       "h = 11.25 m, g = 10 m/s^2.",
      principle="Conservation of mechanical energy: the potential energy lost becomes kinetic energy.",
      governing_equation="v = sqrt(2*g*h)", value_identification="g = 10 m/s^2\nh = 11.25 m",
      substitution="v = sqrt(2*10*11.25)", calculation="v = 15 m/s", final_answer="\\boxed{15 m/s}"))

COUPLING = Problem(
    "A 3.0 kg trolley rolling at 4.0 m/s couples to a stationary 1.0 kg trolley and they move off together. "
    "What is their common speed?",
    S(problem_analysis="Find the common speed v after coupling.",
      principle="Conservation of linear momentum; the trolleys stick together, so kinetic energy is lost "
                "(perfectly inelastic).",
      governing_equation="v = m1*u1/(m1 + m2)", value_identification="m1 = 3.0 kg\nu1 = 4.0 m/s\nm2 = 1.0 kg",
      substitution="v = 3.0*4.0/(3.0 + 1.0)", calculation="v = 3.0 m/s", final_answer="\\boxed{3.0 m/s}"))

DENSITY = Problem(
    "A block of aluminium has a volume of 0.0020 m^3 and density 2700 kg/m^3. What is its mass?",
    S(problem_analysis="Find the mass m. Given: the volume V, the density rho.",
      principle="Density is mass per unit volume: m = rho V.",
      governing_equation="m = rho*V", value_identification="rho = 2700 kg/m^3\nV = 0.0020 m^3",
      substitution="m = 2700*0.0020", calculation="m = 5.4 kg", final_answer="\\boxed{5.4 kg}"))

RIPPLE = Problem(
    "A ripple has wavelength 0.60 m and travels at 1.5 m/s. Find its period.",
    S(problem_analysis="Find the period (T). Given: the wavelength lam, the speed v.",
      principle="Wave relation: period = wavelength / speed (T = lam / v).",
      governing_equation="T = lam/v", value_identification="lam = 0.60 m\nv = 1.5 m/s",
      substitution="T = 0.60/1.5", calculation="T = 0.4 s", final_answer="\\boxed{0.4 s}"))

LOOP = Problem(
    "A marble rolls without friction round a vertical loop of radius 2.5 m, barely staying on the track at the "
    "top. Use g = 9.8 m/s^2. How fast does it move at the top?",
    S(problem_analysis="The problem asks for the speed at the top (v). Given: the radius r, g.",
      principle="Circular motion: at the top gravity alone supplies the centripetal force, g = v^2/r.",
      governing_equation="v = sqrt(g*r)", value_identification="r = 2.5 m\ng = 9.8 m/s^2",
      substitution="v = sqrt(9.8*2.5)", calculation="v = 4.95 m/s", final_answer="\\boxed{4.95 m/s}"))

DE_BROGLIE = Problem(
    "An electron moves at 3.0e6 m/s. Find its de Broglie wavelength. Use h = 6.626e-34 J*s and m = 9.11e-31 kg.",
    S(problem_analysis="Find the wavelength lam.",
      principle="de Broglie relation: the wavelength is Planck's constant over the momentum, lam = h/(m v).",
      governing_equation="lam = h/(m*v)", value_identification="h = 6.626e-34 J*s\nm = 9.11e-31 kg\nv = 3.0e6 m/s",
      substitution="lam = 6.626e-34/(9.11e-31*3.0e6)", calculation="lam = 2.424e-10 m",
      final_answer="\\boxed{2.424e-10 m}"))

PUCK = Problem(
    "A 0.40 kg puck slides at 5.0 m/s. What is its momentum?",
    S(problem_analysis="Find the momentum (p).", principle="Linear momentum is mass times velocity: p = m v.",
      governing_equation="p = m*v", value_identification="m = 0.40 kg\nv = 5.0 m/s", substitution="p = 0.40*5.0",
      calculation="p = 2.0 kg*m/s", final_answer="\\boxed{2.0 kg*m/s}"))

SPHERES = Problem(
    "Two lead spheres of 40 kg and 20 kg have their centres 0.40 m apart. Find the gravitational force between "
    "them. Use G = 6.67e-11 N*m^2/kg^2.",
    S(problem_analysis="Find the force F.", principle="Newton's law of universal gravitation.",
      governing_equation="F = G*m1*m2/r^2",
      value_identification="G = 6.67e-11 N*m^2/kg^2\nm1 = 40 kg\nm2 = 20 kg\nr = 0.40 m",
      substitution="F = 6.67e-11*40*20/0.40^2", calculation="F = 3.335e-7 N", final_answer="\\boxed{3.335e-7 N}"))

CART_FROM_REST = Problem(
    "A cart starts from rest and accelerates uniformly at 2.0 m/s^2 for 3.0 s. How far does it travel?",
    S(problem_analysis="Find the distance d.", principle="Uniformly accelerated motion from rest.",
      governing_equation="d = (1/2)*a*t^2", value_identification="a = 2.0 m/s^2\nt = 3.0 s",
      substitution="d = 0.5*2.0*3.0^2", calculation="d = 9.0 m", final_answer="\\boxed{9.0 m}"))

SKATER = Problem(
    "A skater spinning at 3.0 rad/s with moment of inertia 2.4 kg*m^2 pulls in her arms to 1.2 kg*m^2. "
    "What is her new angular speed?",
    S(problem_analysis="Find the final angular speed w2.", principle="Conservation of angular momentum.",
      governing_equation="w2 = I1*w1/I2", value_identification="I1 = 2.4 kg*m^2\nw1 = 3.0 rad/s\nI2 = 1.2 kg*m^2",
      substitution="w2 = 2.4*3.0/1.2", calculation="w2 = 6.0 rad/s", final_answer="\\boxed{6.0 rad/s}"))

WIRE_IN_FIELD = Problem(
    "A 0.50 m wire carrying 3.0 A lies at right angles to a 0.20 T magnetic field. What force acts on it?",
    S(problem_analysis="Find the force F.", principle="Magnetic force on a current-carrying wire.",
      governing_equation="F = B*I*L", value_identification="B = 0.20 T\nI = 3.0 A\nL = 0.50 m",
      substitution="F = 0.20*3.0*0.50", calculation="F = 0.30 N", final_answer="\\boxed{0.30 N}"))

VAN = Problem(
    "A 1200 kg van moves at 15 m/s. What is its momentum?",
    S(problem_analysis="Find the momentum p of the van.", principle="Momentum is mass times velocity.",
      governing_equation="p = m*v", value_identification="m = 1200 kg\nv = 15 m/s",
      substitution="p = 1200*15", calculation="p = 18000 kg*m/s", final_answer="\\boxed{18000 kg m/s}"))

COPPER = Problem(
    "How much heat raises 0.50 kg of copper (c = 385 J/(kg K)) from 20 °C to 80 °C?",
    S(problem_analysis="Find the heat Q.", principle="Calorimetry: Q = m c dT.",
      governing_equation="Q = m*c*(T2 - T1)", value_identification="m = 0.50 kg\nc = 385 J/(kg*K)\n"
      "T1 = 20 °C\nT2 = 80 °C", substitution="Q = 0.50*385*(80 - 20)", calculation="Q = 11550 J",
      final_answer="\\boxed{11550 J}"))

CRATE = Problem(
    "A crate is pushed 6.0 m across a floor by a 50 N horizontal force in 4.0 s. What average power is delivered?",
    S(problem_analysis="Find the average power P.", principle="Power is work per time, and work is force "
      "times distance.", governing_equation="W = F*d\nP = W/t",
      value_identification="F = 50 N\nd = 6.0 m\nt = 4.0 s", substitution="W = 50*6.0\nP = 300/4.0",
      calculation="W = 300 J\nP = 75 W", final_answer="\\boxed{75 W}"))

OHM_12V = Problem(
    "A 12 V battery drives a current through a 4.0 ohm resistor. What is the current?",
    S(problem_analysis="Find the current I.", principle="Ohm's law.", governing_equation="I = V/R",
      value_identification="V = 12 V\nR = 4.0 ohm", substitution="I = 12/4.0", calculation="I = 3.0 A",
      final_answer="\\boxed{3.0 A}"))

SPRING = Problem(
    "A spring of stiffness 250 N/m is stretched by 0.040 m. What elastic energy does it store?",
    S(problem_analysis="Find the stored energy U.", principle="Elastic potential energy of a spring.",
      governing_equation="U = (1/2)*k*x^2", value_identification="k = 250 N/m\nx = 0.040 m",
      substitution="U = 0.5*250*0.040^2", calculation="U = 0.2 J", final_answer="\\boxed{0.2 J}"))

BAR = Problem(
    "A 1.5 m aluminium bar (expansion coefficient 23e-6 per K) warms by 40 K. By how much does it grow?",
    S(problem_analysis="Find the change in length Delta_L.", principle="Linear thermal expansion.",
      governing_equation="Delta_L = alpha*L0*Delta_T", value_identification="alpha = 23e-6 1/K\nL0 = 1.5 m\n"
      "Delta_T = 40 K", substitution="Delta_L = 23e-6*1.5*40", calculation="Delta_L = 1.38e-3 m",
      final_answer="\\boxed{1.38e-3 m}"))

SLED = Problem(
    "A 4.0 kg sled is pulled with a net force of 10 N. What is its acceleration?",
    S(problem_analysis="Find the acceleration a.", principle="Newton's second law.", governing_equation="a = F/m",
      value_identification="F = 10 N\nm = 4.0 kg", substitution="a = 10/4.0", calculation="a = 2.5 m/s^2",
      final_answer="\\boxed{2.5 m/s^2}"))

STRAIGHT_WIRE = Problem(
    "A long straight wire carries 6.0 A. What is the magnetic field 3.0 cm away? (mu0 = 1.2566e-6 T m/A)",
    S(problem_analysis="Find the field B.", principle="Ampere's law for a long straight wire.",
      governing_equation="B = mu0*I/(2*pi*r)", value_identification="mu0 = 1.2566e-6 T*m/A\nI = 6.0 A\n"
      "r = 0.030 m", substitution="B = 1.2566e-6*6.0/(2*pi*0.030)", calculation="B = 4.0e-5 T",
      final_answer="\\boxed{4.0e-5 T}"))

PARCEL = Problem(
    "A parcel falls freely from rest for 2.0 s (g = 9.8 m/s^2). How fast is it then moving?",
    S(problem_analysis="Find the speed v after 2.0 s of free fall.",
      principle="Free fall: constant acceleration g from rest.", governing_equation="v = g*t",
      value_identification="g = 9.8 m/s^2\nt = 2.0 s", substitution="v = 9.8*2.0", calculation="v = 19.6 m/s",
      final_answer="\\boxed{19.6 m/s}"))

MARBLE = Problem(
    "A marble is released from rest and drops 5.0 m (g = 9.8 m/s^2, no air resistance). How fast does it land?",
    S(problem_analysis="Find the landing speed v.", principle="Conservation of mechanical energy in free fall.",
      governing_equation="v = sqrt(2*g*h)", value_identification="g = 9.8 m/s^2\nh = 5.0 m",
      substitution="v = sqrt(2*9.8*5.0)", calculation="v = 9.9 m/s", final_answer="\\boxed{9.9 m/s}"))

CRANE = Problem(
    "A crane raises a 200 kg beam 15 m at steady speed in 30 s (g = 9.8 m/s^2). What is its average power?",
    S(problem_analysis="Find the average power P.", principle="Power is the rate of doing work against gravity.",
      governing_equation="P = m*g*h/t", value_identification="m = 200 kg\ng = 9.8 m/s^2\nh = 15 m\nt = 30 s",
      substitution="P = 200*9.8*15/30", calculation="P = 980 W", final_answer="\\boxed{980 W}"))

ROD = Problem(
    "A rod 4.0 m long at rest flies past at 0.60c. How long is it in the frame it flies past?",
    S(problem_analysis="Find the contracted length L.", principle="Length contraction (special relativity).",
      governing_equation="L = L0*sqrt(1 - v^2/c^2)", value_identification="L0 = 4.0 m\nv = 0.60 c",
      substitution="L = 4.0*sqrt(1 - 0.60^2)", calculation="L = 3.2 m", final_answer="\\boxed{3.2 m}"))

BALLS = Problem(
    "A 3.0 kg ball at 4.0 m/s hits a 1.0 kg ball at rest and they move off together. Find their speed.",
    S(problem_analysis="Find the common speed v.", principle="Conservation of momentum (inelastic).",
      governing_equation="v = m1*u1/(m1 + m2)", value_identification="m1 = 3.0 kg\nu1 = 4.0 m/s\nm2 = 1.0 kg",
      substitution="v = 3.0*4.0/(3.0 + 1.0)", calculation="v = 3.0 m/s", final_answer="\\boxed{3.0 m/s}"))

SATELLITES = Problem(
    "Two 500 kg satellites are 4.0 m apart. Find the gravitational force between them. (G = 6.67e-11 N m^2/kg^2)",
    S(problem_analysis="Find the force F.", principle="Newton's law of universal gravitation.",
      governing_equation="F = G*m1*m2/r^2", value_identification="G = 6.67e-11 N*m^2/kg^2\nm1 = 500 kg\n"
      "m2 = 500 kg\nr = 4.0 m", substitution="F = 6.67e-11*500*500/4.0^2", calculation="F = 1.042e-6 N",
      final_answer="\\boxed{1.042e-6 N}"))

KICK = Problem(
    "A ball is kicked at 15 m/s at 40 degrees above level ground (g = 9.8 m/s^2). What is its range?",
    S(problem_analysis="Find the range R.", principle="Projectile motion.",
      governing_equation="R = v0^2*sin(2*theta)/g", value_identification="v0 = 15 m/s\ntheta = 40 degrees\n"
      "g = 9.8 m/s^2", substitution="R = 15^2*sin(80 degrees)/9.8", calculation="R = 22.6 m",
      final_answer="\\boxed{22.6 m}"))

TROLLEY = Problem(
    "A 250 g trolley rolls at 3.0 m/s. What is its kinetic energy?",
    S(problem_analysis="Find the kinetic energy K of the trolley.", principle="Kinetic energy.",
      governing_equation="K = (1/2)*m*v^2", value_identification="m = 250 g\nv = 3.0 m/s",
      substitution="K = 0.5*0.250*3.0^2", calculation="K = 1.125 J", final_answer="\\boxed{1.125 J}"))

ROD_IN_FIELD = Problem(
    "A 0.50 m rod carrying 4.0 A lies at right angles to a 0.20 T field. What force acts on it?",
    S(problem_analysis="Find the force F.", principle="Magnetic force on a current-carrying wire.",
      governing_equation="F = B*I*L*sin(theta)", value_identification="B = 0.20 T\nI = 4.0 A\nL = 0.50 m\n"
      "theta = 90 degrees", substitution="F = 0.20*4.0*0.50*sin(90 degrees)", calculation="F = 0.40 N",
      final_answer="\\boxed{0.40 N}"))

BILL = Problem(
    "A 2000 W oven runs for 3.0 h. Energy costs $0.20 per kWh. What does it cost?",
    S(problem_analysis="Find the cost.", principle="Electrical energy is power times time.",
      governing_equation="cost = P*t*price", value_identification="P = 2.0 kW\nt = 3.0 h\nprice = 0.20 /kWh",
      substitution="cost = 2.0*3.0*0.20", calculation="cost = 1.2", final_answer="\\boxed{1.2}"))

STRING = Problem(
    "A string 0.50 m long carries waves at 100 m/s. By how much does its third harmonic's frequency exceed "
    "its second's?",
    S(problem_analysis="Find the difference Delta_f.", principle="Standing waves on a string.",
      governing_equation="Delta_f = v/(2*L)", value_identification="v = 100 m/s\nL = 0.50 m",
      substitution="Delta_f = 100/(2*0.50)", calculation="Delta_f = 100 Hz", final_answer="\\boxed{100 Hz}"))

FRICTION = Problem(
    "A 5.0 kg box slides on a level floor; the coefficient of kinetic friction is 0.40. What is the friction "
    "force? (g = 9.8 m/s^2)",
    S(problem_analysis="Find the kinetic friction force f.", principle="Kinetic friction: f = mu_k N with N = m g.",
      governing_equation="f = mu_k m g", value_identification="mu_k = 0.40\nm = 5.0 kg\ng = 9.8 m/s^2",
      substitution="f = 0.40 * 5.0 * 9.8", calculation="f = 19.6 N", final_answer="\\boxed{19.6 N}"))

BALL = Problem(
    "A 3.0 kg ball moves at 4.0 m/s. What is its kinetic energy?",
    S(problem_analysis="Find the kinetic energy K.", principle="Kinetic energy of a moving body.",
      governing_equation="K = m v^2 / 2", value_identification="m = 3.0 kg\nv = 4.0 m/s",
      substitution="K = 3.0 * 4.0^2 / 2", calculation="K = 24 J", final_answer="\\boxed{24 J}"))

LENS = Problem(
    "An object stands 60 cm in front of a converging lens of focal length 20 cm. Where is the image?",
    S(problem_analysis="Find the image distance v.", principle="Thin lens equation.",
      governing_equation="1/f = 1/u + 1/v", value_identification="f = 20 cm\nu = 60 cm",
      substitution="v = 1/(1/20 - 1/60)", calculation="v = 30 cm", final_answer="\\boxed{30 cm}"))

CAR = Problem(
    "A car drives at a constant speed of 28 m/s for 43 s. How far does it go?",
    S(problem_analysis="Find the distance travelled (s).", principle="Uniform motion: distance = speed x time.",
      governing_equation="s = v*t", value_identification="v = 28 m/s\nt = 43 s", substitution="s = 28*43",
      calculation="s = 1204 m", final_answer="\\boxed{1204 m}"))

DOOR = Problem(
    "A 50 N force acts at right angles to a door 0.80 m from its hinge. What torque does it produce?",
    S(problem_analysis="Find the torque tau.", principle="Torque is r F sin(theta).",
      governing_equation="tau = r F sin(theta)", value_identification="r = 0.80 m\nF = 50 N\ntheta = 90°",
      substitution="tau = 0.80 * 50 * sin(90°)", calculation="tau = 40 N m", final_answer="\\boxed{40 N m}"))

PHOTO = Problem(
    "Light of photon energy 5.0 eV falls on a metal of work function 3.0 eV. What is the largest kinetic energy "
    "of the electrons?",
    S(problem_analysis="Find the maximum kinetic energy K.", principle="Einstein's photoelectric equation.",
      governing_equation="K = E - phi", value_identification="E = 5.0 eV\nphi = 3.0 eV",
      substitution="K = 5.0 - 3.0", calculation="K = 2.0 eV", final_answer="\\boxed{2.0 eV}"))

DECAY = Problem(
    "A sample of 640 nuclei has a half-life of 2.0 h. How many nuclei remain after 6.0 h?",
    S(problem_analysis="Find the number N that remains.", principle="Radioactive decay law.",
      governing_equation="N = N0 (1/2)^(t/T_half)", value_identification="N0 = 640\nt = 6.0 h\nT_half = 2.0 h",
      substitution="N = 640 (1/2)^(6.0/2.0)", calculation="N = 80", final_answer="\\boxed{80}"))

DEPTH = Problem(
    "What is the gauge pressure at a depth of 15 m in fresh water? (rho = 1000 kg/m^3, g = 9.8 m/s^2)",
    S(problem_analysis="Find the gauge pressure p at 15 m.", principle="Hydrostatic pressure in a fluid at rest.",
      governing_equation="p = rho*g*h", value_identification="rho = 1000 kg/m^3\ng = 9.8 m/s^2\nh = 15 m",
      substitution="p = 1000*9.8*15", calculation="p = 147000 Pa", final_answer="\\boxed{1.47e5 Pa}"))

DECIBEL = Problem(
    "A sound has intensity 1.0e-4 W/m^2. What is its intensity level in dB? (I0 = 1.0e-12 W/m^2)",
    S(problem_analysis="Find the intensity level beta.", principle="Definition of the decibel scale.",
      governing_equation="beta = 10*log10(I/I0)", value_identification="I = 1.0e-4 W/m^2\nI0 = 1.0e-12 W/m^2",
      substitution="beta = 10*log10(1.0e-4/1.0e-12)", calculation="beta = 10*8 = 80 dB",
      final_answer="\\boxed{80 dB}"))

WIRE_TABLE = Problem(
    "What is the magnetic field 5.0 cm from a long straight wire carrying 4.0 A? (mu_0 = 4 pi x 10^-7 T m/A)",
    S(problem_analysis="Find the field B.", principle="Field of a long straight wire (Ampere's law).",
      governing_equation="B = mu_0*I/(2*pi*r)",
      value_identification="mu_0 = 1.2566e-6 T m/A\nI = 4.0 A\nr = 0.050 m",
      substitution="B = 1.2566e-6*4.0/(2*pi*0.050)", calculation="B = 1.6e-5 T", final_answer="\\boxed{1.6e-5 T}"))

CART_4KG = Problem(
    "A 4.0 kg cart moves at 3.0 m/s. What is its kinetic energy?",
    S(problem_analysis="Find the kinetic energy K.", principle="Kinetic energy of a moving body.",
      governing_equation="K = m*v^2/2", value_identification="m = 4.0 kg\nv = 3.0 m/s",
      substitution="K = 4.0*3.0^2/2", calculation="K = 18 J", final_answer="\\boxed{18 J}"))

RC = Problem(
    "A 4.0 kΩ resistor and a 25 μF capacitor are in series. What is the time constant?",
    S(problem_analysis="Find the time constant tau.", principle="RC circuit time constant.",
      governing_equation="tau = R*C", value_identification="R = 4000 ohm\nC = 25e-6 F",
      substitution="tau = 4000*25e-6", calculation="tau = 0.1 s", final_answer="\\boxed{0.1 s}"))
