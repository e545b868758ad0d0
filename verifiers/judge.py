"""The LLM-judge step verifier: any OpenAI-compatible chat endpoint, as the paper uses GPT-4o.

    j = Judge(base_url="http://localhost:8000/v1", model="gpt-4o", api_key=...)   # or from env
    j.verify(question, solution, reference) -> StepVerdict
    j.verify_many(rows) -> [StepVerdict]          # concurrent, at most `max_concurrency` requests in flight
    j.stats() -> {"requests", "cache_hits", "dropped", "prompt_tokens", "completion_tokens", "cost_usd", ...}
    configure(base_url=..., max_concurrency=8, max_cost_usd=5.0) -> Judge   # the one verify(backend="judge") uses

    verify(q, s, r, backend="judge", config=JudgeConfig(base_url=..., model=...))   # one Judge per config

Config: a JudgeConfig (Judge's keyword arguments, frozen). Its documented defaults come from the
environment, read in one place (JudgeConfig.from_env): R3BENCH_JUDGE_BASE_URL, R3BENCH_JUDGE_MODEL,
R3BENCH_JUDGE_API_KEY (falls back to OPENAI_API_KEY). Works with OpenAI, `vllm serve` and llama.cpp's
server (anything speaking /v1/chat/completions).

The judge must answer with one JSON object {"first_error": int, "error_class": "MC"|"CM"|"CE"|null,
"explanation": str}, first_error at most the number of steps. Where the server takes it, the request
asks for exactly that object (`structured="auto"`: a JSON-schema `response_format` as OpenAI and vLLM
take it, else llama.cpp's `json_object` with a schema, else none - each refusal is remembered). Replies are read leniently: `<think>`
blocks and code fences are dropped, the last JSON object that carries `first_error` is taken (trailing
braces or prose around it do not matter), "3" and 3.0 are step 3, class names in any case or spelled
out, a missing class is the class of the step (verdict.STEP_CLASS), a reply that is only a step number
is that step. A reply that is still not a verdict is asked again (`json_retries`) in the same
conversation, with the reason it could not be read - so that a judge at temperature 0 does not give
the same reply again. If it stays bad, the result is an invalid verdict (valid=False, first_error -1,
never 0 = "all correct") whose explanation says so - never a crash, never a silent 0.
A broken seven-tag format is a FORMAT verdict without asking the judge (verifiers.tag_format.format_error).
Connection errors, timeouts, 429 and 5xx are retried with exponential backoff (`retries`), honouring
a Retry-After header up to `max_retry_after_s`; 401/403 (bad key, no access) and other 4xx are not
retried - another try cannot succeed - and are recorded at once.

Nothing is dropped silently: every invalid verdict is counted in `stats()["dropped"]` by its cause
(unreachable, refused, rate_limited, unparseable, budget), beside the requests, retries, cache hits, token
usage (from the server's `usage`) and cost (`price_in` / `price_out`, dollars per million tokens).
A budget (`max_cost_usd`, `max_tokens`) stops cleanly, between verdicts: a `verify` that finds it
spent raises `JudgeBudgetExceeded` (not a verdict: the caller ends its run and records why) before it
sends anything. A `verify` that started inside the budget always ends with a verdict: its first request
is sent; a re-ask after an unreadable reply is sent only while budget is left, else the verify ends
with an invalid verdict (counted as dropped "budget") that says so. So whether a verify raises never
depends on what the model wrote; the overshoot is at most the first requests in flight (`max_concurrency`).
Answers are cached on disk by (endpoint, model, temperature, prompt) so that a re-run is free and
reproducible; only valid answers are cached.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from verifiers import seventag
from verifiers.tag_format import format_error
from verifiers.verdict import N_STEPS, STEP_CLASS, StepVerdict, invalid

PROMPT = """You are a strict physics teacher verifying a student's step-by-step solution.
The solution has up to seven tagged steps, numbered in this order:
1 problem_analysis, 2 principle, 3 governing_equation, 4 value_identification, 5 substitution,
6 calculation, 7 final_answer.
Find the FIRST wrong step and classify its error:
- MC (miscomprehension): the question or a given value is misread, or the wrong quantity is sought;
- CM (conceptual misapplication): a wrong law, or a formula used outside its validity;
- CE (calculation error): an arithmetic or algebra slip, or a final answer that does not follow.
If several classes apply to the same step, prefer MC, then CM, then CE.
Answer with exactly one JSON object and nothing else:
{{"first_error": <0 if every step is correct, else the step number>, "error_class": "MC" | "CM" | "CE" | null, "explanation": "<one sentence>"}}

Problem:
{question}

Reference solution:
{reference}

Student solution:
{solution}
"""


@dataclass(frozen=True)
class JudgeConfig:
    """The judge backend's settings: Judge's keyword arguments (see Judge). A judge is made once per
    config (judge_for), so its accounting and budget are shared by everything that passes that config."""

    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o"
    api_key: str = field(default="", repr=False)  # "": from the environment (from_env), never a config file
    timeout_s: float = 60.0
    retries: int = 3
    json_retries: int = 2
    backoff_s: float = 1.0
    cache_dir: str | None = None
    temperature: float = 0.0
    max_retry_after_s: float = 30.0
    max_concurrency: int = 8
    structured: str = "auto"
    price_in: float = 0.0
    price_out: float = 0.0
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    max_reply_tokens: int = 400

    @classmethod
    def from_env(cls, **given) -> "JudgeConfig":
        """The config from `given` (None / "" left out) over the documented defaults: R3BENCH_JUDGE_BASE_URL
        (else OpenAI), R3BENCH_JUDGE_MODEL (else gpt-4o), R3BENCH_JUDGE_API_KEY (else OPENAI_API_KEY). The
        one place these variables are read; the API key never comes from a config file."""
        kw = {k: v for k, v in (("base_url", os.environ.get("R3BENCH_JUDGE_BASE_URL")),
                                ("model", os.environ.get("R3BENCH_JUDGE_MODEL")),
                                ("api_key", os.environ.get("R3BENCH_JUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY")))
              if v}
        names = {f.name for f in fields(cls)}
        kw.update({k: v for k, v in given.items() if k in names and v is not None and v != ""})
        return cls(**kw)


class JudgeError(RuntimeError):
    pass


class JudgeBudgetExceeded(RuntimeError):
    """The judge's budget (cost or tokens) is spent: the run should stop and say so. Not a verdict."""


#: what a verdict must look like; sent as a JSON-schema response_format where the server takes one
SCHEMA = {"type": "object", "additionalProperties": False,
          "required": ["first_error", "error_class", "explanation"],
          # an enum, not minimum/maximum: llama.cpp's grammar ignores ranges (a 135M judge then says 2018)
          "properties": {"first_error": {"type": "integer", "enum": list(range(N_STEPS + 1))},
                         "error_class": {"enum": ["MC", "CM", "CE", None]},
                         "explanation": {"type": "string"}}}

MAX_REPLY_CHARS = 20000  # a reply is read up to here (a runaway generation is not scanned whole)
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_CLASS_WORDS = {"MC": "MC", "MISCOMPREHENSION": "MC", "CM": "CM", "CONCEPTUAL": "CM",
                "CONCEPTUAL MISAPPLICATION": "CM", "CE": "CE", "CALCULATION": "CE", "CALCULATION ERROR": "CE"}


def _json_objects(text: str):
    """The balanced {...} spans of text, outermost only, in order; one linear scan that knows strings."""
    depth, start, in_str, esc = 0, -1, False, False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"' and depth:
            in_str = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                yield text[start:i + 1]


def _clean(text: str) -> str:
    """The reply without reasoning blocks and code fences."""
    t = _THINK.sub(" ", text[:MAX_REPLY_CHARS])
    if re.search(r"</think>", t, re.I):  # an opening tag the server swallowed: keep what follows the close
        t = re.split(r"</think>", t, flags=re.I)[-1]
    return re.sub(r"```(?:json)?", " ", t)


def _step_number(fe):
    if isinstance(fe, bool):
        return None
    if isinstance(fe, float) and fe.is_integer():
        return int(fe)
    if isinstance(fe, str) and fe.strip().isdigit() and len(fe.strip()) < 3:
        return int(fe.strip())
    return fe if isinstance(fe, int) else None


def parse_reply(text: str, n_steps: int) -> StepVerdict:
    """Validate a judge reply; raises JudgeError with the reason when it is not a valid verdict."""
    if not isinstance(text, str) or not text.strip():
        raise JudgeError("empty reply")
    t = _clean(text)
    if not t.strip():
        raise JudgeError("empty reply (only a reasoning block)")
    obj, last_err = None, "no JSON object in the reply"
    for span in reversed(list(_json_objects(t))):
        try:
            cand = json.loads(span)
        except ValueError as e:
            last_err = f"invalid JSON: {e}"
            continue
        if isinstance(cand, dict) and "first_error" in cand:
            obj = cand
            break
        last_err = "JSON object without first_error"
    if obj is None:
        bare = re.fullmatch(r"\s*(?:step\s*)?(\d{1,2})\s*\.?\s*", t, re.I)
        if not bare:
            raise JudgeError(last_err)
        obj = {"first_error": int(bare.group(1)), "explanation": "(a bare step number)"}
    raw = obj.get("first_error")
    fe = _step_number(raw)
    if fe is None or not 0 <= fe <= N_STEPS:
        raise JudgeError(f"first_error {raw!r} is not an integer in 0..{N_STEPS}")
    if fe > n_steps:
        raise JudgeError(f"first_error {fe} is beyond the solution's {n_steps} steps")
    why = str(obj.get("explanation") or "")[:500] or "(no explanation)"
    cls = obj.get("error_class")
    if fe == 0:
        cls = None
    elif cls is None or (isinstance(cls, str) and cls.strip().lower() in ("", "null", "none")):
        cls = STEP_CLASS[fe]
        why += f" [class {cls} of step {fe}: the judge gave none]"
    else:
        cls = _CLASS_WORDS.get(str(cls).strip().upper().replace("_", " "))
        if cls is None:
            raise JudgeError(f"error_class {obj.get('error_class')!r} is not MC, CM or CE")
    return StepVerdict(fe, cls, why, n_steps)


class Judge:
    """An OpenAI-compatible chat endpoint as a step verifier; thread-safe, shared by all callers.

    max_concurrency: requests in flight at once, over every thread that uses this judge.
    structured: "auto" (ask for the JSON schema; drop the field if the server refuses it) | "off".
    price_in / price_out: dollars per million prompt / completion tokens (0: cost not tracked).
    max_cost_usd / max_tokens: the budget; a verify that finds it spent raises JudgeBudgetExceeded, one
    that started inside it ends with a verdict (see the module docstring).
    """

    def __init__(self, base_url: str | None = None, model: str | None = None, api_key: str | None = None,
                 timeout_s: float = 60.0, retries: int = 3, json_retries: int = 2, backoff_s: float = 1.0,
                 cache_dir: str | os.PathLike | None = None, temperature: float = 0.0,
                 max_retry_after_s: float = 30.0, max_concurrency: int = 8, structured: str = "auto",
                 price_in: float = 0.0, price_out: float = 0.0, max_cost_usd: float | None = None,
                 max_tokens: int | None = None, max_reply_tokens: int = 400):
        from openai import OpenAI

        if structured not in ("auto", "off"):
            raise ValueError(f"structured must be 'auto' or 'off', not {structured!r}")
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be >= 1")
        filled = JudgeConfig.from_env(base_url=base_url, model=model, api_key=api_key)  # what is not given
        self.base_url, self.model, key = filled.base_url, filled.model, filled.api_key or "none"
        # retries are ours (with the backoff and the JSON check), so the client's own are off
        self.client = OpenAI(base_url=self.base_url, api_key=key, timeout=timeout_s, max_retries=0)
        self.retries, self.json_retries, self.backoff_s, self.temperature = retries, json_retries, backoff_s, temperature
        self.max_retry_after_s = max_retry_after_s
        self.max_concurrency, self.structured = max_concurrency, structured
        self.price_in, self.price_out = price_in, price_out
        self.max_cost_usd, self.max_tokens, self.max_reply_tokens = max_cost_usd, max_tokens, max_reply_tokens
        self.cache_dir = Path(cache_dir or Path(os.environ.get("R3BENCH_CACHE", Path.home() / ".cache" / "r3bench"))
                              / "judge")
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(max_concurrency)
        # structured output, tried in this order while the server refuses: OpenAI / vLLM take a
        # json_schema response_format, llama.cpp's server a json_object with a schema, others neither
        self._formats = ["json_schema", "json_object", None] if structured == "auto" else [None]
        self._stats = {"requests": 0, "retries": 0, "rate_limited": 0, "cache_hits": 0, "verdicts": 0,
                       "parse_failures": 0, "prompt_tokens": 0, "completion_tokens": 0, "in_flight_max": 0,
                       "dropped": {}}
        self._in_flight = 0

    # --- accounting ---------------------------------------------------------------------------------
    @property
    def calls(self) -> int:
        """Requests actually sent (cache hits are free)."""
        return self._stats["requests"]

    def _count(self, key: str, n: int = 1) -> None:
        with self._lock:
            self._stats[key] += n

    def _drop(self, cause: str) -> None:
        with self._lock:
            self._stats["dropped"][cause] = self._stats["dropped"].get(cause, 0) + 1

    def cost_usd(self) -> float:
        s = self._stats
        return (s["prompt_tokens"] * self.price_in + s["completion_tokens"] * self.price_out) / 1e6

    def stats(self) -> dict:
        """A snapshot for run.json and step logs: requests, retries, cache hits, verdicts, dropped by
        cause (and in all), parse failures, tokens, cost, the endpoint and the budget."""
        with self._lock:
            s = json.loads(json.dumps(self._stats))
        s["dropped_total"] = sum(s["dropped"].values())
        s["cost_usd"] = round(self.cost_usd(), 6)
        s.update(base_url=self.base_url, model=self.model, max_cost_usd=self.max_cost_usd,
                 max_tokens=self.max_tokens, structured=self._formats[0] or "off")
        return s

    def _budget_spent(self) -> str | None:
        """Why the budget is spent, or None while some is left."""
        with self._lock:
            s = self._stats
            spent = s["prompt_tokens"] + s["completion_tokens"]
            if self.max_tokens is not None and spent >= self.max_tokens:
                return f"judge token budget spent: {spent} of {self.max_tokens} tokens"
            if self.max_cost_usd is not None and self.cost_usd() >= self.max_cost_usd:
                return f"judge cost budget spent: ${self.cost_usd():.4f} of ${self.max_cost_usd}"
        return None

    # --- requests -----------------------------------------------------------------------------------
    def _key(self, prompt: str) -> Path:
        h = hashlib.sha256(f"{self.base_url}\n{self.model}\n{self.temperature}\n{prompt}".encode()).hexdigest()
        return self.cache_dir / f"{h}.json"

    def _create(self, messages, fmt):
        kw = dict(model=self.model, temperature=self.temperature, messages=messages,
                  max_tokens=self.max_reply_tokens)
        if fmt == "json_schema":
            kw["response_format"] = {"type": "json_schema", "json_schema": {"name": "step_verdict", "schema": SCHEMA}}
        elif fmt == "json_object":
            kw["response_format"] = {"type": "json_object", "schema": SCHEMA}
        with self._slots:
            with self._lock:
                self._stats["requests"] += 1
                self._in_flight += 1
                self._stats["in_flight_max"] = max(self._stats["in_flight_max"], self._in_flight)
            try:
                r = self.client.chat.completions.create(**kw)
            finally:
                with self._lock:
                    self._in_flight -= 1
        u = getattr(r, "usage", None)
        if u is not None:
            with self._lock:
                self._stats["prompt_tokens"] += int(getattr(u, "prompt_tokens", 0) or 0)
                self._stats["completion_tokens"] += int(getattr(u, "completion_tokens", 0) or 0)
        return r.choices[0].message.content or ""

    def _ask(self, messages) -> str:
        import openai

        last = None
        for attempt in range(self.retries + 1):
            wait = self.backoff_s * 2 ** attempt
            fmt = self._formats[0]
            try:
                return self._create(messages, fmt)
            except openai.APIStatusError as e:
                last = e
                code = e.status_code
                said = str(e).lower()
                if fmt and ("response_format" in said or "json_schema" in said):
                    with self._lock:  # this server refuses that form (400, 422 or even 500): the next one
                        if self._formats[0] == fmt and len(self._formats) > 1:  # once, whatever the threads
                            self._formats.pop(0)
                    continue
                if code != 429 and code < 500:  # 401/403/400/404: another try cannot succeed
                    self._drop("refused")
                    raise JudgeError(f"judge refused the request (HTTP {code}, not retried): {str(e)[:120]}") from None
                if code == 429:
                    self._count("rate_limited")
                wait = max(wait, self._retry_after(e))
            except (openai.APIError, openai.APIConnectionError, openai.APITimeoutError) as e:
                last = e
            except (AttributeError, IndexError, TypeError, ValueError) as e:  # a malformed response body
                last = e
            if attempt < self.retries:
                self._count("retries")
                time.sleep(wait)
        rate_limited = getattr(last, "status_code", None) == 429
        self._drop("rate_limited" if rate_limited else "unreachable")
        raise JudgeError(f"judge unreachable after {self.retries + 1} tries: {type(last).__name__}: {str(last)[:120]}")

    def _retry_after(self, e) -> float:
        """Seconds of the response's Retry-After header (delta-seconds form), capped; 0 when absent."""
        try:
            v = float(e.response.headers.get("retry-after", "0"))
        except (AttributeError, TypeError, ValueError):
            return 0.0
        return min(max(v, 0.0), self.max_retry_after_s) if v == v else 0.0

    def verify(self, question: str, solution: str, reference: str = "") -> StepVerdict:
        """One verdict; an invalid one (counted in stats()["dropped"]) when none can be had.
        Raises JudgeBudgetExceeded only, when the budget is spent before it asks anything; once it has
        asked, it ends with a verdict (a re-ask past the budget is not sent: an invalid verdict says so)."""
        bad = format_error(solution)
        if bad is not None:
            return bad
        n = seventag.parse(solution or "").n
        prompt = PROMPT.format(question=question or "", reference=reference or "(none)", solution=solution or "")
        f = self._key(prompt)
        if f.is_file():
            try:
                v = parse_reply(json.loads(f.read_text())["reply"], n)
                self._count("cache_hits")
                self._count("verdicts")
                return v
            except (ValueError, KeyError, JudgeError):
                f.unlink(missing_ok=True)  # a damaged cache entry is asked again
        spent = self._budget_spent()
        if spent is not None:
            raise JudgeBudgetExceeded(spent)
        why, messages = None, [{"role": "user", "content": prompt}]
        for attempt in range(self.json_retries + 1):
            spent = self._budget_spent() if attempt else None
            if spent is not None:  # this verify began inside the budget: it ends with a verdict, not a raise
                self._drop("budget")
                return invalid(f"judge gave no valid verdict: {spent} before a re-ask; last reply: {why}", n)
            try:
                reply = self._ask(messages)
            except JudgeError as e:
                return invalid(f"judge failed: {e}", n)
            try:
                v = parse_reply(reply, n)
            except JudgeError as e:
                self._count("parse_failures")
                why = f"{e} (reply: {reply[:80]!r})"
                # the same conversation, told why: a judge at temperature 0 then answers differently
                messages = messages[:1] + [{"role": "assistant", "content": reply[:2000]},
                                           {"role": "user", "content": f"That reply could not be read ({e}). "
                                            "Answer with the JSON object only."}]
                continue
            tmp = f.with_name(f"{f.name}.{threading.get_ident()}.partial")
            tmp.write_text(json.dumps({"base_url": self.base_url, "model": self.model, "reply": reply}))
            tmp.replace(f)
            self._count("verdicts")
            return v
        self._drop("unparseable")
        return invalid(f"judge gave no valid verdict after {self.json_retries + 1} replies: {why}", n)

    def verify_many(self, rows, workers: int | None = None) -> list[StepVerdict]:
        """Concurrent verification of {question, solution, reference} rows; results in input order.
        At most `max_concurrency` requests are in flight, whatever `workers` is."""
        items = [(r.get("question", ""), r.get("solution", ""), r.get("reference", "")) for r in rows]
        return concurrently(self.verify, items, workers or self.max_concurrency)


def concurrently(fn, items, workers: int) -> list:
    """[fn(*item) for item in items], on up to `workers` threads (in order; sequential at 1 or for one
    item). An exception of any call is raised here once the others are done (JudgeBudgetExceeded first
    of all: the budget is checked at the start of every verify, so the other threads stop asking too)."""
    items = list(items)
    if workers <= 1 or len(items) <= 1:
        return [fn(*it) for it in items]
    with ThreadPoolExecutor(max_workers=min(len(items), workers)) as ex:
        return list(ex.map(lambda it: fn(*it), items))


_DEFAULT: Judge | None = None
_JUDGES: dict[JudgeConfig, Judge] = {}
_DEFAULT_LOCK = threading.Lock()


def judge_for(config: JudgeConfig) -> Judge:
    """The one Judge of a config (made on first use, whatever the number of threads asking)."""
    with _DEFAULT_LOCK:
        if config not in _JUDGES:
            _JUDGES[config] = Judge(**asdict(config))
        return _JUDGES[config]


def configure(config: JudgeConfig | None = None, **kw) -> Judge:
    """Make the judge of `config` (or of Judge's keyword arguments over JudgeConfig.from_env()) the
    default of `verify(..., backend="judge")` without a config, and return it (a new one, fresh counts).

        configure(JudgeConfig.from_env(base_url="http://127.0.0.1:8080/v1", model="qwen", max_cost_usd=5.0))
    """
    global _DEFAULT
    cfg = config if config is not None else JudgeConfig.from_env(**kw)
    j = Judge(**asdict(cfg))
    with _DEFAULT_LOCK:
        _DEFAULT = _JUDGES[cfg] = j
    return j


def default_judge(create: bool = True) -> Judge | None:
    """The judge of `verify(..., backend="judge")` without a config: the configured one, else the one of
    JudgeConfig.from_env() (made once, on first use). With create=False: None when there is none yet (a
    record of a run reads it without making one)."""
    global _DEFAULT
    if _DEFAULT is None and create:
        j = judge_for(JudgeConfig.from_env())
        with _DEFAULT_LOCK:
            _DEFAULT = _DEFAULT or j
    return _DEFAULT


def judge_backend(question, solution, reference, config: JudgeConfig | None = None):
    """`verify(..., backend="judge", config=JudgeConfig(...))`: that config's judge (None: default_judge())."""
    j = default_judge() if config is None else judge_for(config)
    return j.verify(question, solution, reference)
