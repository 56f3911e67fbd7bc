"""Synthetic bug-fix tasks: a bundled function library, mutation operators and a verified generator."""

from rl.tasks.synthetic.generator import bug_identity, cached_or_generate, generate, function_split, TIERS
from rl.tasks.synthetic.library import LIBRARY, LibraryFunction
