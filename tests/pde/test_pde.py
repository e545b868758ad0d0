"""r3bench.pde: references (exact / manufactured solutions, self-convergence), the hybrid verifier,
broken programs, metrics, the solver bank, prompts and the SFT export."""
import json
import math

import numpy as np
import pytest

pytest.importorskip("scipy")

from r3bench.pde import bank, families as F, metrics, tasks  # noqa: E402
from r3bench.pde.verify import VerifyConfig, extract_code, nrmse, score_instance, verify  # noqa: E402


def _nr(u, r):
    return float(np.sqrt(np.mean((u - r) ** 2)) / np.ptp(r))


# ------------------------------------------------------------------------------ families / references

def test_instances_are_deterministic_small_and_vary():
    a, b = F.instances("burgers", 3), F.instances("burgers", 3)
    assert json.dumps(a) == json.dumps(b)
    shapes = {tuple(i["shape"]) for s in range(6) for i in F.instances("advection", s)}
    assert len(shapes) > 2  # resolution and output times vary
    for fam in F.FAMILIES:
        for inst in F.instances(fam, 0):
            assert np.prod(inst["shape"]) <= 11 * 32 * 32
            json.dumps(inst)  # travels to the sandbox as JSON
    assert set(F.SEEN) == {"advection", "burgers", "reaction_diffusion", "diffusion_sorption", "darcy",
                           "reaction_diffusion_2d"}
    assert set(F.HELD_OUT) == {"heat", "advection_diffusion", "kdv"}


def _cole_hopf(inst, N=2048):
    """Exact periodic viscous Burgers solution: u = -2 nu phi_x / phi, phi solving the heat equation."""
    a = F._args(inst)
    nu, x = a["nu"], F._periodic_grid(N)
    integral = np.zeros(N)
    for k, amp, p in inst["modes"]:
        integral += -amp * (np.cos(F.TWO_PI * k * x + p) - np.cos(p)) / (F.TWO_PI * k)
    P = np.fft.rfft(np.exp(-integral / (2 * nu)))
    kk = F.TWO_PI * np.fft.rfftfreq(N, 1 / N)
    rows = []
    for t in a["t"]:
        Pt = P * np.exp(-nu * kk ** 2 * t)
        rows.append(F._fourier_sample(-2 * nu * np.fft.irfft(1j * kk * Pt, N) / np.fft.irfft(Pt, N), len(a["x"])))
    return np.stack(rows)


@pytest.mark.parametrize("seed", [0, 1])
def test_burgers_reference_matches_cole_hopf(seed):
    inst = F.instances("burgers", seed, 1)[0]
    assert _nr(F._burgers_reference(inst), _cole_hopf(inst)) < 1e-8


def test_exact_references_solve_their_pde():
    # the exact solutions satisfy the PDE: residuals shrink at second order as the output grid is refined
    for fam in ("advection", "heat", "advection_diffusion"):
        inst = F.instances(fam, 0, 1)[0]
        rs = []
        for nx, nt in ((32, 41), (64, 81)):
            x, t = F._periodic_grid(nx), np.linspace(0, inst["args"]["t"][-1], nt)
            i2 = {**inst, "args": {**inst["args"], "x": x.tolist(), "t": t.tolist()}, "shape": [nt, nx]}
            rs.append(F.FAMILIES[fam].residual(F.FAMILIES[fam].reference(i2), i2))
        assert rs[0] / rs[1] > 3.0, (fam, rs)


def test_kdv_soliton_solves_kdv():
    inst = F.instances("kdv", 0, 1)[0]
    L, T = inst["args"]["L"], inst["args"]["t"][-1]
    rs = []
    for nx, nt in ((256, 201), (512, 401)):
        x, t = np.arange(nx) * L / nx, np.linspace(0, T, nt)
        i2 = {**inst, "args": {**inst["args"], "x": x.tolist(), "t": t.tolist()}, "shape": [nt, nx]}
        rs.append(F.FAMILIES["kdv"].residual(F.FAMILIES["kdv"].reference(i2), i2))
    assert rs[0] / rs[1] > 3.5, rs


def test_self_convergence_of_the_fine_grid_references():
    inst = F.instances("reaction_diffusion", 0, 1)[0]
    assert _nr(F._rd_reference(inst), F._rd_reference(inst, 384, 1e-3)) < 1e-6
    inst = F.instances("reaction_diffusion_2d", 0, 1)[0]
    a = F._args(inst)
    coarse_dt = F.rd2_strang(a["u0"], a["t"], a["nu"], a["rho"], 1e-2)
    assert _nr(F._rd2_reference(inst), F._rd2_reference(inst, 192)) < 1e-10  # spectral in space
    assert _nr(coarse_dt, F._rd2_reference(inst)) < 1e-4  # Strang in time
    for fam, ref in (("diffusion_sorption", F._ds_reference), ("darcy", F._darcy_reference)):
        inst = F.instances(fam, 0, 1)[0]
        e1, e2 = _nr(ref(inst, 2), ref(inst, 8)), _nr(ref(inst, 4), ref(inst, 8))
        ratio = _nr(ref(inst, 2), ref(inst, 4)) / e2
        assert 3.5 < ratio < 4.5, (fam, ratio)  # second order
        assert e2 < 1e-3 and e1 > e2


def test_darcy_manufactured_solution():
    # u = sin(pi x) sin(pi y), a = 1 + x y  =>  f(x, y) = -div(a grad u) ; the 5-point solver converges at O(h^2)
    def err(n):
        x = np.linspace(0, 1, n)
        X, Y = np.meshgrid(x, x, indexing="ij")
        a = 1 + X * Y
        u = np.sin(np.pi * X) * np.sin(np.pi * Y)
        ux, uy = np.pi * np.cos(np.pi * X) * np.sin(np.pi * Y), np.pi * np.sin(np.pi * X) * np.cos(np.pi * Y)
        f = -(Y * ux + a * (-np.pi ** 2 * u) + X * uy + a * (-np.pi ** 2 * u))
        got = F.darcy_fd(a, f)
        return np.max(np.abs(got - u))
    e1, e2 = err(17), err(33)
    assert e2 < 2e-3 and 3.5 < e1 / e2 < 4.5


# ------------------------------------------------------------------------------ verifier

def test_nrmse_normalisations():
    r = np.array([[0.0, 1.0], [2.0, 3.0]])
    v, how = nrmse(r + 0.3, r)
    assert how == "range" and v == pytest.approx(0.1)
    v, how = nrmse(np.full(3, 2.2), np.full(3, 2.0))
    assert how == "rms" and v == pytest.approx(0.1)
    v, how = nrmse(np.full(3, 0.5), np.zeros(3))
    assert how == "abs" and v == pytest.approx(0.5)


def test_reward_is_the_hybrid_formula():
    inst = F.instances("heat", 0, 1)[0]
    ref = F.reference("heat", inst)
    exact = score_instance("heat", inst, ref)
    assert exact.valid and exact.reward == pytest.approx(1.0) and exact.nrmse == 0.0
    bad = ref * 1.02
    v = score_instance("heat", inst, bad)
    rho_hat, rho = F.FAMILIES["heat"].residual(bad, inst), F.FAMILIES["heat"].residual(ref, inst)
    expect = math.exp(-0.02 / 0.05) * math.exp(-abs(rho_hat - rho) / (rho + 1e-8) / 2.0)
    assert v.l_traj == pytest.approx(0.02) and v.reward == pytest.approx(expect)
    assert v.nrmse_norm == "range" and 0 < v.nrmse < 0.02


def test_verdict_is_plain_data():
    v = verify(bank.HELD_OUT_BANK["heat"]["spectral"], "heat", F.instances("heat", 0, 2))
    d = json.loads(json.dumps(v.to_dict()))
    assert d["success"] and len(d["instances"]) == 2 and d["instances"][0]["nrmse_norm"] == "range"
    assert "range-normalised" in v.reason


def test_extract_code():
    assert extract_code("text\n```python\ndef solve(x):\n    return x\n```\nmore") == "def solve(x):\n    return x\n"
    two = "```python\nimport numpy\n```\n```python\ndef solve(a): pass\n```"
    assert extract_code(two).startswith("def solve")
    assert extract_code("```python\ndef solve(u0):\n  pass") is not None  # cut at max_gen_toks
    assert extract_code("def solve(u0, x, t, nu):\n    return u0") is not None
    assert extract_code("no code here") is None and extract_code("") is None and extract_code(None) is None


FAST = VerifyConfig(instance_s=0.7, startup_s=4.0)
BROKEN = {
    "syntax error": ("def solve(u0, x, t, nu)\n    return u0", "SyntaxError"),
    "wrong shape": ("import numpy as np\ndef solve(u0, x, t, nu):\n    return np.asarray(u0)", "shape"),
    "NaN": ("import numpy as np\ndef solve(u0, x, t, nu):\n    return np.full((len(t), len(x)), np.nan)", "non-finite"),
    "infinite loop": ("def solve(u0, x, t, nu):\n    while True:\n        pass", "time limit"),
    "huge allocation": ("import numpy as np\ndef solve(u0, x, t, nu):\n    return np.ones((10**6, 10**6))", "memory"),
    "file write": ("def solve(u0, x, t, nu):\n    open('/tmp/r3pde-escape', 'w').write('x')", "refused"),
    "file delete": ("import os\ndef solve(u0, x, t, nu):\n    os.remove('/etc/hostname')", "refused"),
    "network": ("import socket\ndef solve(u0, x, t, nu):\n    socket.create_connection(('example.com', 80))",
                "refused"),
    "subprocess": ("import subprocess\ndef solve(u0, x, t, nu):\n    subprocess.run(['ls'])", "refused"),
    "exception": ("def solve(u0, x, t, nu):\n    raise ValueError('nope')", "ValueError"),
    "no solve": ("import numpy as np\ndef solver(u0):\n    return u0", "no function solve"),
    "returns None": ("def solve(u0, x, t, nu):\n    return None", "shape"),
    "ragged": ("def solve(u0, x, t, nu):\n    return [[1.0], [1.0, 2.0]]", "error"),
    "exits": ("import os\nos._exit(0)", "without reporting"),
    "import-time loop": ("while True:\n    pass", "timeout"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_programs_get_zero_with_a_reason(case):
    code, why = BROKEN[case]
    v = verify(code, "heat", F.instances("heat", 0, 2), FAST)
    assert v.reward == 0.0 and not v.valid and not v.success and v.nrmse == 1.0
    assert why.lower() in v.reason.lower(), v.reason


def test_verifier_never_raises_on_bad_arguments():
    assert verify(None, "heat", F.instances("heat", 0, 1)).reward == 0.0
    assert "unknown family" in verify("x = 1", "nope", []).reason
    assert tasks.score({"family": "nope", "seed": 0}, "```python\ndef solve(): pass\n```").reason.startswith(
        "verifier error")


def test_partial_credit_and_driver_tampering():
    first_order = '''import numpy as np
def solve(u0, x, t, nu):
    u = np.asarray(u0, float).copy(); dx = x[1] - x[0]; out = [u.copy()]
    for t0, t1 in zip(t[:-1], t[1:]):
        u = u + (t1 - t0) * nu * (np.roll(u, -1) - 2 * u + np.roll(u, 1)) / dx ** 2  # one big Euler step
        out.append(u.copy())
    return np.stack(out)
'''
    v = verify(first_order, "heat", F.instances("heat", 2, 2))
    assert v.valid and 0.0 < v.reward < 1.0
    # the driver's base64 patched from the program: the report holds an object of the program's
    cheat = ("import base64, numpy as np\nclass H:\n    def decode(self, *a):\n        return self\n"
             "    def __repr__(self):\n        return '[]'\nbase64.b64encode = lambda b: H()\n"
             "def solve(u0, x, t, nu):\n    return np.zeros((len(t), len(x)))\n")
    v = verify(cheat, "heat", F.instances("heat", 0, 2))
    assert v.reward == 0.0 and "could not be read back" in v.reason and v.verifier_ok


# ------------------------------------------------------------------------------ the bank

@pytest.mark.parametrize("family,scheme", [(f, s) for f, d in {**bank.BANK, **bank.HELD_OUT_BANK}.items() for s in d])
def test_bank_solver_succeeds_on_its_family(family, scheme):
    code = {**bank.BANK, **bank.HELD_OUT_BANK}[family][scheme]
    v = verify(code, family, F.instances(family, tasks.TEST_SEED0))
    assert v.success, v.reason
    assert v.valid and v.reward > 0.4 and v.nrmse <= 0.01


def test_bank_has_two_schemes_per_seen_family():
    assert set(bank.BANK) == set(F.SEEN)
    assert all(len(s) >= 2 for s in bank.BANK.values())


# ------------------------------------------------------------------------------ metrics

def test_pass_at_k_unbiased_estimator():
    assert metrics.pass_at_k(8, 0, 8) == 0.0
    assert metrics.pass_at_k(8, 1, 1) == pytest.approx(1 / 8)
    assert metrics.pass_at_k(8, 1, 8) == 1.0
    assert metrics.pass_at_k(10, 3, 5) == pytest.approx(1 - math.comb(7, 5) / math.comb(10, 5))
    assert metrics.pass_at_k(4, 2, 8) == 1.0  # n < k: reported at k = n
    assert metrics.best_of([0.5, float("nan"), 3.0, 0.02], 8) == 0.02
    assert metrics.best_of([5.0], 8) == 1.0
    assert metrics.agg_median([0.1, 1.0, 0.3]) == 0.3


# ------------------------------------------------------------------------------ prompts, glue, export

def test_prompts_state_the_pde_and_signature_without_a_method():
    for fam in F.FAMILIES:
        p = tasks.prompt_text(fam, 1000)
        assert F.FAMILIES[fam].signature in p and "```python```" in p
        for method in ("Lax-Wendroff", "upwind", "Crank", "spectral", "Runge"):
            assert method.lower() not in p.lower()
    seen = tasks.dataset_seen()["test"]
    held = tasks.dataset_heldout()["test"]
    assert len(seen) == 24 and len(held) == 12 and not any(held["seen"])
    with pytest.raises(ValueError):
        tasks.docs(["heat"], "train")


def test_process_results_on_bank_and_garbage():
    doc = tasks.docs(["advection"], "test", 1)[0]
    good = "Here:\n```python\n" + bank.ADVECTION["spectral"] + "```"
    r = tasks.results(doc, [good])
    assert r["pass_at_1"] == 1.0 and r["validity"] == 1.0 and r["nrmse"] < 1e-6 and r["invalid_reasons"] == ""
    r = tasks.results_sc(doc, [[good, "garbage", "```python\nsyntax error(\n```"] + ["x"] * 5])  # lm-eval's shape
    assert r["pass_at_1"] == pytest.approx(1 / 8) and r["pass_at_8"] == 1.0 and r["best_nrmse"] < 1e-6
    assert "no program" in r["invalid_reasons"] and "SyntaxError" in r["invalid_reasons"]
    assert tasks.agg_reasons(["", "x"]) == 0.5


def test_sft_export(tmp_path):
    path = tasks.export(tmp_path, per_family=2)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 2 * sum(len(s) for s in bank.BANK.values())
    assert {r["family"] for r in rows} == set(F.SEEN)  # never a held-out family
    assert all(r["completion"].startswith("```python\n") and extract_code(r["completion"]) for r in rows)
    test_prompts = {d["prompt"] for d in tasks.docs(F.SEEN, "test")}
    assert not test_prompts & {r["prompt"] for r in rows}


def test_cli_export(tmp_path):
    from r3bench.pde.__main__ import main

    assert main(["export", "--out", str(tmp_path), "--per_family", "1"]) == 0
    assert (tmp_path / "sft.jsonl").is_file() and (tmp_path / "manifest.json").is_file()


def test_pde_reward_function():
    doc = tasks.docs(["heat"], "test", 1)[0]
    fn = tasks.PDEReward()
    good = "```python\n" + bank.HELD_OUT_BANK["heat"]["spectral"] + "```"
    out = fn(prompts=["p", "p"], completions=[[{"role": "assistant", "content": good}], "nothing"],
             family=[doc["family"]] * 2, seed=[doc["seed"]] * 2, n_instances=[2, 2])
    assert out[0] == pytest.approx(1.0) and out[1] == 0.0
    assert fn.last_reasons[1].startswith("no program")
