"""The LLM-judge step verifier: any OpenAI-compatible chat endpoint, as the paper uses GPT-4o.

    j = Judge(base_url="http://localhost:8000/v1", model="gpt-4o", api_key=...)   # or from env
    j.verify(question, solution, reference) -> StepVerdict
    j.verify_many(rows, workers=4) -> [StepVerdict]

Config from arguments or the environment: R3BENCH_JUDGE_BASE_URL, R3BENCH_JUDGE_MODEL,
R3BENCH_JUDGE_API_KEY (falls back to OPENAI_API_KEY).

The judge must answer with one JSON object {"first_error": int, "error_class": "MC"|"CM"|"CE"|null,
"explanation": str}, first_error at most the number of steps. A reply that is not such an object is
retried (`json_retries`); if it stays bad, the result is an invalid verdict (valid=False,
first_error -1, never 0 = "all correct") whose explanation says so - never a crash, never a silent 0.
A broken seven-tag format is a FORMAT verdict without asking the judge (verifiers.stepformat.format_error).
Connection errors, timeouts, 429 and 5xx are retried with exponential backoff (`retries`), honouring
a Retry-After header up to `max_retry_after_s`; 401/403 (bad key, no access) and other 4xx are not
retried - another try cannot succeed - and are recorded at once. Answers are cached on disk by
(endpoint, model, temperature, prompt) so that a re-run is free and reproducible; only valid answers
are cached.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from verifiers import seventag
from verifiers.stepformat import format_error
from verifiers.verdict import ERROR_CLASSES, N_STEPS, StepVerdict, invalid

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


class JudgeError(RuntimeError):
    pass


def parse_reply(text: str, n_steps: int) -> StepVerdict:
    """Validate a judge reply; raises JudgeError with the reason when it is not a valid verdict."""
    if not isinstance(text, str) or not text.strip():
        raise JudgeError("empty reply")
    m = re.search(r"\{.*\}", text, re.S)
    if not m:
        raise JudgeError("no JSON object in the reply")
    try:
        obj = json.loads(m.group(0))
    except ValueError as e:
        raise JudgeError(f"invalid JSON: {e}") from None
    if not isinstance(obj, dict):
        raise JudgeError("JSON is not an object")
    fe, cls, why = obj.get("first_error"), obj.get("error_class"), obj.get("explanation", "")
    if isinstance(fe, bool) or not isinstance(fe, int) or not 0 <= fe <= N_STEPS:
        raise JudgeError(f"first_error {fe!r} is not an integer in 0..{N_STEPS}")
    if fe > n_steps:
        raise JudgeError(f"first_error {fe} is beyond the solution's {n_steps} steps")
    if fe == 0:
        cls = None
    elif cls not in ERROR_CLASSES:
        raise JudgeError(f"error_class {cls!r} is not MC, CM or CE")
    return StepVerdict(fe, cls, str(why)[:500] or "(no explanation)", n_steps)


class Judge:
    def __init__(self, base_url: str | None = None, model: str | None = None, api_key: str | None = None,
                 timeout_s: float = 60.0, retries: int = 3, json_retries: int = 2, backoff_s: float = 1.0,
                 cache_dir: str | os.PathLike | None = None, temperature: float = 0.0,
                 max_retry_after_s: float = 30.0):
        from openai import OpenAI

        self.base_url = base_url or os.environ.get("R3BENCH_JUDGE_BASE_URL") or "https://api.openai.com/v1"
        self.model = model or os.environ.get("R3BENCH_JUDGE_MODEL") or "gpt-4o"
        key = api_key or os.environ.get("R3BENCH_JUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY") or "none"
        # retries are ours (with the backoff and the JSON check), so the client's own are off
        self.client = OpenAI(base_url=self.base_url, api_key=key, timeout=timeout_s, max_retries=0)
        self.retries, self.json_retries, self.backoff_s, self.temperature = retries, json_retries, backoff_s, temperature
        self.max_retry_after_s = max_retry_after_s
        self.cache_dir = Path(cache_dir or Path(os.environ.get("R3BENCH_CACHE", Path.home() / ".cache" / "r3bench"))
                              / "judge")
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.calls = 0  # requests actually sent (cache hits are free)

    def _key(self, prompt: str) -> Path:
        h = hashlib.sha256(f"{self.base_url}\n{self.model}\n{self.temperature}\n{prompt}".encode()).hexdigest()
        return self.cache_dir / f"{h}.json"

    def _ask(self, prompt: str) -> str:
        import openai

        last = None
        for attempt in range(self.retries + 1):
            wait = self.backoff_s * 2 ** attempt
            try:
                with self._lock:
                    self.calls += 1
                r = self.client.chat.completions.create(model=self.model, temperature=self.temperature,
                                                        messages=[{"role": "user", "content": prompt}])
                return r.choices[0].message.content or ""
            except openai.APIStatusError as e:
                last = e
                code = e.status_code
                if code != 429 and code < 500:  # 401/403/400/404: another try cannot succeed
                    raise JudgeError(f"judge refused the request (HTTP {code}, not retried): {str(e)[:120]}") from None
                wait = max(wait, self._retry_after(e))
            except (openai.APIError, openai.APIConnectionError, openai.APITimeoutError) as e:
                last = e
            except (AttributeError, IndexError, TypeError, ValueError) as e:  # a malformed response body
                last = e
            if attempt < self.retries:
                time.sleep(wait)
        raise JudgeError(f"judge unreachable after {self.retries + 1} tries: {type(last).__name__}: {str(last)[:120]}")

    def _retry_after(self, e) -> float:
        """Seconds of the response's Retry-After header (delta-seconds form), capped; 0 when absent."""
        try:
            v = float(e.response.headers.get("retry-after", "0"))
        except (AttributeError, TypeError, ValueError):
            return 0.0
        return min(max(v, 0.0), self.max_retry_after_s) if v == v else 0.0

    def verify(self, question: str, solution: str, reference: str = "") -> StepVerdict:
        bad = format_error(solution)
        if bad is not None:
            return bad
        n = seventag.parse(solution or "").n
        prompt = PROMPT.format(question=question or "", reference=reference or "(none)", solution=solution or "")
        f = self._key(prompt)
        if f.is_file():
            try:
                return parse_reply(json.loads(f.read_text())["reply"], n)
            except (ValueError, KeyError, JudgeError):
                f.unlink(missing_ok=True)  # a damaged cache entry is asked again
        why = None
        for _ in range(self.json_retries + 1):
            try:
                reply = self._ask(prompt)
            except JudgeError as e:
                return invalid(f"judge failed: {e}", n)
            try:
                v = parse_reply(reply, n)
            except JudgeError as e:
                why = f"{e} (reply: {reply[:80]!r})"
                continue
            tmp = f.with_name(f.name + ".partial")
            tmp.write_text(json.dumps({"base_url": self.base_url, "model": self.model, "reply": reply}))
            tmp.replace(f)
            return v
        return invalid(f"judge gave no valid verdict after {self.json_retries + 1} replies: {why}", n)

    def verify_many(self, rows, workers: int = 4) -> list[StepVerdict]:
        """Concurrent verification; results in input order."""
        with ThreadPoolExecutor(max_workers=workers) as ex:
            return list(ex.map(lambda r: self.verify(r.get("question", ""), r.get("solution", ""),
                                                     r.get("reference", "")), rows))


def judge_backend(question, solution, reference):
    """`verify(..., backend="judge")`: a Judge configured from the environment."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = Judge()
    return _DEFAULT.verify(question, solution, reference)


_DEFAULT: Judge | None = None
