"""The shared wrapper of every strategy: the inner model, prompts as text or chat, one problem's state
and trace, batched inner calls with per-request fallback, token counts, trace files."""
from __future__ import annotations

import abc
import datetime as _dt
import json
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from lm_eval.api.instance import Instance
from lm_eval.api.model import LM

from r3bench.eval.strategies import REGISTRY
from verifiers import canonical, extract_answer

REVISED = "Revised solution:"


def as_bool(v) -> bool:
    return v if isinstance(v, bool) else str(v).strip().lower() in ("1", "true", "yes", "on")


def log(msg: str):
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


def context_text(ctx) -> str:
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
            return canonical(text, doc["answer_kind"], ref=doc.get("answer"))
        a = extract_answer(text)
        return a.strip() if a else None
    except Exception:  # noqa: BLE001 - a key is best effort: no key, no early stop / vote
        return None


def jsonable_key(k):
    return list(k) if isinstance(k, tuple) else k


# --- the shared wrapper ----------------------------------------------------------------------------

def make_inner(name: str, args: dict, extra: dict) -> LM:
    from lm_eval.api.registry import get_model

    if name in REGISTRY:
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
            text = context_text(text)
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
                log(f"{self.NAME} {label}: a batch of {len(reqs)} failed ({type(e).__name__}: {e}); retrying one by one")
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
        log(f"{self.NAME} {label}: {len(items)} generations in {dt:.1f} s")
        return texts

    # lm-eval entry ---------------------------------------------------------------------------------
    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        probs = []
        for i, r in enumerate(requests):
            ctx, gk = r.args[0], dict(r.args[1] or {})
            doc = r.doc if isinstance(r.doc, dict) else {}
            prompt = self._prompt_of(ctx)
            q = str(doc.get("question") or context_text(ctx))
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
        log(f"{self.NAME}: {len(probs)} problems in {time.time() - t0:.1f} s, "
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
