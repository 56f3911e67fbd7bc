"""Evaluation of integer and float arithmetic expressions such as '2 * (3 + 4) ** 2'."""

from exprcalc.evaluator import evaluate
from exprcalc.tokenizer import tokenize

__all__ = ["evaluate", "tokenize"]
