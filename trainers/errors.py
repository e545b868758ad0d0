"""The trainers' bottom room: their errors, exit codes and `option`, imported by every other module of
trainers/ (the rooms of trainers/core, distributed, judging, generation ...) and importing none of them,
so no circle runs through the core."""
from __future__ import annotations

from dataclasses import field


class ConfigError(ValueError):
    """The configuration cannot run (unknown key, bad value); the message says which and why."""


class TrainDataError(ValueError):
    """Training data is missing or corrupt; the message names the file and line."""


class NonFiniteLoss(RuntimeError):
    """The loss became NaN/inf; raised before the optimizer step so the last checkpoint stays good."""


#: exit codes of `main`: 0 finished, 1 config/data error, 2 non-finite loss, 3 the judge's budget spent
#: (a crash is Python's own exit with its traceback)
EXIT_JUDGE_BUDGET = 3


def option(default, help: str, **kw):
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata={"help": help, **kw})
    return field(default=default, metadata={"help": help, **kw})
