"""Trajectory-length statistics and the advantage-estimator recommendation they imply.

  python scripts/traj_stats.py runs/x/trajectories [--by turns|tokens] [--group task|prefix] [--json]
      [--step N]   # only iteration N's rollouts (the records' model.step; 0 = the first iteration)

Prints how episodes ended (success, or the failure's first kind: code edited but tests fail, a
tool error such as an `old` string not found, a malformed call, no edit at all), length
percentiles overall, per task group and split by success, the P90/P10 ratio, how often one task
has both a short failure and a long success, and a one-line recommendation:
when lengths vary widely (P90/P10 > 5), a group mean mixes very different credit-assignment
problems and a critic (PPO with GAE) is argued for; otherwise group-relative advantages suffice.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from typing import Any, Iterable, Mapping

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from rl.env.trajectory import read_trajectories  # noqa: E402

PERCENTILES = (10, 25, 50, 75, 90)
RATIO_THRESHOLD = 5.0


def trajectory_length(record: Mapping[str, Any], by: str) -> int:
  steps = record.get("steps", [])
  if by == "turns":
    return len(steps)
  if by == "tokens":
    return int(sum((s.get("tokens") or {}).get("action", 0) + (s.get("tokens") or {}).get("observation", 0)
                   for s in steps))
  raise ValueError(f"unknown length measure {by!r}; expected 'turns' or 'tokens'")


OUTCOMES = ("success", "flagged", "edited, tests fail", "tool error", "malformed call", "no edit")
_EDIT_TOOLS = ("edit_file", "write_file", "answer")


def outcome(record: Mapping[str, Any]) -> str:
  """How an episode ended: "success", or for a failure the first that applies of "flagged"
  (anti-hack), "edited, tests fail" (an edit went through), "tool error" (a well-formed call the
  tool refused, e.g. `old` not found), "malformed call" (no usable tool call), "no edit"."""
  if record.get("success"):
    return "success"
  if (record.get("hack") or {}).get("flagged"):
    return "flagged"
  steps = record.get("steps", [])
  refused = lambda s: str(s.get("observation") or "").startswith("Error")
  if any(s.get("action_type") in _EDIT_TOOLS and not refused(s) for s in steps):
    return "edited, tests fail"
  if any(s.get("action_type") is not None and refused(s) for s in steps):
    return "tool error"
  if any(s.get("action_type") is None for s in steps):
    return "malformed call"
  return "no edit"


def task_group(task_id: str, how: str) -> str:
  if how == "task":
    return task_id
  if how == "prefix":  # "fix-add-3" -> "fix-add": tasks generated from one template
    return task_id.rsplit("-", 1)[0] if "-" in task_id else task_id
  raise ValueError(f"unknown grouping {how!r}; expected 'task' or 'prefix'")


def percentiles(values: Iterable[float]) -> dict[str, float]:
  values = np.asarray(list(values), dtype=np.float64)
  if values.size == 0:
    return {}
  out = {f"p{p}": float(np.percentile(values, p)) for p in PERCENTILES}
  out.update(n=int(values.size), mean=float(values.mean()))
  return out


def compute_stats(records: Iterable[Mapping[str, Any]], *, by: str = "turns", group: str = "task") -> dict[str, Any]:
  records = list(records)
  ends = collections.Counter(outcome(r) for r in records)
  rows = [(task_group(r["task_id"], group), r["task_id"], trajectory_length(r, by), bool(r.get("success")))
          for r in records]
  if not rows:
    raise ValueError("no trajectory records to summarise")
  lengths = np.array([n for _, _, n, _ in rows], dtype=np.float64)
  overall = percentiles(lengths)
  p10 = max(overall["p10"], 1.0)  # a zero-length P10 would make the ratio meaningless
  ratio = overall["p90"] / p10
  by_group: dict[str, list[int]] = collections.defaultdict(list)
  for g, _, n, _ in rows:
    by_group[g].append(n)
  by_task: dict[str, list[tuple[int, bool]]] = collections.defaultdict(list)
  for _, t, n, ok in rows:
    by_task[t].append((n, ok))
  # A task "shares" short failures and long successes when one of its failures is shorter than
  # the overall median while one of its successes is longer: the same prompt then yields
  # opposite outcomes at opposite lengths, which a single group baseline cannot separate.
  median = overall["p50"]
  multi = {t: eps for t, eps in by_task.items() if len(eps) >= 2}
  mixed = [t for t, eps in multi.items()
           if any(not ok and n < median for n, ok in eps) and any(ok and n > median for n, ok in eps)]
  stats = {
      "measure": by,
      "episodes": len(rows),
      "success_rate": float(np.mean([ok for *_, ok in rows])),
      "outcomes": {k: ends[k] / len(rows) for k in OUTCOMES},
      "overall": overall,
      "success": percentiles(n for *_, n, ok in rows if ok),
      "failure": percentiles(n for *_, n, ok in rows if not ok),
      "groups": {g: percentiles(v) for g, v in sorted(by_group.items())},
      "p90_p10_ratio": ratio,
      "tasks_with_several_episodes": len(multi),
      "tasks_short_failure_long_success": len(mixed),
      "short_failure_long_success_frac": len(mixed) / len(multi) if multi else 0.0,
  }
  stats["recommendation"] = recommend(stats)
  return stats


def recommend(stats: Mapping[str, Any]) -> str:
  ratio, mixed = stats["p90_p10_ratio"], stats["short_failure_long_success_frac"]
  numbers = (f"P90/P10 = {ratio:.2f} ({stats['measure']}: P10 {stats['overall']['p10']:.0f}, "
             f"P90 {stats['overall']['p90']:.0f}); {100 * mixed:.0f}% of multi-episode tasks have a short "
             f"failure and a long success")
  if ratio > RATIO_THRESHOLD:
    return (f"critic-based PPO (GAE, algo.advantage_estimator=gae) recommended over group normalisation: "
            f"{numbers}")
  return f"group-relative advantages (grpo/rloo) are adequate: {numbers}"


def format_table(stats: Mapping[str, Any], max_groups: int = 30) -> str:
  def row(name: str, p: Mapping[str, float]) -> str:
    if not p:
      return f"{name:<32} (none)"
    cells = " ".join(f"{p[f'p{q}']:>7.1f}" for q in PERCENTILES)
    return f"{name:<32} {p['n']:>5} {cells} {p['mean']:>8.1f}"

  header = f"{'':<32} {'n':>5} " + " ".join(f"{'p' + str(q):>7}" for q in PERCENTILES) + f" {'mean':>8}"
  lines = [f"trajectory length in {stats['measure']}; {stats['episodes']} episodes, "
           f"success rate {stats['success_rate']:.3f}",
           "outcomes: " + ", ".join(f"{k} {v:.2f}" for k, v in stats["outcomes"].items() if v), header,
           row("all", stats["overall"]), row("success", stats["success"]), row("failure", stats["failure"])]
  groups = list(stats["groups"].items())
  for g, p in groups[:max_groups]:
    lines.append(row(f"  {g}"[:32], p))
  if len(groups) > max_groups:
    lines.append(f"  ... {len(groups) - max_groups} more groups (--json for all)")
  lines.append(f"P90/P10 ratio: {stats['p90_p10_ratio']:.2f}")
  lines.append(f"tasks with a short failure and a long success: {stats['tasks_short_failure_long_success']}"
               f"/{stats['tasks_with_several_episodes']}")
  lines.append(f"recommendation: {stats['recommendation']}")
  return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("file", help="trajectory JSONL file or directory")
  parser.add_argument("--by", choices=("turns", "tokens"), default="turns")
  parser.add_argument("--group", choices=("task", "prefix"), default="task")
  parser.add_argument("--json", action="store_true", help="print the statistics as one JSON object")
  parser.add_argument("--step", type=int, default=None,
                      help="only the records of this iteration (model.step; 0 = the first iteration)")
  args = parser.parse_args(argv)
  records = read_trajectories(args.file, validate=False)
  if args.step is not None:
    records = [r for r in records if (r.get("model") or {}).get("step") == args.step]
    if not records:
      parser.error(f"no trajectory records of iteration {args.step} (model.step) in {args.file}")
  stats = compute_stats(records, by=args.by, group=args.group)
  print(json.dumps(stats) if args.json else format_table(stats))
  return 0


if __name__ == "__main__":
  sys.exit(main())
