"""benchmarks/gen_speed.py's llama.cpp anchor: the batch's chats sent together to a real llama-cpp-python
server (the llama_server fixture), tokens from the replies' usage, failed requests recorded; its markdown
line on the HF variants' best over llama.cpp."""
import socket

import bench_scripts  # tests/benchmarks/ is on sys.path (pytest's rootdir-less import)

gs = bench_scripts.load("gen_speed")
CHATS = [[{"role": "user", "content": "Name a colour."}], [{"role": "user", "content": "Say hello to Ada."}]]


def test_llamacpp_batch_counts_completion_tokens(llama_server):
    r = gs.chat_batch(llama_server, CHATS, max_tokens=4, seed=0, model="smollm2-gguf", timeout_s=300)
    assert r["errors"] == []
    assert 2 <= r["tokens"] <= 8 and 1 <= r["longest"] <= 4 and r["seconds"] > 0


def test_llamacpp_failed_requests_are_recorded_not_raised():
    with socket.socket() as sock:  # a loopback port with nothing listening on it
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    r = gs.chat_batch(f"http://127.0.0.1:{port}/v1", CHATS, max_tokens=4, timeout_s=10)
    assert r["tokens"] == 0 and len(r["errors"]) == 2 and all("URLError" in e for e in r["errors"])


def test_hf_best_over_llamacpp_line():
    summary = [{"batch": 4, "prompts": "y1", "variant": v, "tokens_per_s": t, "failed_requests": f}
               for v, t, f in (("peft_fp32", 20.0, 0), ("merged_bf16", 30.0, 0), ("llamacpp", 15.0, 1))]
    lines = gs.llama_lines(summary, ["peft_fp32", "merged_bf16", "llamacpp"], [4], {"llamacpp": {"start_s": 3.0}})
    assert "one request at a time" in lines[0] and "started in 3.0 s" in lines[0]
    assert lines[1] == ("HF best / llama.cpp (llamacpp): batch 4 y1 2.00x (merged_bf16); "
                        "batch 4 y1: 1 failed requests (summary.json).")
