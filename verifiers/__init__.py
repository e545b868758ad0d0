from verifiers.answer import KINDS, CheckConfig, Verdict, canonical, check
from verifiers.extract import extract_answer, extract_letters

__all__ = ["check", "canonical", "Verdict", "CheckConfig", "KINDS", "extract_answer", "extract_letters"]
