"""A verdict is the item's own: the same whatever the process verified before it.

The step verifier and the answer checker keep state between calls (pint's and sympy's caches, the checker's
symbolic workers); none of it may decide a verdict - a reward that did would depend on the order of the batch.
The defect this pins: pint cached a unit's dimensionality under a key that ignores the order of the unit's
factors, so the text of a dimensionality was that of the first equal unit the process had met
(`[length] ** 2 * [mass] / [time] ** 2` or `[mass] * [length] ** 2 / [time] ** 2`), and step 1 compared such
texts: heldout7:x014 (right) became an MC at step 1 once heldout6:w004 had been verified (verifiers/units.py).

A set of items is verified in fresh processes (this file run as a script): each item alone (a fork of a process
that has imported the verifier and built the unit registry, nothing verified yet), then all of them in one
process forward, reversed and shuffled (a fixed seed); every verdict must be the one the item gets alone.
The step verifier's items: the held-out rows of heldout/round6, heldout/round7 and heldout/verifier_heldout.jsonl;
the checker's: the labelled pairs of benchmarks/check_pairs.jsonl (alone: those the checker reads in this
process; a symbolic pair goes to a worker, which would be started for each fork - the orders cover those).
"""
from __future__ import annotations

import json
import os
import pathlib
import random
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
ORDERS = ("forward", "reversed", "shuffled")


# --- the items and one verdict each (run in the child processes) ----------------------------------------------

def _step_items() -> list[tuple[str, dict]]:
    sys.path.insert(0, str(HERE))
    from _step_problems import HELDOUT, heldout

    ids = [f"{name}:{json.loads(ln)['id']}" for name, path in HELDOUT.items()
           for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    out = [(o, heldout(o)) for o in ids]
    rows = (ROOT / "heldout" / "verifier_heldout.jsonl").read_text(encoding="utf-8").splitlines()
    return out + [(f"verifier_heldout:{r['id']}", r) for r in map(json.loads, rows) if r]


def _check_items() -> list[tuple[str, dict]]:
    rows = (ROOT / "benchmarks" / "check_pairs.jsonl").read_text(encoding="utf-8").splitlines()
    return [(f"check_pairs:{i}", r) for i, r in enumerate(map(json.loads, filter(str.strip, rows)))]


def _step_verdict(r: dict) -> list:
    from verifiers.steps import verify

    v = verify(r["question"], r["solution"], r["reference"])
    return [v.first_error, v.error_class]


def _check_verdict(r: dict) -> list:
    from verifiers import check

    v = check(r["pred"], r["ref"], kind=r.get("kind"))
    return [v.equivalent, v.score, v.kind]


SUBJECTS = {"steps": (_step_items, _step_verdict), "check": (_check_items, _check_verdict)}


def _alone(items, verdict, at_once: int = 2) -> dict:
    """Each item's verdict in a fork of this process (which has verified nothing), `at_once` forks at a time."""
    out, running = {}, []

    def collect(key, pid, rd):
        with os.fdopen(rd, "rb") as f:
            got = f.read()
        os.waitpid(pid, 0)
        out[key] = json.loads(got) if got else ["the child gave no verdict"]

    for key, r in items:
        rd, wr = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: one verdict, then out without running the parent's exit handlers
            os.close(rd)
            try:
                os.write(wr, json.dumps(verdict(r)).encode())
            finally:
                os._exit(0)
        os.close(wr)
        running.append((key, pid, rd))
        if len(running) >= at_once:
            collect(*running.pop(0))
    for run in running:
        collect(*run)
    return out


def _ordered(order: str, keys: list) -> list:
    if order == "reversed":
        return keys[::-1]
    if order == "shuffled":
        keys = list(keys)
        random.Random(7).shuffle(keys)
    return keys


def _main(subject: str, order: str, alone: bool) -> dict:
    """{"alone": {key: verdict}, order: {key: verdict}}, the alone verdicts (if asked) taken first."""
    from verifiers.steps import verify  # noqa: F401 - the verifier and the checker imported, as a caller has them
    from verifiers.units import get_ureg

    get_ureg()
    load, verdict = SUBJECTS[subject]
    items = load()
    out = {}
    if alone:
        out["alone"] = _alone([(k, r) for k, r in items if subject != "check" or not _symbolic(r)], verdict)
    byk = dict(items)
    out[order] = {k: verdict(byk[k]) for k in _ordered(order, [k for k, _ in items])}
    return out


def _symbolic(r: dict) -> bool:
    """Whether the checker takes a pair to a symbolic worker."""
    from verifiers.answer import infer_kind

    return (r.get("kind") or infer_kind(r["ref"])) == "symbolic"


if __name__ == "__main__":
    print(json.dumps(_main(sys.argv[1], sys.argv[2], "alone" in sys.argv[3:])))


# --- the tests ---------------------------------------------------------------------------------------------------

def _verdicts(subject: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    runs = [subprocess.Popen([sys.executable, __file__, subject, order] + (["alone"] if order == "forward" else []),
                             cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for order in ORDERS]
    out = {}
    for p in runs:
        stdout, stderr = p.communicate(timeout=600)
        assert p.returncode == 0, stderr[-3000:]
        out.update(json.loads(stdout))
    return out


def _differences(got: dict) -> list:
    """(item, {run: verdict}) for each item whose verdict is not the same in every run."""
    alone = got["alone"]
    keys = got["forward"]
    assert set(keys) == set(got["reversed"]) == set(got["shuffled"]) and set(alone) <= set(keys)
    return [(k, {run: v[k] for run, v in got.items() if k in v}) for k in keys
            if len({json.dumps(v[k]) for v in got.values() if k in v}) > 1]


def test_a_step_verdict_does_not_depend_on_what_was_verified_before():
    got = _verdicts("steps")
    assert len(got["alone"]) == len(got["forward"]) > 300
    assert got["alone"]["heldout7:x014"] == [0, None]
    assert _differences(got) == []


def test_a_check_verdict_does_not_depend_on_what_was_checked_before():
    got = _verdicts("check")
    assert len(got["forward"]) > 100 and len(got["alone"]) > 80
    assert _differences(got) == []


def test_a_dimensionality_reads_the_same_whatever_unit_came_first():
    """The root of the defect above: the text of a dimensionality, in fresh processes that met a unit's factors
    in one order or the other first."""
    prog = ("from verifiers.units import get_ureg\nu = get_ureg()\n"
            "print(sorted({{str(u(s).dimensionality) for s in {seq!r}}} | {{str(u.Quantity(1, s).dimensionality) "
            "for s in {seq!r}}}))")
    spellings = ["meter**2*kilogram/second**2", "kilogram*meter**2/second**2", "joule", "newton*meter"]
    outs = {subprocess.run([sys.executable, "-c", prog.format(seq=seq)], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.strip() for seq in (spellings, spellings[::-1], spellings[1:])}
    assert len(outs) == 1 and outs.pop().count("'") == 2, outs
