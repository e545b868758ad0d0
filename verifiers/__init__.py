"""r3bench's checker and step verifiers: the ground floor (imports nothing of r3bench or trainers).

The map, one module a line (the answer checker, then the step verifier, then what builds on verdicts):

  answer          check(pred, ref, kind, cfg) -> Verdict: the answer checker; KINDS, close, canonical
  extract         reading the committed answer (and MCQ letters) out of a model's text
  symbolic        symbolic equivalence of two expressions (LaTeX / sympy syntax, numeric sampling)
  safeexpr        text -> sympy through a whitelisted syntax tree, never eval
  worker          the hard time limit: sympy work in a killable worker subprocess
  units           the one pint UnitRegistry of the project
  config          CheckConfig: every tolerance of the checker and the step verifier
  seventag        the seven-tag format: TAGS, parse, render, format_compliance
  verdict         StepVerdict (the one step verdict type) and the seven-step numbering and classes
  steps           the step verifier's entry: verify, report, the backend table BACKENDS (public)
  tag_format      the format check every backend runs first: format_error -> FORMAT verdict
  step_reading    reading seven-tag steps as data: equations, values with units, named laws
  step_checks     the checks both symbolic modes share: dimensions, laws, steps 5-7 arithmetic
  reference_based the symbolic backend against a seven-tag reference (verify_symbolic)
  reference_free  the symbolic backend without a reference (dimensions, givens, arithmetic, gold)
  judge           the LLM-judge backend (JudgeConfig, Judge) on any OpenAI-compatible endpoint
  psv             the process-supervised verifier backend (PsvConfig, PSV)
  rewards         reward equations on verdicts and TRL reward_funcs (REWARDS)
  feedback        feedback by error class (MC prompt, CM formula retrieval, CE sandbox): CHANNELS
  formulas        the formula corpus (formulas.yaml), dimension-checked
  formula_store   the one formula store (a ChromaDB collection) the RAG index and the CM channel query
  sandbox         running model code: run_python inside namespaces, isolation_level
  sandbox_runner  the sandbox's trusted supervisor and its worker (limits, seccomp, audit hook)
  seccomp         the seccomp filter (libseccomp through ctypes)
"""
from verifiers.answer import KINDS, Verdict, canonical, check, close
from verifiers.config import CheckConfig
from verifiers.extract import extract_answer, extract_letters, read_answer, read_letters

__all__ = ["check", "close", "canonical", "Verdict", "CheckConfig", "KINDS", "extract_answer", "extract_letters",
           "read_answer", "read_letters"]
