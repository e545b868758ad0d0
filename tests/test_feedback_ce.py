"""The CE feedback channel: the failing step recomputed exactly in the sandbox."""
from verifiers import feedback as fb


def test_ce_feedback_computes_the_failing_step_in_the_sandbox(injected_case):
    p, text, v = injected_case("we_drop_speed", "CE", 6)
    f = fb.feedback(p.question, text, v, p.solution)
    assert f.error_class == "CE" and f.evidence["sandbox"]["status"] == "ok"
    exact = float(f.evidence["sandbox"]["value"])
    ref_v = float(p.answer.split()[0])
    assert abs(exact - ref_v) <= 2e-3 * ref_v  # the sandbox recomputed the step the model got wrong
    p, text, v = injected_case("we_drop_speed", "CE", 5)
    f = fb.feedback(p.question, text, v, p.solution)
    assert abs(float(f.evidence["sandbox"]["value"]) - ref_v) <= 2e-3 * ref_v


