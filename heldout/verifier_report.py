"""Measure the step verifier and the rewards: `python heldout/verifier_report.py [--out DIR]`.

1. symbolic verifier on the hand-written held-out set (heldout/verifier_heldout.jsonl): first-error
   accuracy, class accuracy, ProcessBench F1 (harmonic mean of the accuracy on erroneous and on correct
   samples), and every miss listed;
2. the same on procgen's injected errors (fresh seed, every class at every step it is injected at);
3. the reward of each reward-hacking case (tests/verifiers/test_reward_hacking.py) beside an honest wrong answer, and issue
   32's and issue 54's attacks (tests/verifiers/test_reward_hacking_empty_steps_and_no_verdict.py,
   test_reward_hacking_shotgun_and_trailing.py) on every template beside an honest
   slip at step 5 (--hacking: only those tables);
4. the reference-free mode on real JEEBench physics problems ($R3BENCH_DATA_DIR): hand-made seven-tag
   solutions (right and with a slip) and answer-only outputs for every problem, verdicts counted.
Writes DIR/summary.md and DIR/results.json (default heldout/results/verifier).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from r3bench import procgen  # noqa: E402
from verifiers import seventag
from verifiers.steps import report, verify  # noqa: E402


def heldout():
    rows = [json.loads(x) for x in (ROOT / "heldout" / "verifier_heldout.jsonl").read_text().splitlines() if x]
    rep = report(rows)
    rep["batches"] = {b: report([r for r in rows if r["batch"] == b]) for b in sorted({r["batch"] for r in rows})}
    misses = []
    for r in rows:
        v = verify(r["question"], r["solution"], r["reference"])
        if not (v.valid and v.first_error == r["first_error"] and v.error_class == r["error_class"]):
            misses.append(f"{r['id']} ({r['note']}): gold {r['first_error']} {r['error_class']}, got "
                          f"{v.first_error} {v.error_class} - {v.explanation[:120]}")
    return rep, misses


def injected(n=120, seed=2027):
    rows = []
    for p in procgen.generate(n=n, seed=seed):
        rows.append({"question": p.question, "solution": p.solution, "reference": p.solution, "first_error": 0,
                     "error_class": None})
        for cls, steps in procgen.CLASSES.items():
            for s in steps:
                try:
                    text, fe, c, _ = procgen.inject_problem(p, cls, s)
                except procgen.InjectError:
                    continue
                rows.append({"question": p.question, "solution": text, "reference": p.solution, "first_error": fe,
                             "error_class": c})
    return report(rows)


def hacking():
    spec = importlib.util.spec_from_file_location("hacks", ROOT / "tests" / "verifiers" / "test_reward_hacking.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    names = list(m.HACKS)
    table = {}
    for rname, (f, cols) in m._rewards().items():
        vals = m._score(f, cols, [m.HONEST_WRONG, m.P.solution] + [m.HACKS[x] for x in names])
        table[rname] = dict(zip(["honest wrong", "honest right"] + names, vals))
    return table, names, m.STATES_RIGHT_ANSWER


def hacking_r2():
    """Issue 32's attack suite (tests/verifiers/test_reward_hacking_empty_steps_and_no_verdict.py) on one problem of every
    template: per attack the position reward (TRL adapter) and the stepfix reward (step_reward of the verdict), max and mean, beside the
    honest solution with one slip at step 5."""
    spec = importlib.util.spec_from_file_location("hacks_r2", ROOT / "tests" / "verifiers" /
                                                  "test_reward_hacking_empty_steps_and_no_verdict.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    from verifiers.rewards import step_reward

    rows = {}
    for kind in ["honest with a slip at step 5"] + m.ATTACKS:
        pos, sf, none = [], [], 0
        for p in m.PROBS:
            text = m.attack(p, kind)
            vals, _ = m._position(p, [text])
            r = step_reward(verify(p.question, text, p.solution))
            none += vals[0] is None or not r.ok
            pos.append(vals[0] if vals[0] is not None else float("nan"))
            sf.append(r.value)
        rows[kind] = {"n": len(m.PROBS), "position_max": max(pos), "position_mean": sum(pos) / len(pos),
                      "stepfix_max": max(sf), "no_verdict": none}
    return rows


def hacking_r2_md(rows) -> list[str]:
    md = ["## Issue 32's attacks on every template, beside an honest solution with one slip at step 5", "",
          "| attack | problems | position max | position mean | stepfix max | no verdict |", "|---|---|---|---|---|---|"]
    for k, r in rows.items():
        md.append(f"| {k} | {r['n']} | {r['position_max']:.3f} | {r['position_mean']:.3f} | {r['stepfix_max']:.3f} | "
                  f"{r['no_verdict']} |")
    return md


def hacking_r3():
    """Issue 54's attacks (tests/verifiers/test_reward_hacking_shotgun_and_trailing.py) on one problem of every template: per attack
    and reward, the largest reward and the number of problems where it pays more than the honest solution with
    one slip at step 5 under the same reward (the shotgun under the step rewards only)."""
    spec = importlib.util.spec_from_file_location("hacks_r3", ROOT / "tests" / "verifiers" / "test_reward_hacking_shotgun_and_trailing.py")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    table = m.build_table()
    rewards = sorted({r for r, _ in table})
    rows = {}
    for kind in ["honest with a slip at step 5"] + m.ATTACKS:
        row = {"n": len(m.PROBS), "max": {}, "above": 0}
        for r in rewards:
            cells = table.get((r, kind))
            if cells is None:
                continue
            row["max"][r] = max(float("nan") if v is None else v for _, v, _, _ in cells)
            row["above"] += sum(v is None or v > bar + 1e-9 for _, v, bar, _ in cells)
        rows[kind] = row
    return rows, rewards


def hacking_r3_md(got) -> list[str]:
    rows, rewards = got
    md = ["## Issue 54's attacks on every template, beside an honest solution with one slip at step 5", "",
          "Largest reward over the problems under each reward (`-`: not scored: the answer rewards judge only the "
          "stated answer); paid more = (problem, reward) pairs where the attack earns more than the honest slip at "
          "step 5 under the same reward.", "",
          "| attack | problems | " + " | ".join(rewards) + " | paid more |", "|---|---|" + "---|" * (len(rewards) + 1)]
    for k, r in rows.items():
        cells = [f"{r['max'][x]:.3f}" if x in r["max"] else "-" for x in rewards]
        md.append(f"| {k} | {r['n']} | " + " | ".join(cells) + f" | {r['above'] if k != 'honest with a slip at step 5' else '-'} |")
    return md


def _st(pa, pr, ge, vi, su, ca, fa):
    return seventag.render({"problem_analysis": pa, "principle": pr, "governing_equation": ge, "value_identification": vi,
                            "substitution": su, "calculation": ca, "final_answer": fa})


#: hand-made seven-tag solutions of real JEEBench physics problems: id -> [(variant, intended verdict, text)].
#: "no verdict" is intended where the error (a wrong law with consistent steps) cannot be shown without a
#: reference: the mode must then say so, not guess.
JEE = {
    "jeebench-JEE_Adv_2018_Paper_2-12": [
        ("right", "0", _st("The problem asks for the decrease in internal energy (dU) in joule.",
                           "Adiabatic expansion of a monatomic ideal gas: T V^(gamma - 1) stays constant, gamma = 5/3; the "
                           "internal energy is (3/2) n R T.", "T2 = T1/8^(2/3)\ndU = 1.5*n*R*(T1 - T2)",
                           "T1 = 100 K\nn = 1 mol\nR = 8.0 J/(mol*K)", "T2 = 100/8^(2/3)\ndU = 1.5*1*8.0*(100 - 25)",
                           "T2 = 25 K\ndU = 900 J", "\\boxed{900}")),
        ("slip", "6 CE", None)],
    "jeebench-JEE_Adv_2020_Paper_2-18": [
        ("right", "0", _st("We need the steady difference dT between the water and surroundings temperatures, in degrees.",
                           "Newton's law of cooling: after a long time the absorbed solar power equals the heat lost, k m c dT.",
                           "dT = I*A/(k*m*c)", "I = 700 W/m^2\nA = 0.05 m^2\nk = 0.001 s^-1\nm = 1 kg\nc = 4200 J/(kg*K)",
                           "dT = 700*0.05/(0.001*1*4200)", "dT = 8.33 K", "\\boxed{8.33}")),
        ("slip", "6 CE", None),
        ("wrong law (k left out)", "3 CM", "dT = I*A/(m*c)|dT = 700*0.05/(1*4200)|dT = 0.00833 K"),
        ("misread area", "4 MC", "A = 0.5 m^2|dT = 700*0.5/(0.001*1*4200)|dT = 83.3 K")],
    "jeebench-JEE_Adv_2018_Paper_1-13": [
        ("right", "0", _st("The problem asks for the average intensity (I2) at 22 cm behind the lens, in kW/m^2.",
                           "Geometrical optics of a thin convex lens: the light converges to the focus and spreads again; "
                           "the power through the cone is conserved, so the intensity scales with the inverse area.",
                           "I2 = I1*(f/(d - f))^2", "I1 = 1.3 kW/m^2\nf = 20 cm\nd = 22 cm", "I2 = 1.3*(20/(22 - 20))^2",
                           "I2 = 130 kW/m^2", "\\boxed{130}")),
        ("slip", "6 CE", None)],
    "jeebench-JEE_Adv_2018_Paper_2-13": [
        ("right", "0", _st("The problem asks for n, where F = n x 10^-4 N is the force on the anode.",
                           "Photoelectric emission at threshold: one electron per photon of energy W0; each electron gains "
                           "e V and its momentum is absorbed by the anode (impulse-momentum).",
                           "N = P/W0\np = sqrt(2*m_e*e*V)\nF = N*p\nn = F/1e-4",
                           "P = 200 W\nW0 = 6.25 eV\nm_e = 9e-31 kg\ne = 1.6e-19 C\nV = 500 V",
                           "N = 200/(6.25*1.6e-19)\np = sqrt(2*9e-31*1.6e-19*500)\nF = 2e20*1.2e-23\nn = 2.4e-3/1e-4",
                           "N = 2.0e20 s^-1\np = 1.2e-23 kg*m/s\nF = 2.4e-3 N\nn = 24", "\\boxed{24}")),
        ("slip", "6 CE", None)],
    "jeebench-JEE_Adv_2017_Paper_1-11": [
        ("right", "0", _st("The problem asks for the beat frequency (fb) in Hz.",
                           "Doppler effect twice: the approaching car receives a raised frequency and reflects it as a moving "
                           "source; the beat frequency is the difference of the two frequencies.",
                           "f2 = f0*(v + u)/(v - u)\nfb = f2 - f0", "f0 = 492 Hz\nv = 330 m/s\nu = 2 m/s",
                           "f2 = 492*(330 + 2)/(330 - 2)\nfb = 498 - 492", "f2 = 498 Hz\nfb = 6 Hz", "\\boxed{6}")),
        ("slip", "6 CE", None),
        ("wrong law (one Doppler shift)", "no verdict", "f2 = f0*(v + u)/v\nfb = f2 - f0|f2 = 492*(330 + 2)/330\nfb = 494.98 - 492|"
                                                        "f2 = 494.98 Hz\nfb = 2.98 Hz")],
    "jeebench-JEE_Adv_2022_Paper_1-25": [
        ("right", "0", _st("The problem asks for the maximum current (I) in mA.",
                           "Faraday's law gives a constant induced emf; the LC circuit driven from rest by it oscillates, "
                           "with the current amplitude emf sqrt(C/L).",
                           "emf = beta*A\nI = emf*sqrt(C/L)", "beta = 0.04 T/s\nA = 1 m^2\nC = 1e-3 F\nL = 0.1 H",
                           "emf = 0.04*1\nI = 0.04*sqrt(1e-3/0.1)", "emf = 0.04 V\nI = 4 mA", "\\boxed{4}")),
        ("slip", "6 CE", None)],
}


def _variant(right: str, label: str, spec):
    """The text of a variant: a slip multiplies the last calculation by 1.5 (and the answer with it); a spec
    'equations|substitution|calculation' (or 'value line|substitution|calculation') replaces those steps."""
    sol = seventag.parse(right)
    parts = {st.tag: st.content for st in sol.steps}
    if spec is None:  # slip
        calc = parts["calculation"].splitlines()
        lhs, rhs = calc[-1].split("=", 1)
        num, *unit = rhs.split()
        calc[-1] = f"{lhs}= {float(num) * 1.5:g} {' '.join(unit)}".rstrip()
        parts["calculation"] = "\n".join(calc)
        parts["final_answer"] = f"\\boxed{{{float(num) * 1.5:g}}}"
        return seventag.render(parts)
    a, b, c = spec.split("|")
    key = "value_identification" if "=" in a and a.split("=")[0].strip() in [
        ln.split("=")[0].strip() for ln in parts["value_identification"].splitlines()] else "governing_equation"
    if key == "value_identification":
        name = a.split("=")[0].strip()
        parts[key] = "\n".join(a if ln.split("=")[0].strip() == name else ln for ln in parts[key].splitlines())
    else:
        parts[key] = a
    parts["substitution"], parts["calculation"] = b, c
    last = c.splitlines()[-1].split("=", 1)[1].split()[0]
    parts["final_answer"] = f"\\boxed{{{last}}}"
    return seventag.render(parts)


def reference_free():
    from r3bench.eval import data

    recs = {r.id: r for r in data.load("jeebench")}
    counts, rows, agree, total = Counter(), [], 0, 0
    for rid, variants in JEE.items():
        r = recs[rid]
        right = variants[0][2]
        for label, intended, spec in variants:
            text = right if label == "right" else _variant(right, label, spec)
            v = verify(r.question, text, str(r.answer))
            got = "no verdict" if not v.valid else ("0" if v.first_error == 0 else f"{v.first_error} {v.error_class}")
            agree += got == intended
            total += 1
            rows.append((rid, label, intended, got, v.explanation[:160]))
            counts[("hand-made " + ("right" if label == "right" else "erroneous"), got)] += 1
    for r in recs.values():  # answer-only outputs: the format failure is counted, never a pass
        v = verify(r.question, f"\\boxed{{{r.answer}}}", str(r.answer))
        counts[("answer only (gold)", "no verdict" if not v.valid else f"{v.first_error} {v.error_class}")] += 1
    return rows, counts, len(recs), (agree, total)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "heldout" / "results" / "verifier"))
    ap.add_argument("--hacking", action="store_true", help="only the attack tables of issues 32 and 54 (about two minutes)")
    a = ap.parse_args(argv)
    if a.hacking:
        print("\n".join(hacking_r2_md(hacking_r2()) + [""] + hacking_r3_md(hacking_r3())))
        return 0
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    ho, misses = heldout()
    inj = injected()
    hack, names, right = hacking()
    hack2 = hacking_r2()
    hack3 = hacking_r3()
    rf_rows, rf_counts, n_jee, (rf_agree, rf_total) = reference_free()
    fmt = lambda x: "-" if x is None else f"{x:.3f}"  # noqa: E731
    md = ["# Step verifier and rewards: measurements", "",
          "Produced by `python heldout/verifier_report.py` (symbolic backend, offline).", "",
          "## First-error verdicts", "",
          "| set | n | first-error acc. | class acc. | acc. erroneous | acc. correct | ProcessBench F1 | invalid |",
          "|---|---|---|---|---|---|---|---|"]
    sets = [(f"hand-written, batch {b}", r) for b, r in ho["batches"].items()]
    sets += [("hand-written, all", ho), ("procgen injected (seed 2027)", inj)]
    for name, r in sets:
        md.append(f"| {name} | {r['n']} | {fmt(r['first_error_accuracy'])} | {fmt(r['class_accuracy'])} | "
                  f"{fmt(r['accuracy_erroneous'])} | {fmt(r['accuracy_correct'])} | {fmt(r['processbench_f1'])} | "
                  f"{r['invalid']} |")
    md += ["", "Each hand-written batch was written before it was first run; the fixes the misses of batches 1-5 "
           "showed came after (so their figures here are after tuning; their first-run figures are in docs/verifier.md "
           "and the commit messages). Batch 6 was written after every fix and left untuned: it is the held-out "
           "figure of the verifier as committed.", "", "Hand-written misses now:", ""] + ([f"- {m}" for m in misses] or ["- none"])
    md += ["", "## Reward of each hacking case beside an honest wrong answer", "",
           "Honest wrong = a complete seven-tag solution with one calculation slip (step 6). "
           "`*` = the hack states one right, finite answer: the answer rewards (outcome, rlvp) pay it as a right "
           "answer by design.", "", "| case | position | pspo_wrs | outcome | rlvp |", "|---|---|---|---|---|"]
    for case in ["honest wrong", "honest right"] + names:
        star = " *" if case in right else ""
        md.append(f"| {case}{star} | " + " | ".join(fmt(hack[r][case]) for r in ("position", "pspo_wrs", "outcome", "rlvp"))
                  + " |")
    md += [""] + hacking_r2_md(hack2) + [""] + hacking_r3_md(hack3)
    md += ["", f"## Reference-free mode on real JEEBench physics problems ({n_jee} problems)", "",
           f"Hand-made seven-tag solutions of {len(JEE)} problems (right, a calculation slip, and where written a wrong "
           f"law or a misread value): verdict as intended for {rf_agree} of {rf_total}. Answer-only outputs for all "
           f"{n_jee} problems.", "", "| output | verdict | count |", "|---|---|---|"]
    for (label, got), c in sorted(rf_counts.items()):
        md.append(f"| {label} | {got} | {c} |")
    md += ["", "| problem | variant | intended | verdict | explanation |", "|---|---|---|---|---|"]
    md += [f"| {r[0].removeprefix('jeebench-')} | {r[1]} | {r[2]} | {r[3]} | {r[4].replace('|', '/')} |" for r in rf_rows]
    (out / "summary.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    (out / "results.json").write_text(json.dumps({"heldout": ho, "heldout_misses": misses, "injected": inj,
                                                  "hacking": hack, "hacking_r2": hack2, "hacking_r3": hack3[0], "reference_free": [list(r) for r in rf_rows],
                                                  "reference_free_agree": [rf_agree, rf_total],
                                                  "reference_free_counts": {" / ".join(map(str, k)): v
                                                                            for k, v in rf_counts.items()}},
                                                 indent=1, default=str), encoding="utf-8")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
