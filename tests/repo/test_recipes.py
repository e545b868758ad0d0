"""The recipes of docs/ARCHITECTURE.md ("Where to add"), applied as written to a copy of the repository.

The example tests (tests/eval/test_benchmark_table.py, tests/verifiers/test_backend_table.py,
tests/trainers/test_reward_table.py, tests/trainers/test_trainer_example.py) register their toy in memory and
never touch a file of the repository. Here each recipe is done the way a contributor does it: the tracked
files are copied to a temporary folder (a git repository of its own), the recipe's files are edited there
(a small, realistic addition), its one command is run, and the tests of its area - those that pin what the
recipe adds to - are run in the copy. Each test counts the files edited by hand (`git status` before the
command) and checks them against the recipe's row; what the command writes is counted apart.

Recipes: a benchmark (`toybench`, three rows in a data folder of its own), a reward (`toy_len`), a verifier
backend with a setting (`marker`, `--marker-token`), a trainer (`toy`, with its method row) and a unit alias
(`kph`). Each copies the repository once (about 60 MB) and runs a focused subset of tests there.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


class Copy:
    """A copy of the repository's tracked files (as they are in the working tree), committed in a git
    repository of its own so `changed()` says what a recipe touched."""

    def __init__(self, root: Path, data: Path | None):
        self.root, self.data = root, data

    def git(self, *args: str) -> str:
        env = {**os.environ, "GIT_AUTHOR_NAME": "recipe", "GIT_AUTHOR_EMAIL": "recipe@example.invalid",
               "GIT_COMMITTER_NAME": "recipe", "GIT_COMMITTER_EMAIL": "recipe@example.invalid"}
        return subprocess.run(["git", *args], cwd=self.root, env=env, check=True, capture_output=True,
                              text=True).stdout

    def edit(self, rel: str, old: str, new: str) -> None:
        """Replace the one occurrence of `old` in file `rel` by `new` (the anchor must be there once)."""
        path = self.root / rel
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{rel}: the recipe's anchor {old!r} is not there once"
        path.write_text(text.replace(old, new), encoding="utf-8")

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        assert not path.exists(), rel
        path.write_text(text, encoding="utf-8")

    def changed(self) -> set[str]:
        """The files that differ from the copy's commit, new ones included."""
        return {line[3:] for line in self.git("status", "--porcelain", "--untracked-files=all").splitlines()}

    def env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(self.root), os.environ.get("PYTHONPATH")]))
        if self.data is not None:
            env["R3BENCH_DATA_DIR"] = str(self.data)
        return env

    def run(self, *args: str, timeout: int = 1500) -> str:
        """`python ARGS` in the copy (its modules first on the path); fails the test with its output."""
        done = subprocess.run([sys.executable, *args], cwd=self.root, env=self.env(), capture_output=True,
                              text=True, timeout=timeout)
        assert done.returncode == 0, f"python {' '.join(args)}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        return done.stdout

    def pytest(self, *tests: str) -> str:
        """The area's tests, run in the copy."""
        return self.run("-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests, timeout=1500)


@pytest.fixture()
def recipe_repo(tmp_path):
    """A fresh copy of the repository's tracked files for one recipe."""
    if not (REPO / ".git").exists() or shutil.which("git") is None:
        pytest.skip("the recipes copy the repository's tracked files: needs git and a checkout")
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True).stdout
    root = tmp_path / "repo"
    for rel in filter(None, listed.decode().split("\0")):
        src = REPO / rel
        if src.is_file() and not src.is_symlink():
            dest = root / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest)
    copy = Copy(root, None)
    copy.git("init", "-q")
    copy.git("add", "-A")
    copy.git("commit", "-q", "--no-gpg-sign", "-m", "the repository")
    assert copy.changed() == set()
    where = copy.run("-c", "import r3bench, trainers, verifiers; print(r3bench.__file__, trainers.__file__, "
                     "verifiers.__file__)")
    assert all(Path(p).is_relative_to(root) for p in where.split()), f"the copy's modules are not the ones run: {where}"
    return copy


def _hand_edited(copy: Copy, allowed: set[str], at_most: int) -> set[str]:
    edited = copy.changed()
    assert edited <= allowed and len(edited) <= at_most, f"the recipe edited {sorted(edited)}, its row says {sorted(allowed)}"
    return edited


# --- a benchmark ------------------------------------------------------------------------------------------

TOYBENCH_LOADER = '''

def load_toybench(root, file="toybench/toybench.jsonl"):
    """A toy benchmark: one multiple-choice problem per line of a JSON Lines file."""
    rows = _read(Path(root) / file, lambda fh: [json.loads(line) for line in fh if line.strip()],
                 (json.JSONDecodeError, UnicodeDecodeError))
    return [Record(id=f"toybench-{i}", benchmark="toybench", question=r["question"], options=tuple(r["options"]),
                   answer=r["answer"], answer_kind="mcq", source=f"{file}#{i}") for i, r in enumerate(rows)]


# ---- the one benchmark table'''

TOYBENCH_ROWS = (
    '{"question": "A 2 kg mass at 3 m/s has momentum", "options": ["5", "6 kg m/s", "1.5", "9"], "answer": "B"}\n'
    '{"question": "1 N is", "options": ["1 kg m/s^2", "1 J", "1 W", "1 Pa"], "answer": "A"}\n'
    '{"question": "g near Earth is about", "options": ["1 m/s^2", "3 m/s^2", "9.8 m/s^2", "98 m/s^2"], "answer": "C"}\n')


@pytest.fixture()
def toybench_data(tmp_path, shared_data):
    """A data folder: the benchmark data's entries (linked) plus toybench/toybench.jsonl."""
    root = tmp_path / "data"
    root.mkdir()
    for entry in shared_data.iterdir():
        (root / entry.name).symlink_to(entry.resolve(), target_is_directory=entry.is_dir())
    (root / "toybench").mkdir()
    (root / "toybench" / "toybench.jsonl").write_text(TOYBENCH_ROWS, encoding="utf-8")
    return root


def test_a_benchmark_is_two_files_and_one_command(recipe_repo, toybench_data):
    copy = recipe_repo
    copy.data = toybench_data
    copy.edit("r3bench/eval/data.py", "\n\n# ---- the one benchmark table", TOYBENCH_LOADER)
    copy.edit("r3bench/eval/data.py", "\n)}\n\n\nclass TableView",
              '\n    Benchmark("toybench", load_toybench, None),\n)}\n\n\nclass TableView')
    copy.edit("tasks/r3/README.md", "PhysicsQA (every answer kind).\n",
              "PhysicsQA (every answer kind).\n* `r3_toybench`, `r3_toybench_structured`, `r3_toybench_sc`: "
              "a toy benchmark (three multiple-choice problems).\n")
    _hand_edited(copy, {"r3bench/eval/data.py", "tasks/r3/README.md"}, 2)
    copy.run("tasks/r3/_versions.py", "--write")
    generated = copy.changed() - {"r3bench/eval/data.py", "tasks/r3/README.md"}
    assert {"tasks/r3/r3_toybench.yaml", "tasks/r3/versions.json"} <= generated
    assert all(f.startswith("tasks/r3/") or f == "tests/eval/data/task_configs.json" for f in generated), generated
    got = copy.run("-c", "from r3bench.eval import data; print([r.answer for r in data.load('toybench')])")
    assert got.strip() == "['B', 'A', 'C']"
    copy.run("tasks/r3/_versions.py")  # the check: nothing to bump, nothing stale
    copy.pytest("tests/eval/test_task_versions.py", "tests/eval/test_task_yamls.py", "tests/eval/test_benchmark_table.py")


# --- a reward ---------------------------------------------------------------------------------------------

TOY_LEN = '''

class _ToyLen(RewardFunc):
    """1.0 for a completion of at most `max_chars` characters, else 0.0 (a toy: brevity alone)."""

    def __init__(self, max_chars, name):
        super().__init__(name)
        self.max_chars = max_chars

    def _score(self, text, question, row):
        short = len(text) <= self.max_chars
        return (1.0, f"at most {self.max_chars} characters") if short else (0.0, f"over {self.max_chars} characters")


def toy_len_reward_func(max_chars: int = 2000, name: str = "toy_len_reward") -> RewardFunc:
    """The toy brevity reward."""
    return _ToyLen(max_chars, name)


#: name -> factory of a TRL reward function'''


def test_a_reward_is_one_file(recipe_repo):
    copy = recipe_repo
    copy.edit("verifiers/rewards.py", "\n\n#: name -> factory of a TRL reward function", TOY_LEN)
    copy.edit("verifiers/rewards.py", '    "outcome": outcome_reward_func,\n}',
              '    "outcome": outcome_reward_func,\n    "toy_len": toy_len_reward_func,\n}')
    _hand_edited(copy, {"verifiers/rewards.py"}, 1)
    got = copy.run("-c", "from trainers import grpo\nfrom trainers.core.config import make\n"
                   "cfg = make(grpo.Config, rewards='toy_len')\nf = grpo.REWARD_FACTORIES['toy_len'](cfg)\n"
                   "print(f(prompts=['q'], completions=[[{'role': 'assistant', 'content': 'short'}]]))")
    assert got.strip() == "[1.0]"
    # verifiers/rewards.py is under the PDE tasks' metric code: the row's command bumps them
    copy.run("tasks/r3/_versions.py", "--bump", "--why", "a toy reward added to verifiers/rewards.py; no score changes")
    assert all(f.startswith("tasks/r3/") or f == "tests/eval/data/task_configs.json"
               for f in copy.changed() - {"verifiers/rewards.py"}), copy.changed()
    copy.run("tasks/r3/_versions.py")
    copy.pytest("tests/verifiers/test_rewards.py", "tests/verifiers/test_verifiers_layout.py",
                "tests/verifiers/test_reward_hacking_shotgun_and_trailing.py", "tests/trainers/test_reward_table.py",
                "tests/trainers/test_trainers_layout.py", "-k", "reward or layout or registry")


# --- a verifier backend with a setting --------------------------------------------------------------------

MARKER = '''"""The marker backend: the first step that holds a marker (a toy step verifier with one setting)."""
from __future__ import annotations

import os
from dataclasses import dataclass

from verifiers import seventag
from verifiers.verdict import StepVerdict, at_step


@dataclass(frozen=True)
class MarkerConfig:
    """token: the text that marks a wrong step (R3BENCH_MARKER_TOKEN, default "??")."""

    token: str = "??"

    @classmethod
    def from_env(cls, **given) -> "MarkerConfig":
        token = given.get("token") or os.environ.get("R3BENCH_MARKER_TOKEN") or cls.token
        return cls(token=token)


def marker_backend(question, solution, reference, config=None) -> StepVerdict:
    cfg = config or MarkerConfig.from_env()
    sol = seventag.parse(solution or "")
    for k, st in enumerate(sol.steps, start=1):
        if cfg.token in st.content:
            return at_step(k, f"step {k} holds {cfg.token!r}", sol.n)
    return StepVerdict(0, None, "no marker", sol.n)
'''


def test_a_verifier_backend_is_a_module_and_its_register_line(recipe_repo, tmp_path):
    copy = recipe_repo
    copy.write("verifiers/marker.py", MARKER)
    copy.edit("verifiers/steps.py", "from verifiers.judge import ",
              "from verifiers.marker import MarkerConfig, marker_backend\nfrom verifiers.judge import ")
    copy.edit("verifiers/steps.py", "\n\n\ndef verify(",
              '\nregister(Backend("marker", marker_backend, MarkerConfig, oracle=False,\n'
              '                 help="the first step that holds a marker token (a toy)"))\n\n\ndef verify(')
    _hand_edited(copy, {"verifiers/marker.py", "verifiers/steps.py"}, 2)
    # verify(), the CLI with the setting's flag and the trainers' verifier field and its config
    sol = "<principle>p</principle><calculation>x ?? y</calculation>"
    (tmp_path / "in.jsonl").write_text('{"question": "q", "solution": "%s", "reference": ""}\n' % sol, encoding="utf-8")
    got = copy.run("-m", "r3bench.apps.cli", "verify", "--backend", "marker", "--marker-token", "??",
                   "--jsonl", str(tmp_path / "in.jsonl"))
    assert '"first_error": 2' in got, got
    # the trainers' verifier field: validated at load, the backend's config its defaults (a setting reaches a
    # trainer through a `marker_<field>` field of its Config, which the recipe does not add)
    got = copy.run("-c", "from trainers import grpo, judging\nfrom trainers.core.config import make\n"
                   "print(judging.verifier_config(make(grpo.Config, verifier='marker')))")
    assert "MarkerConfig(token='??')" in got, got
    copy.run("tasks/r3/_versions.py")  # no task's metric rests on verifiers.steps: nothing to bump
    copy.pytest("tests/verifiers/test_verifiers_layout.py", "tests/verifiers/test_backend_table.py",
                "tests/repo/test_layers.py")


# --- a trainer ---------------------------------------------------------------------------------------------

TOY_TRAINER = '''"""Toy SFT: LoRA SFT on each completion's first `completion_chars` characters (a tiny SFT variant)."""
from dataclasses import dataclass

from trainers.core.config import BaseConfig
from trainers.core.data import train_rows, user_chat
from trainers.core.entry import entry
from trainers.core.evaluation import callbacks
from trainers.core.mixins import guarded
from trainers.core.model import load_tokenizer, model_path, policy_model, training_args_kwargs
from trainers.errors import ConfigError, option


@dataclass
class Config(BaseConfig):
    output_dir: str = option("runs/toy", "where checkpoints, logs, the final adapter and run.json go")
    completion_chars: int = option(200, "characters of each completion trained on (>= 1)")

    def validate(self):
        if self.completion_chars < 1:
            raise ConfigError(f"completion_chars must be >= 1, got {self.completion_chars}")


def build(cfg, extra_callbacks=()):
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    base = model_path(cfg.model)
    tok = load_tokenizer(base)
    rows, path = train_rows(cfg, "sft.jsonl", ("prompt", "completion"))
    data = Dataset.from_list([{"prompt": user_chat(r["prompt"]), "completion": [
        {"role": "assistant", "content": r["completion"][: cfg.completion_chars]}]} for r in rows])
    args = SFTConfig(**training_args_kwargs(cfg), max_length=cfg.max_length, completion_only_loss=True,
                     packing=False, dataset_num_proc=None)
    trainer = guarded(SFTTrainer)(model=policy_model(cfg, base), args=args, train_dataset=data,
                                  processing_class=tok, callbacks=callbacks(cfg, tok, extra_callbacks))
    return trainer, tok, base, path


train, main = entry(Config, build)

if __name__ == "__main__":
    raise SystemExit(main())
'''


def test_a_trainer_is_its_module_and_a_method_row(recipe_repo, tmp_path):
    copy = recipe_repo
    copy.write("trainers/toy.py", TOY_TRAINER)
    copy.edit("r3bench/core/methods.py", '    Method("grpo", "GRPO", trainer="grpo"),\n',
              '    Method("grpo", "GRPO", trainer="grpo"),\n    Method("toy", "Toy SFT", trainer="toy"),\n')
    _hand_edited(copy, {"trainers/toy.py", "r3bench/core/methods.py"}, 2)
    plan = tmp_path / "plan.yaml"
    plan.write_text("models: [tiny]\nmethods: {toy: {train: {completion_chars: 80}}}\ntasks: [r3_procgen]\n"
                    "train: {max_steps: 2}\n", encoding="utf-8")
    got = copy.run("-c", "import sys\nfrom r3bench.apps import reproduce\n"
                   f"plan = reproduce.load_plan({str(plan)!r})\n"
                   "print(reproduce.check_train_fields(plan), reproduce.train_command(plan, 'toy', 't.yaml', 'python')[1:3])")
    assert got.strip() == "[] ['-m', 'trainers.toy']", got
    copy.pytest("tests/trainers/test_trainers_layout.py", "tests/repo/test_layers.py", "tests/repo/test_tests_layout.py")
