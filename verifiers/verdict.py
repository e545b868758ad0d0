"""The step verifier's verdict and the seven-step numbering, apart from the backends that make verdicts.

One source for every backend (verifiers.reference_based, verifiers.reference_free, verifiers.judge, verifiers.psv), the
rewards (verifiers.rewards) and the feedback channels (verifiers.feedback):

  N_STEPS        the format's step count (seventag.TAGS): the n of the position reward e / (n + 1)
  TAG_OF_STEP    step number (1..7) -> tag;  STEP_OF_TAG the reverse
  STEP_CLASS     step number -> the error class an error there belongs to (1, 4 MC; 2, 3 CM; 5-7 CE)
  ERROR_CLASSES  the content error classes MC, CM, CE;  CLASSES adds FORMAT (a broken format)
  StepVerdict    first_error (0 = no error, else 1..7), error_class, explanation, n_steps, valid
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from verifiers import seventag

FORMAT = "FORMAT"
ERROR_CLASSES = ("MC", "CM", "CE")
CLASSES = ERROR_CLASSES + (FORMAT,)
N_STEPS = len(seventag.TAGS)
TAG_OF_STEP = dict(enumerate(seventag.TAGS, start=1))
STEP_OF_TAG = {t: k for k, t in TAG_OF_STEP.items()}
STEP_CLASS = {1: "MC", 2: "CM", 3: "CM", 4: "MC", 5: "CE", 6: "CE", 7: "CE"}
MAX_SOLUTION_CHARS = 20000  # longer outputs are a format failure (the extractor reads 20,000 at most)
MAX_STEP_CHARS = 2000  # a longer step is a format failure at that step (honest steps: < 500; a flood stalls the verifier)


@dataclass(frozen=True)
class StepVerdict:
    first_error: int  # 0 = no error; else 1..7, the position in the seven-tag format
    error_class: str | None  # "MC" | "CM" | "CE" | "FORMAT" | None
    explanation: str
    n_steps: int  # seven-tag steps present in the solution (information; rewards use the format's 7)
    step_scores: tuple = field(default=())  # optional per-step scores (psv backend)
    valid: bool = True  # False: no verdict could be had (judge unreachable, junk replies); see explanation

    def to_dict(self):
        d = asdict(self)
        d["step_scores"] = list(self.step_scores)
        return d


def at_step(step: int, why: str, n: int, cls: str | None = None) -> StepVerdict:
    """The verdict 'first error at `step`', of the class the step belongs to (STEP_CLASS) unless `cls` says."""
    return StepVerdict(step, cls or STEP_CLASS[step], why, n)


def invalid(why: str, n: int = 0) -> StepVerdict:
    """No verdict: first_error is -1 so that nothing downstream can read it as 'all correct'."""
    return StepVerdict(-1, None, why, n, valid=False)
