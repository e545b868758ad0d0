"""Tests for verifiers.seventag: parser table, round trips, fuzzing, speed."""

import pytest
from hypothesis import given, settings, strategies as st

from verifiers.seventag import (
    CONVENTIONS, EXAMPLE_SOLUTION, TAGS, ParsedSolution, Step,
    format_compliance, parse, parse_equation_line, parse_quantity_line, render,
)

GOOD = {tag: f"content of {tag}" for tag in TAGS}


def block(tag, body="x"):
    return f"<{tag}>{body}</{tag}>"


def full(*, skip=(), order=TAGS):
    return "\n".join(block(t, GOOD[t]) for t in order if t not in skip)


def missing(*tags):
    return {f"missing tag: {t}" for t in tags}


ALL_MISSING = missing(*TAGS)

# (id, text, expected problems (exact set), expected n)
TABLE = [
    ("perfect", full(), set(), 7),
    ("empty string", "", ALL_MISSING, 0),
    ("plain text", "the answer is 42", ALL_MISSING | {"text outside tags"}, 0),
    ("missing principle", full(skip=("principle",)), missing("principle"), 6),
    ("missing two", full(skip=("principle", "final_answer")),
     missing("principle", "final_answer"), 5),
    ("duplicate calculation", full() + "\n" + block("calculation", "again"),
     {"duplicate tag: calculation"}, 7),
    ("unclosed substitution",
     full().replace("</substitution>", ""), {"unclosed tag: substitution"}, 7),
    ("unclosed last tag",
     full().replace("</final_answer>", ""), {"unclosed tag: final_answer"}, 7),
    ("nested calculation in substitution",
     full(skip=("substitution", "calculation", "final_answer"))
     + "<substitution>a = 1<calculation>b = 2</calculation></substitution>"
     + block("final_answer", "42"),
     {"nested tag: calculation inside substitution"}, 7),
    ("out of order",
     full(order=("problem_analysis", "calculation", "principle",
                 "governing_equation", "value_identification",
                 "substitution", "final_answer")),
     {"out of order: principle after calculation",
      "out of order: governing_equation after calculation",
      "out of order: value_identification after calculation",
      "out of order: substitution after calculation"}, 7),
    ("text before", "Sure! Here it is:\n" + full(), {"text outside tags"}, 7),
    ("text between", full().replace("</principle>\n", "</principle>\nhmm\n"),
     {"text outside tags"}, 7),
    ("whitespace outside only", "\n  \n" + full() + "\n\t", set(), 7),
    ("unknown tag", full() + "<thinking>", {"unknown tag: thinking", "text outside tags"}, 7),
    ("case and whitespace variants",
     full().replace("<principle>", "< Principle >")
     .replace("</principle>", "</ PRINCIPLE>")
     .replace("<final_answer>", "<Final Answer>"), set(), 7),
    ("stray closing", full() + "</principle>", {"stray closing tag: principle", "text outside tags"}, 7),
    ("empty tag", full().replace(GOOD["principle"], "  "),
     {"empty tag: principle"}, 7),
    ("only closing tags", "</principle></calculation>",
     ALL_MISSING | {"text outside tags", "stray closing tag: principle",
                    "stray closing tag: calculation"}, 0),
    ("math comparison is not a tag",
     full().replace(GOOD["calculation"], "0 < t > 5"), set(), 7),
]


@pytest.mark.parametrize("text,expected,n", [t[1:] for t in TABLE],
                         ids=[t[0] for t in TABLE])
def test_malformed_table(text, expected, n):
    parsed = parse(text)
    assert set(parsed.problems) == expected
    assert parsed.n == n
    assert parsed.ok == (not expected)
    assert [s.index for s in parsed.steps] == list(range(1, n + 1))


def test_unclosed_takes_content_to_next_tag():
    text = "<principle>energy conservation<governing_equation>E = m c^2</governing_equation>"
    parsed = parse(text)
    assert parsed.get("principle").content == "energy conservation"
    assert parsed.get("governing_equation").content == "E = m c^2"
    assert "unclosed tag: principle" in parsed.problems


def test_duplicate_keeps_first():
    parsed = parse(block("calculation", "first") + block("calculation", "second"))
    assert parsed.get("calculation").content == "first"
    assert parsed.n == 1


def test_out_of_order_keeps_document_order():
    parsed = parse(block("calculation") + block("principle"))
    assert [(s.index, s.tag) for s in parsed.steps] == [(1, "calculation"), (2, "principle")]


def test_example_solution_is_perfect():
    parsed = parse(EXAMPLE_SOLUTION)
    assert parsed.ok and parsed.n == 7
    assert [s.tag for s in parsed.steps] == list(TAGS)
    assert parsed.final_answer.startswith("\\boxed{")
    assert parsed.quantities == (("u", "0 m/s"), ("a", "2 m/s^2"), ("t", "5 s"))
    assert parsed.equations("substitution") == (("v", "0 + 2 * 5"),)
    assert parsed.equations() == (("v", "10"),)
    assert format_compliance(EXAMPLE_SOLUTION) == 1.0


def test_conventions_mentions_every_tag():
    for tag in TAGS:
        assert f"<{tag}>" in CONVENTIONS
    assert "\\boxed{" in CONVENTIONS and "name = value unit" in CONVENTIONS


def test_line_helpers():
    assert parse_quantity_line(" m = 2.0 kg ") == ("m", "2.0 kg")
    assert parse_equation_line("v = u + a t = 10") == ("v", "u + a t = 10")
    assert parse_equation_line("no equals here") is None
    assert parse_equation_line("= 3") is None
    step = Step(1, "calculation", "a = 1\n\nnote\nb = 2", ("a = 1", "note", "b = 2"))
    assert step.pairs() == (("a", "1"), ("b", "2"))


def test_lines_are_stripped_and_nonempty():
    parsed = parse("<value_identification>\n  m = 1 kg \n\n g = 9.8 m/s^2\n</value_identification>")
    assert parsed.get("value_identification").lines == ("m = 1 kg", "g = 9.8 m/s^2")


def test_missing_accessors():
    parsed = parse("")
    assert parsed.get("principle") is None
    assert parsed.final_answer is None
    assert parsed.quantities == () and parsed.equations() == ()


def test_parsed_solution_is_frozen():
    parsed = parse(full())
    with pytest.raises(Exception):
        parsed.steps = ()
    with pytest.raises(Exception):
        parsed.steps[0].content = "x"


def test_format_compliance_values():
    assert format_compliance(full()) == 1.0
    assert format_compliance("") == 0.0
    assert format_compliance(full(skip=("principle",))) == pytest.approx(6 / 7)
    assert format_compliance(full().replace("</substitution>", "")) == pytest.approx(6 / 7)
    assert 0.0 < format_compliance("hi\n" + full()) < 1.0
    for _, text, expected, _ in TABLE:
        score = format_compliance(text)
        assert 0.0 <= score <= 1.0
        assert (score == 1.0) == (not expected)


# ---------------------------------------------------------------- round trips

def test_render_mapping_round_trip():
    assert [(s.tag, s.content) for s in parse(render(GOOD)).steps] == list(GOOD.items())


def test_render_mapping_uses_tag_order():
    text = render({"final_answer": "42", "principle": "p"})
    assert [s.tag for s in parse(text).steps] == ["principle", "final_answer"]


def test_render_steps_and_parsed_round_trip():
    parsed = parse(EXAMPLE_SOLUTION)
    assert render(parsed) == EXAMPLE_SOLUTION
    assert render(parsed.steps) == EXAMPLE_SOLUTION


def test_render_rejects_unknown_tag():
    with pytest.raises(ValueError):
        render({"thinking": "hmm"})


safe_text = st.text(st.characters(blacklist_characters="<>",
                                  blacklist_categories=("Cs",)), max_size=60)
nonblank = safe_text.filter(lambda s: s.strip())


@settings(deadline=None)  # no per-example time limit: a GC pause is not a failure
@given(st.fixed_dictionaries({t: nonblank for t in TAGS}))
def test_round_trip_property(contents):
    parsed = parse(render(contents))
    assert parsed.ok
    assert parsed.n == 7
    assert [(s.tag, s.content) for s in parsed.steps] == [
        (t, contents[t].strip()) for t in TAGS]
    assert parse(render(parsed)) == parsed


# -------------------------------------------------------------------- fuzzing

def check_invariants(parsed):
    assert isinstance(parsed, ParsedSolution)
    assert 0 <= parsed.n <= 7
    assert [s.index for s in parsed.steps] == list(range(1, parsed.n + 1))
    assert len({s.tag for s in parsed.steps}) == parsed.n
    assert all(s.tag in TAGS for s in parsed.steps)
    assert all(isinstance(p, str) and p for p in parsed.problems)
    assert parsed.ok == (not parsed.problems)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=500))
def test_arbitrary_text_never_raises(text):
    check_invariants(parse(text))
    assert 0.0 <= format_compliance(text) <= 1.0


fragment = st.one_of(
    st.sampled_from(TAGS).map(lambda t: f"<{t}>"),
    st.sampled_from(TAGS).map(lambda t: f"</{t}>"),
    st.sampled_from(TAGS).map(lambda t: f"< /{t.upper()} >"),
    st.sampled_from(["<", ">", "</", "< ", "<foo>", "</bar>", "a < b > c", "\n", " "]),
    safe_text,
)


@settings(max_examples=500, deadline=None)
@given(st.lists(fragment, max_size=40))
def test_tag_interleavings_never_raise(fragments):
    text = "".join(fragments)
    parsed = parse(text)
    check_invariants(parsed)
    score = format_compliance(text)
    assert 0.0 <= score <= 1.0
    assert (score == 1.0) == parsed.ok


def test_non_string_input_does_not_raise():
    check_invariants(parse(None))
    check_invariants(parse(b"<principle>x</principle>"))


# ---------------------------------------------------------------- performance

@pytest.mark.parametrize("text", [
    "<" * 100_000,
    "< " * 50_000,
    "<" + " " * 100_000,
    "<a" * 50_000,
    "<principle>" * 9_000,
    "</calculation>" * 7_000,
    "<" + "a" * 100_000,
    "<foo>" * 20_000,
    full() * 100 + "x" * 50_000,
    "< final answer " * 7_000,
], ids=lambda t: repr(t[:12]))
def test_large_input_is_fast(text):
    parsed = parse(text)  # how fast (no quadratic blow-up): benchmarks/test_bench_deadlines.py
    check_invariants(parsed)
    assert len(parsed.problems) <= 64
