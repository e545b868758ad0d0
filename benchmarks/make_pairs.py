"""Source of benchmarks/check_pairs.jsonl: physics answer pairs with human labels.

Each row is (pred, ref, kind or None, label, note). The label is what a physics grader would say:
it was written by hand from the physics, never read back from any checker. Regenerate with
`python benchmarks/make_pairs.py` (the jsonl is committed; this file is its readable source).
"""
import json
import pathlib

N, I, S, M, MM, T = "numeric", "integer", "symbolic", "mcq", "mcq_multi", "text"
ROWS = [
    # --- numeric, same unit / formatting --------------------------------------------------------
    (r"The speed is \boxed{12.5\ \mathrm{m/s}}", "12.5 m/s", None, True, "boxed with latex unit"),
    (r"\boxed{12.4 m/s}", "12.5 m/s", None, True, "within 1%"),
    (r"\boxed{13 m/s}", "12.5 m/s", None, False, "4% off"),
    (r"\boxed{-12.5 m/s}", "12.5 m/s", None, False, "sign"),
    (r"The answer is 9.8 m/s^2.", "9.81 m/s^2", None, True, "answer is"),
    (r"Answer: 9.8 \mathrm{m\,s^{-2}}", "9.81 m/s^2", None, True, "negative exponent latex"),
    (r"\boxed{9.8 m s⁻²}", "9.81 m/s^2", None, True, "unicode superscript"),
    (r"\boxed{3.0 \times 10^{8} \mathrm{m/s}}", "3e8 m/s", None, True, "times ten power"),
    (r"\boxed{3.0 × 10⁸ m/s}", "3e8 m/s", None, True, "unicode times"),
    (r"\boxed{3 \times 10^{-8} m/s}", "3e8 m/s", None, False, "exponent sign"),
    (r"\boxed{1.6 \times 10^{-19}\,\mathrm{C}}", "1.602e-19 C", None, True, "charge"),
    (r"\boxed{1.2e-3 A}", "1.2e-3 A", None, True, "sci notation"),
    (r"\boxed{1.2e3 A}", "1.2e-3 A", None, False, "sign of exponent lost"),
    (r"\boxed{\SI{4.5}{\kilo\gram}}", "4.5 kg", None, True, "siunitx"),
    (r"\boxed{6.67 \times 10^{-11} \mathrm{N\cdot m^2/kg^2}}", "6.674e-11 N*m^2/kg^2", None, True, "cdot unit"),
    # --- unit conversion ---------------------------------------------------------------------------
    (r"\boxed{1.2 mA}", "0.0012 A", None, True, "milli prefix"),
    (r"\boxed{1.2 A}", "0.0012 A", None, False, "prefix dropped"),
    (r"\boxed{4.7 \mu F}", "4.7e-6 F", None, True, "micro latex"),
    (r"\boxed{4.7 µF}", "4.7e-6 F", None, True, "micro sign"),
    (r"\boxed{4.7 μF}", "4.7e-6 F", None, True, "greek mu"),
    (r"\boxed{2.5 k\Omega}", "2500 ohm", None, True, "kilo-ohm latex"),
    (r"\boxed{2.5 kΩ}", "2500 ohm", None, True, "kilo-ohm unicode"),
    (r"\boxed{5000 Å}", "500 nm", None, True, "angstrom"),
    (r"\boxed{13.6 eV}", "2.179e-18 J", None, True, "electron volt"),
    (r"\boxed{13.6 J}", "2.179e-18 J", None, False, "eV vs J"),
    (r"\boxed{1 atm}", "101325 Pa", None, True, "atmosphere"),
    (r"\boxed{760 mmHg}", "1 atm", None, True, "mmHg"),
    (r"\boxed{1.01 bar}", "101325 Pa", None, True, "bar"),
    (r"\boxed{1 kWh}", "3.6e6 J", None, True, "kilowatt hour"),
    (r"\boxed{1000 cal}", "4184 J", None, True, "calorie"),
    (r"\boxed{2 L}", "0.002 m^3", None, True, "litre"),
    (r"\boxed{1 gauss}", "1e-4 T", None, True, "gauss"),
    (r"\boxed{36 km/h}", "10 m/s", None, True, "km/h"),
    (r"\boxed{36 m/s}", "10 m/s", None, False, "km/h vs m/s values"),
    (r"\boxed{500 g}", "0.5 kg", None, True, "gram"),
    (r"\boxed{2.5 cm}", "0.025 m", None, True, "centimetre"),
    (r"\boxed{2.5 mm}", "0.025 m", None, False, "mm vs cm"),
    (r"\boxed{3 \text{ hours}}", "10800 s", None, True, "text hours"),
    # --- temperature, angle, percent ---------------------------------------------------------------
    (r"\boxed{25 °C}", "298.15 K", None, True, "celsius absolute"),
    (r"\boxed{25^\circ C}", "298.15 K", None, True, "latex celsius"),
    (r"\boxed{25 K}", "298.15 K", None, False, "celsius number in kelvin"),
    (r"\boxed{212 °F}", "100 °C", None, True, "fahrenheit"),
    (r"\boxed{30°}", "0.5236 rad", None, True, "degrees to radians"),
    (r"\boxed{30^{\circ}}", "30 degree", None, True, "latex degrees"),
    (r"\boxed{0.5236}", "30 degree", None, True, "bare number against angle is radians"),
    (r"\boxed{30}", "30 degree", None, False, "bare 30 read as radians"),
    (r"\boxed{60°}", "30 degree", None, False, "wrong angle"),
    (r"\boxed{25\%}", "0.25", None, True, "percent fraction"),
    (r"\boxed{25%}", "25 %", None, True, "percent both"),
    (r"\boxed{2.5\%}", "0.25", None, False, "percent wrong"),
    # --- bare numbers, dimension mismatch, non-finite ----------------------------------------------
    (r"\boxed{12.5}", "12.5 m/s", None, True, "bare number in reference unit"),
    (r"\boxed{12.5 s}", "12.5 m/s", None, False, "dimension mismatch"),
    (r"\boxed{12.5 kg}", "12.5 N", None, False, "mass vs force"),
    (r"\boxed{5 N}", "5 kg*m/s^2", None, True, "newton in base units"),
    (r"\boxed{5 J}", "5 N*m", None, True, "joule"),
    (r"\boxed{nan}", "5 m", None, False, "nan"),
    (r"\boxed{inf}", "5 m", None, False, "inf"),
    (r"\boxed{\infty}", "5", None, False, "latex inf"),
    (r"\boxed{0}", "0", N, True, "zero"),
    (r"\boxed{0.001}", "0", N, False, "zero vs small"),
    (r"The final answer is $\frac{1}{2}$", "0.5", N, True, "latex frac numeric"),
    (r"\boxed{\dfrac{3}{4}}", "0.75", N, True, "dfrac numeric"),
    (r"\boxed{\sqrt{2}}", "1.414", N, True, "sqrt numeric"),
    (r"\boxed{2\pi}", "6.283", N, True, "pi numeric"),
    (r"\boxed{1,000 N}", "1000 N", None, True, "thousands separator"),
    # --- regression table from other checkers ------------------------------------------------------
    ("**73**", "73", None, True, "markdown bold"),
    (r"\text{13}", "13", None, True, "text wrapper"),
    (r"\[\boxed{42}\]", "42", None, True, "display boxed"),
    ("**Answer:** 4.", "4", None, True, "bold answer label"),
    (r"\boxed{-1.2e-3}", "-1.2e-3", None, True, "negative sci"),
    (r"\boxed{1.2e-3}", "-1.2e-3", None, False, "sign loss"),
    (r"so \boxed{\boxed{7}} and finally \boxed{8}", "8", None, True, "last boxed wins"),
    (r"\boxed{\frac{1}{\sqrt{2}}} m", "0.7071 m", None, True, "nested braces"),
    ("<final_answer>\\boxed{2.0 N}</final_answer>", "2 N", None, True, "final_answer tag"),
    ("<final_answer>2.0 N</final_answer>", "2 N", None, True, "final_answer tag no box"),
    # --- integer ----------------------------------------------------------------------------------
    (r"\boxed{6}", "6", I, True, "integer"),
    (r"\boxed{6.0}", "6", I, True, "integer as float"),
    (r"\boxed{7}", "6", I, False, "integer wrong"),
    (r"\boxed{-6}", "6", I, False, "integer sign"),
    ("The answer is 12", "12", I, True, "integer answer is"),
    ("Answer: 3", "8", I, False, "integer answer colon"),
    # --- mcq --------------------------------------------------------------------------------------
    ("The correct option is (C).", "C", M, True, "correct option is"),
    ("(B)", "B", M, True, "paren letter"),
    ("B) 4.5 m/s", "B", M, True, "letter paren with text"),
    ("I choose option D", "D", M, True, "option D"),
    ("The answer is A", "B", M, False, "wrong letter"),
    (r"\boxed{C}", "C", M, True, "boxed letter"),
    (r"\boxed{\text{C}}", "C", M, True, "boxed text letter"),
    ("**Answer: (D)**", "D", M, True, "bold answer letter"),
    ("Answer: (A) and (C)", "A", M, False, "two letters for single answer"),
    ("No idea.", "A", M, False, "no letter"),
    ("<final_answer>\\boxed{B}</final_answer>", "B", M, True, "tag letter"),
    # --- mcq multi --------------------------------------------------------------------------------
    ("A, C", "AC", MM, True, "comma set"),
    ("(A) and (C)", "AC", MM, True, "and set"),
    (r"\boxed{ACD}", "ACD", MM, True, "run of letters"),
    (r"\boxed{ACD}", "AC", MM, False, "extra option"),
    (r"\boxed{A}", "AC", MM, False, "missing option"),
    ("The correct options are (B), (C) and (D).", "BCD", MM, True, "sentence set"),
    (r"\boxed{C, A}", "AC", MM, True, "order does not matter"),
    # --- symbolic ---------------------------------------------------------------------------------
    (r"\boxed{\frac{1}{2} m v^2}", "m*v**2/2", S, True, "kinetic energy"),
    (r"\boxed{m v^2}", "m*v**2/2", S, False, "missing half"),
    (r"\boxed{\sqrt{2 g h}}", "sqrt(2*g*h)", S, True, "sqrt"),
    (r"\boxed{\sqrt{\frac{G M}{r}}}", "sqrt(G*M/r)", S, True, "orbital speed"),
    (r"\boxed{\sqrt{\frac{G m}{r}}}", "sqrt(G*M/r)", S, False, "case matters M vs m"),
    (r"\boxed{\frac{q_{1} q_2}{4 \pi \epsilon_0 r^2}}", "q_1*q_2/(4*pi*epsilon_0*r**2)", S, True, "coulomb"),
    (r"\boxed{\frac{q_{1} q_2}{4 \pi \epsilon_0 r}}", "q_1*q_2/(4*pi*epsilon_0*r**2)", S, False, "power of r"),
    (r"\boxed{2\pi\sqrt{\frac{l}{g}}}", "2*pi*sqrt(l/g)", S, True, "pendulum"),
    (r"\boxed{2\pi\sqrt{\frac{g}{l}}}", "2*pi*sqrt(l/g)", S, False, "pendulum inverted"),
    (r"\boxed{\frac{mg}{k}}", "m*g/k", S, True, "spring extension"),
    (r"\boxed{\frac{v^2}{2a}}", "v**2/(2*a)", S, True, "kinematics"),
    (r"\boxed{\frac{v^2}{a}}", "v**2/(2*a)", S, False, "kinematics missing 2"),
    (r"\boxed{x = \frac{v_0^2 \sin 2\theta}{g}}", "v_0**2*sin(2*theta)/g", S, True, "range with lhs"),
    (r"\boxed{\frac{2 v_0^2 \sin\theta\cos\theta}{g}}", "v_0**2*sin(2*theta)/g", S, True, "double angle identity"),
    (r"\boxed{\frac{\mu_0 I}{2 \pi r}}", "mu_0*I/(2*pi*r)", S, True, "wire field"),
    (r"\boxed{I R}", "I*R", S, True, "ohm"),
    (r"\boxed{I/R}", "I*R", S, False, "ohm inverted"),
    # --- text -------------------------------------------------------------------------------------
    ("The answer is increases.", "increases", T, True, "text word"),
    ("The answer is decreases.", "increases", T, False, "text word wrong"),
    # --- pathological -----------------------------------------------------------------------------
    (r"\boxed{10^{10^{10}}}", "5 m", None, False, "exponent tower"),
    ("x" * 5000, "5 m", None, False, "long junk"),
    ("{" * 3000, "5", None, False, "deep nesting"),
    (r"\boxed{5 blorgs}", "5 m", None, False, "unknown unit"),
    ("", "5 m", None, False, "empty output"),
]

if __name__ == "__main__":
    out = pathlib.Path(__file__).with_name("check_pairs.jsonl")
    with out.open("w") as f:
        for pred, ref, kind, label, note in ROWS:
            f.write(json.dumps({"pred": pred, "ref": ref, "kind": kind, "label": label, "note": note}) + "\n")
    print(f"{len(ROWS)} pairs -> {out.name}")
