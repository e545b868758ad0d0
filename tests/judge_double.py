"""A double of the LLM judge's model for tests: a real local HTTP server with scripted replies (used by
tests/verifiers/test_judge.py and tests/trainers/test_judging.py)."""
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

GOOD = '{"first_error": 4, "error_class": "MC", "explanation": "a value was misread"}'


class JudgeModelDouble:
    """A double of the judge model: a real HTTP server speaking the OpenAI chat-completions protocol,
    whose replies come from a script: each item is a reply text, ("status", code) or ("sleep", seconds)
    (the last item is repeated). `requests` are the bodies it got; `max_active` the most in flight at once."""

    def __init__(self, script, usage=(1, 1), no_schema=False, delay=0.0):
        self.script, self.requests = list(script), []
        self.active = self.max_active = 0
        lock = threading.Lock()
        srv = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    srv.requests.append(body)
                    srv.active += 1
                    srv.max_active = max(srv.max_active, srv.active)
                try:
                    self._reply(body)
                finally:
                    with lock:
                        srv.active -= 1

            def _reply(self, body):
                if delay:
                    time.sleep(delay)
                refused = no_schema is True or body.get("response_format", {}).get("type") == no_schema
                if no_schema and "response_format" in body and refused:  # as a server without it says
                    self.send_response(400)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(b'{"error": {"message": "response_format json_schema is not supported"}}')
                    return
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
                       "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                                 "total_tokens": usage[0] + usage[1]}}
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
