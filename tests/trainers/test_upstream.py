"""trainers/core/upstream.py: what the trainers rely on in transformers and TRL beyond their public API
(issue 38, item 2). The private methods overridden or called, the private attribute read and the
mirrored name lists hold in the installed versions; nothing outside upstream.py overrides or calls a
private method of an HF/TRL trainer; and pyproject pins trl and transformers to the tested range."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from trainers.core import upstream

REPO = Path(__file__).resolve().parents[2]


def test_the_private_api_the_trainers_use_is_what_the_installed_versions_have():
    pytest.importorskip("transformers")
    pytest.importorskip("trl")
    problems = upstream.problems()
    assert not problems, ("transformers / TRL changed what trainers/core/upstream.py relies on (mend it there, "
                          "then widen the pins in pyproject.toml):\n  " + "\n  ".join(problems))


def test_the_check_names_a_changed_signature(monkeypatch):
    pytest.importorskip("transformers")
    pytest.importorskip("trl")
    import trl

    def _generate(self, prompts, images):  # a TRL that grew a parameter
        return None

    monkeypatch.setattr(trl.GRPOTrainer, "_generate", _generate)
    monkeypatch.setattr(upstream, "LR_SCHEDULERS", upstream.LR_SCHEDULERS[:-1])
    got = "\n".join(upstream.problems())
    assert "trl.GRPOTrainer._generate takes ('self', 'prompts', 'images')" in got
    assert "was written for ('self', 'prompts')" in got and "SchedulerType" in got


def _private_members() -> set:
    """The private method names of the HF/TRL trainer classes r3bench builds on."""
    pytest.importorskip("trl")
    from transformers import Trainer
    from trl import DPOTrainer, GRPOTrainer, SFTTrainer

    return {n for cls in (Trainer, SFTTrainer, DPOTrainer, GRPOTrainer) for n in dir(cls)
            if n.startswith("_") and not n.startswith("__")}


def test_no_private_trainer_method_is_overridden_or_called_outside_upstream():
    private = _private_members()
    bad = []
    for f in sorted((REPO / "trainers").rglob("*.py")):
        if f.name == "upstream.py":
            continue
        for n in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name in private:
                bad.append(f"{f.relative_to(REPO)}:{n.lineno} defines {n.name}")
            elif isinstance(n, ast.Attribute) and n.attr in private and not (
                    isinstance(n.value, ast.Name) and n.value.id == "self" and isinstance(n.ctx, ast.Store)):
                bad.append(f"{f.relative_to(REPO)}:{n.lineno} uses .{n.attr}")
    assert not bad, ("private methods of transformers / TRL trainers belong in trainers/core/upstream.py only "
                     f"(PRIVATE_METHODS, checked above): {bad}")


def test_guard_mixin_saves_its_state_through_a_public_callback():
    pytest.importorskip("transformers")
    from trainers.core.mixins import GuardMixin

    assert "_save_checkpoint" not in vars(GuardMixin)
    assert "transformers.Trainer._save_checkpoint" in upstream.PRIVATE_METHODS  # still called by save_checkpoint


def _installed(name: str) -> str:
    from importlib.metadata import version

    return version(name)


@pytest.mark.parametrize("pkg", ["trl", "transformers"])
def test_pyproject_pins_the_tested_range(pkg):
    text = (REPO / "pyproject.toml").read_text()
    pins = re.findall(rf'"{pkg}>=([\d.]+),<([\d.]+)"', text)
    assert pins, f"pyproject.toml pins no range of {pkg} (>=LOW,<HIGH)"
    low, high = pins[0]
    pytest.importorskip(pkg)
    v = tuple(int(x) for x in re.findall(r"\d+", _installed(pkg))[:3])
    as_tuple = lambda s: tuple(int(x) for x in s.split("."))  # noqa: E731
    assert as_tuple(low) <= v < as_tuple(high), f"installed {pkg} {v} is outside the pinned {low} - {high}"

