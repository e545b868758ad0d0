from verifiers.answer import KINDS, Verdict, canonical, check, close
from verifiers.config import CheckConfig
from verifiers.extract import extract_answer, extract_letters, read_answer, read_letters

__all__ = ["check", "close", "canonical", "Verdict", "CheckConfig", "KINDS", "extract_answer", "extract_letters",
           "read_answer", "read_letters"]
