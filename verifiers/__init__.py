from verifiers.answer import CheckConfig, Verdict, check
from verifiers.extract import extract_answer, extract_letters

__all__ = ["check", "Verdict", "CheckConfig", "extract_answer", "extract_letters"]
