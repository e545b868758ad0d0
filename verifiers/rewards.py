"""Reward functions for RL on physics problems, and adapters for TRL's ``GRPOTrainer``.

Scalar rewards (pure functions of already-computed quantities):

* :func:`position_reward`  - "Reason, Reward, Refine" step-level reward ``r = e / (n + 1)``, n = 7.
* :func:`step_reward`      - the same from a StepVerdict, as a :class:`RewardResult` (format failure =
  the minimum 0, no verdict = not ok: the trainer skips and counts it). Trainers call this one.
* :func:`pspo_wrs_reward`  - PSPO-WRS: geometric mean of step scores times a length shaping
  (:func:`weibull_shaping`, or :func:`piecewise_shaping`).
* :func:`rlvp_reward`      - RLVP continuous reward ``V * exp(-L / T)`` on the relative error L.
* :func:`outcome_reward`   - 1.0 if the project's answer checker says "equivalent", else 0.0.

TRL adapters (factories returning callables with TRL's reward-function interface):
:func:`outcome_reward_func`, :func:`rlvp_reward_func`, :func:`position_reward_func`,
:func:`pspo_reward_func`, :func:`pspo_piecewise_reward_func`; :data:`REWARDS` maps names to them.

TRL calling convention (checked against trl 1.16 ``GRPOTrainer._calculate_rewards``)::

    reward_func(prompts=prompts, completions=completions, completion_ids=completion_ids_list,
                **reward_kwargs)

where ``reward_kwargs`` holds every dataset column except ``prompt``/``completion``/``completion_ids``
(each a list, one value per completion, already repeated ``num_generations`` times), plus
``trainer_state``, ``log_extra``, ``log_metric`` and, with environments, ``environments``.  The
function must return a list with one float (or None) per completion.  ``completions`` are strings
for plain-text datasets and, for conversational ones, lists of message dicts
``[{"role": "assistant", "content": "..."}]`` (content may also be a list of ``{"type": "text",
"text": ...}`` blocks).  TRL names the logged metrics ``rewards/<name>/mean`` after the callable's
``__name__`` (``trl.trainer.utils.get_callable_name``), so every adapter carries a ``__name__``.

The adapters never raise on a malformed completion (None, empty, broken tags, unparseable answer,
a step verifier that raises): that completion gets 0.0 and the reason is recorded in the adapter's
``last_reasons`` list (one string per completion of the last call), with ``last_results`` (one
:class:`RewardResult` per completion: ``ok`` False marks a failure that is not the completion's - a
verifier or scorer that raised, no verdict - which a trainer skips and counts by that flag, never by
the wording of the reason).  Every adapter gives 0.0 to an
output over ``MAX_COMPLETION_CHARS`` and to one with several different boxed answers; the step-level
adapters give 0.0, by default, to a completion whose seven-tag format is broken (a missing, broken or
out-of-order tag: ``verifiers.tag_format.format_error``).  A step verifier that gives no verdict
(``valid=False``) gets None, which TRL reads as "no reward from this function" (it is counted in
``invalid_count`` and its reason kept); it is never paid as a correct or a wrong solution (trainers/grpo.py
removes such a completion from its group and counts it).  Every final answer is read by
``verifiers.check`` over the whole completion (outcome, RLVP, and the step verifier's final-answer step).  They do raise ``ValueError``
on a configuration error that no completion can fix: a dataset column they need is missing, or a
column's length differs from the number of completions.
"""
from __future__ import annotations

import abc
import math
import operator
import re
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from verifiers import answer as _answer
from verifiers.answer import canonical
from verifiers.config import CheckConfig
from verifiers.extract import extract_answer
from verifiers.judge import JudgeBudgetExceeded, concurrently
from verifiers.seventag import parse
from verifiers.tag_format import boxed_all, format_error, same_answer
from verifiers.units import get_ureg
from verifiers.verdict import ERROR_CLASSES, FORMAT, MAX_SOLUTION_CHARS, N_STEPS

__all__ = [
    "position_reward", "weibull_shaping", "piecewise_shaping", "pspo_wrs_reward", "rlvp_reward",
    "outcome_reward", "completion_text", "prompt_text", "RewardFunc",
    "outcome_reward_func", "rlvp_reward_func", "position_reward_func", "pspo_reward_func",
    "pspo_piecewise_reward_func", "REWARDS",
    "WEIBULL_C", "WEIBULL_K", "WEIBULL_LAMBDA", "SEVEN_C", "SEVEN_K", "SEVEN_LAMBDA", "seven_step_shaping",
    "N_STEPS", "RewardResult", "step_reward", "MAX_COMPLETION_CHARS",
]

#: N_STEPS (verifiers.verdict), the format's step count: the n of r = e/(n+1), whatever the number of
#: tags a solution has. Outputs longer than MAX_COMPLETION_CHARS earn 0 from every adapter (the step
#: verifier calls them a format failure: the same number, verifiers.verdict.MAX_SOLUTION_CHARS)
MAX_COMPLETION_CHARS = MAX_SOLUTION_CHARS

# --------------------------------------------------------------------------------------------------
# Scalar rewards
# --------------------------------------------------------------------------------------------------


def _as_int(x, name: str) -> int:
    if isinstance(x, bool):
        raise ValueError(f"{name} must be an integer, got a bool ({x!r})")
    try:
        return operator.index(x)
    except TypeError:
        if isinstance(x, float) and x.is_integer():
            return int(x)
        raise ValueError(f"{name} must be an integer, got {type(x).__name__} {x!r}") from None


def position_reward(first_error: int, n_steps: int = N_STEPS) -> float:
    """Step-level reward of "Reason, Reward, Refine": the position of the first wrong step.

    .. math::  r = \\frac{e}{n + 1} \\quad (1 \\le e \\le n), \\qquad r = 1 \\quad (e = 0)

    ``e = first_error`` is the 1-based index of the first wrong step, ``n = n_steps`` the number of
    steps - for a seven-tag solution always the format's seven (N_STEPS), never the number of tags a
    solution happens to contain (that would pay truncation) - and ``e = 0`` means no step is wrong.  A solution that goes wrong later earns more; a
    solution wrong at its last step earns ``n/(n+1) < 1``; only an error-free one earns 1.

    Raises ValueError unless ``n_steps >= 1`` and ``0 <= first_error <= n_steps`` (both integers).
    """
    e = _as_int(first_error, "first_error")
    n = _as_int(n_steps, "n_steps")
    if n < 1:
        raise ValueError(f"n_steps must be >= 1, got {n}")
    if not 0 <= e <= n:
        raise ValueError(f"first_error must satisfy 0 <= first_error <= n_steps ({n}), got {e} "
                         "(0 means no wrong step; otherwise the 1-based index of the first wrong step)")
    if e == 0:
        return 1.0
    return e / (n + 1)


@dataclass(frozen=True)
class RewardResult:
    """A reward with its standing: ``ok`` False means no reward could be had (skip it and count it).

    Failure is this flag, never a reason's wording: a trainer reads ``ok``, not the reason's prefix.
    ``value`` is the reward paid; in an adapter's ``last_results`` it is what the adapter returned for
    the completion (None where it gave TRL no reward). ``verdict`` is the step verdict's class behind a
    step-level reward (``"correct"``, a content class of ``ERROR_CLASSES`` or ``FORMAT``; None where the
    reward rests on no step verdict, or none was had): the trainers' per-class log columns read it.
    """

    value: float | None
    ok: bool
    reason: str
    verdict: str | None = None


CORRECT = "correct"  # RewardResult.verdict of a solution with no wrong step


def step_reward(verdict) -> RewardResult:
    """The paper's position reward from a step verifier's verdict (``verifiers.verdict.StepVerdict``).

    * ``valid`` False (judge unreachable, verifier error, no reference and no placeable error):
      ``ok=False`` and value 0.0 - the trainer skips the sample and counts it; it is not a reward.
    * ``error_class == "FORMAT"`` (missing, broken or out-of-order tag, no tags, several answers,
      nan/inf, over-long output): the minimum, 0.0, below any content error (whose least reward is
      1/8): a broken solution can never earn what a complete one with an error earns.
    * ``first_error == 0``: 1.0.
    * else ``e / (N_STEPS + 1)`` with e the position (1..7) of the first wrong step in the seven-step
      format - n is the format's seven steps, never the tags present, and e is never clamped.
    Anything else (e outside 0..7, a non-integer e) is ``ok=False`` with the reason.
    """
    if verdict is None or not getattr(verdict, "valid", False):
        why = getattr(verdict, "explanation", "no verdict")
        return RewardResult(0.0, False, f"verifier gave no verdict: {why}")
    cls = getattr(verdict, "error_class", None)
    e = getattr(verdict, "first_error", None)
    if cls == FORMAT:
        return RewardResult(0.0, True, f"format failure at step {e}: {verdict.explanation}", FORMAT)
    try:
        r = position_reward(e, N_STEPS)
    except ValueError as err:
        return RewardResult(0.0, False, f"verdict unusable: {err}")
    if int(e) != 0 and cls not in ERROR_CLASSES:
        return RewardResult(0.0, False, f"verdict unusable: first_error {e} with error class {cls!r}")
    head = "no wrong step" if int(e) == 0 else f"first wrong step {int(e)} of {N_STEPS} ({cls})"
    return RewardResult(r, True, head, CORRECT if int(e) == 0 else cls)


#: Weibull length-shaping constants of PSPO-WRS.
WEIBULL_C = 10.735
WEIBULL_K = 1.5
WEIBULL_LAMBDA = 8.0


def weibull_shaping(L: float, C: float = WEIBULL_C, k: float = WEIBULL_K, lam: float = WEIBULL_LAMBDA) -> float:
    """PSPO-WRS length shaping: a scaled Weibull density of the number of steps L.

    .. math::  f(L) = C \\cdot \\frac{k}{\\lambda} \\left(\\frac{L}{\\lambda}\\right)^{k-1}
               \\exp\\!\\left(-\\left(\\frac{L}{\\lambda}\\right)^{k}\\right),
               \\quad C = 10.735,\\; k = 1.5,\\; \\lambda = 8

    C normalises the peak to ~1.  Numerically (checked in tests/verifiers/test_rewards.py): the density peaks
    at its mode ``L* = lambda * ((k-1)/k)**(1/k) = 8 * (1/3)**(2/3) ~= 3.846`` where
    ``f(L*) ~= 0.999996`` (the unscaled Weibull density there is ~0.0931528, and
    10.735 * 0.0931528 ~= 0.999996), so the peak is 1 to within 5e-6; over integer step counts the
    maximum is at ``L = 4`` with ``f(4) ~= 0.99941``.  Further values: f(1) ~= 0.6809,
    f(7) ~= 0.8305, f(8) = C * (k/lambda) / e ~= 0.7405, f(16) ~= 0.1683, f(24) ~= 0.0193.

    ``f(0) = 0`` (for k > 1).  Raises ValueError for a negative or non-finite L.
    """
    L = float(L)
    if not math.isfinite(L) or L < 0:
        raise ValueError(f"number of steps L must be a finite value >= 0, got {L!r}")
    x = L / lam
    return C * (k / lam) * x ** (k - 1) * math.exp(-(x ** k))


#: Weibull shaping for the seven-step format (the default "weibull" of pspo_wrs_reward). Derivation:
#: the mode lambda * ((k-1)/k)**(1/k) is put at L = 7, the format's step count, so that a complete
#: solution gets the peak; k = 10 makes the peak narrow enough that dropping steps does not pay:
#: f(6) ~= 0.507, f(5) ~= 0.115, f(3) ~= 0.001, and padding neither (f(8) ~= 0.267, f(9) ~= 0.0003).
#: lambda = 7 / (9/10)**(1/10) ~= 7.0741; C = 1 / (unscaled density at 7) ~= 1.9130, so f(7) = 1.
#: The paper's constants (C = 10.735, k = 1.5, lambda = 8; mode 3.85 steps, which pays a policy to
#: drop tags from a seven-step format) stay available as shaping="weibull_paper".
SEVEN_K = 10.0
SEVEN_LAMBDA = 7.0 / ((SEVEN_K - 1) / SEVEN_K) ** (1 / SEVEN_K)
SEVEN_C = 1.0 / ((SEVEN_K / SEVEN_LAMBDA) * (7.0 / SEVEN_LAMBDA) ** (SEVEN_K - 1)
                 * math.exp(-((7.0 / SEVEN_LAMBDA) ** SEVEN_K)))


def seven_step_shaping(L: float) -> float:
    """:func:`weibull_shaping` with the seven-step constants (SEVEN_C, SEVEN_K, SEVEN_LAMBDA): peak 1 at L = 7."""
    return weibull_shaping(L, SEVEN_C, SEVEN_K, SEVEN_LAMBDA)


def piecewise_shaping(L: float, L0: float = 4.0, L1: float = 12.0, L2: float = 24.0) -> float:
    """Piecewise-linear length shaping: the piecewise variant of PSPO's shaping, as implemented here.

    .. math::  f(L) = \\begin{cases} L / L_0 & 0 \\le L < L_0 \\\\ 1 & L_0 \\le L \\le L_1 \\\\
               (L_2 - L) / (L_2 - L_1) & L_1 < L < L_2 \\\\ 0 & L \\ge L_2 \\end{cases}

    PSPO's public code runs a piecewise shaping instead of the Weibull density written in its
    paper; that code is not available offline, so this is a documented stand-in, NOT the exact
    upstream function or values.  The breakpoints are keyword arguments (``0 < L0 <= L1 < L2``).
    Defaults and why: ``L0 = 4`` puts the end of the ramp at the Weibull mode (~3.85 steps), so
    short solutions are damped as under the Weibull shaping; ``L1 = 12`` keeps a complete seven-tag
    solution (7 steps) and moderately longer ones on the flat top, so the shaping does not push
    against the seven-tag format; ``L2 = 24`` (about three times the Weibull scale lambda = 8) zeroes
    the reward of step-padded solutions, where the Weibull tail is already ~0.019 of its peak.

    Raises ValueError for a negative or non-finite L, or breakpoints out of order.
    """
    L = float(L)
    if not math.isfinite(L) or L < 0:
        raise ValueError(f"number of steps L must be a finite value >= 0, got {L!r}")
    if not 0 < L0 <= L1 < L2:
        raise ValueError(f"piecewise shaping needs 0 < L0 <= L1 < L2, got L0={L0}, L1={L1}, L2={L2}")
    if L < L0:
        return L / L0
    if L <= L1:
        return 1.0
    if L < L2:
        return (L2 - L) / (L2 - L1)
    return 0.0


_SHAPINGS = {"weibull": seven_step_shaping, "weibull_paper": weibull_shaping, "piecewise": piecewise_shaping}


def _clip01(s) -> float:
    s = float(s)
    if math.isnan(s):
        return 0.0
    return min(1.0, max(0.0, s))


def pspo_wrs_reward(step_scores: Sequence[float], shaping: str | Callable[[float], float] = "weibull",
                    **shaping_kwargs) -> float:
    """PSPO-WRS reward: geometric mean of the per-step scores times a length shaping f(L).

    .. math::  R = \\Big(\\prod_{i=1}^{L} s_i\\Big)^{1/L} \\cdot f(L)

    ``s_i`` are the per-step scores (each meant to lie in [0, 1]; values outside are clipped to
    [0, 1], and NaN counts as 0), ``L = len(step_scores)`` is the number of steps.  Any zero step
    score makes R = 0.  ``shaping`` is ``"weibull"`` (:func:`seven_step_shaping`: the Weibull with
    its peak at the format's seven steps), ``"weibull_paper"`` (:func:`weibull_shaping`, the paper's
    constants, peak at 3.85 steps),
    ``"piecewise"`` (:func:`piecewise_shaping`) or any callable ``f(L)``; ``shaping_kwargs`` go to
    the shaping function (e.g. ``L0=``, ``L1=``, ``L2=`` for the piecewise one).  An empty step
    list gives 0.0.  Raises ValueError for an unknown shaping name.
    """
    if isinstance(shaping, str):
        if shaping not in _SHAPINGS:
            raise ValueError(f"unknown shaping {shaping!r} (expected one of {', '.join(_SHAPINGS)} or a callable)")
        f = _SHAPINGS[shaping]
    elif callable(shaping):
        f = shaping
    else:
        raise ValueError(f"shaping must be a name or a callable, got {type(shaping).__name__}")
    scores = [_clip01(s) for s in (step_scores or ())]
    L = len(scores)
    if L == 0:
        return 0.0
    if min(scores) == 0.0:
        return 0.0
    geo = math.exp(sum(math.log(s) for s in scores) / L)
    return geo * float(f(L, **shaping_kwargs))


def rlvp_reward(pred_value: float | None, ref_value: float, V: float = 1.0, T: float = 0.05) -> float:
    """RLVP continuous reward on the relative error of the final quantity.

    .. math::  R = V \\exp(-\\mathcal{L} / T), \\qquad
               \\mathcal{L} = \\frac{|\\hat y - y|}{|y|} \\;(y \\ne 0), \\qquad \\mathcal{L} = |\\hat y| \\;(y = 0)

    ``pred_value`` (hat y) and ``ref_value`` (y) must be in the same unit (the adapter converts both
    to SI).  With T = 0.05 a 1 % error gives exp(-0.2) ~= 0.819 and a 5 % error exp(-1) ~= 0.368.
    None, NaN, +-inf or a non-number ``pred_value`` gives 0.0.  Raises ValueError for a non-finite
    ``ref_value`` or ``T <= 0``.
    """
    if not (isinstance(T, (int, float)) and math.isfinite(T) and T > 0):
        raise ValueError(f"temperature T must be a finite number > 0, got {T!r}")
    r = float(ref_value)
    if not math.isfinite(r):
        raise ValueError(f"ref_value must be finite, got {ref_value!r}")
    if pred_value is None or isinstance(pred_value, (str, bytes)):
        return 0.0
    try:
        p = float(pred_value)
    except (TypeError, ValueError):
        return 0.0
    if not math.isfinite(p):
        return 0.0
    err = abs(p - r) / abs(r) if r != 0 else abs(p)
    return V * math.exp(-err / T)


def outcome_reward(pred: Any, ref: Any, kind: str | None = None, cfg: CheckConfig = CheckConfig()) -> float:
    """Plain outcome reward: ``R = 1`` if ``check(pred, ref, kind).equivalent`` else ``R = 0``.

    Uses the project's unit-aware checker (:func:`verifiers.check`), which never raises; the binary
    reward ignores the checker's mode-specific marks (``Verdict.score``).
    """
    return 1.0 if _answer.check(pred, ref, kind, cfg).equivalent else 0.0


# --------------------------------------------------------------------------------------------------
# TRL adapters
# --------------------------------------------------------------------------------------------------

#: keyword arguments GRPOTrainer passes that are not dataset columns
_TRL_EXTRA = ("completion_ids", "trainer_state", "log_extra", "log_metric", "environments")


def _content_text(content) -> Optional[str]:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks: [{"type": "text", "text": "..."}, {"type": "image"}]
        parts = [b.get("text") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
        parts += [b for b in content if isinstance(b, str)]
        return "\n".join(parts) if parts else None
    return None


def completion_text(completion) -> Optional[str]:
    """The text of one TRL completion: a string, a message dict, or a list of message dicts.

    For a message list the assistant messages' contents are joined (all messages' contents when
    none has role "assistant").  Returns None when no text can be found.  Never raises.
    """
    try:
        if completion is None:
            return None
        if isinstance(completion, str):
            return completion
        if isinstance(completion, dict):
            return _content_text(completion.get("content"))
        if isinstance(completion, (list, tuple)):
            msgs = [m for m in completion if isinstance(m, dict)]
            chosen = [m for m in msgs if m.get("role") == "assistant"] or msgs
            parts = [t for t in (_content_text(m.get("content")) for m in chosen) if t is not None]
            return "\n".join(parts) if parts else None
    except Exception:  # noqa: BLE001 - a completion of any shape gets a reasoned 0.0, never a crash
        return None
    return None


def prompt_text(prompt) -> str:
    """The question text of one TRL prompt: the string itself, or the last user message's content."""
    try:
        if isinstance(prompt, str):
            return prompt
        if isinstance(prompt, (list, tuple)):
            msgs = [m for m in prompt if isinstance(m, dict)]
            users = [m for m in msgs if m.get("role") == "user"] or msgs
            for m in reversed(users):
                t = _content_text(m.get("content"))
                if t is not None:
                    return t
    except Exception:  # noqa: BLE001
        pass
    return ""


class RewardFunc(abc.ABC):
    """Base class of the TRL adapters: ``f(prompts=..., completions=..., **columns) -> list[float]``.

    Subclasses implement ``_score(text, question, row) -> (reward, reason)`` for one completion
    whose text is a non-empty string; ``row`` maps the needed column names to this completion's
    values.  Any exception there, and any non-finite reward, becomes 0.0 with a reason.  A failure
    that is not the completion's (a verifier or scorer that raised, no verdict) is returned as a
    :class:`RewardResult` with ``ok=False`` (its value: what the adapter pays, None for nothing).
    After each call ``last_results`` holds one RewardResult per completion (``ok`` False: skip it
    and count it) and ``last_reasons`` their reasons.
    Module-level classes (not closures) keep the adapters picklable when their callables are.
    """

    columns: tuple[str, ...] = ()
    step_level = False  # rewards read from a step verdict (RewardResult.verdict set): the position reward

    def __init__(self, name: str):
        self.__name__ = name
        self.last_reasons: list[str] = []
        self.last_results: list[RewardResult] = []
        self.invalid_count = 0  # completions that got None (no verdict), over the adapter's life
        self.workers = 1  # completions scored at once (threads): >1 for a verifier that waits on a server

    def __repr__(self):
        return f"<{type(self).__name__} {self.__name__}>"

    def _rows(self, n: int, kwargs: dict) -> list[dict]:
        rows: list[dict] = [{} for _ in range(n)]
        for col in self.columns:
            if col not in kwargs:
                have = sorted(k for k in kwargs if k not in _TRL_EXTRA)
                raise ValueError(f"{self.__name__}: dataset column {col!r} not passed to the reward function "
                                 f"(columns given: {have}); add it to the dataset or set the column argument")
            vals = kwargs[col]
            if isinstance(vals, (str, bytes)) or not hasattr(vals, "__len__"):
                vals = [vals] * n  # a scalar for the whole batch (direct calls)
            if len(vals) != n:
                raise ValueError(f"{self.__name__}: column {col!r} has {len(vals)} values for {n} completions")
            for row, v in zip(rows, vals):
                row[col] = v
        return rows

    def __call__(self, prompts=None, completions=None, **kwargs) -> list[float | None]:
        if completions is None:
            raise TypeError(f"{self.__name__}: called without completions=")
        completions = list(completions)
        n = len(completions)
        rows = self._rows(n, kwargs)
        prompts = list(prompts) if prompts is not None else [None] * n
        if len(prompts) != n:
            prompts = (prompts * n)[:n] if len(prompts) == 1 else [None] * n
        results = concurrently(self._one, zip(completions, prompts, rows), self.workers)
        self.invalid_count += sum(res.value is None for res in results)
        self.last_results = results
        self.last_reasons = [res.reason for res in results]
        return [res.value for res in results]

    def _one(self, comp, prompt, row) -> RewardResult:
        """The RewardResult of one completion (thread-safe: __call__ may map it over `workers` threads)."""
        text = completion_text(comp)
        ok = True  # the completion earned what it got (a failure of the scoring says ok=False)
        # the step verdict's class behind the reward (RewardResult.verdict); a step-level adapter books the
        # outputs it zeroes before any verifier reads them (no text, over-long, several answers) as FORMAT
        label = FORMAT if self.step_level else None
        if text is None:
            r, why = 0.0, f"no completion text ({type(comp).__name__})"
        elif not text.strip():
            r, why = 0.0, "empty completion"
        elif len(text) > MAX_COMPLETION_CHARS:
            r, why = 0.0, f"completion of {len(text)} characters, over {MAX_COMPLETION_CHARS}"
        elif (many := _contradictory_boxes(text)):
            r, why = 0.0, many
        else:
            text, after = _before_the_end(text)
            try:
                got = self._score(text, prompt_text(prompt), row)
                if isinstance(got, RewardResult):
                    r, ok, why, label = got.value, got.ok, got.reason, got.verdict
                else:
                    (r, why), label = got, None
                if r is not None:  # None = no verdict: not a reward (TRL skips None), counted by __call__
                    r = float(r)
                    if not math.isfinite(r):
                        r, why, label = 0.0, f"non-finite reward ({why})", None
            except JudgeBudgetExceeded:  # not a completion's failure: the run stops and says why
                raise
            except Exception as e:  # noqa: BLE001 - see class docstring
                r, ok, why, label = 0.0, False, f"error: {type(e).__name__}: {str(e)[:120]}", None
            if after:
                why = f"{why}; {after}"
        return RewardResult(r, ok, why, label)

    @abc.abstractmethod
    def _score(self, text: str, question: str, row: dict) -> tuple[float, str] | RewardResult:
        """(reward, reason) for one completion, or a RewardResult with ok=False for a failure that is
        not the completion's; each reward function defines it."""


class _Outcome(RewardFunc):
    def __init__(self, answer_column, kind_column, cfg, name):
        super().__init__(name)
        self.answer_column, self.kind_column, self.cfg = answer_column, kind_column, cfg
        self.columns = (answer_column,) + ((kind_column,) if kind_column else ())

    def _score(self, text, question, row):
        if why := _no_final_answer(text):
            return 0.0, why
        kind = row.get(self.kind_column) if self.kind_column else None
        v = _answer.check(text, row[self.answer_column], kind or None, self.cfg)
        return (1.0 if v.equivalent else 0.0), v.reason


def outcome_reward_func(answer_column: str = "answer", kind_column: str | None = None,
                        cfg: CheckConfig = CheckConfig(), name: str = "outcome_reward") -> RewardFunc:
    """TRL reward function: :func:`outcome_reward` of each completion against ``answer_column``.

    ``kind_column`` optionally names a column with the answer kind (one of ``verifiers.KINDS``;
    empty/None values mean "infer from the reference").  ``last_reasons`` holds the checker's
    reasons.
    """
    return _Outcome(answer_column, kind_column, cfg, name)


def _same_unit(u1: str, u2: str) -> bool:
    if u1 == u2:
        return True
    try:
        reg = get_ureg()
        return reg.parse_units(u1 or "dimensionless") == reg.parse_units(u2 or "dimensionless")
    except Exception:  # noqa: BLE001 - unparseable unit strings: only string equality counts
        return False


class _RLVP(RewardFunc):
    def __init__(self, answer_column, V, T, name):
        super().__init__(name)
        rlvp_reward(1.0, 1.0, V=V, T=T)  # validate T now, not at the first training step
        self.answer_column, self.V, self.T = answer_column, V, T
        self.columns = (answer_column,)

    def _score(self, text, question, row):
        if why := _no_final_answer(text):
            return 0.0, why
        ref = row[self.answer_column]
        rc = canonical(str(ref), "numeric", ref=str(ref))
        if rc is None:
            return 0.0, f"reference {str(ref)[:40]!r} is not a numeric quantity"
        # the answer is read by the checker over the whole text (verifiers.check: one committed answer; hedges,
        # alternatives and self-corrections are its business), then its canonical value is scored
        v = _answer.check(text, str(ref), "numeric")
        if v.reason.startswith("pred refused"):  # no committed answer (two that disagree, a hedge): none is scored
            return 0.0, f"no answer read ({v.reason})"
        pc = canonical(f"\\boxed{{{v.pred_canonical}}}", "numeric", ref=str(ref)) if v.pred_canonical else None
        if pc is None:
            a = extract_answer(text)
            if a is None:
                return 0.0, f"no answer read ({v.reason})"
            return 0.0, f"answer {a[:40]!r} not read as one number with a unit ({v.reason})"
        (pv, pu), (rv, ru) = pc, rc
        if not _same_unit(pu, ru):
            return 0.0, f"dimension mismatch: {pu or 'dimensionless'} vs {ru or 'dimensionless'}"
        r = rlvp_reward(pv, rv, V=self.V, T=self.T)
        err = abs(pv - rv) / abs(rv) if rv != 0 else abs(pv)
        what = "relative" if rv != 0 else "absolute"
        return r, f"{what} error {err:.3g} ({pv:g} vs {rv:g} {ru})".rstrip()


def rlvp_reward_func(answer_column: str = "answer", T: float = 0.05, V: float = 1.0,
                     name: str = "rlvp_reward") -> RewardFunc:
    """TRL reward function: :func:`rlvp_reward` of each completion's final quantity, in SI units.

    Both the prediction and the reference are read with ``verifiers.canonical(x, "numeric",
    ref=answer)``, which gives (SI magnitude, SI unit) with the magnitude rounded to 4 significant
    figures (so the smallest resolvable relative error is ~5e-5, worth exp(-1e-3) at T = 0.05); a
    bare number is read in the reference's unit.  A unit/dimension mismatch, an unreadable answer
    or a non-numeric reference gives 0.0.  ``"36 km/h"`` against ``"10 m/s"`` gets the full V.
    """
    return _RLVP(answer_column, V, T, name)


def _contradictory_boxes(text: str) -> Optional[str]:
    """A reason when the text holds several boxed answers that are not one value, else None."""
    boxes = boxed_all(text)
    if len(boxes) > 1 and any(not same_answer(boxes[0], b) for b in boxes[1:]):
        return f"{len(boxes)} different boxed answers"
    return None


#: the closing tag of the last step, spelt as verifiers.seventag reads it (`</final_answer>`, `</ Final Answer >`)
_END_TAG = re.compile(r"<\s{0,8}/\s{0,8}final[\s_\-]{1,8}answer\s{0,8}>", re.I)


def _before_the_end(text: str) -> tuple[str, Optional[str]]:
    """The completion up to the last closing `</final_answer>`, and a reason when text follows it (issue 54: a
    slip at step 5, then the right answer written after the tags, was paid in full by rlvp). What follows the
    seven-tag output is never read by any reward: not an answer, not a step. (Several boxed answers that disagree
    are judged on the whole text before: a box written after the end still costs.)"""
    ends = list(_END_TAG.finditer(text))
    if not ends or not text[ends[-1].end():].strip():
        return text, None
    cut = ends[-1].end()
    return text[:cut], f"{len(text) - cut} characters after </final_answer> not read"


def _no_final_answer(text: str) -> Optional[str]:
    """A seven-tag output cut before its <final_answer>: its answer is not read from the other steps."""
    p = parse(text)
    if p.n and p.get("final_answer") is None:
        return "seven-tag output without <final_answer> (truncated): no answer read from the other steps"
    return None


def _format_failure(text: str) -> Optional[str]:
    v = format_error(text)
    return None if v is None else f"format failure at step {v.first_error}: {v.explanation}"


class _Position(RewardFunc):
    step_level = True

    def __init__(self, verifier, answer_column, question_column, reject_broken_tags, name):
        super().__init__(name)
        if not callable(verifier):
            raise TypeError(f"verifier must be callable, got {type(verifier).__name__}")
        self.verifier, self.answer_column, self.question_column = verifier, answer_column, question_column
        self.reject_broken_tags = reject_broken_tags
        self.columns = tuple(c for c in (answer_column, question_column) if c)

    def _score(self, text, question, row):
        parsed = parse(text)
        if parsed.n == 0:
            return RewardResult(0.0, True, "no seven-tag step found", FORMAT)
        if self.reject_broken_tags and (why := _format_failure(text)):
            return RewardResult(0.0, True, why, FORMAT)
        q = row[self.question_column] if self.question_column else question
        a = row.get(self.answer_column) if self.answer_column else None
        try:
            got = self.verifier(q, text, a)
            if hasattr(got, "first_error"):
                res = step_reward(got)
                return res if res.ok else RewardResult(None, False, res.reason)
            e, n = got
        except JudgeBudgetExceeded:
            raise
        except Exception as err:  # noqa: BLE001
            return RewardResult(0.0, False, f"verifier error: {type(err).__name__}: {str(err)[:120]}")
        try:  # an (e, n) pair: n must be the format's seven steps (the n of tags present paid truncation)
            if _as_int(n, "n_steps") != N_STEPS:
                raise ValueError(f"n_steps must be the format's {N_STEPS} steps, got {n!r}")
            r = position_reward(e, N_STEPS)
        except ValueError as err:
            return RewardResult(0.0, False,
                                f"verifier returned invalid (first_error, n_steps) = ({e!r}, {n!r}): {err}")
        head = f"no wrong step in {N_STEPS}" if int(e) == 0 else f"first wrong step {int(e)} of {N_STEPS}"
        # a bare (e, n) verifier names no class: only a solution with no wrong step is booked
        return RewardResult(r, True, f"{head} ({parsed.n} tags parsed)", CORRECT if int(e) == 0 else None)


def position_reward_func(verifier: Callable[[str, str, Any], Any], answer_column: str | None = "answer",
                         question_column: str | None = None, reject_broken_tags: bool = True,
                         name: str = "position_reward") -> RewardFunc:
    """TRL reward function: :func:`step_reward` of a step verifier's verdict.

    ``verifier(question, solution, answer)`` returns a ``StepVerdict`` (preferred: a FORMAT verdict
    gets the minimum, ``valid=False`` gets None and is counted in ``invalid_count``) or a pair
    ``(first_error, 7)``; ``question`` is the ``question_column`` value when given, else the prompt
    text (last user message); ``answer`` the ``answer_column`` value (None when ``answer_column`` is
    None).  Without calling the verifier, 0.0 goes to a completion with no seven-tag step at all and,
    when ``reject_broken_tags`` (default), to one whose format is broken: a missing, unclosed,
    nested, duplicated, empty or out-of-order tag, several answers, nan (the minimum of the paper's
    reward; a missing tag is no longer scored over the tags present).  A verifier that raises or
    returns an invalid pair gives 0.0 with the reason.
    """
    return _Position(verifier, answer_column, question_column, reject_broken_tags, name)


class _PSPO(RewardFunc):
    def __init__(self, step_scorer, shaping, shaping_kwargs, question_column, reject_broken_tags, name):
        super().__init__(name)
        self.reject_broken_tags = reject_broken_tags
        if not callable(step_scorer):
            raise TypeError(f"step_scorer must be callable, got {type(step_scorer).__name__}")
        pspo_wrs_reward([1.0], shaping, **shaping_kwargs)  # validate the shaping now
        self.step_scorer, self.shaping, self.shaping_kwargs = step_scorer, shaping, dict(shaping_kwargs)
        self.question_column = question_column
        self.columns = (question_column,) if question_column else ()

    def _score(self, text, question, row):
        if self.reject_broken_tags and (why := _format_failure(text)):
            return 0.0, why
        q = row[self.question_column] if self.question_column else question
        try:
            scores = list(self.step_scorer(q, text) or [])
        except Exception as err:  # noqa: BLE001
            return RewardResult(0.0, False, f"step scorer error: {type(err).__name__}: {str(err)[:120]}")
        if not scores:
            return 0.0, "no steps scored"
        try:
            r = pspo_wrs_reward(scores, self.shaping, **self.shaping_kwargs)
        except (TypeError, ValueError) as err:
            return 0.0, f"step scores unusable: {type(err).__name__}: {str(err)[:120]}"
        return r, f"{len(scores)} steps, min score {min(_clip01(s) for s in scores):.3g}"


def pspo_reward_func(step_scorer: Callable[[str, str], list[float]], shaping: str = "weibull",
                     question_column: str | None = None, name: str | None = None,
                     reject_broken_tags: bool = True, **shaping_kwargs) -> RewardFunc:
    """TRL reward function: :func:`pspo_wrs_reward` of the scores ``step_scorer(question, solution)``.

    ``shaping`` is "weibull" (default, the seven-step Weibull; name ``pspo_wrs_reward``),
    "weibull_paper" (the paper's constants), "piecewise" (name ``pspo_piecewise_reward``) or a
    callable; ``shaping_kwargs`` are passed to the shaping.  With ``reject_broken_tags`` (default)
    the seven-tag format is required: a completion with a missing, broken or out-of-order tag,
    several answers or nan gets 0.0 (the minimum) without calling the scorer, so dropping steps never
    pays; with it off the scorer decides what a step is (free-form text is passed to it).  A scorer that raises or returns
    no scores gives 0.0 with the reason.
    """
    if name is None:
        name = {"weibull": "pspo_wrs_reward", "weibull_paper": "pspo_wrs_paper_reward",
                "piecewise": "pspo_piecewise_reward"}.get(
            shaping if isinstance(shaping, str) else "", "pspo_reward")
    return _PSPO(step_scorer, shaping, shaping_kwargs, question_column, reject_broken_tags, name)


def pspo_piecewise_reward_func(step_scorer: Callable[[str, str], list[float]], question_column: str | None = None,
                               name: str = "pspo_piecewise_reward", reject_broken_tags: bool = True,
                               **shaping_kwargs) -> RewardFunc:
    """:func:`pspo_reward_func` with the piecewise shaping (:func:`piecewise_shaping`; L0/L1/L2 kwargs)."""
    return pspo_reward_func(step_scorer, "piecewise", question_column, name, reject_broken_tags, **shaping_kwargs)


#: name -> factory of a TRL reward function
REWARDS: dict[str, Callable[..., RewardFunc]] = {
    "position": position_reward_func,
    "pspo_wrs": pspo_reward_func,
    "pspo_piecewise": pspo_piecewise_reward_func,
    "rlvp": rlvp_reward_func,
    "outcome": outcome_reward_func,
}
