"""The hybrid physics verifier: run a solver program on hidden instances, score it against references.

    verify(code, family, insts, cfg=VerifyConfig()) -> ProgramVerdict        # never raises
    extract_code(completion) -> str | None

One sandbox run per instance (`verifiers.sandbox.run_python`): the program's source is followed by a
small driver that calls `solve(**args)` on the instance, converts the output with
`np.asarray(..., float64)` and sends it back as base64 in `result` only when its shape is the expected
one. Each run has a wall-clock limit of `startup_s + instance_s`, kept by the host, and `memory_mb` of
address space (RLIMIT_AS; the sandbox's memory cgroup where there is one). The time of an instance is
the host's clock for its run (interpreter start, imports, the program's top level and `solve`): an alarm
or a clock inside the run shares the program's process, which can switch it off (`setitimer(0)`) or patch
it (`time.perf_counter`). Everything the program sends back is checked again here (shape from the byte
count, finiteness, any `result` it wrote instead), so tampering with the driver gains nothing, and no
output of the program makes `verify` raise. The first instance runs alone: a program that does not
compile (the same error on every instance) or reaches the time limit there is not run again (the
remaining instances count as invalid, not run), as the single run's wall clock did before. The other
instances run `workers` at a time (default: half the CPUs): the runs are independent processes, so
this costs latency only where CPUs are free, and each run keeps its own clock.

Per instance (paper's hybrid verifier):
  V       = error-free execution x correct shape x finite values (0 or 1)
  L_traj  = ||u_hat - u*||_2 / ||u*||_2 over space and time (relative L2; absolute when ||u*|| < eps)
  L_phys  = |rho(u_hat) - rho(u*)| / (rho(u*) + eps), rho = RMS of the family's discrete residual
            (0 where a family defines none)
  reward  = V * exp(-L_traj / T_traj) * exp(-L_phys / T_phys),  T_traj = 0.05, T_phys = 2.0
  nRMSE   = RMSE(u_hat - u*) / (max u* - min u*)        normalisation "range";
            fallbacks: / RMS(u*) ("rms") when the range is < eps, plain RMSE ("abs") when both are.
            Each InstanceVerdict says which one it used (`nrmse_norm`).
Per program: reward = mean over instances; valid = every instance valid; nrmse = worst instance
(invalid instances count 1, capped at 1); success = valid and nrmse <= 0.01 (`success_nrmse`).
"""
from __future__ import annotations

import ast
import base64
import dataclasses
import math
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from r3bench.pde import families as _fam
from verifiers.sandbox import LEVELS
from verifiers.sandbox import SandboxLimits
from verifiers.sandbox import run_python

EPS = 1e-12


@dataclass(frozen=True)
class VerifyConfig:
    T_traj: float = 0.05
    T_phys: float = 2.0
    success_nrmse: float = 0.01
    instance_s: float = 3.0  # per-instance time (the prompt says "about 2 s": margin for load), the host's clock
    startup_s: float = 4.0  # interpreter + numpy/scipy import, in each instance's run
    memory_mb: int = 1024
    workers: int = 0  # instance runs at a time after the first (0: half the CPUs, at most n - 1)


@dataclass(frozen=True)
class InstanceVerdict:
    valid: bool
    reward: float
    nrmse: float  # 1.0 when invalid
    nrmse_norm: str  # range | rms | abs | none (invalid)
    l_traj: float | None
    l_phys: float | None
    seconds: float | None
    reason: str
    verifier_ok: bool = True  # False: the verifier failed (its reference), not the program


@dataclass(frozen=True)
class ProgramVerdict:
    valid: bool
    success: bool
    reward: float
    nrmse: float
    reason: str
    instances: tuple = field(default=())
    seconds: float = 0.0  # wall time of the sandbox runs, summed (one per instance)
    isolation: str = ""  # the sandbox's isolation level for this run (verifiers.sandbox.LEVELS); "" when none ran
    verifier_ok: bool = True  # False: the verifier itself failed (not the program's fault; a trainer skips it)

    def to_dict(self) -> dict:
        """Plain JSON-ready data (the instances as dicts)."""
        return dataclasses.asdict(self)


_FENCE = re.compile(r"```[ \t]*(?:python|py|python3)?[ \t]*\n(.*?)(?:```|\Z)", re.S | re.I)


def extract_code(completion) -> str | None:
    """The program in a completion: the last fenced block that defines `solve` (else the last fenced
    block), or the bare text when it defines `solve` and has no fence. None when there is none."""
    if not isinstance(completion, str) or not completion.strip():
        return None
    blocks = [b for b in _FENCE.findall(completion) if b.strip()]
    with_solve = [b for b in blocks if re.search(r"^\s*def\s+solve\s*\(", b, re.M)]
    if with_solve:
        return with_solve[-1]
    if blocks:
        return blocks[-1]
    if re.search(r"^\s*def\s+solve\s*\(", completion, re.M):
        return completion
    return None


# The driver runs after the program in the same namespace, once per instance (one sandbox run each); its
# names start with _r3. `_r3_inst` (the instance's args and shape) comes in through `inputs`. It keeps no
# time: the program shares its process and can switch any in-process clock or alarm off (setitimer(0),
# a patched time.perf_counter); the instance's time and its limit are the host's (the sandbox's wall clock).
_DRIVER = r'''

def _r3_drive(_inst):
    import base64 as _b64
    import numpy as _np

    _solve = globals().get("solve")
    if not callable(_solve):
        return {"status": "error", "why": "the program defines no function solve"}
    args = {k: (_np.asarray(v, dtype=float) if isinstance(v, list) else v) for k, v in _inst["args"].items()}
    try:
        u = _np.asarray(_solve(**args), dtype=_np.float64)
    except MemoryError:
        return {"status": "memory", "why": "MemoryError"}
    except BaseException as e:
        msg = (type(e).__name__ + ": " + str(e))[:300]
        st = "refused" if isinstance(e, PermissionError) and "refused in the sandbox" in str(e) else "error"
        return {"status": st, "why": msg}
    if list(u.shape) != list(_inst["shape"]):
        return {"status": "shape", "why": "shape %s, expected %s" % (tuple(u.shape), tuple(_inst["shape"]))}
    return {"status": "ok", "data": _b64.b64encode(u.astype("<f8").tobytes()).decode("ascii")}


result = _r3_drive(_r3_inst)
'''


def _sandbox_limits(cfg: VerifyConfig, out_bytes: int):
    """One instance's run: startup_s (interpreter, imports, the program's top level) + instance_s."""
    wall = cfg.startup_s + cfg.instance_s
    return SandboxLimits(wall_s=wall, cpu_s=int(math.ceil(wall)), memory_mb=cfg.memory_mb,
                         output_kb=max(64, int(out_bytes * 1.4 / 1024) + 64))


def _invalid(reason, seconds=None, verifier_ok: bool = True) -> InstanceVerdict:
    return InstanceVerdict(False, 0.0, 1.0, "none", None, None, seconds, reason, verifier_ok)


def nrmse(u_hat, u_ref) -> tuple[float, str]:
    """RMSE over the reference range; fallbacks RMS(u*) then plain RMSE. Returns (value, normalisation)."""
    err = float(np.sqrt(np.mean((np.asarray(u_hat) - np.asarray(u_ref)) ** 2)))
    rng = float(np.max(u_ref) - np.min(u_ref))
    if rng > EPS:
        return err / rng, "range"
    rms = float(np.sqrt(np.mean(np.asarray(u_ref) ** 2)))
    if rms > EPS:
        return err / rms, "rms"
    return err, "abs"


def score_instance(family: str, inst: dict, u_hat: np.ndarray, cfg: VerifyConfig = VerifyConfig(),
                   seconds=None) -> InstanceVerdict:
    """Hybrid score of one output array against the reference (the array is already shape-checked)."""
    u_hat = np.asarray(u_hat, float)
    if list(u_hat.shape) != list(inst["shape"]):
        return _invalid(f"wrong shape {u_hat.shape}, expected {tuple(inst['shape'])}", seconds)
    if not np.all(np.isfinite(u_hat)):
        return _invalid("non-finite values (NaN or inf) in the output", seconds)
    try:
        u_ref = _fam.reference(family, inst)
    except Exception as e:  # noqa: BLE001 - a reference failure is a verifier error, said so
        return _invalid(f"verifier error: reference failed: {type(e).__name__}: {e}", seconds, verifier_ok=False)
    nrm = float(np.linalg.norm(u_ref))
    diff = float(np.linalg.norm(u_hat - u_ref))
    l_traj = diff / nrm if nrm > EPS else diff
    res = _fam.FAMILIES[family].residual
    l_phys = 0.0
    if res is not None:
        with np.errstate(all="ignore"):
            rho_hat, rho_ref = res(u_hat, inst), res(u_ref, inst)
        l_phys = abs(rho_hat - rho_ref) / (rho_ref + 1e-8) if math.isfinite(rho_hat) else math.inf
    reward = math.exp(-l_traj / cfg.T_traj) * math.exp(-l_phys / cfg.T_phys)
    e, norm = nrmse(u_hat, u_ref)
    e = min(1.0, e) if math.isfinite(e) else 1.0
    return InstanceVerdict(True, float(reward), e, norm, l_traj, l_phys, seconds,
                           f"valid; nRMSE {e:.3g} ({norm}), L_traj {l_traj:.3g}, L_phys {l_phys:.3g}")


def _decode(item, inst):
    data = item.get("data")
    if not isinstance(data, str):
        return None, "the output could not be read back"
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError:
        return None, "the output could not be read back"
    n = int(np.prod(inst["shape"]))
    if len(raw) != 8 * n:
        return None, f"wrong shape: {len(raw) // 8} values, expected {n}"
    return np.frombuffer(raw, dtype="<f8").reshape(inst["shape"]), None


def _text(x, n=300) -> str:
    """A short text of what the program reported (a str, else only its type: str() of a 10**400 raises)."""
    return x[:n] if isinstance(x, str) else f"<{type(x).__name__}>"


def _item(value):
    """The driver's report of one instance (a dict with a str status), or None. Anything the program put
    in `result` instead comes here: no exception of literal_eval (TypeError for `{[1]: 2}`, ...) escapes."""
    if not isinstance(value, str):
        return None
    try:
        item = ast.literal_eval(value)
    except Exception:  # noqa: BLE001 - any unreadable report is the program's, said so by the caller
        return None
    return item if isinstance(item, dict) and isinstance(item.get("status"), str) else None


_COMPILE_ERRORS = ("SyntaxError", "IndentationError", "TabError")


def _run_instance(code, family, inst, cfg):
    """(InstanceVerdict, SandboxResult) of one instance in a sandbox run of its own."""
    out_bytes = 8 * int(np.prod(inst["shape"]))
    res = run_python(code + "\n" + _DRIVER, _sandbox_limits(cfg, out_bytes),
                     inputs={"_r3_inst": {"args": inst["args"], "shape": inst["shape"]}})
    sec = res.seconds  # the host's clock: interpreter start, imports, the top level and solve
    if res.status == "timeout":
        return _invalid(f"timeout: instance time limit reached ({cfg.startup_s:g} s start-up + {cfg.instance_s:g} s, "
                        f"the sandbox's clock): {res.reason}", sec), res
    if not res.ok:
        return _invalid(f"{res.status}: {res.reason}", sec), res
    item = _item(res.value)
    if item is None:
        return _invalid("the program's run did not report a result for the instance (did it overwrite `result` "
                        "or exit early?)", sec), res
    if item["status"] != "ok":
        return _invalid(f"{_text(item['status'], 40)}: {_text(item.get('why'))}", sec), res
    u, why = _decode(item, inst)
    return (_invalid(why, sec) if u is None else score_instance(family, inst, u, cfg, sec)), res


def verify(code, family: str, insts: list[dict], cfg: VerifyConfig = VerifyConfig()) -> ProgramVerdict:
    """Run `code` (Python source defining `solve`) on `insts`, each in a sandbox run of its own; never raises.

    A failure of the verifier itself (not of the program) is a verdict with verifier_ok=False, which a
    trainer skips and counts."""
    try:
        return _verify(code, family, insts, cfg)
    except Exception as e:  # noqa: BLE001 - the verifier's own failure: said so, and not booked as the program's
        return ProgramVerdict(False, False, 0.0, 1.0, f"verifier error: {type(e).__name__}: {e}"[:500],
                              verifier_ok=False)


def _verify(code, family, insts, cfg):
    if family not in _fam.FAMILIES:
        return ProgramVerdict(False, False, 0.0, 1.0, f"verifier error: unknown family {family!r}", verifier_ok=False)
    if not isinstance(code, str) or not code.strip():
        return ProgramVerdict(False, False, 0.0, 1.0, "no program (no ```python``` block defining solve)")
    if not insts:
        return ProgramVerdict(False, False, 0.0, 1.0, "verifier error: no instances", verifier_ok=False)
    # the first instance alone: a program that does not compile, or hangs, is not run again
    v, res = _run_instance(code, family, insts[0], cfg)
    verdicts, seconds, levels = [v], res.seconds, [res.isolation]
    if res.status == "error" and res.reason.startswith(_COMPILE_ERRORS):  # the same on every instance
        verdicts += [_invalid(v.reason) for _ in insts[1:]]
    elif res.status == "timeout":  # the program is invalid already; a hang costs one run, not one per instance
        verdicts += [_invalid("not run: instance 0 reached the time limit") for _ in insts[1:]]
    elif len(insts) > 1:
        workers = cfg.workers or max(1, min(len(insts) - 1, (os.cpu_count() or 1) // 2))
        with ThreadPoolExecutor(workers) as ex:
            for v, res in ex.map(lambda i: _run_instance(code, family, i, cfg), insts[1:]):
                verdicts.append(v)
                seconds += res.seconds
                levels.append(res.isolation)
    known = [lv for lv in levels if lv in LEVELS]
    isolation = max(known, key=LEVELS.index) if known else (levels[0] if levels else "")  # the weakest
    return combine(verdicts, cfg, round(seconds, 4), isolation)


def combine(verdicts, cfg: VerifyConfig = VerifyConfig(), seconds: float = 0.0, isolation: str = "") -> ProgramVerdict:
    valid = all(v.valid for v in verdicts)
    reward = float(np.mean([v.reward for v in verdicts])) if verdicts else 0.0
    worst = max((v.nrmse for v in verdicts), default=1.0)
    success = valid and worst <= cfg.success_nrmse
    bad = [f"instance {i}: {v.reason}" for i, v in enumerate(verdicts) if not v.valid]
    if bad:
        reason = f"{len(bad)}/{len(verdicts)} instances invalid; " + "; ".join(bad[:3])
        if not all(v.verifier_ok for v in verdicts):
            reason = "verifier error: " + reason  # not the program's fault (verifier_ok False): skipped
    else:
        norms = "/".join(dict.fromkeys(v.nrmse_norm for v in verdicts))  # which normalisation the nRMSEs use
        reason = (f"valid on {len(verdicts)} instances; worst nRMSE {worst:.3g} ({norms}-normalised)"
                  + (" (success)" if success else ""))
    return ProgramVerdict(valid, success, reward, worst, reason, tuple(verdicts), seconds, isolation,
                          verifier_ok=all(v.verifier_ok for v in verdicts))
