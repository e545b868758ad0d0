"""The judge backend against a real local HTTP server speaking the OpenAI chat-completions protocol."""
import json
import threading
import time
import types
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from r3bench import procgen
from verifiers.judge import Judge, JudgeError, parse_reply

GOOD = '{"first_error": 4, "error_class": "MC", "explanation": "a value was misread"}'


class Server:
    """Replies from a script: each item is a reply text, ("status", code) or ("sleep", seconds)."""

    def __init__(self, script):
        self.script, self.requests = list(script), []
        srv = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                srv.requests.append(body)
                item = srv.script.pop(0) if len(srv.script) > 1 else srv.script[0]
                if isinstance(item, tuple) and item[0] == "sleep":
                    time.sleep(item[1])
                    item = GOOD
                if isinstance(item, tuple) and item[0] == "status":
                    self.send_response(item[1])
                    if len(item) > 2:
                        self.send_header("Retry-After", str(item[2]))
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(b'{"error": {"message": "boom"}}')
                    return
                out = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": item}}],
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
                data = json.dumps(out).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.httpd.shutdown()


@pytest.fixture()
def serve():
    made = []

    def start(script):
        s = Server(script)
        made.append(s)
        return s
    yield start
    for s in made:
        s.close()


P = procgen.generate(n=5, seed=0)[0]


def _judge(url, tmp_path, **kw):
    return Judge(base_url=url, model="judge-test", api_key="k", cache_dir=tmp_path, backoff_s=0.01, **kw)


def test_valid_reply_is_a_verdict_and_cached(serve, tmp_path):
    s = serve([GOOD])
    j = _judge(s.url, tmp_path)
    v = j.verify(P.question, P.solution, P.solution)
    assert (v.first_error, v.error_class, v.valid, v.n_steps) == (4, "MC", True, 7)
    assert s.requests[0]["model"] == "judge-test" and P.question in s.requests[0]["messages"][0]["content"]
    again = _judge(s.url, tmp_path).verify(P.question, P.solution, P.solution)
    assert again == v and len(s.requests) == 1  # the re-run is free


def test_junk_is_retried_then_accepted(serve, tmp_path):
    s = serve(["I think step 4 is wrong", '{"first_error": 9}', GOOD])
    v = _judge(s.url, tmp_path, json_retries=2).verify(P.question, P.solution)
    assert v.first_error == 4 and v.valid and len(s.requests) == 3


def test_junk_forever_is_a_recorded_verdict_not_a_crash(serve, tmp_path):
    s = serve(["not json at all"])
    v = _judge(s.url, tmp_path, json_retries=1).verify(P.question, P.solution)
    assert v.valid is False and "no valid verdict" in v.explanation and len(s.requests) == 2
    assert not list(tmp_path.glob("*.json"))  # junk is never cached


def test_server_errors_back_off_and_recover(serve, tmp_path):
    s = serve([("status", 500), ("status", 503), GOOD])
    v = _judge(s.url, tmp_path, retries=3).verify(P.question, P.solution)
    assert v.first_error == 4 and len(s.requests) == 3


def test_timeout_is_a_recorded_verdict(serve, tmp_path):
    s = serve([("sleep", 3)])  # the reply comes after 3 s: a judge that waited for it would get a valid verdict
    v = _judge(s.url, tmp_path, timeout_s=0.5, retries=1).verify(P.question, P.solution)
    assert v.valid is False and "unreachable" in v.explanation


def test_no_server_at_all(tmp_path):
    v = _judge("http://127.0.0.1:9/v1", tmp_path, retries=1).verify(P.question, P.solution)
    assert v.valid is False and "unreachable" in v.explanation


def test_concurrent_verification_keeps_order(serve, tmp_path):
    s = serve([GOOD])
    rows = [{"question": f"q{i}", "solution": P.solution, "reference": ""} for i in range(8)]
    vs = _judge(s.url, tmp_path).verify_many(rows, workers=4)
    assert len(vs) == 8 and all(v.first_error == 4 for v in vs) and len(s.requests) == 8


@pytest.mark.parametrize("reply,why", [("", "empty"), ("[1, 2]", "no JSON object"),
                                       ('{"first_error": "3"}', "not an integer"),
                                       ('{"first_error": 3, "error_class": "XX"}', "error_class")])
def test_parse_reply_rejects(reply, why):
    with pytest.raises(JudgeError, match=why):
        parse_reply(reply, 7)


def test_invalid_verdict_is_never_all_correct(serve, tmp_path):
    s = serve(["not json at all"])
    v = _judge(s.url, tmp_path, json_retries=0).verify(P.question, P.solution)
    assert v.valid is False and v.first_error != 0  # it was 0 ("all correct") before
    from verifiers.rewards import step_reward
    assert step_reward(v).ok is False


@pytest.mark.parametrize("code", [401, 403, 400])
def test_auth_and_client_errors_are_not_retried(serve, tmp_path, code):
    s = serve([("status", code)])
    v = _judge(s.url, tmp_path, retries=3).verify(P.question, P.solution)
    assert v.valid is False and f"HTTP {code}" in v.explanation and len(s.requests) == 1


def test_rate_limit_retried_honouring_retry_after_with_a_cap(serve, tmp_path, monkeypatch):
    s = serve([("status", 429, 1), GOOD])
    t0 = time.monotonic()
    v = _judge(s.url, tmp_path, retries=2).verify(P.question, P.solution)
    assert v.first_error == 4 and len(s.requests) == 2 and time.monotonic() - t0 >= 0.9
    s = serve([("status", 429, 3600), GOOD])
    waits = []  # the judge's waits, recorded instead of slept (a wall-clock bound was flaky on a loaded machine)
    monkeypatch.setattr("verifiers.judge.time", types.SimpleNamespace(sleep=waits.append))
    v = _judge(s.url, tmp_path / "b", retries=2, max_retry_after_s=0.2).verify(P.question, P.solution)
    assert v.first_error == 4 and waits and max(waits) <= 0.2  # Retry-After 3600 capped


def test_cache_key_includes_the_endpoint(serve, tmp_path):
    a, b = serve([GOOD]), serve(['{"first_error": 2, "error_class": "CM", "explanation": "wrong law"}'])
    va = _judge(a.url, tmp_path).verify(P.question, P.solution, P.solution)
    vb = _judge(b.url, tmp_path).verify(P.question, P.solution, P.solution)
    assert (va.first_error, vb.first_error) == (4, 2) and len(b.requests) == 1


def test_first_error_beyond_the_steps_is_rejected():
    with pytest.raises(JudgeError, match="beyond"):
        parse_reply('{"first_error": 7, "error_class": "CE", "explanation": "x"}', 3)


def test_broken_format_is_a_format_verdict_without_a_call(serve, tmp_path):
    s = serve([GOOD])
    v = _judge(s.url, tmp_path).verify(P.question, P.solution.split("<substitution>")[0])
    assert (v.first_error, v.error_class) == (5, "FORMAT") and not s.requests
