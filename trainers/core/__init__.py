"""What every r3bench trainer shares, in rooms (each imports only those listed before it):

    upstream.py    the contract with transformers / TRL beyond their public API: the private methods
                   overridden or called (isolated here, checked by tests/trainers/test_upstream.py), mirrored names
    config.py      BaseConfig, YAML + CLI parsing (`parse`, `make`, `--help`), renamed fields
    data.py        JSONL reading, the data file of a config (procgen export on demand), train rows
    model.py       names -> folders, tokenizer, base, LoRA / full fine-tuning, reference, TrainingArguments
    memory.py      glibc's mmap threshold (`malloc_mmap_threshold`), peak resident memory
    evaluation.py  metrics.jsonl and lm-eval callbacks, `evaluate_model`, the lm_eval scoring command
    mixins.py      GuardMixin (NaN stop, run state beside checkpoints), `guarded`, TimingMixin,
                   nothing_to_learn, PhaseProgress
    records.py     run.json (`write_run`; the end status decided once: `status_of`, `recorded`), resume
                   (intact checkpoints only), whole-run loss, model card, the judge-budget stop
    entry.py       `entry(Config, build)` -> (train, main), `run_training`, the CLI `main` (exit codes)

A trainer is a config/trainer pair: a Config dataclass (a subclass of BaseConfig) and a `build(cfg)`
that makes the HF/TRL Trainer (its class guarded: `guarded(SFTTrainer)`, or a module-level class
such as stepfix_trainer.StepFixTrainer); `train, main = entry(Config, build)` gives the module its
`train(cfg)` and its CLI:

    python -m trainers.sft --config trainers/configs/sft.yaml --max_steps 20 --output_dir runs/sft

* Config: YAML file (`--config`) then CLI flags (one per field, `--help` lists them all with their
  help text); an unknown YAML key or a bad value is a clear error before anything loads.
* Data: `data` is a procedural-bank export folder (`r3bench procgen --out DIR`) or one JSONL file;
  empty means "export the bank (procgen_n, procgen_seed) into OUTPUT_DIR/data". Corrupt lines stop
  the run with file and line number.
* Model: `model` is a short name of r3bench.core.models (default SmolLM2-135M-Instruct), a local HF
  folder, or a hub id (users with a hub). LoRA (peft) on all linear layers by default;
  `init_adapter` continues training an existing adapter (the SFT one for DPO/stepfix/GRPO).
* Logs: OUTPUT_DIR/metrics.jsonl (every logged dict, appended across resumes: steps run after the
  last checkpoint of a crashed run appear again after the resume, and the later record is the one
  that counts; the same holds for stepfix_samples.jsonl), TensorBoard when installed, tqdm
  progress bars (HF Trainer's).
* Checkpoints every `save_steps`; `--resume` continues from the newest *intact* one with optimizer,
  scheduler, RNG and data position (HF Trainer's resume_from_checkpoint), so a resumed run equals an
  uninterrupted one. A newer checkpoint half-written by a killed run is moved aside to
  broken-checkpoint-N and named in a warning and in run.json (`checkpoint_problems`). The run's
  `train_loss` covers every step, also after a resume (the loss sum travels in r3bench_state.json).
* Guards: a non-finite loss raises NonFiniteLoss before the optimizer step; `main` records it in
  run.json and exits 2, leaving the last checkpoint as it was.
* Evaluation: lm-eval's simple_evaluate of the current adapter on `eval_tasks` every `eval_steps`
  and at the end (main process only), results in OUTPUT_DIR/eval/step-N.json and metrics.jsonl.
  Off by default (`eval_tasks` empty): with SmolLM2-135M on a 2-core CPU, r3_procgen's 20 problems
  x 512 tokens were estimated at 1 h 33 min. A run without it says so at the end and prints the
  lm_eval command that scores its adapter; a run with it prints the rough CPU cost first.
* Renamed fields: a Config's `renamed` maps old field names to new ones (the KL coefficient is
  `beta` in every trainer, as in TRL; grpo's `kl_coef` and dpo's `tau` are the old names). An old
  name in a YAML file, a CLI flag or `make` still works, with a FutureWarning naming the new one.
* Costs: each Config's `costs` says what its long steps cost on a CPU; `--help` prints it.
* Timing: TimingMixin keeps seconds per phase of the training steps (stepfix, GRPO) and logs them
  as time_<phase>_s and share_<phase>.
* Run record: OUTPUT_DIR/run.json (config, status, git commit, package versions, data sha256,
  the final adapter and the lm_eval --model_args that score it). Status, written whatever happens:
  running, finished, error (config/data), non_finite_loss, judge_budget_spent (the LLM judge's
  budget ran out: exit 3, its stats and the checkpoint to resume from beside it; trainers.judging),
  or interrupted (any exception or KeyboardInterrupt, with the error). With `verifier: judge` the
  judge's stats (requests, dropped by cause, tokens, cost) are run.json's `judge`.
* `python -m trainers.X --help` lists every field once with its default; flags are exact
  (no abbreviations). `init_adapter` naming no adapter fails before any load, with the command
  that makes the SFT adapter.

Under `accelerate launch` the HF Trainer handles devices and processes; bf16 is used when CUDA with
bf16 support is present (`bf16: auto`).

This package re-exports nothing: import the room (`from trainers.core import config`).
"""
