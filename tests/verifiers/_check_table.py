"""The row shape of the answer checker's verdict tables (tests/verifiers/test_check_<concept>.py).

A row is (prediction, gold, expected, origin) with, where the case needs them, kind, options and a fragment
the verdict's reason must hold: a Row, or a plain tuple in that order.  origin says where the case came
from, as data: "round2" ... "round7" for a round of hardening, "heldout6:c252" / "heldout7:d341" for the
held-out answer it generalises, "round6-review" / "round6-policy" / "round6-trailing" for the passes over
round six, "defects" / "adversarial" for the cases of those files."""
import re
from typing import NamedTuple

import pytest


class Row(NamedTuple):
    pred: str
    gold: str
    expected: bool
    origin: str
    kind: str | None = None
    options: object = None
    reason: str = ""


def _slug(text: str, n: int = 36) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"[^A-Za-z0-9 .,:;=+*/^()<>_-]", "", text)
    return text[:n] + ("~" if len(text) > n else "")


def rows(table):
    """pytest params of a table, one per row, each with an id: origin, verdict, the prediction's start."""
    out = []
    for r in table:
        r = Row(*r)
        out.append(pytest.param(r, id=f"{r.origin}-{'accept' if r.expected else 'refuse'}-{_slug(r.pred)}"))
    return out


def assert_row(check, r: Row):
    """check (the test file's import of the checker) gives the row's verdict, its reason holding the row's
    fragment."""
    v = check(r.pred, r.gold, kind=r.kind, options=r.options)
    assert v.equivalent is r.expected, (r, v.reason)
    assert r.reason in v.reason, (r, v.reason)
