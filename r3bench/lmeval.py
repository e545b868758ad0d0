"""Transition alias: the task YAMLs name `!function r3bench.lmeval.X`; the module is r3bench.eval.lmeval.

Delete this file once tasks/r3/ names r3bench.eval.lmeval directly."""
import sys

from r3bench.eval import lmeval

sys.modules[__name__] = lmeval
