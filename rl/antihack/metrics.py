"""Anti-hack metrics from trajectory records: flag rate overall, per stage, per rule, judge scores.

The trainer calls `metrics_from_records(records)` once per iteration; the names are the
"/"-named scalars of metrics.jsonl ("antihack/flag_rate" is fixed by ARCHITECTURE.md).
"""

from __future__ import annotations

import collections
from typing import Any, Iterable, Mapping


def metrics_from_records(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
  """antihack/flag_rate, antihack/stage/<stage>_rate, antihack/rule/<id>_rate (episodes with a hit),
  antihack/action_flags_per_episode and antihack/judge_score_mean (when the judge scored)."""
  records = [r for r in records if isinstance(r, Mapping)]
  n = len(records)
  if n == 0:
    return {}
  flagged = 0
  stages: collections.Counter[str] = collections.Counter()
  rules: collections.Counter[str] = collections.Counter()
  action_flags = 0
  judge_scores = []
  for r in records:
    hack = r.get("hack") or {}
    episode_rules = set(hack.get("rules") or ())
    if hack.get("flagged"):
      flagged += 1
      stages[hack.get("stage") or "unknown"] += 1
    if hack.get("judge_score") is not None:
      judge_scores.append(float(hack["judge_score"]))
    for step in r.get("steps") or ():
      step_hack = step.get("hack") if isinstance(step, Mapping) else None
      if step_hack and step_hack.get("flagged"):
        action_flags += 1
        episode_rules.update(step_hack.get("rules") or ())
    rules.update(episode_rules)
  out = {"antihack/flag_rate": flagged / n, "antihack/action_flags_per_episode": action_flags / n}
  for stage, count in stages.items():
    out[f"antihack/stage/{stage}_rate"] = count / n
  for rule, count in rules.items():
    out[f"antihack/rule/{rule}_rate"] = count / n
  if judge_scores:
    out["antihack/judge_score_mean"] = sum(judge_scores) / len(judge_scores)
  return out
