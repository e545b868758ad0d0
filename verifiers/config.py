"""CheckConfig: every tolerance of the answer checker and the step verifier, in one place.

The checker (verifiers.answer), the symbolic comparison (verifiers.symbolic, verifiers.worker), the
step verifier's line checks (verifiers.step_reading.close, verifiers.reference_free) and the rewards read their
numbers from here; no module keeps a tolerance of its own.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CheckConfig:
    """Every tolerance of the checker; the step verifier, rewards, tasks and JEEBench modes read it.

    rel_tol:     relative tolerance of a numeric answer (and of a constant symbolic one: 0.3333 vs 1/3)
    abs_tol:     when set, an absolute tolerance replaces rel_tol in the default mode
    jee_abs_tol: JEEBench Integer/Numeric tolerance, |gold - pred| <= 0.01 (compute_metrics.py)
    sym_rel_tol: relative tolerance of numeric sampling when expressions have free symbols
    zero_tol:    when one of two numbers is exactly 0, |a - b| below which they are equal
    mode:        default | jeebench (official scores) | jeebench_marks (exam marks)
    timeout_s:   the one deadline of a whole check, counted from the call: extraction, number and unit
                 reading in process, and the symbolic worker's own work (waiting for a worker or its
                 cold start is left out; see verifiers.worker); past it the verdict says "timeout"
    isolate:     False runs sympy in-process, without a hard limit (debugging only)
    int_tol:     |a - b| below which two integers are equal in the default mode (float rounding only)
    const_rel_tol: relative tolerance of a value matched to a physical constant by the reference-free
                 step check (verifiers.reference_free: 9.81 is g, 6.67e-11 is G)
    """

    rel_tol: float = 1e-2
    abs_tol: float | None = None
    jee_abs_tol: float = 0.01
    sym_rel_tol: float = 1e-6
    zero_tol: float = 1e-12
    mode: str = "default"  # default | jeebench | jeebench_marks
    timeout_s: float = 2.0
    isolate: bool = True
    int_tol: float = 1e-9
    const_rel_tol: float = 5e-3
