"""Supervised fine-tuning on demonstrations: the scripted expert's episodes (or logged records')
before RL, and PPO-ptx's NLL steps on the same demonstrations during it.

The trainer runs the demonstrations through its rollout engine and owns the train state; this
module builds the expert, the padded demonstration batch and the NLL step loop both phases share.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import numpy as np

from rl.algo import batching
from rl.env import actors


def scripted_expert(config: Any, renderer: Any) -> actors.ScriptedExpert:
  """The expert whose solved episodes are the demonstrations, with the config's habits
  (`sft.expert_*`: how often it explores, runs, writes, thinks, gives up, makes a mistake, writes a
  faulty program on a program-writing task such as MLE)."""
  s = config.sft
  return actors.ScriptedExpert(
      renderer, seed=config.seed, explore_prob=s.expert_explore_prob, run_prob=s.expert_run_prob,
      write_prob=s.expert_write_prob, thought_prob=s.expert_thought_prob,
      minimal_edits=s.expert_minimal_edits, give_up_prob=s.expert_give_up_prob,
      mistake_prob=s.expert_mistake_prob, read_prob=None if s.expert_read_prob < 0 else s.expert_read_prob,
      program_fault_prob=s.expert_program_fault_prob, give_up_within=int(s.get("expert_give_up_within", 0)))


def demonstration_batch(demos: Sequence[Any], *, pad_id: int, pad_multiple: int) -> batching.RolloutBatch:
  """The demonstrations as one padded batch; the turns that failed (a malformed call or a tool
  error, such as the expert's deliberate mistakes) are left out of the loss, so the policy
  clones how a demonstration recovered and not what went wrong."""
  batch = batching.episodes_to_batch(demos, pad_id=pad_id, pad_multiple=pad_multiple)
  keep = batching.error_turn_keep(demos, batch.turn_ids, "error_turns")
  return dataclasses.replace(batch, action_mask=batch.action_mask * keep)


def nll_steps(step_fn: Callable, params: Any, opt: Any, batch: batching.RolloutBatch, *, steps: int,
              batch_size: int, rng: np.random.Generator, minibatch: Callable[[batching.RolloutBatch, np.ndarray], dict],
              on_step: Callable[[float], None] | None = None) -> tuple[Any, Any, list[float]]:
  """`steps` NLL steps of `step_fn` (rl.algo.update.make_sft_step) on `batch_size` demonstrations
  drawn by `rng` (with replacement only when there are fewer); `minibatch(batch, rows)` makes a
  step's device inputs. Returns the new params, optimiser state and each step's NLL."""
  n = batch.tokens.shape[0]
  nll: list[float] = []
  for _ in range(steps):
    rows = rng.choice(n, size=batch_size, replace=n < batch_size)
    params, opt, metrics = step_fn(params, opt, minibatch(batch, rows))
    nll.append(float(metrics["sft/nll"]))
    if on_step is not None:
      on_step(nll[-1])
  return params, opt, nll
