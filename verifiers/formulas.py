"""The r3bench physics formula corpus.

The corpus lives in the packaged file ``verifiers/formulas.yaml``: a list of entries, each with an
``id``, a ``topic`` (one of :data:`TOPICS`), a short ``name``, the formula in ``latex`` and in
``sympy`` syntax (``"lhs = rhs"``), the pint unit of every symbol in ``variables`` and a one-sentence
``validity`` note saying when the formula holds.

>>> from verifiers import formulas
>>> f = formulas.by_topic("kinematics")[0]
>>> lhs, rhs = formulas.parse(f)

Malformed entries raise :class:`CorpusError` naming the entry id.  Every identifier in a sympy form
is a plain :class:`sympy.Symbol` except the few function names in :data:`FUNCTIONS`, so names such
as ``E``, ``I``, ``N``, ``S`` or ``gamma`` are variables here, not sympy built-ins.
"""
from __future__ import annotations

import functools
import keyword
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import yaml

__all__ = ["TOPICS", "FUNCTIONS", "Formula", "CorpusError", "load", "by_topic", "parse", "from_yaml"]

TOPICS: tuple[str, ...] = (
    "kinematics",
    "dynamics",
    "work_energy",
    "momentum",
    "circular_motion",
    "gravitation",
    "shm_waves",
    "thermodynamics",
    "electrostatics",
    "dc_circuits",
    "magnetism",
    "optics",
    "modern_physics",
)

#: Identifiers in a sympy form that are functions/constants rather than variables.
FUNCTIONS: tuple[str, ...] = ("sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "exp", "log", "pi")

_FIELDS = ("id", "topic", "name", "latex", "sympy", "variables", "validity")
_ID_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_SYMBOL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
_IDENT_RE = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")


class CorpusError(ValueError):
    """A corpus entry is malformed; the message starts with the entry id."""


@dataclass(frozen=True)
class Formula:
    id: str
    topic: str
    name: str
    latex: str
    sympy: str
    #: symbol -> {"name": ..., "unit": <pint unit string>}
    variables: dict[str, dict[str, str]] = field(hash=False)
    validity: str


def _entry(raw: Any, index: int) -> Formula:
    if not isinstance(raw, dict):
        raise CorpusError(f"entry #{index}: expected a mapping, got {type(raw).__name__}")
    fid = raw.get("id", f"entry #{index}")
    missing = [k for k in _FIELDS if k not in raw]
    if missing:
        raise CorpusError(f"{fid}: missing field(s) {', '.join(missing)}")
    extra = sorted(set(raw) - set(_FIELDS), key=str)
    if extra:
        raise CorpusError(f"{fid}: unknown field(s) {', '.join(map(str, extra))}")
    for k in _FIELDS:
        if k != "variables" and (not isinstance(raw[k], str) or not raw[k].strip()):
            raise CorpusError(f"{fid}: field {k!r} must be a non-empty string")
    if not _ID_RE.match(fid):
        raise CorpusError(f"{fid}: id must be snake_case")
    if raw["topic"] not in TOPICS:
        raise CorpusError(f"{fid}: unknown topic {raw['topic']!r}")
    if raw["sympy"].count("=") != 1:
        raise CorpusError(f"{fid}: sympy form must contain exactly one '='")
    variables = raw["variables"]
    if not isinstance(variables, dict) or not variables:
        raise CorpusError(f"{fid}: variables must be a non-empty mapping")
    clean: dict[str, dict[str, str]] = {}
    for sym, info in variables.items():
        if (
            not isinstance(sym, str)
            or not _SYMBOL_RE.match(sym)
            or keyword.iskeyword(sym)
            or sym in FUNCTIONS
        ):
            raise CorpusError(f"{fid}: bad variable symbol {sym!r}")
        if (
            not isinstance(info, dict)
            or set(info) != {"name", "unit"}
            or not all(isinstance(v, str) and v.strip() for v in info.values())
        ):
            raise CorpusError(f"{fid}: variable {sym!r} needs string 'name' and 'unit' only")
        clean[sym] = {"name": info["name"], "unit": info["unit"]}
    return Formula(
        id=fid,
        topic=raw["topic"],
        name=raw["name"],
        latex=raw["latex"],
        sympy=raw["sympy"],
        variables=clean,
        validity=raw["validity"],
    )


def from_yaml(text: str) -> list[Formula]:
    """Build formulas from YAML text (a list of entries), checking structure and unique ids."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CorpusError(f"corpus is not valid YAML: {exc}") from exc
    if not isinstance(data, list):
        raise CorpusError("corpus must be a YAML list of entries")
    out: list[Formula] = []
    seen: set[str] = set()
    for i, raw in enumerate(data):
        f = _entry(raw, i)
        if f.id in seen:
            raise CorpusError(f"{f.id}: duplicate id")
        seen.add(f.id)
        out.append(f)
    return out


@functools.lru_cache(maxsize=1)
def _load_cached() -> tuple[Formula, ...]:
    text = resources.files("verifiers").joinpath("formulas.yaml").read_text(encoding="utf-8")
    return tuple(from_yaml(text))


def load() -> list[Formula]:
    """All formulas of the packaged corpus, in file order (parsed once, then cached)."""
    return list(_load_cached())


def by_topic(topic: str) -> list[Formula]:
    """The formulas of one topic; raises ``KeyError`` for a topic not in :data:`TOPICS`."""
    if topic not in TOPICS:
        raise KeyError(topic)
    return [f for f in _load_cached() if f.topic == topic]


def parse(f: Formula) -> tuple[Any, Any]:
    """Return ``(lhs, rhs)`` of ``f.sympy`` as sympy expressions; raises :class:`CorpusError`."""
    import sympy
    from sympy.parsing.sympy_parser import parse_expr

    funcs = {name: getattr(sympy, name) for name in FUNCTIONS}
    parts = f.sympy.split("=")
    if len(parts) != 2:
        raise CorpusError(f"{f.id}: sympy form must contain exactly one '='")
    local = {
        name: funcs[name] if name in funcs else sympy.Symbol(name)
        for name in _IDENT_RE.findall(f.sympy)
    }
    try:
        lhs, rhs = (parse_expr(p.strip(), local_dict=dict(local)) for p in parts)
    except Exception as exc:  # SyntaxError, TypeError (calling a Symbol), TokenError, ...
        raise CorpusError(f"{f.id}: cannot parse sympy form {f.sympy!r}: {exc}") from exc
    return lhs, rhs
