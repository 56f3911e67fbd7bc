"""Installs the grading audit hook in every Python process started during grading.

Put on PYTHONPATH (read-only, outside the workspace) only for grading runs.
"""
import os

if os.environ.get("RLCODER_AUDIT_CONFIG"):
  try:
    import rlcoder_audit
    rlcoder_audit.install_from_env()
  except Exception:  # never break the interpreter; the missing log is itself evidence
    pass
