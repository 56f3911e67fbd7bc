"""Installs the grading audit hook and outcome channel in every Python process of a grading run.

Put on PYTHONPATH (read-only, outside the workspace) only for grading runs. It runs at
interpreter start-up, before any workspace code: the grader's modules and the standard
library modules they use are imported with the PYTHONPATH entries (which may point into the
workspace) taken off sys.path, so a workspace json.py or rlcoder_verdict.py cannot stand in.
"""
import os
import sys

if os.environ.get("RLCODER_AUDIT_CONFIG") or os.environ.get("RLCODER_VERDICT_FDS"):
  _saved = list(sys.path)
  _here = os.path.dirname(os.path.abspath(__file__))
  _extra = set(os.environ.get("PYTHONPATH", "").split(os.pathsep)) - {_here}
  sys.path[:] = [_here] + [p for p in _saved if p not in _extra and p != _here]
  try:
    import rlcoder_verdict
    import rlcoder_audit
    rlcoder_verdict.install_from_env(getattr(sys, "orig_argv", sys.argv))
    if os.environ.get("RLCODER_AUDIT_CONFIG"):
      rlcoder_audit.install_from_env(rlcoder_verdict.channel())
  except Exception:  # never break the interpreter; a missing stream or log is itself evidence
    pass
  finally:
    sys.path[:] = _saved
