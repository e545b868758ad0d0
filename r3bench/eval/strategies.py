"""Inference strategies as lm-eval models: RAG, StepCo's verify-then-revise, Best-of-N.

Each is an lm-eval `LM` that wraps an inner lm-eval model (`hf`, `vllm`, `local-chat-completions`,
or any other registered name) and runs a multi-call procedure per problem inside `generate_until`;
only the final answer reaches lm-eval, so any r3bench task scores it exactly like a plain model:

    lm_eval --model r3-rag     --model_args inner=hf,pretrained=r3bench/smollm2-135m-instruct,k=3,index=DIR
    lm_eval --model r3-stepco  --model_args inner=hf,pretrained=...,verifier=psv,psv_model=DIR,threshold=0.5,rounds=5
    lm_eval --model r3-bestofn --model_args inner=hf,pretrained=...,n=10,scorer=psv|symbolic|judge|vote

Our own arguments are taken out of `--model_args`; everything else (pretrained, dtype, base_url,
peft, ...) and lm-eval's batch_size / device go to the inner model. The names (NAMES) are registered
with lm-eval's model registry by r3bench's import hook (r3bench/eval/hook.py), lazily, so plain
`lm_eval --model r3-stepco` finds them.

Strategies (all open choices are arguments; the defaults follow the papers where they say):

* r3-rag: the top-k hits of the retrieval index (`python -m trainers.rag`; formulas, worked
  solutions or both: `source=`) are put in front of the prompt (in the first user turn under a chat
  template). The problem's own worked solution is never retrieved.
* r3-stepco (StepCo): generate a seven-tag solution; the verifier scores every step; if all steps
  score >= threshold, accept; else keep the steps before the first failing step k, tell the model k
  and its score, and let it rewrite step k and everything after (the kept steps are prefilled as
  the start of its answer: `prefill=true`, the default for hf/vllm; an API inner gets the kept
  steps quoted in the feedback instead). At most `rounds` revisions (default 5) after the first
  attempt; stop early when two consecutive final answers agree (unit-aware, as maj@k votes). The
  last solution is the answer.
* r3-bestofn: n samples (temperature, default 0.7; API inners get seed sample_seed + i, distinct per
  sample and per repeat of a request); the one with the best verifier score wins
  (`agg`: min / prod / mean / last over step scores; default min for the PSV, as a PRM is used, and
  mean - the share of steps before the first error - for pass/fail verifiers); `scorer=vote` picks by
  unit-aware majority vote instead. Both picks are recorded in the trace whatever the scorer.

Verifiers: `psv` (StepCo's process-supervised verifier, `psv_model=DIR`, see verifiers/psv.py and
`python -m trainers.psv`), `symbolic` and `judge` (verifiers/steps.py). `symbolic` and `judge`
compare with the task's reference solution (doc["solution"]): they are ORACLE verifiers (they see
the reference), recorded as such in every trace line and in the results' config; use `psv` for the
method as published. A problem without a seven-tag reference gets "nothing to verify against" from
the symbolic verifier and is accepted as is (the trace says so).

Tokens: every problem's prompt and generated tokens are counted with the inner model's tokenizer
(hf, vllm, an API inner with a huggingface tokenizer backend), or with `count_tokenizer=PATH`; failing
both, whitespace words are counted and the trace says `token_unit: words`. The means go into the
results file (config.r3bench_strategy) and every round into the trace.

Traces: one JSONL line per problem (task, doc_id, every round: prompt and generated tokens,
response, step scores, feedback, answer key; the stop reason; errors) in `trace=PATH`, or else beside
lm-eval's samples: OUTPUT_PATH/<model name>/traces_<strategy>_<time>.jsonl (OUTPUT_PATH from
lm_eval's --output_path), or else ./r3bench-traces/. A failure of the inner model on one request is
recorded in that problem's trace (its answer is then empty and scores 0 through the task); it does not
stop the run. When the inner model fails on every request before anything was generated (server down,
a chat API without --apply_chat_template), the run stops with that error instead of scoring nothing.

Under several processes (accelerate), each rank writes its own trace file (_rank<r>) and the token
means in the results config are rank 0's. Do not combine `--cache_requests` with
`--apply_chat_template`: cached contexts skip apply_chat_template, so multi-turn revisions would be
appended to an already rendered chat as plain text. Loglikelihood (multiple-choice) requests go to
the inner model unchanged for StepCo and Best-of-N, and with the retrieved block for RAG.
"""
from __future__ import annotations

import abc
import copy
import datetime as _dt
import json
import math
import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from lm_eval.api.instance import Instance
from lm_eval.api.model import LM

from r3bench.core import seventag

NAMES = {"r3-rag": "RagLM", "r3-stepco": "StepCoLM", "r3-bestofn": "BestOfNLM"}
VERIFIERS = ("psv", "symbolic", "judge")
ORACLE = ("symbolic", "judge")  # they read the reference solution
AGGS = ("min", "prod", "mean", "last")

FEEDBACK = ("A verifier checked your solution step by step. Step {k} ({tag}) is probably wrong: it scores "
            "{score:.2f}, below the threshold {thr:g}. {kept}Rewrite step {k} and every step after it, in the "
            "same seven-tag format.")
KEPT_SOME = "Steps 1 to {j} are kept as they are. "
FEEDBACK_NO_STEPS = ("A verifier could not find the seven tagged steps in your solution, so no step could be "
                     "checked. Write the whole solution again in this format.\n" + seventag.CONVENTIONS)
KEPT = "\n\nThe steps kept:\n{steps}"
REVISED = "Revised solution:"


def _bool(v) -> bool:
    return v if isinstance(v, bool) else str(v).strip().lower() in ("1", "true", "yes", "on")


def _log(msg: str):
    print(f"[r3bench] {msg}", file=sys.stderr, flush=True)


# --- prompts: plain text or a chat history --------------------------------------------------------

@dataclass(frozen=True)
class Prompt:
    """What one inner call is asked: a text context, or chat messages (rendered by the inner model)."""
    text: str | None = None
    messages: tuple | None = None  # of {"role", "content"} dicts

    def prepend(self, block: str) -> "Prompt":
        if not block:
            return self
        if self.messages is None:
            return Prompt(text=f"{block}\n\n{self.text}")
        msgs = [dict(m) for m in self.messages]
        i = next((j for j, m in enumerate(msgs) if m["role"] == "user"), None)
        if i is None:
            msgs.insert(0, {"role": "user", "content": block})
        else:
            msgs[i]["content"] = f"{block}\n\n{msgs[i]['content']}"
        return Prompt(messages=tuple(msgs))

    def follow_up(self, response: str, user: str) -> "Prompt":
        if self.messages is None:
            return Prompt(text=f"{self.text}{response}\n\n{user}\n\n{REVISED}\n")
        return Prompt(messages=self.messages + ({"role": "assistant", "content": response},
                                                {"role": "user", "content": user}))

    def render(self, inner, prefill: str = ""):
        if self.messages is None:
            return self.text + prefill
        msgs = [dict(m) for m in self.messages]
        if prefill:
            return inner.apply_chat_template(msgs + [{"role": "assistant", "content": prefill}],
                                             add_generation_prompt=False)
        return inner.apply_chat_template(msgs)


def _context_text(ctx) -> str:
    return ctx.prompt if hasattr(ctx, "prompt") and not isinstance(ctx, str) else str(ctx)


# --- one problem's state and trace ----------------------------------------------------------------

@dataclass
class Problem:
    index: int
    request: Instance
    prompt: Prompt
    gen_kwargs: dict
    doc: dict
    question: str
    reference: str
    rounds: list = field(default_factory=list)
    gen_tokens: int = 0
    prompt_tokens: int = 0
    calls: int = 0
    errors: list = field(default_factory=list)
    final: str = ""
    stop: str = ""
    extra: dict = field(default_factory=dict)

    def record(self) -> dict:
        r = self.request
        return {"task": r.task_name, "doc_id": r.doc_id, "doc_key": self.doc.get("id"), "question": self.question[:500],
                "final": self.final, "stop": self.stop, "n_rounds": len(self.rounds), "calls": self.calls,
                "gen_tokens": self.gen_tokens, "prompt_tokens": self.prompt_tokens, "errors": self.errors,
                "rounds": self.rounds, **self.extra}


def answer_key(doc: dict, text: str):
    """Unit-aware key of a solution's final answer (as maj@k votes); None when there is none."""
    if not text:
        return None
    try:
        if doc.get("answer_kind"):
            from verifiers import canonical
            return canonical(text, doc["answer_kind"], ref=doc.get("answer"))
        from verifiers import extract_answer
        a = extract_answer(text)
        return a.strip() if a else None
    except Exception:  # noqa: BLE001 - a key is best effort: no key, no early stop / vote
        return None


def _jsonable_key(k):
    return list(k) if isinstance(k, tuple) else k


# --- scoring solutions with a verifier -----------------------------------------------------------

class Scorer:
    """Per-step scores of a seven-tag solution from one of the step verifiers."""

    def __init__(self, kind: str, psv_model: str | None = None, threshold: float = 0.5, psv_device: str = "cpu"):
        if kind not in VERIFIERS:
            raise ValueError(f"unknown verifier {kind!r} (have: {', '.join(VERIFIERS)})")
        self.kind, self.threshold, self.oracle = kind, float(threshold), kind in ORACLE
        self.psv = None
        if kind == "psv":
            model = psv_model or os.environ.get("R3BENCH_PSV_MODEL")
            if not model:
                raise ValueError("verifier=psv needs psv_model=DIR (train one with python -m trainers.psv) "
                                 "or R3BENCH_PSV_MODEL")
            from verifiers.psv import PSV
            self.psv = PSV(model, threshold=self.threshold, device=psv_device)

    def steps(self, question: str, solution: str, reference: str) -> dict:
        """{"scores": one per step of the solution (document order), "valid", "explanation"}; never raises.

        A pass/fail verifier names the first wrong step by its tag's position in the seven-tag order
        (a missing governing_equation is "step 3" even when only two tags are present): every present
        step at or after that position scores 0, and when the wrong step is absent (the solution
        stopped early or skipped it) a 0 is appended, so that such a solution is never accepted."""
        if self.psv is not None:
            try:
                return {"scores": self.psv.step_scores(question, solution), "valid": True, "explanation": "psv"}
            except Exception as e:  # noqa: BLE001 - a verifier failure is recorded, not fatal
                return {"scores": [], "valid": False, "explanation": f"psv error: {type(e).__name__}: {e}"[:300]}
        from verifiers.steps import verify
        v = verify(question, solution, reference, backend=self.kind)
        if not v.valid:
            return {"scores": [], "valid": False, "explanation": v.explanation}
        pos = [seventag.TAGS.index(st.tag) + 1 for st in seventag.parse(solution or "").steps]
        if v.first_error:
            scores = [0.0 if k >= v.first_error else 1.0 for k in pos]
            if 0.0 not in scores:
                scores.append(0.0)
        else:
            scores = [1.0] * len(pos)
        return {"scores": scores, "valid": True, "explanation": v.explanation, "error_class": v.error_class,
                "first_error": v.first_error,
                "failing_tag": seventag.TAGS[v.first_error - 1] if 0 < v.first_error <= len(seventag.TAGS) else None}

    def first_failing(self, scores: list) -> int | None:
        """1-based index of the first step under the threshold; 1 when there are no steps; None = accept."""
        if not scores:
            return 1
        return next((k for k, s in enumerate(scores, start=1) if s < self.threshold), None)

    @staticmethod
    def aggregate(scores: list, how: str = "min") -> float:
        if not scores:
            return 0.0
        if how == "min":
            return float(min(scores))
        if how == "prod":
            return float(math.prod(scores))
        if how == "mean":
            return float(sum(scores) / len(scores))
        if how == "last":
            return float(scores[-1])
        raise ValueError(f"unknown aggregation {how!r} (have: {', '.join(AGGS)})")


# --- the shared wrapper ----------------------------------------------------------------------------

def make_inner(name: str, args: dict, extra: dict) -> LM:
    from lm_eval.api.registry import get_model

    if name in NAMES:
        raise ValueError(f"inner={name} would wrap a strategy in itself; give a plain model (hf, vllm, ...)")
    return get_model(name).create_from_arg_obj(args, extra)


def _output_path_from_argv(argv) -> str | None:
    for i, a in enumerate(argv):
        if a in ("--output_path", "-o") and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--output_path="):
            return a.split("=", 1)[1]
    return None


class StrategyLM(LM):
    """Shared plumbing: the inner model, chat templates, batched inner calls with per-request
    fallback, token counting, traces. Subclasses implement `solve(problems)`."""

    NAME = "strategy"

    def __init__(self, inner="hf", trace: str | None = None, count_tokenizer: str | None = None,
                 batch_size=None, max_batch_size=None, device=None, **inner_args):
        super().__init__()
        self.inner_name = inner if isinstance(inner, str) else type(inner).__name__
        if isinstance(inner, LM):
            self.inner = inner
        else:
            extra = {"batch_size": batch_size, "max_batch_size": max_batch_size, "device": device}
            self.inner = make_inner(inner, inner_args, extra)
        self.inner_args = {k: v for k, v in inner_args.items()}
        self._chats: dict = {}
        self._any_output = False
        self._count_tok = None
        self.token_unit = "tokens"
        if count_tokenizer:
            from transformers import AutoTokenizer
            self._count_tok = AutoTokenizer.from_pretrained(count_tokenizer)
        elif not self._inner_counts_tokens():
            self.token_unit = "words"
        self.trace_path = Path(trace) if trace else None
        self.summary = {"problems": 0, "gen_tokens": 0, "prompt_tokens": 0, "calls": 0, "rounds": 0, "errors": 0}
        self._rank = getattr(self.inner, "rank", 0)
        self._world_size = getattr(self.inner, "world_size", 1)

    # lm-eval plumbing ----------------------------------------------------------------------------
    @property
    def rank(self):
        return self._rank

    @property
    def world_size(self):
        return self._world_size

    @property
    def device(self):
        return getattr(self.inner, "device", None)

    def all_gather(self, tensor):
        return self.inner.all_gather(tensor)

    def gather_object(self, obj, dst=0):
        return self.inner.gather_object(obj, dst)

    def barrier(self):
        return self.inner.barrier()

    @property
    def tokenizer_name(self) -> str:
        return f"{self.NAME}:{self.inner.tokenizer_name}"

    def chat_template(self, chat_template=False):
        return self.inner.chat_template(chat_template)

    def apply_chat_template(self, chat_history, add_generation_prompt=True):
        out = self.inner.apply_chat_template(chat_history, add_generation_prompt=add_generation_prompt)
        try:
            self._chats[out] = tuple(dict(m) for m in chat_history)
        except TypeError:  # an unhashable rendering (remote tokenizer backends): read back as messages
            pass
        return out

    def loglikelihood(self, requests):
        return self.inner.loglikelihood(requests)

    def loglikelihood_rolling(self, requests):
        return self.inner.loglikelihood_rolling(requests)

    def get_model_info(self) -> dict:
        n = max(1, self.summary["problems"])
        info = {"strategy": self.NAME, "inner": self.inner_name, "token_unit": self.token_unit,
                **self.settings(), "trace": str(self.trace_path) if self.trace_path else None,
                **self.summary, "gen_tokens_per_problem": self.summary["gen_tokens"] / n,
                "prompt_tokens_per_problem": self.summary["prompt_tokens"] / n,
                "calls_per_problem": self.summary["calls"] / n}
        out = {"r3bench_strategy": info}
        if hasattr(self.inner, "get_model_info"):
            try:
                out.update(self.inner.get_model_info())
            except Exception:  # noqa: BLE001 - model info is best effort
                pass
        return out

    def settings(self) -> dict:
        return {}

    # prompts ---------------------------------------------------------------------------------------
    def _prompt_of(self, ctx) -> Prompt:
        if not isinstance(ctx, str) and hasattr(ctx, "prompt"):  # lm-eval's JsonChatStr (API chat models)
            try:
                return Prompt(messages=tuple(json.loads(ctx.prompt)))
            except ValueError:
                return Prompt(text=ctx.prompt)
        if isinstance(ctx, (list, tuple)) and ctx and isinstance(ctx[0], dict):
            return Prompt(messages=tuple(ctx))
        hist = self._chats.get(ctx)
        return Prompt(messages=hist) if hist is not None else Prompt(text=str(ctx))

    # tokens ----------------------------------------------------------------------------------------
    def _inner_counts_tokens(self) -> bool:
        backend = getattr(self.inner, "tokenizer_backend", "huggingface")
        return hasattr(self.inner, "tok_encode") and backend == "huggingface"

    def ntokens(self, text) -> int:
        if text is None:
            return 0
        if not isinstance(text, str):
            text = _context_text(text)
        if self._count_tok is not None:
            return len(self._count_tok(text, add_special_tokens=False)["input_ids"])
        if self.token_unit == "tokens":
            try:
                return len(self.inner.tok_encode(text, add_special_tokens=False))
            except TypeError:
                return len(self.inner.tok_encode(text))
        return len(text.split())

    # inner calls -----------------------------------------------------------------------------------
    def generate(self, items: list[tuple[Problem, Prompt, str, dict]], label: str) -> list[str | None]:
        """One batched inner generate_until over (problem, prompt, prefill, gen_kwargs); the prefill is
        part of the returned text. A failing batch is retried request by request; a request that
        still fails returns None and is recorded in its problem's errors."""
        if not items:
            return []
        reqs, ok_items = [], []
        for it in items:
            p, prompt, prefill, gk = it
            try:
                ctx = prompt.render(self.inner, prefill)
            except Exception as e:  # noqa: BLE001 - a template that cannot render this turn: this problem only
                p.errors.append({"call": label, "error": f"prompt render: {type(e).__name__}: {e}"[:500]})
                continue
            reqs.append(Instance("generate_until", p.doc, (ctx, gk), p.index,
                                 (p.request.task_name, p.request.doc_id, 1)))
            ok_items.append(it)
        t0 = time.time()
        outs = []
        if reqs:
            try:
                outs = list(self.inner.generate_until(reqs))
                if len(outs) != len(reqs):
                    raise RuntimeError(f"inner model returned {len(outs)} responses for {len(reqs)} requests")
            except Exception as e:  # noqa: BLE001 - isolate the failing request(s)
                _log(f"{self.NAME} {label}: a batch of {len(reqs)} failed ({type(e).__name__}: {e}); retrying one by one")
                outs = []
                for (p, *_), r in zip(ok_items, reqs):
                    try:
                        outs.append(list(self.inner.generate_until([r]))[0])
                    except Exception as e1:  # noqa: BLE001
                        p.errors.append({"call": label, "error": f"{type(e1).__name__}: {e1}"[:500]})
                        outs.append(None)
        if any(o is not None for o in outs):
            self._any_output = True
        elif len(items) > 1 and not self._any_output:  # nothing at all generated yet: a setup error, not one bad request
            first = next((p.errors[-1]["error"] for p, *_ in items if p.errors), "no response")
            raise RuntimeError(f"{self.NAME}: the inner model failed on all {len(items)} requests of {label} "
                               f"(first: {first}); not scoring a run in which nothing was generated")
        dt = time.time() - t0
        by_id = {id(it): (r, o) for it, r, o in zip(ok_items, reqs, outs)}
        texts = []
        for it in items:
            p, prompt, prefill, gk = it
            if id(it) not in by_id:
                texts.append(None)
                continue
            r, out = by_id[id(it)]
            p.calls += 1
            p.prompt_tokens += self.ntokens(r.args[0])
            if out is None:
                texts.append(None)
                continue
            if not isinstance(out, str):
                p.errors.append({"call": label, "error": f"inner model returned {type(out).__name__}, not text"})
                texts.append(None)
                continue
            p.gen_tokens += self.ntokens(out)
            texts.append(prefill + out)
        _log(f"{self.NAME} {label}: {len(items)} generations in {dt:.1f} s")
        return texts

    # lm-eval entry ---------------------------------------------------------------------------------
    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        probs = []
        for i, r in enumerate(requests):
            ctx, gk = r.args[0], dict(r.args[1] or {})
            doc = r.doc if isinstance(r.doc, dict) else {}
            prompt = self._prompt_of(ctx)
            q = str(doc.get("question") or _context_text(ctx))
            probs.append(Problem(i, r, prompt, gk, doc, q, str(doc.get("solution") or "")))
        t0 = time.time()
        self.solve(probs)
        for p in probs:
            if p.final is None:
                p.final = ""
            self.summary["problems"] += 1
            self.summary["gen_tokens"] += p.gen_tokens
            self.summary["prompt_tokens"] += p.prompt_tokens
            self.summary["calls"] += p.calls
            self.summary["rounds"] += len(p.rounds)
            self.summary["errors"] += bool(p.errors)
        self._write_traces(probs)
        _log(f"{self.NAME}: {len(probs)} problems in {time.time() - t0:.1f} s, "
             f"{sum(p.gen_tokens for p in probs) / max(1, len(probs)):.0f} generated {self.token_unit} per problem"
             + (f"; trace: {self.trace_path}" if self.trace_path else ""))
        return [p.final for p in probs]

    @abc.abstractmethod
    def solve(self, problems: list[Problem]) -> None:
        """Fill each problem's final answer, rounds and stop reason (the strategy itself)."""

    # traces ----------------------------------------------------------------------------------------
    def _default_trace_path(self) -> Path:
        stamp = _dt.datetime.now().isoformat().replace(":", "-")
        out = _output_path_from_argv(sys.argv)
        if out:
            base = Path(out)
            if base.suffix == ".json":  # lm-eval then writes its samples beside that file, without a model folder
                return base.parent / f"traces_{self.NAME}_{stamp}.jsonl"
            name = None
            try:  # lm-eval's own folder name: the first of peft, delta, pretrained, model, path, engine
                from lm_eval.loggers.evaluation_tracker import GeneralConfigTracker
                from lm_eval.utils import sanitize_model_name
                name = GeneralConfigTracker._get_model_name(self.inner_args)
                name = sanitize_model_name(str(name)) if name else None
            except Exception:  # noqa: BLE001 - lm-eval internals moved: fall back to the pretrained name
                n = self.inner_args.get("pretrained") or self.inner_args.get("model")
                name = str(n).replace("/", "__") if n else None
            return base / (name or self.NAME) / f"traces_{self.NAME}_{stamp}.jsonl"
        return Path("r3bench-traces") / f"traces_{self.NAME}_{stamp}.jsonl"

    def _write_traces(self, probs):
        if self.trace_path is None:
            self.trace_path = self._default_trace_path()
            if self.world_size > 1:  # one file per process (each holds its share of the requests)
                self.trace_path = self.trace_path.with_name(f"{self.trace_path.stem}_rank{self.rank}.jsonl")
        try:
            self.trace_path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.trace_path, "a", encoding="utf-8") as f:
                for p in probs:
                    rec = {"strategy": self.NAME, "token_unit": self.token_unit, **self.settings(), **p.record()}
                    f.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")
        except (OSError, TypeError, ValueError) as e:
            warnings.warn(f"r3bench: could not write the trace to {self.trace_path}: {e}", RuntimeWarning)


# --- RAG -------------------------------------------------------------------------------------------

class RagLM(StrategyLM):
    NAME = "rag"

    def __init__(self, k=3, index=None, source="formulas", **kw):
        super().__init__(**kw)
        from r3bench.eval.retrieval import SOURCES, Index
        if source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}, got {source!r}")
        self.k, self.source = int(k), source
        self.index = Index(index)
        self.index.require(source)

    def settings(self):
        return {"k": self.k, "source": self.source, "index": self.index.manifest()}

    def _augment(self, question: str, prompt: Prompt, doc_id: str | None = None) -> tuple[Prompt, list]:
        hits = self.index.query(question, k=self.k, source=self.source, exclude_question=question, exclude_id=doc_id)
        from r3bench.eval.retrieval import Index
        return prompt.prepend(Index.render(hits)), hits

    def solve(self, problems):
        items = []
        for p in problems:
            try:
                prompt, hits = self._augment(p.question, p.prompt, p.doc.get("id"))
            except Exception as e:  # noqa: BLE001 - retrieval failure: answer without context, recorded
                prompt, hits = p.prompt, []
                p.errors.append({"call": "retrieve", "error": f"{type(e).__name__}: {e}"[:500]})
            p.extra["retrieved"] = [{"source": h.source, "id": h.id, "topic": h.topic, "distance": round(h.distance, 4)}
                                    for h in hits]
            items.append((p, prompt, "", p.gen_kwargs))
        for p, text in zip(problems, self.generate(items, "generate")):
            p.final = text or ""
            p.stop = "generated" if text is not None else "inner model failed"
            p.rounds.append({"round": 0, "response": p.final, "gen_tokens": p.gen_tokens,
                             "prompt_tokens": p.prompt_tokens})

    def loglikelihood(self, requests):
        # multiple-choice (loglikelihood) tasks: the same retrieved context in front of each context
        out = []
        for r in requests:
            ctx, cont = r.args
            doc = r.doc if isinstance(r.doc, dict) else {}
            try:
                block = self._augment(str(doc.get("question") or ctx), Prompt(text=""), doc.get("id"))[0].text.rstrip()
                ctx2 = self._prompt_of(ctx).prepend(block).render(self.inner) if block else ctx
            except Exception:  # noqa: BLE001 - no context for this request rather than a crashed run
                ctx2 = ctx
            out.append(Instance(r.request_type, r.doc, (ctx2, cont), r.idx, (r.task_name, r.doc_id, r.repeats)))
        return self.inner.loglikelihood(out)


# --- StepCo ---------------------------------------------------------------------------------------

class StepCoLM(StrategyLM):
    NAME = "stepco"

    def __init__(self, verifier="psv", psv_model=None, threshold=0.5, rounds=5, prefill=None, psv_device="cpu", **kw):
        super().__init__(**kw)
        self.scorer = Scorer(verifier, psv_model, float(threshold), psv_device)
        self.max_rounds = int(rounds)
        if self.max_rounds < 0:
            raise ValueError(f"rounds must be >= 0, got {rounds}")
        # an API model may not continue a prefilled assistant turn: quote the kept steps instead
        self.prefill = _bool(prefill) if prefill is not None else self.inner_name not in (
            "local-chat-completions", "openai-chat-completions", "local-completions", "openai-completions")

    def settings(self):
        return {"verifier": self.scorer.kind, "oracle_verifier": self.scorer.oracle, "threshold": self.scorer.threshold,
                "max_rounds": self.max_rounds, "prefill": self.prefill}

    def _score(self, p: Problem, text: str, rnd: int, tokens_before: tuple) -> dict:
        s = self.scorer.steps(p.question, text, p.reference)
        k = self.scorer.first_failing(s["scores"]) if s["valid"] else None
        key = answer_key(p.doc, text)
        entry = {"round": rnd, "response": text, "step_scores": [round(x, 4) for x in s["scores"]],
                 "verifier": s["explanation"][:300], "verdict_valid": s["valid"], "first_failing": k,
                 "failing_tag": s.get("failing_tag"),
                 "answer": _jsonable_key(key), "gen_tokens": p.gen_tokens - tokens_before[0],
                 "prompt_tokens": p.prompt_tokens - tokens_before[1]}
        p.rounds.append(entry)
        return entry

    def _revision(self, p: Problem, prev: str, entry: dict) -> tuple[Prompt, str, str, str]:
        """(prompt, prefill, feedback, kept steps) for revising `prev` from its first failing step."""
        sol = seventag.parse(prev or "")
        k = entry["first_failing"]
        if not sol.steps:
            fb = FEEDBACK_NO_STEPS
            return p.prompt.follow_up(prev, fb), "", fb, ""
        kept = sol.steps[:k - 1]
        score = entry["step_scores"][k - 1] if k - 1 < len(entry["step_scores"]) else 0.0
        # the failing step's own tag (a PSV's k is a position in the document; a missing step has its name
        # from the verifier)
        tag = sol.steps[k - 1].tag if k <= len(sol.steps) else (entry.get("failing_tag") or "the next step")
        fb = FEEDBACK.format(k=k, tag=tag, score=score, thr=self.scorer.threshold,
                             kept=KEPT_SOME.format(j=k - 1) if k > 1 else "")
        kept_text = seventag.render(kept) + "\n" if kept else ""
        if self.prefill:
            return p.prompt.follow_up(prev, fb), kept_text, fb, kept_text
        if kept_text:
            fb = fb + KEPT.format(steps=kept_text.strip())
        return p.prompt.follow_up(prev, fb), "", fb, kept_text

    @staticmethod
    def _with_kept(text: str, kept_text: str) -> str:
        """Without a prefill the model may (as told) write only steps k..: put the kept steps back in front."""
        if not kept_text:
            return text
        got, kept = seventag.parse(text or "").steps, seventag.parse(kept_text).steps
        if got and kept and got[0].tag == kept[0].tag:
            return text  # it restated the whole solution
        return kept_text + text

    def solve(self, problems):
        if problems and not any("<problem_analysis>" in (p.prompt.text or json.dumps(p.prompt.messages))
                                for p in problems[:5]):
            _log("stepco: the task's prompt does not ask for the seven-tag format, so first attempts will "
                 "rarely have verifiable steps; the *_structured tasks (e.g. r3_jeebench_structured) do")
        last: dict[int, dict] = {}
        texts = self.generate([(p, p.prompt, "", p.gen_kwargs) for p in problems], "round 0")
        for p, t in zip(problems, texts):
            p.final = t or ""
            if t is None:
                p.stop = "inner model failed"
                continue
            last[p.index] = self._score(p, t, 0, (0, 0))
        active = [p for p in problems if p.index in last and self._needs_revision(p, last[p.index])]
        for rnd in range(1, self.max_rounds + 1):
            if not active:
                break
            _log(f"stepco round {rnd}: revising {len(active)} of {len(problems)} problems")
            items, kept, before = [], {}, {}
            for p in active:
                prompt, prefill, fb, kept[p.index] = self._revision(p, p.final, last[p.index])
                last[p.index]["feedback"] = fb
                items.append((p, prompt, prefill, p.gen_kwargs))
                before[p.index] = (p.gen_tokens, p.prompt_tokens)
            texts = self.generate(items, f"round {rnd}")
            nxt = []
            for p, t in zip(active, texts):
                if t is None:
                    p.stop = f"inner model failed in round {rnd}; kept round {rnd - 1}"
                    p.rounds.append({"round": rnd, "response": None, "error": p.errors[-1]["error"] if p.errors else "",
                                     "gen_tokens": p.gen_tokens - before[p.index][0],
                                     "prompt_tokens": p.prompt_tokens - before[p.index][1]})
                    continue
                if not self.prefill:
                    t = self._with_kept(t, kept[p.index])
                prev_key = last[p.index]["answer"]
                p.final = t
                e = last[p.index] = self._score(p, t, rnd, before[p.index])
                if prev_key is not None and e["answer"] == prev_key:
                    p.stop = f"two consecutive answers agree (rounds {rnd - 1} and {rnd})"
                elif self._needs_revision(p, e):
                    nxt.append(p)
            active = nxt
        for p in active:
            p.stop = f"round limit ({self.max_rounds} revisions) reached"

    def _needs_revision(self, p: Problem, e: dict) -> bool:
        if not e["verdict_valid"]:
            p.stop = f"no verdict from the verifier ({e['verifier'][:120]}); kept as is"
            p.errors.append({"call": f"verify round {e['round']}", "error": e["verifier"]})
            return False
        if e["first_failing"] is None:
            p.stop = f"accepted: every step scores >= {self.scorer.threshold:g} (round {e['round']})"
            return False
        return True


# --- Best-of-N -------------------------------------------------------------------------------------

class BestOfNLM(StrategyLM):
    NAME = "bestofn"

    def __init__(self, n=10, scorer="psv", psv_model=None, agg=None, temperature=0.7, top_p=None, sample_seed=1234,
                 threshold=0.5, psv_device="cpu", **kw):
        super().__init__(**kw)
        # a PRM's solution score is its weakest step; a pass/fail verifier scores the share of steps
        # before its first error (so that, among wrong samples, the one wrong latest ranks first)
        agg = agg or ("min" if scorer == "psv" else "mean")
        self.n, self.agg, self.temperature, self.seed = int(n), agg, float(temperature), int(sample_seed)
        if not self.temperature > 0:
            raise ValueError(f"temperature must be > 0 for sampling, got {temperature}")
        self.top_p = None if top_p is None else float(top_p)
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        if agg not in AGGS:
            raise ValueError(f"agg must be one of {AGGS}, got {agg!r}")
        if scorer != "vote" and scorer not in VERIFIERS:
            raise ValueError(f"scorer must be vote or one of {VERIFIERS}, got {scorer!r}")
        self.scorer_name = scorer
        self.scorer = None if scorer == "vote" else Scorer(scorer, psv_model, float(threshold), psv_device)
        self._api = hasattr(self.inner, "base_url")

    def settings(self):
        return {"n": self.n, "scorer": self.scorer_name, "agg": self.agg, "temperature": self.temperature,
                "oracle_verifier": bool(self.scorer and self.scorer.oracle)}

    def _sampling(self, gk: dict, i: int) -> dict:
        g = copy.deepcopy(gk)
        g["do_sample"], g["temperature"] = True, self.temperature
        if self.top_p is not None:
            g["top_p"] = self.top_p
        if self._api:  # lm-eval sends one fixed seed with every API request unless told otherwise
            g["seed"] = self.seed + i
        return g

    def solve(self, problems):
        # a request repeated (`repeats: k`) gets its own seeds per repeat (API models are seeded per request)
        seen: dict = {}
        items = []
        for p in problems:
            j = seen[(p.request.task_name, p.request.doc_id)] = seen.get((p.request.task_name, p.request.doc_id), -1) + 1
            p.extra["repeat"] = j
            items += [(p, p.prompt, "", self._sampling(p.gen_kwargs, j * self.n + i)) for i in range(self.n)]
        texts = self.generate(items, f"{self.n} samples per problem")
        for j, p in enumerate(problems):
            samples = texts[j * self.n:(j + 1) * self.n]
            cands = []
            for i, t in enumerate(samples):
                if t is None:
                    continue
                e = {"round": i, "sample": i, "response": t, "gen_tokens": self.ntokens(t),
                     "answer": _jsonable_key(answer_key(p.doc, t))}
                if self.scorer is not None:
                    s = self.scorer.steps(p.question, t, p.reference)
                    e["step_scores"] = [round(x, 4) for x in s["scores"]]
                    e["score"] = self.scorer.aggregate(s["scores"], self.agg) if s["valid"] else None
                    e["verifier"] = s["explanation"][:300]
                p.rounds.append(e)
                cands.append(e)
            if not cands:
                p.final, p.stop = "", "every sample failed in the inner model"
                continue
            vote = self._vote(cands)
            by_score = self._best(cands) if self.scorer is not None else None
            p.extra["pick_vote"] = vote["sample"] if vote else None
            p.extra["pick_score"] = by_score["sample"] if by_score else None
            pick = by_score or vote or cands[0]
            if self.scorer is not None and by_score is None:
                p.stop = "no sample got a verifier score: picked by vote"
            else:
                p.stop = f"picked by {self.scorer_name}"
            p.extra["pick"] = pick["sample"]
            p.final = pick["response"]

    @staticmethod
    def _vote(cands):
        from collections import Counter
        keys = [json.dumps(c["answer"]) for c in cands if c["answer"] is not None]
        if not keys:
            return None
        top = Counter(keys).most_common(1)[0][0]
        return next(c for c in cands if c["answer"] is not None and json.dumps(c["answer"]) == top)

    @staticmethod
    def _best(cands):
        from collections import Counter
        scored = [c for c in cands if c.get("score") is not None]
        if not scored:
            return None
        votes = Counter(json.dumps(c["answer"]) for c in cands if c["answer"] is not None)
        # best score; ties go to the answer more samples agree on, then to the earlier sample
        return max(scored, key=lambda c: (c["score"], votes.get(json.dumps(c["answer"]), 0) if c["answer"] is not None
                                          else 0, -c["sample"]))

