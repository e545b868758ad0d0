"""Where the first error of a solution is booked (issue 54's misses on fresh real solutions), by class:

1. a misreading of the problem shown in the analysis (a given with another value, a given the problem does not
   have, a given left out of an explicit list and then used at another value, the wrong quantity asked) is MC at
   step 1, not where its value first fails (2 to 4);
2. a right law followed by a wrong governing equation is CM at step 3: the principle is wrong only when its law is
   (a principle that states the right law in words or in another arrangement is no error);
3. a substitution that puts a wrong number into the equation (a value restated with another number, an arithmetic
   result written within the substitution) is CE at step 5, not at the calculation (6).

Each row: (question, reference, solution, expected first error, expected class); the twins beside an error are the
same problem with the analysis, principle or substitution written right in another style (expected 0), or with the
error where the row says. Problems and wordings are our own.
"""
import pytest

from verifiers.steps import verify


def _seven(pa, pr, ge, vi, su, ca, fa):
    return (f"<problem_analysis>\n{pa}\n</problem_analysis>\n<principle>\n{pr}\n</principle>\n"
            f"<governing_equation>\n{ge}\n</governing_equation>\n<value_identification>\n{vi}\n"
            f"</value_identification>\n<substitution>\n{su}\n</substitution>\n<calculation>\n{ca}\n</calculation>\n"
            f"<final_answer>\n{fa}\n</final_answer>")


# --- a cart's kinetic energy ---------------------------------------------------------------------------------
Q_KE = "A 3.0 kg cart rolls along a level track at 5.0 m/s. What is its kinetic energy?"
R_KE = _seven("The problem asks for the kinetic energy (KE) of the cart. Given: the mass m, the speed v.",
              "Kinetic energy of a moving body.", "KE = 1/2*m*v^2", "m = 3.0 kg\nv = 5.0 m/s",
              "KE = 1/2*3.0*5.0^2", "KE = 37.5 J", "\\boxed{37.5 J}")
KE_PR, KE_GE, KE_VI = "Kinetic energy of a moving body.", "KE = 1/2*m*v^2", "m = 3.0 kg\nv = 5.0 m/s"


def ke(pa="Find the kinetic energy of the cart. Given: m = 3.0 kg, v = 5.0 m/s.", pr=KE_PR, ge=KE_GE, vi=KE_VI,
       su="KE = 1/2*3.0*5.0^2", ca="KE = 37.5 J", fa="\\boxed{37.5 J}"):
    return _seven(pa, pr, ge, vi, su, ca, fa)


# --- a car's gain in speed -----------------------------------------------------------------------------------
Q_DV = "A car moving at 10 m/s accelerates at 2.0 m/s^2 for 5.0 s. By how much does its speed increase?"
R_DV = _seven("Find the increase in speed (dv) of the car. Given: the acceleration a, the time t.",
              "Constant acceleration: the change in velocity is the acceleration times the time.", "dv = a*t",
              "u = 10 m/s\na = 2.0 m/s^2\nt = 5.0 s", "dv = 2.0*5.0", "dv = 10 m/s", "\\boxed{10 m/s}")

# --- a sound wave's wavelength -------------------------------------------------------------------------------
Q_WAVE = "A tuning fork sounds a note of 440 Hz in air, where sound travels at 343 m/s. What is the wavelength?"
R_WAVE = _seven("Find the wavelength (lambda) of the note. Given: f = 440 Hz, v = 343 m/s.",
                "Wave relation: v = f lambda.", "lambda = v/f", "f = 440 Hz\nv = 343 m/s", "lambda = 343/440",
                "lambda = 0.780 m", "\\boxed{0.780 m}")


def wave(pr, ge="lambda = v/f", su="lambda = 343/440", ca="lambda = 0.780 m", fa="\\boxed{0.780 m}"):
    return _seven("We want the wavelength of the note.", pr, ge, "f = 440 Hz\nv = 343 m/s", su, ca, fa)


WRONG_WAVE = dict(ge="lambda = f/v", su="lambda = 440/343", ca="lambda = 1.283 m", fa="\\boxed{1.28 m}")

ROWS = {
    # 1. misreadings shown in the analysis: MC at step 1
    "given copied with another value": (Q_KE, R_KE, ke(
        pa="Find the kinetic energy of the cart. Given: m = 3.0 kg, v = 4.0 m/s.", vi="m = 3.0 kg\nv = 4.0 m/s",
        su="KE = 1/2*3.0*4.0^2", ca="KE = 24 J", fa="\\boxed{24 J}"), 1, "MC"),
    "a given the problem does not have": (Q_KE, R_KE, ke(
        pa="Find the kinetic energy of the cart. Given: m = 3.0 kg, v = 5.0 m/s, t = 2.0 s.",
        ge="KE = 1/2*m*v^2*t", vi="m = 3.0 kg\nv = 5.0 m/s\nt = 2.0 s", su="KE = 1/2*3.0*5.0^2*2.0",
        ca="KE = 75 J", fa="\\boxed{75 J}"), 1, "MC"),
    "a given left out of the list, then used at another value": (Q_KE, R_KE, ke(
        pa="Find the kinetic energy of the cart.\nGiven: m = 3.0 kg.", vi="m = 3.0 kg\nv = 4.0 m/s",
        su="KE = 1/2*3.0*4.0^2", ca="KE = 24 J", fa="\\boxed{24 J}"), 1, "MC"),
    "the final speed taken for its increase": (Q_DV, R_DV, _seven(
        "Find the final speed (v) of the car. Given: u = 10 m/s, a = 2.0 m/s^2, t = 5.0 s.",
        "Constant acceleration.", "v = u + a*t", "u = 10 m/s\na = 2.0 m/s^2\nt = 5.0 s", "v = 10 + 2.0*5.0",
        "v = 20 m/s", "\\boxed{20 m/s}"), 1, "MC"),
    "a time asked where the energy is": (Q_KE, R_KE, ke(pa="Find the time the cart takes. Given: m = 3.0 kg, "
                                                          "v = 5.0 m/s."), 1, "MC"),
    # twins: the analysis right in other words, or the slip where the values are identified
    "givens paraphrased in prose": (Q_KE, R_KE, ke(pa="A 3 kg cart rolls at 5 m/s; we want its kinetic energy."),
                                    0, None),
    "givens in other units, a constant listed": (Q_KE, R_KE, ke(
        pa="The cart's kinetic energy is asked. Known: m = 3000 g, v = 5.0 m/s, g = 9.8 m/s^2."), 0, None),
    "givens named in words, then one misread at step 4": (Q_KE, R_KE, ke(
        pa="Find the kinetic energy. Given: the mass and the speed of the cart.", vi="m = 3.0 kg\nv = 4.0 m/s",
        su="KE = 1/2*3.0*4.0^2", ca="KE = 24 J", fa="\\boxed{24 J}"), 4, "MC"),
    "givens listed right, then one copied wrong at step 4": (Q_KE, R_KE, ke(
        vi="m = 3.0 kg\nv = 4.0 m/s", su="KE = 1/2*3.0*4.0^2", ca="KE = 24 J", fa="\\boxed{24 J}"), 4, "MC"),
    "the increase asked in other words": (Q_DV, R_DV, _seven(
        "We need how much the car's speed goes up, the change dv. Given: a = 2.0 m/s^2, t = 5.0 s.",
        "Constant acceleration.", "dv = a*t", "a = 2.0 m/s^2\nt = 5.0 s", "dv = 2.0*5.0", "dv = 10 m/s",
        "\\boxed{10 m/s}"), 0, None),
    # 2. a right law, a wrong equation: CM at step 3; a wrong law: CM at step 2
    "the law in words, the equation wrong": (Q_WAVE, R_WAVE, wave("Wave speed = frequency × wavelength.",
                                                                  **WRONG_WAVE), 3, "CM"),
    "the law in another arrangement, the equation wrong": (Q_WAVE, R_WAVE, wave(
        "For a wave, f = v / lambda.", **WRONG_WAVE), 3, "CM"),
    "a wrong law in words, the equation from it": (Q_WAVE, R_WAVE, wave(
        "Wave speed = frequency / wavelength.", **WRONG_WAVE), 2, "CM"),
    "the law in words, the equation right": (Q_WAVE, R_WAVE, wave("Wave speed equals frequency times wavelength: "
                                                                  "speed = frequency times wavelength."), 0, None),
    # 3. a wrong number put into the equation: CE at step 5
    "a value restated with another number in the substitution": (Q_KE, R_KE, ke(
        su="m = 3.0 kg, v = 4.0 m/s\nKE = 1/2 m v^2", ca="KE = 24 J", fa="\\boxed{24 J}"), 5, "CE"),
    "an arithmetic slip on the substitution's next line": (Q_KE, R_KE, ke(
        su="KE = 1/2*3.0*5.0^2\n= 1.5*16", ca="KE = 24 J", fa="\\boxed{24 J}"), 5, "CE"),
    "an arithmetic slip in a second substitution line": (Q_KE, R_KE, ke(
        su="KE = 1/2*3.0*5.0^2\nKE = 1.5*16", ca="KE = 24 J", fa="\\boxed{24 J}"), 5, "CE"),
    # twins: the same layouts right, and a slip in the calculation itself
    "values restated right in the substitution": (Q_KE, R_KE, ke(su="m = 3.0 kg, v = 5.0 m/s\nKE = 1/2 m v^2"),
                                                  0, None),
    "the substitution continued right": (Q_KE, R_KE, ke(su="KE = 1/2*3.0*5.0^2\n= 1.5*25"), 0, None),
    "a second substitution line right": (Q_KE, R_KE, ke(su="KE = (1/2)(3.0)(5.0)^2\nKE = 1.5 × 25"), 0, None),
    "a slip in the calculation": (Q_KE, R_KE, ke(ca="KE = 1.5*25 = 35 J", fa="\\boxed{35 J}"), 6, "CE"),
}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_first_error_is_booked_where_it_first_shows(name):
    question, reference, solution, step, cls = ROWS[name]
    v = verify(question, solution, reference)
    assert (v.first_error, v.error_class) == (step, cls), v.explanation
