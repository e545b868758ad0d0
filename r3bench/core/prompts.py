"""The prompts of every r3bench task (CoT and seven-tag structured); SFT exports use the same ones."""
from __future__ import annotations

from verifiers import seventag


ANSWER_FORM = {
    "mcq": "Exactly one option is correct. Give its letter in the box, e.g. \\boxed{B}.",
    "mcq_multi": "One or more options are correct. Give all correct letters in the box, e.g. \\boxed{AC}.",
    "integer": "The answer is an integer. Give it in the box, e.g. \\boxed{4}.",
    "numeric": "Give the number with its unit in the box, e.g. \\boxed{9.8\\ \\mathrm{m/s^2}}.",
    "symbolic": "Give the expression in the box, e.g. \\boxed{\\sqrt{2 g h}}.",
    "text": "Give the answer in the box.",
}


def _question_block(doc: dict) -> str:
    lines = [f"Question: {doc['question'].strip()}"]
    if doc.get("options"):
        lines.append("Options:")
        lines += [f"({chr(65 + i)}) {o.strip()}" for i, o in enumerate(doc["options"])]
    return "\n".join(lines)


def prompt_cot(doc: dict) -> str:
    return ("Solve the following physics problem. Reason step by step, then write the final answer as "
            "\\boxed{...}. " + ANSWER_FORM.get(doc["answer_kind"], ANSWER_FORM["text"]) + "\n\n"
            + _question_block(doc) + "\n\nSolution:")


def prompt_structured(doc: dict) -> str:
    return (seventag.CONVENTIONS.strip() + "\n" + ANSWER_FORM.get(doc["answer_kind"], ANSWER_FORM["text"])
            + "\n\n" + _question_block(doc) + "\n\nSolution:")
