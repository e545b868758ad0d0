"""Seven-tag structured-solution format ("Reason, Reward, Refine").

A solution is seven tagged steps, in a fixed order.  A verifier later finds
the first wrong step e of the n steps present and the reward is e/(n+1).
This module only deals with the *format*: the conventions text used by the
prompts, a tolerant parser that never raises, a renderer, and a format
compliance metric.

Public API: TAGS, CONVENTIONS, EXAMPLE_SOLUTION, Step, ParsedSolution,
parse, render, format_compliance, parse_quantity_line, parse_equation_line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Optional, Union

TAGS: tuple[str, ...] = (
    "problem_analysis",
    "principle",
    "governing_equation",
    "value_identification",
    "substitution",
    "calculation",
    "final_answer",
)
_ORDER = {tag: i for i, tag in enumerate(TAGS)}

#: Upper bound on the number of problems a ParsedSolution reports.
MAX_PROBLEMS = 64

CONVENTIONS = """\
Write the solution as exactly seven steps, each wrapped in its own tag, in this order:
<problem_analysis>...</problem_analysis>
<principle>...</principle>
<governing_equation>...</governing_equation>
<value_identification>...</value_identification>
<substitution>...</substitution>
<calculation>...</calculation>
<final_answer>...</final_answer>
Rules:
- Put nothing outside the tags, and do not nest tags.
- problem_analysis: what is asked and what is given, in words.
- principle: the physical principle or law that applies.
- governing_equation: one equation per line, in LaTeX or sympy syntax.
- value_identification: one quantity per line, as `name = value unit`.
- substitution: one `lhs = rhs` per line, the known values put into the equations.
- calculation: one `lhs = rhs` per line, the arithmetic carried out step by step.
- final_answer: \\boxed{...} holding the value together with its unit."""


# --------------------------------------------------------------------------
# Data model
# --------------------------------------------------------------------------

def parse_quantity_line(line: str) -> Optional[tuple[str, str]]:
    """Split a `name = value unit` line into (name, value_text); None if no '='."""
    return parse_equation_line(line)


def parse_equation_line(line: str) -> Optional[tuple[str, str]]:
    """Split a `lhs = rhs` line at its first '=' into stripped (lhs, rhs).

    Returns None when the line has no '=' or either side is empty.
    """
    lhs, sep, rhs = line.partition("=")
    lhs, rhs = lhs.strip(), rhs.strip()
    if not sep or not lhs or not rhs:
        return None
    return lhs, rhs


@dataclass(frozen=True)
class Step:
    """One tagged step; index is 1-based in document order."""

    index: int
    tag: str
    content: str
    lines: tuple[str, ...]

    def pairs(self) -> tuple[tuple[str, str], ...]:
        """The `lhs = rhs` lines of this step as (lhs, rhs); other lines skipped."""
        out = (parse_equation_line(line) for line in self.lines)
        return tuple(p for p in out if p is not None)


@dataclass(frozen=True)
class ParsedSolution:
    """Result of parse(): the steps kept and the format problems found.

    `flawed` holds the tags that are present but not well-formed (unclosed,
    nested, duplicated, empty or out of order); format_compliance uses it.
    """

    steps: tuple[Step, ...]
    problems: tuple[str, ...]
    flawed: frozenset = field(default_factory=frozenset)

    @property
    def n(self) -> int:
        """Number of distinct tags present (the paper's n)."""
        return len(self.steps)

    @property
    def ok(self) -> bool:
        """True when no format problem was found."""
        return not self.problems

    def get(self, tag: str) -> Optional[Step]:
        """The step with this tag, or None."""
        for step in self.steps:
            if step.tag == tag:
                return step
        return None

    @property
    def final_answer(self) -> Optional[str]:
        """Content of the final_answer step, or None if absent."""
        step = self.get("final_answer")
        return None if step is None else step.content

    @property
    def quantities(self) -> tuple[tuple[str, str], ...]:
        """(name, value_text) pairs from value_identification (empty if absent)."""
        step = self.get("value_identification")
        return () if step is None else step.pairs()

    def equations(self, tag: str = "calculation") -> tuple[tuple[str, str], ...]:
        """(lhs, rhs) pairs from the given step (substitution or calculation)."""
        step = self.get(tag)
        return () if step is None else step.pairs()


# --------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------

# Bounded quantifiers keep matching linear: no nested or unbounded overlap.
_TAG_RE = re.compile(
    r"<\s{0,8}(?:(/)\s{0,8})?([A-Za-z][A-Za-z_\- ]{0,40}?)\s{0,8}>"
)
_STRICT_RE = re.compile(r"</?[A-Za-z][\w\-]*>")
_SEP_RE = re.compile(r"[\s\-]+")
_MAX_UNKNOWN = 5  # distinct unknown tags reported at most


def _normalize(name: str) -> str:
    return _SEP_RE.sub("_", name.strip().lower())


def _lines(content: str) -> tuple[str, ...]:
    return tuple(s for s in (line.strip() for line in content.splitlines()) if s)


class _Problems:
    """Ordered, deduplicated, capped list of problem strings."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self.seen: set[str] = set()

    def add(self, msg: str) -> None:
        if msg not in self.seen and len(self.items) < MAX_PROBLEMS:
            self.seen.add(msg)
            self.items.append(msg)


def parse(text: str) -> ParsedSolution:
    """Parse a seven-tag solution; never raises.

    The text is cut into flat segments: an opening tag starts a segment that
    ends at its closing tag or, failing that, at the next known opening tag
    (or the end).  A tag interrupted that way is reported as nested if its
    closing tag turns up later, else as unclosed.  Only the first occurrence
    of a tag is kept; steps are indexed in document order.  Unknown tags are
    treated as text (reported when they look like real tags).
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    problems = _Problems()
    flawed: set[str] = set()
    kept: list[tuple[str, str]] = []
    seen: set[str] = set()
    open_tag: Optional[str] = None   # tag whose segment is currently open
    open_keep = False                # whether that segment will be kept
    open_start = 0                   # where its content starts
    interrupted: dict[str, str] = {}  # tag -> tag that cut it off
    last_end = 0                     # end of the last structural token
    highest: Optional[str] = None    # kept tag with the highest order so far
    unknown = 0                      # unknown tags reported so far

    def close(end: int) -> None:
        nonlocal open_tag
        if open_tag is not None and open_keep:
            kept.append((open_tag, text[open_start:end].strip()))
        open_tag = None

    for m in _TAG_RE.finditer(text):
        raw = m.group(2)
        name = _normalize(raw)
        if name not in _ORDER:
            # `a < b > c` in a formula is text; `<foo>` looks like a real tag.
            if unknown < _MAX_UNKNOWN and _STRICT_RE.fullmatch(m.group(0)):
                before = len(problems.items)
                problems.add(f"unknown tag: {name}")
                unknown += len(problems.items) - before
            continue
        if m.group(1):  # closing tag
            if open_tag == name:
                close(m.start())
                last_end = m.end()
            elif name in interrupted:
                inner = interrupted.pop(name)
                problems.add(f"nested tag: {inner} inside {name}")
                flawed.update((inner, name))
                if open_tag is not None:  # the inner one never closed
                    problems.add(f"unclosed tag: {open_tag}")
                    flawed.add(open_tag)
                    close(m.start())
                last_end = m.end()
            else:
                problems.add(f"stray closing tag: {name}")
            continue
        # opening tag
        if open_tag is None:
            if text[last_end:m.start()].strip():
                problems.add("text outside tags")
        else:
            interrupted[open_tag] = name
            close(m.start())
        open_tag, open_start, last_end = name, m.end(), m.end()
        open_keep = name not in seen
        if not open_keep:
            problems.add(f"duplicate tag: {name}")
            flawed.add(name)
            continue
        seen.add(name)
        if highest is not None and _ORDER[name] < _ORDER[highest]:
            problems.add(f"out of order: {name} after {highest}")
            flawed.add(name)
        else:
            highest = name

    if open_tag is not None:
        interrupted.setdefault(open_tag, "")
        close(len(text))
    elif text[last_end:].strip():
        problems.add("text outside tags")
    for tag in interrupted:
        problems.add(f"unclosed tag: {tag}")
        flawed.add(tag)
    for tag, content in kept:
        if not content:
            problems.add(f"empty tag: {tag}")
            flawed.add(tag)
    for tag in TAGS:
        if tag not in seen:
            problems.add(f"missing tag: {tag}")

    steps = tuple(
        Step(i, tag, content, _lines(content))
        for i, (tag, content) in enumerate(kept, start=1)
    )
    return ParsedSolution(steps, tuple(problems.items), frozenset(flawed))


# --------------------------------------------------------------------------
# Rendering and metrics
# --------------------------------------------------------------------------

StepsLike = Union[ParsedSolution, Iterable[Step], Mapping[str, str]]


def render(steps: StepsLike) -> str:
    """Render steps back to seven-tag text.

    Accepts a ParsedSolution, an iterable of Step (rendered in the given
    order) or a mapping tag -> content (rendered in TAGS order).  Raises
    ValueError on an unknown tag.  For well-formed input,
    parse(render(x)) gives the same tags and (stripped) contents.
    """
    if isinstance(steps, ParsedSolution):
        pairs = [(s.tag, s.content) for s in steps.steps]
    elif isinstance(steps, Mapping):
        unknown = [k for k in steps if k not in _ORDER]
        if unknown:
            raise ValueError(f"unknown tag: {unknown[0]!r}")
        pairs = [(t, steps[t]) for t in TAGS if t in steps]
    else:
        pairs = [(s.tag, s.content) for s in steps]
    parts = []
    for tag, content in pairs:
        if tag not in _ORDER:
            raise ValueError(f"unknown tag: {tag!r}")
        parts.append(f"<{tag}>\n{str(content).strip()}\n</{tag}>")
    return "\n".join(parts)


def format_compliance(text: str) -> float:
    """Format score in [0, 1]: share of the seven tags present and well-formed.

    A tag counts when it is present, closed, not nested, not duplicated,
    not empty and in order.  Problems not tied to one tag (text outside
    tags, stray closing or unknown tags) scale the score by 0.9, so 1.0 is
    given only to a solution with no problems at all.
    """
    parsed = parse(text)
    good = sum(1 for s in parsed.steps if s.tag not in parsed.flawed)
    score = good / len(TAGS)
    if any(p == "text outside tags" or p.startswith(("stray", "unknown"))
           for p in parsed.problems):
        score *= 0.9
    if not parsed.ok:  # safety net: 1.0 is reserved for a perfect solution
        score = min(score, 0.9)
    return score

EXAMPLE_SOLUTION = render({
    "problem_analysis": (
        "A car starts from rest and accelerates uniformly at 2 m/s^2 for 5 s.\n"
        "Find its final speed."
    ),
    "principle": "Uniformly accelerated motion in one dimension (kinematics).",
    "governing_equation": "v = u + a t",
    "value_identification": "u = 0 m/s\na = 2 m/s^2\nt = 5 s",
    "substitution": "v = 0 + 2 * 5",
    "calculation": "v = 10",
    "final_answer": "\\boxed{10\\ \\mathrm{m/s}}",
})
