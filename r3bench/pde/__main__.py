"""`python -m r3bench.pde export --out DIR` | `python -m r3bench.pde check` (bank solvers vs verifier)."""
from __future__ import annotations

import argparse
import json
import sys

from r3bench.pde import families as F
from r3bench.pde.bank import BANK, HELD_OUT_BANK
from r3bench.pde.tasks import export
from r3bench.pde.verify import verify


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m r3bench.pde")
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export", help="write the solver bank as SFT rows (seen families only)")
    e.add_argument("--out", required=True)
    e.add_argument("--per_family", type=int, default=8, help="training prompts per family (x schemes = rows)")
    c = sub.add_parser("check", help="score every bank solver on its family's hidden instances")
    c.add_argument("--seed", type=int, default=1000)
    args = ap.parse_args(argv)
    if args.cmd == "export":
        export(args.out, args.per_family, log_fn=print)
        return 0

    ok = True
    for fam, schemes in {**BANK, **HELD_OUT_BANK}.items():
        insts = F.instances(fam, args.seed)
        for scheme, code in schemes.items():
            v = verify(code, fam, insts)
            ok &= v.success
            print(json.dumps({"family": fam, "scheme": scheme, "success": v.success, "reward": round(v.reward, 4),
                              "nrmse": v.nrmse, "seconds": v.seconds, "reason": v.reason}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
