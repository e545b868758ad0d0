"""Transition alias: the task YAMLs name `!function r3bench.procgen.lmeval_data.dataset_tier`; the
module is r3bench.eval.procgen_data.

Delete this file once tasks/r3/ names r3bench.eval.procgen_data directly."""
import sys

from r3bench.eval import procgen_data

sys.modules[__name__] = procgen_data
