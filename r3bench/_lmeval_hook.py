"""Transition alias: an r3bench_lmeval_hook.pth installed before the move imports this name; the hook is
r3bench.eval.hook. Delete this file once every install carries the new .pth (pip install -e . again)."""
import sys

from r3bench.eval import hook

sys.modules[__name__] = hook
