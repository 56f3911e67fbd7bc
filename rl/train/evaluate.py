"""Evaluation: a policy's episodes on a task list and their pass@k (the unbiased estimator and
per-task aggregation). `evaluate` needs only a rollout engine: the trainer calls it between
iterations, scripts/evaluate.py on a checkpoint without building a trainer.

`pass_at_k(n, c, k)` is the estimator of Chen et al. (2021):
1 - C(n-c, k) / C(n, k), computed as a stable product.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from rl.env import episode as episode_lib


def pass_at_k(n: int, c: int, k: int) -> float:
  """Unbiased probability that at least one of k samples (of n, c correct) passes."""
  for name, value in (("n", n), ("c", c), ("k", k)):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
      raise TypeError(f"pass_at_k: {name} must be an integer, got {value!r}")
  if n < 1:
    raise ValueError(f"pass_at_k: n must be >= 1, got {n}")
  if not 0 <= c <= n:
    raise ValueError(f"pass_at_k: c must be in [0, n={n}], got {c}")
  if not 1 <= k <= n:
    raise ValueError(f"pass_at_k: k must be in [1, n={n}], got {k}")
  if n - c < k:
    return 1.0
  # 1 - prod_{i=n-c+1}^{n} (1 - k / i): no huge binomials, no overflow.
  return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1, dtype=np.float64)))


def pass_at_k_table(results: Iterable[tuple[str, bool]], ks: Sequence[int]) -> dict[str, float]:
  """Mean pass@k over tasks from (task_id, success) pairs; ks larger than n are skipped."""
  per_task: Mapping[str, list[bool]] = defaultdict(list)
  for task_id, success in results:
    per_task[task_id].append(bool(success))
  if not per_task:
    raise ValueError("pass_at_k_table: no results")
  out = {}
  for k in ks:
    values = [pass_at_k(len(v), sum(v), k) for v in per_task.values() if len(v) >= k]
    if values:
      out[f"pass@{k}"] = float(np.mean(values))
  out["num_tasks"] = len(per_task)
  out["samples_per_task"] = min(len(v) for v in per_task.values())
  return out


def reward_ability_correlation(train_rewards: Sequence[float], heldout_pass: Sequence[float]) -> dict:
  """Pearson correlation between training reward and held-out pass@1 across checkpoints.

  Reward rising while held-out pass@1 stays flat is the classic sign of reward
  hacking or overfitting to the training tasks; the verdict string says so.
  """
  r, p = np.asarray(train_rewards, float), np.asarray(heldout_pass, float)
  if r.shape != p.shape or r.size < 2:
    raise ValueError("reward_ability_correlation: need >= 2 paired checkpoints")
  corr = float(np.corrcoef(r, p)[0, 1]) if r.std() > 0 and p.std() > 0 else float("nan")
  reward_gain, pass_gain = float(r[-1] - r[0]), float(p[-1] - p[0])
  if reward_gain > 0 and pass_gain <= 0:
    verdict = "WARNING: training reward rose while held-out pass@1 did not (hacking or overfitting?)"
  elif math.isnan(corr):
    verdict = "flat series: no correlation to report"
  elif corr < 0.3:
    verdict = "weak link between training reward and held-out ability"
  else:
    verdict = "training reward tracks held-out ability"
  return {"pearson_r": corr, "reward_gain": reward_gain, "heldout_pass_gain": pass_gain, "verdict": verdict}


def evaluate(engine: Any, tasks: Sequence[Any], *, samples: int, rows: int,
             share: Callable[[Sequence], Sequence] = list,
             gather: Callable[[Sequence], list] = list) -> tuple[dict[str, float], list]:
  """(metrics, episodes): `samples` episodes of every task in `tasks` with `engine`'s policy as it
  is set (weights, temperature, seed), and their pass@1 and pass@samples ("eval/pass@k"); an
  infrastructure failure says nothing about the policy, so it is counted ("eval/infra_failed")
  and left out, not a failed sample.

  At most `rows` concurrent episodes (a training iteration's: a bigger batch would grow the
  sampler's rows and KV cache for the rest of a run and recompile decoding). Several processes:
  `share` picks this process's tasks, `gather` returns every process's episodes.
  """
  per_call = max(1, rows // samples)
  mine = list(share(tasks))
  episodes: list = []
  for s in range(0, len(mine), per_call):
    episodes += engine.run(mine[s:s + per_call], group_size=samples)[0]
  episodes = gather(episodes)
  failed = sum(e.infra_failure is not None for e in episodes)
  episodes = [e for e in episodes if e.infra_failure is None]
  result = {"eval/infra_failed": float(failed)} if failed else {}
  if episodes:
    table = pass_at_k_table([(e.task_id, e.success) for e in episodes], ks=sorted({1, samples}))
    result.update({f"eval/{k}": v for k, v in table.items()})
    # MLE tasks: success is a valid submission; the score of the valid ones says how good.
    result.update({f"eval/{k}": v for k, v in episode_lib.mle_metrics(episodes).items()})
  return result, episodes
