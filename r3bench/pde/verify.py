"""The hybrid physics verifier: run a solver program on hidden instances, score it against references.

    verify(code, family, insts, cfg=VerifyConfig()) -> ProgramVerdict        # never raises
    extract_code(completion) -> str | None

One sandbox run per program, as a fork server (`verifiers.sandbox.run_python(..., calls=Calls(...))`): the
interpreter starts, NumPy/SciPy are imported and the program's top level runs once (at most `startup_s`);
then each instance runs in a fresh fork of that state, where a small driver calls `solve(**args)`,
converts the output with `np.asarray(..., float64)` and sends it back as base64 in `result` only when its
shape is the expected one. The time of an instance is the sandbox supervisor's clock, from sending the
instance's args to receiving its result, and at `instance_s` the supervisor kills the run: an alarm or a
clock inside the program's process could be switched off (`setitimer(0)`) or patched (`time.perf_counter`),
the supervisor is outside its reach. The first instance that reaches the limit ends the run (the
instances after it count as invalid, not run). `memory_mb` of address space per process (RLIMIT_AS; the
sandbox's memory cgroup, for the whole run, where there is one). Everything the program sends back is
checked again here (shape from the byte count, finiteness, any `result` it wrote instead), so tampering
with the driver gains nothing, and no output of the program makes `verify` raise. (Before: one sandbox run
per instance, 3-4x the cost: the interpreter start and the imports were paid per instance.)

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
import re
from dataclasses import dataclass, field

import numpy as np

from r3bench.pde import families as _fam
from verifiers.sandbox import Calls
from verifiers.sandbox import SandboxLimits
from verifiers.sandbox import run_python
from verifiers.sandbox import visible_text

EPS = 1e-12


@dataclass(frozen=True)
class VerifyConfig:
    T_traj: float = 0.05
    T_phys: float = 2.0
    success_nrmse: float = 0.01
    instance_s: float = 3.0  # per-instance time (the prompt says "about 2 s": margin for load), the supervisor's clock
    startup_s: float = 4.0  # interpreter + numpy/scipy import + the program's top level, once per program
    memory_mb: int = 1024


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
    seconds: float = 0.0  # wall time of the program's sandbox run (start-up and every instance)
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


# The driver is defined after the program in the same namespace and called once per instance, in a fresh fork
# (`CALL`, with `_r3_inst`, the instance's args and shape, set by the sandbox's Calls); its names start with
# _r3. It keeps no time: the program shares its process and can switch any in-process clock or alarm off
# (setitimer(0), a patched time.perf_counter); the instance's time and its limit are the sandbox supervisor's.
DRIVER = r'''

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
'''
CALL = "result = _r3_drive(_r3_inst)"


def sandbox_limits(cfg: VerifyConfig, out_bytes: int, n: int):
    """The program's run: startup_s (interpreter, imports, the top level) + n x instance_s, + a margin for the
    forks (the supervisor keeps each instance's limit). CPU per process: the worker's start-up and one
    instance (each instance's fork starts with its own count)."""
    wall = cfg.startup_s + n * (cfg.instance_s + 0.5) + 1.0
    return SandboxLimits(wall_s=wall, cpu_s=int(math.ceil(cfg.startup_s + cfg.instance_s)), memory_mb=cfg.memory_mb,
                         output_kb=max(64, int(out_bytes * 1.4 / 1024) + 64), max_processes=1)


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
    """A short text of what the program reported (a str, else only its type: str() of a 10**400 raises),
    its control characters escaped (one visible line: no forged log line, no terminal escape)."""
    return visible_text(x[:n]) if isinstance(x, str) else f"<{type(x).__name__}>"


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


def _instance_verdict(call, family, inst, cfg):
    """InstanceVerdict of one instance from its call in the fork server (a verifiers.sandbox.CallResult)."""
    sec = call.seconds  # the supervisor's clock: from sending the instance's args to receiving its result
    if call.status == "timeout":
        return _invalid(f"timeout: instance time limit reached ({cfg.instance_s:g} s, the sandbox supervisor's "
                        f"clock): {call.reason}", sec)
    if call.status != "ok":
        return _invalid(f"{call.status}: {call.reason}", sec)
    item = _item(call.value)
    if item is None:
        return _invalid("the program's run did not report a result for the instance (did it overwrite `result` "
                        "or exit early?)", sec)
    if item["status"] != "ok":
        return _invalid(f"{_text(item['status'], 40)}: {_text(item.get('why'))}", sec)
    u, why = _decode(item, inst)
    return _invalid(why, sec) if u is None else score_instance(family, inst, u, cfg, sec)


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
    out_bytes = max(8 * int(np.prod(i["shape"])) for i in insts)
    calls = Calls(CALL, tuple({"_r3_inst": {"args": i["args"], "shape": i["shape"]}} for i in insts), cfg.instance_s,
                  start_s=cfg.startup_s)
    res = run_python(code + "\n" + DRIVER, sandbox_limits(cfg, out_bytes, len(insts)), calls=calls)
    per_call = res.status == "ok" or (res.status == "timeout" and any(c.status == "timeout" for c in res.calls))
    if not per_call:  # the run failed as a whole (the top level, start-up time, a denied call, the memory cgroup)
        why = (f"timeout: start-up time limit reached ({cfg.startup_s:g} s: interpreter, imports, the program's top "
               f"level): {res.reason}") if res.status == "timeout" else f"{res.status}: {res.reason}"
        verdicts = [_invalid(why) for _ in insts]
    else:
        verdicts = []
        for i, (call, inst) in enumerate(zip(res.calls, insts)):
            if call.status == "not run":
                verdicts.append(_invalid("not run: an earlier instance reached the time limit"))
            else:
                verdicts.append(_instance_verdict(call, family, inst, cfg))
    return combine(verdicts, cfg, round(res.seconds, 4), res.isolation)


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
