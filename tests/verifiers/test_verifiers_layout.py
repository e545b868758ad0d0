"""The verifiers package as a house: imports point one way, one source per concept, failures as data.

Read from the source with `ast` (nothing of it is run), plus a few behaviour checks of what the
restructure fixed: rewards report failure in RewardResult.ok, and LaTeX the parser refuses gets a
reason that says what is wrong.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from verifiers import KINDS, CheckConfig, check
from verifiers.rewards import REWARDS, RewardResult, position_reward_func, pspo_reward_func, step_reward
from verifiers.verdict import CLASSES, ERROR_CLASSES, FORMAT, N_STEPS, STEP_CLASS, STEP_OF_TAG, TAG_OF_STEP, StepVerdict

PKG = Path(__file__).resolve().parents[2] / "verifiers"
FILES = sorted(PKG.glob("*.py"))
FIRST_PARTY = ("verifiers", "r3bench", "trainers", "tasks")


def _tree(f: Path) -> ast.Module:
    return ast.parse(f.read_text(encoding="utf-8"), str(f))


def _imports(tree) -> list[tuple[ast.AST, str, list[str]]]:
    """(node, module, names) of every import in a tree, at any depth."""
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out += [(n, a.name, []) for a in n.names]
        elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
            out.append((n, n.module, [a.name for a in n.names]))
    return out


def _verifiers_targets(module: str, names: list[str]) -> set[str]:
    """The verifiers modules an import loads: `verifiers.x`, or `from verifiers import x` of a submodule."""
    if module == "verifiers":
        return {n for n in names if (PKG / f"{n}.py").exists()}
    if module.startswith("verifiers."):
        return {module.split(".")[1]}
    return set()


def test_no_import_circle_inside_verifiers():
    graph = {}
    for f in FILES:
        deps = set()
        for _, mod, names in _imports(_tree(f)):
            deps |= _verifiers_targets(mod, names)
        graph[f.stem] = deps - {f.stem, "__init__"}
    state = {}

    def visit(node, path):
        state[node] = "open"
        for d in sorted(graph.get(node, ())):
            if state.get(d) == "open":
                raise AssertionError("import circle: " + " -> ".join(path[path.index(d):] + [d]))
            if d not in state:
                visit(d, path + [d])
        state[node] = "done"

    for node in graph:
        if node not in state:
            visit(node, [node])


def test_backends_and_helpers_do_not_import_the_dispatch():
    """verifiers.steps imports the backends; the backends and shared helpers never import it."""
    for f in FILES:
        if f.stem == "steps":
            continue
        for _, mod, names in _imports(_tree(f)):
            assert "steps" not in _verifiers_targets(mod, names), f"{f.name} imports verifiers.steps"


def test_first_party_imports_are_at_the_top():
    """Only third-party (heavy) imports may stay inside functions."""
    for f in FILES:
        tree = _tree(f)
        top = {id(n) for n in tree.body}
        for node, mod, _ in _imports(tree):
            if mod.split(".")[0] in FIRST_PARTY:
                assert id(node) in top, f"{f.name}:{node.lineno} imports {mod} inside a function"


def test_no_private_names_across_modules():
    for f in FILES:
        tree = _tree(f)
        aliases = set()
        for node, mod, names in _imports(tree):
            if mod.split(".")[0] not in FIRST_PARTY:
                continue
            private = [n for n in names if n.startswith("_")]
            assert not private, f"{f.name}:{node.lineno} imports private {private} from {mod}"
            for a in node.names:
                if _verifiers_targets(mod, [a.name]) or mod.startswith("verifiers.") or mod == "r3bench":
                    aliases.add(a.asname or a.name.split(".")[-1])
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in aliases \
                    and n.attr.startswith("_") and not n.attr.startswith("__"):
                raise AssertionError(f"{f.name}:{n.lineno} reads {n.value.id}.{n.attr}")


def _assigned(name: str) -> list[str]:
    """The files of verifiers/ that assign `name` at module level."""
    out = []
    for f in FILES:
        for n in _tree(f).body:
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AnnAssign) else []
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                out.append(f.name)
    return out


def test_one_step_numbering_and_one_class_map():
    assert list(TAG_OF_STEP) == list(range(1, N_STEPS + 1)) == sorted(STEP_CLASS)
    assert all(STEP_OF_TAG[TAG_OF_STEP[k]] == k for k in TAG_OF_STEP)
    assert set(STEP_CLASS.values()) == set(ERROR_CLASSES) and CLASSES == ERROR_CLASSES + (FORMAT,)
    for name in ("STEP_CLASS", "_STEP_CLASS", "TAG_OF_STEP", "STEP_OF_TAG", "N_STEPS", "CLASSES", "ERROR_CLASSES",
                 "MAX_SOLUTION_CHARS"):
        assert _assigned(name) in ([], ["verdict.py"]), (name, _assigned(name))
    assert _assigned("STEP_CLASS") == ["verdict.py"]


def test_one_tuple_of_answer_kinds():
    """verifiers.answer.KINDS is the only literal list of the answer kinds in verifiers/."""
    kinds = set(KINDS)
    holders = []
    for f in FILES:
        for n in ast.walk(_tree(f)):
            if isinstance(n, (ast.Tuple, ast.List, ast.Set)):
                words = {e.value for e in n.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
                if len(words & kinds) >= 4:
                    holders.append(f"{f.name}:{n.lineno}")
    assert len(holders) == 1 and holders[0].startswith("answer.py:"), holders


def test_tolerances_live_in_checkconfig():
    """No module of the checker or the step verifier keeps a tolerance literal of its own."""
    checked = ("answer", "step_reading", "reference_free", "reference_based", "step_checks", "tag_format", "steps",
               "symbolic", "worker", "verdict", "judge", "psv", "feedback", "extract", "safeexpr")
    for f in FILES:
        if f.stem not in checked:
            continue
        tree = _tree(f)
        values = {id(c) for n in tree.body if isinstance(n, ast.Assign)  # reference_free's physical constants: values
                  and any(isinstance(t, ast.Name) and t.id == "CONSTANTS" for t in n.targets) for c in ast.walk(n)}
        for n in ast.walk(tree):
            if isinstance(n, ast.Constant) and isinstance(n.value, float) and 0 < n.value < 0.05:
                assert id(n) in values, f"{f.name}:{n.lineno}: tolerance {n.value} outside CheckConfig"
    cfg = CheckConfig()
    assert (cfg.rel_tol, cfg.sym_rel_tol, cfg.zero_tol) == (1e-2, 1e-6, 1e-12)  # the values the literals had
    assert (cfg.int_tol, cfg.const_rel_tol) == (1e-9, 5e-3)


def test_one_reward_registry():
    assert _assigned("REWARDS") == ["rewards.py"]
    # the paper's rewards, and every entry a factory (a reward added to REWARDS is one more: no exact set here)
    assert {"position", "pspo_wrs", "pspo_piecewise", "rlvp", "outcome"} <= set(REWARDS)
    assert all(callable(f) for f in REWARDS.values())


def test_no_model_text_is_evaluated_as_code_in_the_new_modules():
    import re

    for name in ("verdict.py", "tag_format.py", "step_checks.py", "config.py"):
        assert not re.search(r"(?<![\w.])(eval|exec|compile)\(", (PKG / name).read_text()), name


# --- rewards report failure as data ----------------------------------------------------------------

_SOL = ("<problem_analysis>a</problem_analysis><principle>b</principle><governing_equation>v = a*t"
        "</governing_equation><value_identification>a = 2 m/s^2, t = 3 s</value_identification>"
        "<substitution>v = 2*3</substitution><calculation>v = 6 m/s</calculation>"
        "<final_answer>\\boxed{6 m/s}</final_answer>")


def _raises(*_):
    raise RuntimeError("judge down")


@pytest.mark.parametrize("verifier, value, ok, head", [
    (lambda q, s, a: StepVerdict(3, "CM", "wrong law", 7), 3 / 8, True, "first wrong step 3"),
    (lambda q, s, a: StepVerdict(-1, None, "unreachable", 7, valid=False), None, False, "verifier gave no verdict"),
    (_raises, 0.0, False, "verifier error"),
    (lambda q, s, a: (9, 7), 0.0, False, "verifier returned invalid"),
])
def test_position_reward_failures_are_data(verifier, value, ok, head):
    f = position_reward_func(verifier, answer_column=None)
    out = f(prompts=["q"], completions=[_SOL])
    res = f.last_results[0]
    assert isinstance(res, RewardResult) and out == [value] and res.value == value and res.ok is ok
    assert res.reason.startswith(head) and f.last_reasons == [res.reason]


def test_completion_faults_are_ok_results_and_scorer_errors_are_not():
    f = pspo_reward_func(lambda q, s: _raises())
    assert f(prompts=["q", "q"], completions=[_SOL, ""]) == [0.0, 0.0]
    assert [r.ok for r in f.last_results] == [False, True]  # the scorer's failure; an empty completion's own
    fmt = step_reward(StepVerdict(2, FORMAT, "missing", 7))  # a broken format is the completion's: paid 0, ok
    assert fmt == RewardResult(0.0, True, "format failure at step 2: missing", FORMAT)  # booked as FORMAT


# --- LaTeX the parser refuses: the reason says what is wrong --------------------------------------

@pytest.mark.parametrize("pred, ref, kind, why", [
    ("\\frac{1}{2", "0.5", None, "unbalanced braces in LaTeX: the '{' at character 9 is never closed"),
    ("$\\sqrt{2", "1.414", None, "unbalanced braces in LaTeX: the '{' at character 6 is never closed"),
    ("\\sqrt{2", "\\sqrt{2}", "symbolic", "unbalanced braces in LaTeX"),
    ("\\frac{1}{2}}", "x", "symbolic", "unbalanced braces in LaTeX: the '}' at character 12 closes no '{'"),
    ("1 + \\frac{1}{x} +", "x", "symbolic", "latex parse failed: I expected something else here at the end"),
])
@pytest.mark.parametrize("isolate", [True, False])
def test_unparseable_latex_says_why(pred, ref, kind, why, isolate):
    v = check(pred, ref, kind, CheckConfig(isolate=isolate))
    assert not v.equivalent and why in v.reason and "Exception" not in v.reason, v.reason
