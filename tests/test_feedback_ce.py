"""The CE feedback channel: the failing step recomputed exactly in the sandbox."""
from r3bench import procgen
from verifiers import feedback as fb
from verifiers.steps import verify


def _case(template, cls, step):
    p = next(p for p in procgen.generate(n=3 * len(procgen.TEMPLATES), seed=4) if p.template == template)
    text, fe, c, why = procgen.inject_problem(p, cls, step)
    v = verify(p.question, text, p.solution)
    assert (v.first_error, v.error_class) == (step, cls)
    return p, text, v


def test_ce_feedback_computes_the_failing_step_in_the_sandbox():
    p, text, v = _case("we_drop_speed", "CE", 6)
    f = fb.feedback(p.question, text, v, p.solution)
    assert f.error_class == "CE" and f.evidence["sandbox"]["status"] == "ok"
    exact = float(f.evidence["sandbox"]["value"])
    ref_v = float(p.answer.split()[0])
    assert abs(exact - ref_v) <= 2e-3 * ref_v  # the sandbox recomputed the step the model got wrong
    p, text, v = _case("we_drop_speed", "CE", 5)
    f = fb.feedback(p.question, text, v, p.solution)
    assert abs(float(f.evidence["sandbox"]["value"]) - ref_v) <= 2e-3 * ref_v


