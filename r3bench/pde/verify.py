"""The hybrid physics verifier: run a solver program on hidden instances, score it against references.

    verify(code, family, insts, cfg=VerifyConfig()) -> ProgramVerdict        # never raises
    extract_code(completion) -> str | None

One sandbox run per program (`verifiers.sandbox.run_python`): the program's source is followed by a
small driver that calls `solve(**args)` on each instance in turn under a per-instance alarm
(`instance_s`), converts the output with `np.asarray(..., float64)` and sends it back as base64 in
`result` only when its shape is the expected one. The whole run has a wall-clock limit of
`startup_s + instance_s * len(insts)`, and `memory_mb` of address space (RLIMIT_AS). Everything the
program sends back is checked again here (shape from the byte count, finiteness), so tampering with
the driver from the program's own namespace gains nothing.

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
from verifiers.sandbox import SandboxLimits
from verifiers.sandbox import run_python

EPS = 1e-12


@dataclass(frozen=True)
class VerifyConfig:
    T_traj: float = 0.05
    T_phys: float = 2.0
    success_nrmse: float = 0.01
    instance_s: float = 3.0  # per-instance alarm inside the sandbox (the prompt says "about 2 s": margin for load)
    startup_s: float = 4.0  # interpreter + numpy/scipy import
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
    seconds: float = 0.0  # wall time of the sandbox run
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


# The driver runs after the program in the same namespace; its names start with _r3 and its state
# lives in one function. `_r3_insts` (the instances' args and shapes) comes in through `inputs`.
_DRIVER = r'''

def _r3_drive(_insts, _limit):
    import base64 as _b64, signal as _sig, time as _time
    import numpy as _np

    class _R3Alarm(BaseException):
        pass

    def _ring(*_):
        raise _R3Alarm()

    _sig.signal(_sig.SIGALRM, _ring)
    _solve = globals().get("solve")
    out = []
    for _inst in _insts:
        if not callable(_solve):
            out.append({"status": "error", "why": "the program defines no function solve"})
            continue
        args = {k: (_np.asarray(v, dtype=float) if isinstance(v, list) else v) for k, v in _inst["args"].items()}
        t0 = _time.perf_counter()
        try:
            _sig.setitimer(_sig.ITIMER_REAL, _limit)
            try:
                u = _solve(**args)
            finally:
                _sig.setitimer(_sig.ITIMER_REAL, 0)
            u = _np.asarray(u, dtype=_np.float64)
        except _R3Alarm:
            out.append({"status": "timeout", "why": "instance time limit of %g s reached" % _limit})
            continue
        except MemoryError:
            out.append({"status": "memory", "why": "MemoryError"})
            continue
        except BaseException as e:
            msg = (type(e).__name__ + ": " + str(e))[:300]
            st = "refused" if isinstance(e, PermissionError) and "refused in the sandbox" in str(e) else "error"
            out.append({"status": st, "why": msg})
            continue
        us = int(1e6 * (_time.perf_counter() - t0))
        if list(u.shape) != list(_inst["shape"]):
            out.append({"status": "shape", "why": "shape %s, expected %s" % (tuple(u.shape), tuple(_inst["shape"])),
                        "us": us})
            continue
        out.append({"status": "ok", "us": us, "data": _b64.b64encode(u.astype("<f8").tobytes()).decode("ascii")})
    return out


result = _r3_drive(_r3_insts, _r3_limit)
'''


def _sandbox_limits(cfg: VerifyConfig, n: int, out_bytes: int):
    wall = cfg.startup_s + cfg.instance_s * n
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
    try:
        raw = base64.b64decode(item["data"], validate=True)
    except (KeyError, TypeError, ValueError):
        return None, "the output could not be read back"
    n = int(np.prod(inst["shape"]))
    if len(raw) != 8 * n:
        return None, f"wrong shape: {len(raw) // 8} values, expected {n}"
    return np.frombuffer(raw, dtype="<f8").reshape(inst["shape"]), None


def verify(code, family: str, insts: list[dict], cfg: VerifyConfig = VerifyConfig()) -> ProgramVerdict:
    """Run `code` (Python source defining `solve`) on `insts` in the sandbox; never raises."""
    if family not in _fam.FAMILIES:
        return ProgramVerdict(False, False, 0.0, 1.0, f"verifier error: unknown family {family!r}", verifier_ok=False)
    if not isinstance(code, str) or not code.strip():
        return ProgramVerdict(False, False, 0.0, 1.0, "no program (no ```python``` block defining solve)")
    if not insts:
        return ProgramVerdict(False, False, 0.0, 1.0, "verifier error: no instances", verifier_ok=False)
    out_bytes = sum(8 * int(np.prod(i["shape"])) for i in insts)
    payload = [{"args": i["args"], "shape": i["shape"]} for i in insts]
    res = run_python(code + "\n" + _DRIVER, _sandbox_limits(cfg, len(insts), out_bytes),
                     inputs={"_r3_insts": payload, "_r3_limit": float(cfg.instance_s)})
    if not res.ok:
        why = f"{res.status}: {res.reason}"
        return ProgramVerdict(False, False, 0.0, 1.0, why, tuple(_invalid(why) for _ in insts), res.seconds,
                              res.isolation)
    try:
        items = ast.literal_eval(res.value) if res.value else None
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        items = None
    if not isinstance(items, list) or len(items) != len(insts) or not all(isinstance(x, dict) for x in items):
        why = "the program's run did not report per-instance results (did it overwrite `result` or exit early?)"
        return ProgramVerdict(False, False, 0.0, 1.0, why, tuple(_invalid(why) for _ in insts), res.seconds,
                              res.isolation)
    verdicts = []
    for item, inst in zip(items, insts):
        sec = item.get("us") / 1e6 if isinstance(item.get("us"), int) else None
        if item.get("status") != "ok":
            verdicts.append(_invalid(f"{item.get('status')}: {item.get('why')}", sec))
            continue
        u, why = _decode(item, inst)
        verdicts.append(_invalid(why, sec) if u is None else score_instance(family, inst, u, cfg, sec))
    return combine(verdicts, cfg, res.seconds, res.isolation)


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
