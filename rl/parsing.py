"""`ast.parse` behind one process-wide lock.

CPython 3.11's AST constructor is not thread-safe: two threads parsing at once can fail with
"SystemError: AST constructor recursion depth mismatch". The anti-hack rules parse in grading
threads while the rollout engine's instrumenter parses programs on its own, so every parse in
the library takes this lock.
"""

from __future__ import annotations

import ast
import threading

PARSE_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.Module:
  """`ast.parse(source, filename, mode)` under PARSE_LOCK."""
  with PARSE_LOCK:
    return ast.parse(source, filename, mode)
