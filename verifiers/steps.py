"""The step verifier's entry: the first wrong step of a seven-tag solution and its error class.

    verify(question, solution, reference, backend="symbolic", config=None) -> StepVerdict
    report(rows, backend, config) -> first-error accuracy, class accuracy, ProcessBench F1, confusion

StepVerdict (verifiers.verdict, re-exported here) has first_error 0 when every step is right, else the
1-based position of the first wrong step among the format's seven steps (seventag.TAGS; the paper's e,
with n = 7), and error_class "MC" (miscomprehension), "CM" (conceptual misapplication), "CE"
(calculation error) or "FORMAT" (the format itself is broken: verifiers.tag_format, checked first by
every backend); valid=False when no verdict could be had.

BACKENDS is the one table of step verifier backends: name -> Backend(run, config type, oracle):

  symbolic  deterministic, offline: every step against a seven-tag reference (verifiers.reference_based),
            or what can be shown without one (verifiers.reference_free); SymbolicConfig
  judge     an LLM judge on any OpenAI-compatible endpoint (verifiers.judge); JudgeConfig
  psv       a process-supervised verifier model scoring each step (verifiers.psv); PsvConfig

    verify(question, solution, reference, backend="psv", config=PsvConfig(model="runs/psv/psv_model"))

Each backend takes a typed, frozen config; without one it runs on the config's documented defaults
(its `from_env`, the one place a backend reads R3BENCH_* variables). `config_for(name, **given)` builds
a backend's config from a caller's flags or config fields; `backend(name)` is the entry, and an unknown
name is refused with the list of valid ones. Adding a backend: a function `(question, solution,
reference, config) -> StepVerdict`, a config dataclass with `from_env`, and `register(Backend(...))` -
the CLI (`r3bench verify --backend`), the trainers' `verifier` field and the strategies' Scorer read
this table. The backends import this module never (it imports them).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Callable

from verifiers import seventag
from verifiers.judge import JudgeBudgetExceeded, JudgeConfig, judge_backend
from verifiers.psv import PsvConfig, psv_backend, psv_missing, psv_step_scores
from verifiers.reference_based import verify_symbolic
from verifiers.verdict import StepVerdict, invalid

# StepVerdict and verify_symbolic are re-exported: `from verifiers.steps import StepVerdict, verify` is the
# front door's spelling
__all__ = ["verify", "report", "verify_symbolic", "BACKENDS", "Backend", "register", "backend", "config_for",
           "oracle_names", "SymbolicConfig", "JudgeConfig", "PsvConfig", "StepVerdict"]


# --- the backend table ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class SymbolicConfig:
    """The symbolic backend takes no settings of its own (its tolerances are CheckConfig's)."""

    @classmethod
    def from_env(cls, **given) -> "SymbolicConfig":
        return cls()


@dataclass(frozen=True)
class Backend:
    """A step verifier backend, one row of BACKENDS.

    run:         (question, solution, reference, config) -> StepVerdict; config None = its defaults
    config:      its frozen config dataclass; `config.from_env(**given)` builds one from a caller's values
                 over the documented defaults (the one place a backend reads the environment)
    oracle:      it reads the reference solution (the strategies report such runs apart: an upper bound)
    step_scores: (question, solution, config) -> [float per step], for a backend that scores steps (the
                 strategies' Scorer uses it); None: the scores are read from the verdict
    missing:     config -> what it lacks to run, in words (None: nothing), checked where a config is made
    """

    name: str
    run: Callable[..., StepVerdict]
    config: type
    oracle: bool
    step_scores: Callable[..., list] | None = None
    missing: Callable[..., str | None] | None = None
    help: str = ""

    def problem(self, config=None) -> str | None:
        """What the backend lacks to run with `config` (None: its defaults), in words; None when nothing.
        The trainers refuse such a config at load, the Scorer before the first problem."""
        if self.missing is None:
            return None
        return self.missing(config if config is not None else self.config.from_env())

    def __call__(self, question, solution, reference, config=None) -> StepVerdict:
        """`BACKENDS[name](question, solution, reference)` as before the table: the bare backend."""
        return self.run(question, solution, reference, config)


def _symbolic(question, solution, reference, config=None) -> StepVerdict:
    return verify_symbolic(question, solution, reference)


#: the one table of step verifier backends: name -> Backend (register adds one)
BACKENDS: dict[str, Backend] = {}


def register(entry: Backend) -> Backend:
    """Add (or replace) a backend of the table; the CLI, the trainers' `verifier` field and the strategies'
    Scorer see it at once."""
    BACKENDS[entry.name] = entry
    return entry


def backend(name: str) -> Backend:
    """The table's entry of `name`; an unknown name raises ValueError with the valid ones."""
    if name not in BACKENDS:
        raise ValueError(f"unknown verifier backend {name!r} (have: {', '.join(BACKENDS)})")
    return BACKENDS[name]


def config_for(name: str, resolve: Callable[[str], str] | None = None, **given):
    """Backend `name`'s config from a caller's values (None / "" / 0 left to the defaults, unknown keys
    ignored) over `from_env`; `resolve` turns model names into folders where the config holds one
    (PsvConfig.resolved). The CLI and the trainers build the config they pass to verify() here."""
    cls = backend(name).config
    names = {f.name for f in fields(cls)}
    cfg = cls.from_env(**{k: v for k, v in given.items() if k in names and v not in (None, "", 0)})
    return cfg.resolved(resolve) if resolve is not None and hasattr(cfg, "resolved") else cfg


def oracle_names() -> tuple[str, ...]:
    """The backends that read the reference solution."""
    return tuple(n for n, b in BACKENDS.items() if b.oracle)


register(Backend("symbolic", _symbolic, SymbolicConfig, oracle=True,
                 help="deterministic, offline: every step against the seven-tag reference (or reference-free)"))
register(Backend("judge", judge_backend, JudgeConfig, oracle=True,
                 help="an LLM judge on any OpenAI-compatible endpoint (verifiers.judge)"))
register(Backend("psv", psv_backend, PsvConfig, oracle=False, step_scores=psv_step_scores, missing=psv_missing,
                 help="a process-supervised verifier model scoring each step (verifiers.psv)"))


def verify(question: str, solution: str, reference: str, backend: str = "symbolic", config=None) -> StepVerdict:
    """The first wrong step of `solution` by the `backend` of BACKENDS, run with `config` (that backend's
    config type; None: its documented defaults). Never raises on model output: an internal failure is a
    verdict whose explanation says so. Raises ValueError for an unknown backend, TypeError for a config
    of another backend; the one exception that passes otherwise: a judge whose budget is spent
    (JudgeBudgetExceeded) - the run stops and says why rather than booking every later sample as 'no verdict'."""
    entry = BACKENDS.get(backend)
    if entry is None:
        raise ValueError(f"unknown verifier backend {backend!r} (have: {', '.join(BACKENDS)})")
    if config is not None and not isinstance(config, entry.config):
        raise TypeError(f"backend {backend!r} takes a {entry.config.__name__}, not a {type(config).__name__}")
    try:
        return entry.run(question, solution, reference, config)
    except JudgeBudgetExceeded:
        raise
    except Exception as e:  # noqa: BLE001 - a verifier bug is recorded as no verdict, not a crashed RL run
        return invalid(f"verifier error: {type(e).__name__}: {str(e)[:100]}", seventag.parse(solution or "").n)


def report(rows, backend: str = "symbolic", config=None) -> dict:
    """Score a backend on labelled rows {question, solution, reference, first_error, error_class}.

    A verdict with valid=False counts as wrong (it is never read as 'no error') and is counted in
    'invalid'. ProcessBench F1 is the harmonic mean of the accuracy on erroneous samples (exact first
    error) and on correct ones.
    """
    conf, n, exact, cls_ok, err_ok, err_n, cor_ok, cor_n, inval = {}, 0, 0, 0, 0, 0, 0, 0, 0
    for r in rows:
        v = verify(r["question"], r["solution"], r["reference"], backend, config)
        n += 1
        gold_c = r["error_class"] if r["first_error"] else "none"
        pred_c = (v.error_class or "none") if v.valid else "invalid"
        inval += not v.valid
        conf.setdefault(gold_c, {}).setdefault(pred_c, 0)
        conf[gold_c][pred_c] += 1
        hit = v.valid and v.first_error == r["first_error"]
        exact += hit
        cls_ok += pred_c == gold_c
        if r["first_error"]:
            err_n += 1
            err_ok += hit
        else:
            cor_n += 1
            cor_ok += hit
    acc_err = err_ok / err_n if err_n else float("nan")
    acc_cor = cor_ok / cor_n if cor_n else float("nan")
    f1 = 2 * acc_err * acc_cor / (acc_err + acc_cor) if acc_err + acc_cor else 0.0
    return {"backend": backend, "n": n, "first_error_accuracy": exact / n if n else float("nan"),
            "class_accuracy": cls_ok / n if n else float("nan"), "accuracy_erroneous": acc_err,
            "accuracy_correct": acc_cor, "processbench_f1": f1, "invalid": inval, "confusion": conf}
