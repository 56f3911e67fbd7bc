"""Self-improvement: a per-task buffer of earlier solutions and improve-previous prompts.

Each finished episode's program, score and terminal output (instrumentation markers
included) go into a bounded per-task buffer. With a scheduled probability, a rollout
starts from a prompt asking to improve a previous solution (sampled by score) instead
of solving from scratch. The buffer and the sampler's RNG are checkpointed as JSON.

    si = SelfImprovement.from_config(config.self_improve, total_steps=config.trainer.iterations)
    prompt, parent = si.prompt(task.id, task.statement, step)      # parent is None: from scratch
    si.record(task.id, code, score, terminal_output, step)
    host_state["self_improve"] = si.state_dict()                   # JSON, with the checkpoint
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

import ml_collections
import numpy as np

EVICTION_POLICIES = ("lowest_score", "oldest")
STATE_VERSION = 1

IMPROVE_INSTRUCTION = (
    "Improve the previous solution below. First outline the revision you will make in a few "
    "sentences: what to change and why, given its score and output. Then write the complete "
    "revised program. Reuse the parts that already work (data loading, the submission format) "
    "rather than starting over, and keep the program runnable in the time limit.")


@dataclasses.dataclass
class BufferEntry:
  """One earlier solution of a task."""

  task_id: str
  code: str
  score: float  # the episode's score (sign-normalised reward: higher is better)
  output: str  # terminal output of the final run, instrumentation markers included
  step: int  # training iteration that produced it
  entry_id: int  # insertion order over the whole buffer ("oldest" = smallest)
  times_sampled: int = 0

  def to_dict(self) -> dict[str, Any]:
    return dataclasses.asdict(self)


class SelfImproveBuffer:
  """Per-task solutions with a capacity, eviction and score-prioritised sampling.

  `eviction="lowest_score"` drops the worst solution (the oldest among equals) when a task
  is over capacity; `"oldest"` drops the first inserted. Sampling draws entry i with
  probability proportional to exp(score_i / temperature); temperature 0 is greedy.
  Re-adding identical code for a task replaces the old entry (new score and output).
  """

  def __init__(self, capacity: int = 8, *, eviction: str = "lowest_score", temperature: float = 1.0,
               seed: int = 0):
    if int(capacity) < 1:
      raise ValueError(f"self_improve capacity must be >= 1, got {capacity}")
    if eviction not in EVICTION_POLICIES:
      raise ValueError(f"unknown eviction policy {eviction!r}; known: {', '.join(EVICTION_POLICIES)}")
    if not float(temperature) >= 0:
      raise ValueError(f"self_improve temperature must be >= 0, got {temperature}")
    self.capacity = int(capacity)
    self.eviction = eviction
    self.temperature = float(temperature)
    self.rng = np.random.default_rng(seed)
    self._entries: dict[str, list[BufferEntry]] = {}
    self._next_id = 0

  def __len__(self) -> int:
    return sum(len(v) for v in self._entries.values())

  def tasks(self) -> list[str]:
    return sorted(t for t, v in self._entries.items() if v)

  def entries(self, task_id: str) -> list[BufferEntry]:
    return list(self._entries.get(task_id, []))

  def add(self, task_id: str, code: str, score: float, output: str = "", step: int = 0) -> BufferEntry | None:
    """Adds a solution; returns the evicted entry, if any (possibly the new one itself)."""
    if not isinstance(task_id, str) or not task_id:
      raise ValueError(f"task_id must be a non-empty string, got {task_id!r}")
    if not isinstance(code, str):
      raise TypeError(f"code must be a str, got {type(code).__name__}")
    score = float(score)
    if math.isnan(score):
      raise ValueError(f"score of a {task_id!r} solution is NaN; pass the episode's (finite) reward")
    bucket = self._entries.setdefault(task_id, [])
    for i, e in enumerate(bucket):
      if e.code == code:
        del bucket[i]  # the same program again: keep only the latest evidence about it
        break
    entry = BufferEntry(task_id, code, score, str(output), int(step), self._next_id)
    self._next_id += 1
    bucket.append(entry)
    if len(bucket) <= self.capacity:
      return None
    if self.eviction == "oldest":
      victim = min(bucket, key=lambda e: e.entry_id)
    else:
      victim = min(bucket, key=lambda e: (e.score, e.entry_id))
    bucket.remove(victim)
    return victim

  def probabilities(self, task_id: str) -> np.ndarray:
    """Sampling probabilities over `entries(task_id)` (in that order)."""
    bucket = self._entries.get(task_id, [])
    if not bucket:
      return np.zeros(0)
    scores = np.array([e.score for e in bucket], dtype=np.float64)
    scores = np.nan_to_num(scores, neginf=-1e30, posinf=1e30)
    if self.temperature == 0:
      best = scores == scores.max()
      return best / best.sum()
    logits = (scores - scores.max()) / self.temperature
    weights = np.exp(logits)
    return weights / weights.sum()

  def sample(self, task_id: str) -> BufferEntry | None:
    """A previous solution of `task_id`, better scores more likely; None when there is none."""
    bucket = self._entries.get(task_id, [])
    if not bucket:
      return None
    entry = bucket[int(self.rng.choice(len(bucket), p=self.probabilities(task_id)))]
    entry.times_sampled += 1
    return entry

  def best(self, task_id: str) -> BufferEntry | None:
    bucket = self._entries.get(task_id, [])
    return max(bucket, key=lambda e: (e.score, e.entry_id)) if bucket else None

  def state_dict(self) -> dict[str, Any]:
    """JSON-serialisable state: entries, settings and the sampler's RNG."""
    return {"version": STATE_VERSION, "capacity": self.capacity, "eviction": self.eviction,
            "temperature": self.temperature, "next_id": self._next_id,
            "rng": self.rng.bit_generator.state,
            "entries": {t: [e.to_dict() for e in v] for t, v in sorted(self._entries.items())}}

  def load_state_dict(self, state: Mapping[str, Any]) -> None:
    """Restores `state_dict()` output (settings in the state replace the constructor's)."""
    if not isinstance(state, Mapping) or state.get("version") != STATE_VERSION:
      raise ValueError(f"not a self-improvement buffer state of version {STATE_VERSION}: "
                       f"{str(state)[:100]}")
    self.capacity = int(state["capacity"])
    self.eviction = state["eviction"]
    self.temperature = float(state["temperature"])
    self._next_id = int(state["next_id"])
    self.rng = np.random.default_rng()
    self.rng.bit_generator.state = state["rng"]
    self._entries = {t: [BufferEntry(**e) for e in v] for t, v in state["entries"].items()}


def improve_probability(step: int, total_steps: int, start: float, final: float = -1.0) -> float:
  """The scheduled chance of an improve-previous prompt: constant `start` when `final` < 0,
  else linear from `start` at step 0 to `final` at the last step."""
  for name, value in (("probability", start), ("probability_final", final)):
    if value > 1:
      raise ValueError(f"self_improve.{name} must be <= 1, got {value}")
  if start < 0:
    raise ValueError(f"self_improve.probability must be >= 0, got {start}")
  if final < 0 or total_steps <= 1:
    return float(start)
  frac = min(max(step / (total_steps - 1), 0.0), 1.0)
  return float(start + (final - start) * frac)


def _clip_middle(text: str, limit: int) -> str:
  if len(text) <= limit:
    return text
  half = max(limit // 2, 1)
  return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


def build_improve_prompt(statement: str, entry: BufferEntry, *, max_code_chars: int = 8000,
                         max_output_chars: int = 2000) -> str:
  """The task statement followed by a previous solution, its score and output, and the instruction."""
  return (f"{statement.rstrip()}\n\n"
          f"## Previous solution (score {entry.score:.6g}, higher is better)\n\n"
          f"```python\n{_clip_middle(entry.code, max_code_chars).rstrip()}\n```\n\n"
          f"## Its terminal output\n\n```\n{_clip_middle(entry.output, max_output_chars).rstrip()}\n```\n\n"
          f"## Instruction\n\n{IMPROVE_INSTRUCTION}\n")


class SelfImprovement:
  """The trainer-facing controller: a buffer plus the improve-previous schedule."""

  def __init__(self, buffer: SelfImproveBuffer, *, enabled: bool = True, probability: float = 0.0,
               probability_final: float = -1.0, total_steps: int = 1, seed: int = 0):
    improve_probability(0, total_steps, probability, probability_final)  # validates
    self.buffer = buffer
    self.enabled = bool(enabled)
    self.probability = float(probability)
    self.probability_final = float(probability_final)
    self.total_steps = int(total_steps)
    self.rng = np.random.default_rng([seed, 17])
    self.improve_prompts = 0
    self.scratch_prompts = 0

  @classmethod
  def from_config(cls, self_improve_config: Any, *, total_steps: int, seed: int = 0) -> "SelfImprovement":
    c = self_improve_config  # every field read directly: no second default (configs/default.py)
    if isinstance(c, Mapping):
      c = ml_collections.ConfigDict(dict(c))
    buffer = SelfImproveBuffer(int(c.capacity), eviction=c.eviction, temperature=float(c.temperature), seed=seed)
    return cls(buffer, enabled=bool(c.enabled), probability=float(c.probability),
               probability_final=float(c.probability_final), total_steps=total_steps, seed=seed)

  def current_probability(self, step: int) -> float:
    if not self.enabled:
      return 0.0
    return improve_probability(step, self.total_steps, self.probability, self.probability_final)

  def prompt(self, task_id: str, statement: str, step: int) -> tuple[str, BufferEntry | None]:
    """(prompt, parent): an improve-previous prompt with the scheduled probability when the
    task has earlier solutions, else the plain statement and None."""
    if self.enabled and self.buffer.entries(task_id) and self.rng.random() < self.current_probability(step):
      parent = self.buffer.sample(task_id)
      self.improve_prompts += 1
      return build_improve_prompt(statement, parent), parent
    self.scratch_prompts += 1
    return statement, None

  def record(self, task_id: str, code: str, score: float, output: str = "", step: int = 0) -> None:
    if self.enabled and code.strip():
      self.buffer.add(task_id, code, score, output, step)

  def metrics(self, step: int) -> dict[str, float]:
    total = self.improve_prompts + self.scratch_prompts
    return {"self_improve/probability": self.current_probability(step),
            "self_improve/improve_fraction": self.improve_prompts / total if total else 0.0,
            "self_improve/buffer_size": float(len(self.buffer))}

  def state_dict(self) -> dict[str, Any]:
    return {"buffer": self.buffer.state_dict(), "rng": self.rng.bit_generator.state,
            "improve_prompts": self.improve_prompts, "scratch_prompts": self.scratch_prompts}

  def load_state_dict(self, state: Mapping[str, Any]) -> None:
    self.buffer.load_state_dict(state["buffer"])
    self.rng = np.random.default_rng()
    self.rng.bit_generator.state = state["rng"]
    self.improve_prompts = int(state["improve_prompts"])
    self.scratch_prompts = int(state["scratch_prompts"])
