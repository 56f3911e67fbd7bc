"""Policies that drive rollouts: the Policy protocol, a scripted expert and the model policy.

The rollout engine calls `policy.act(requests)` once per turn with every episode that needs an
action; a policy returns token ids, their sampler log-probabilities and the decoded text.
`ScriptedExpert` solves synthetic tasks from `task.metadata["fix"]` with varied, realistic tool
use (SFT demonstrations, end-to-end tests without a model); `ModelPolicy` wraps `rl.env.sampling`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import random
import zlib
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from rl.env.tools import TOOL_CALL_END, TOOL_CALL_START, ChatRenderer, solution_file_for


@dataclasses.dataclass
class ActRequest:
  """One episode asking for its next action.

  episode_id: stable key of the episode for the whole rollout (the sampler's cache slot).
  new_tokens: tokens appended since this episode's previous request (the full prompt first).
  context: every token of the episode so far (prompt + actions + observations).
  messages: the chat so far (for text-level policies).
  max_new_tokens: the generation budget of this turn (per-turn and trajectory limits applied).
  turns_left: how many actions the episode may still take, this one included.
  """
  episode_id: int
  task: Any
  new_tokens: list[int]
  context: list[int]
  messages: list[dict[str, str]]
  turn: int
  max_new_tokens: int
  turns_left: int
  mode: str = "multi_turn"


@dataclasses.dataclass
class ActResult:
  """The policy's message: `tokens` include the stop token when `finished`."""
  tokens: list[int]
  logprobs: list[float]
  text: str
  finished: bool = True


class Policy(Protocol):
  """What the rollout engine needs from a policy."""

  def act(self, requests: Sequence[ActRequest]) -> list[ActResult]:
    """Returns one result per request, in order; all requests are decoded as one batch."""

  def release(self, episode_ids: Sequence[int]) -> None:
    """The episodes left the batch; free their per-episode state (cache slots)."""


def tool_call_text(name: str, arguments: dict[str, Any]) -> str:
  return f"{TOOL_CALL_START}{json.dumps({'name': name, 'arguments': arguments})}{TOOL_CALL_END}"


class TextPolicy:
  """Base for policies that write text: encodes it like a sampler would (stop token appended,
  cut at the turn budget) with log-probability 0."""

  def __init__(self, renderer: ChatRenderer):
    self.renderer = renderer
    self.stop_id = renderer.end_of_turn_ids[-1]

  def text_for(self, request: ActRequest) -> str:
    raise NotImplementedError

  def act(self, requests: Sequence[ActRequest]) -> list[ActResult]:
    results = []
    for request in requests:
      text = self.text_for(request)
      tokens = self.renderer.encode(text) + [self.stop_id]
      finished = True
      if len(tokens) > request.max_new_tokens:
        tokens = tokens[:max(request.max_new_tokens, 0)]
        text = self.renderer.decode(tokens)
        finished = False
      results.append(ActResult(tokens, [0.0] * len(tokens), text, finished))
    return results

  def release(self, episode_ids: Sequence[int]) -> None:
    del episode_ids


class CallbackPolicy(TextPolicy):
  """A policy whose text comes from `fn(request)`; for tests and scripted probes."""

  def __init__(self, renderer: ChatRenderer, fn: Callable[[ActRequest], str]):
    super().__init__(renderer)
    self.fn = fn

  def text_for(self, request: ActRequest) -> str:
    return self.fn(request)


_LOOK_THOUGHTS = ("Let me look at the repository layout first.", "First, the files in the workspace.",
                  "I'll start by listing the files.", "")
_READ_THOUGHTS = ("Let me read {path}.", "I'll open {path} to find the bug.",
                  "The bug is probably in {path}; reading it.", "")
_RUN_BEFORE = ("Let me run the public tests to see what fails.", "Running the tests first.", "")
_RUN_AFTER = ("Now the tests again to check the fix.", "Let me verify with the tests.",
              "Checking that the tests pass now.", "")
_EDIT_THOUGHTS = ("The condition is wrong; fixing it.", "Found it. Applying the fix.",
                  "I'll correct this line.", "")
_SUBMIT_THOUGHTS = ("The fix is in place; submitting.", "Done.", "Tests pass, submitting.", "")
_WRONG_PATH_THOUGHTS = ("Wrong file; listing the files.", "That file is not there. What is?", "")
_NOT_FOUND_THOUGHTS = ("The text did not match; reading the file first.",
                       "Let me look at the exact text.", "")
# File names a confused agent reaches for (the synthetic library's modules and common ones).
_WRONG_PATHS = ("lists.py", "nums.py", "strs.py", "parsers.py", "ds.py", "main.py", "utils.py", "solution.py")
MISTAKES = ("wrong_path", "old_not_found", "malformed")
_GIVE_UP_THOUGHTS = ("I cannot find the bug; submitting as is.", "Giving up on this one.",
                     "Not sure what is wrong here. Submitting.", "")


def _is_word(ch: str) -> bool:
  return ch.isalnum() or ch == "_"


def minimal_edit(text: str, old: str, new: str, min_chars: int = 4) -> tuple[str, str]:
  """The shortest `edit_file` arguments that make the same change as replacing `old` by `new`.

  The differing span of `old` is widened to whole words and then, a word (or a punctuation
  character) at a time on alternating sides, until it occurs exactly once in `text` and holds
  at least `min_chars` characters; `new` gets the same context. Falls back to `(old, new)` when
  no shorter unique string exists inside `old`.
  """
  if old == new or text.count(old) != 1:
    return old, new
  pre = 0
  while pre < min(len(old), len(new)) and old[pre] == new[pre]:
    pre += 1
  suf = 0
  while suf < min(len(old), len(new)) - pre and old[-1 - suf] == new[-1 - suf]:
    suf += 1
  lo, hi = pre, len(old) - suf  # old[lo:hi] is what changes (may be empty: an insertion)
  while lo > 0 and _is_word(old[lo - 1]) and (lo < len(old) and _is_word(old[lo])):
    lo -= 1
  while hi < len(old) and _is_word(old[hi]) and hi > 0 and _is_word(old[hi - 1]):
    hi += 1

  def grow_left(i: int) -> int:
    if i == 0:
      return i
    i -= 1
    while i > 0 and old[i].isspace() and old[i - 1] != "\n":  # spaces join the next token
      i -= 1
    while i > 0 and _is_word(old[i]) and _is_word(old[i - 1]):
      i -= 1
    return i

  def grow_right(j: int) -> int:
    if j >= len(old):
      return j
    j += 1
    while j < len(old) and old[j - 1].isspace() and old[j - 1] != "\n":
      j += 1
    while j < len(old) and _is_word(old[j - 1]) and _is_word(old[j]):
      j += 1
    return j

  side = 0
  while lo > 0 or hi < len(old):
    candidate = old[lo:hi]
    if len(candidate.strip()) >= min_chars and text.count(candidate) == 1:
      new_part = new[lo:len(new) - (len(old) - hi)]
      return candidate, new_part
    if (side == 0 and lo > 0) or hi >= len(old):
      lo = grow_left(lo)
    else:
      hi = grow_right(hi)
    side ^= 1
  return old, new


class ScriptedExpert(TextPolicy):
  """Solves tasks whose metadata carries the fix: `metadata["fix"] = [{"path", "old", "new"}]`.

  Each episode gets its own seeded plan: optional listing and reading, optional public-test runs
  before and after, the edits (edit_file, sometimes a whole write_file), then submit. Optional
  steps are dropped when the turn limit is tight, so the expert always submits in time.

  With `give_up_prob` > 0 it is an imperfect demonstrator: that share of its episodes explore as
  usual and then submit without an edit (and fail), the way weak agents in real SFT data give up.
  Behaviour-cloned unfiltered, such data leaves the policy a failure mode that only the reward
  can tell apart from the successes (the default experiment, README).

  With `mistake_prob` > 0 that share of its episodes make one realistic mistake before the fix
  and recover from it: a read of a file that does not exist (then it lists the files), an
  `edit_file` whose `old` is not in the file (then it reads the file), or a tool call with broken
  JSON (then it repeats the call). The episode still solves its task. SFT leaves the failed turn
  out of the loss (`rl.algo.batching.error_turn_keep(..., "error_turns")`), so the policy clones the
  recovery and not the mistake.

  Task families with a plan of their own (`metadata["expert_plan"]`, rl.registry.EXPERT_PLANS)
  follow it instead, in single-turn mode too when the plan has a `single_turn_answer`; the MLE
  plan (rl/tasks/mle/expert.py) writes whole programs, `program_fault_prob` of them faulty.
  """

  def __init__(self, renderer: ChatRenderer, *, seed: int = 0, explore_prob: float = 0.6,
               run_prob: float = 0.5, write_prob: float = 0.25, thought_prob: float = 0.7,
               minimal_edits: bool = False, give_up_prob: float = 0.0, mistake_prob: float = 0.0,
               read_prob: float | None = None, program_fault_prob: float = 0.0, give_up_within: int = 0):
    super().__init__(renderer)
    # Plans that read along a chain (rl/tasks/long_horizon/expert.py): a give-up stops within
    # this many reads of the start (0: anywhere along the chain).
    self.give_up_within = give_up_within
    # Task families whose expert writes whole programs (rl.tasks.mle.expert): the share of
    # episodes that write a faulty one.
    self.program_fault_prob = program_fault_prob
    self.read_prob = explore_prob if read_prob is None else read_prob
    self.mistake_prob = mistake_prob
    self.give_up_prob = give_up_prob
    self.minimal_edits = minimal_edits
    self.seed = seed
    self.explore_prob = explore_prob
    self.run_prob = run_prob
    self.write_prob = write_prob
    self.thought_prob = thought_prob
    self._plans: dict[int, list[str]] = {}

  @staticmethod
  def fixes(task: Any) -> list[dict[str, str]]:
    fix = (getattr(task, "metadata", {}) or {}).get("fix")
    if not isinstance(fix, list) or not fix or not all(
        isinstance(f, dict) and {"path", "old", "new"} <= set(f) for f in fix):
      raise ValueError(f"task {getattr(task, 'id', '?')!r} has no usable metadata['fix'] "
                       "(a list of {'path', 'old', 'new'}); the scripted expert cannot solve it")
    return fix

  def _rng(self, request: ActRequest) -> random.Random:
    return random.Random(zlib.crc32(f"{self.seed}:{request.task.id}:{request.episode_id}".encode()))

  def _fixed_file(self, task: Any, path: str) -> str:
    text = (Path(task.repo_dir) / path).read_text(encoding="utf-8")
    for f in self.fixes(task):
      if f["path"] == path:
        text = text.replace(f["old"], f["new"], 1)
    return text

  def say(self, rng: random.Random, options: Sequence[str], **fmt: Any) -> str:
    """A thought line before a tool call (one of `options`, formatted), with probability
    `thought_prob`; "" otherwise. Family plans (rl.registry.EXPERT_PLANS) use it too."""
    if rng.random() > self.thought_prob:
      return ""
    thought = rng.choice(options).format(**fmt)
    return thought + "\n" if thought else ""

  def _plan(self, request: ActRequest) -> list[str]:
    rng = self._rng(request)
    task = request.task
    plan_name = (getattr(task, "metadata", {}) or {}).get("expert_plan")
    if plan_name:  # a task family with a plan of its own (rl.registry.EXPERT_PLANS)
      from rl.registry import EXPERT_PLANS  # pylint: disable=import-outside-toplevel
      return EXPERT_PLANS.get(plan_name)(self, request, rng)
    fixes = self.fixes(task)
    paths = list(dict.fromkeys(f["path"] for f in fixes))
    public = list(getattr(task, "public_tests", None) or [])
    # A task may name its own public-test command; otherwise pytest on the public test files.
    test_cmd = str(task.metadata.get("public_test_command") or "") or (
        f"python -m pytest -q {' '.join(public)}" if public else "")
    optional_before: list[str] = []
    if rng.random() < self.explore_prob:
      optional_before.append(self.say(rng, _LOOK_THOUGHTS) + tool_call_text("list_files", {"path": "."}))
    for path in paths:
      if rng.random() < self.read_prob:
        optional_before.append(self.say(rng, _READ_THOUGHTS, path=path)
                               + tool_call_text("read_file", {"path": path}))
    if test_cmd and rng.random() < self.run_prob * 0.6:
      optional_before.append(self.say(rng, _RUN_BEFORE) + tool_call_text("run", {"command": test_cmd}))
    if self.give_up_prob and rng.random() < self.give_up_prob:
      room = request.turns_left - 1
      return optional_before[:max(room, 0)] + [
          self.say(rng, _GIVE_UP_THOUGHTS) + tool_call_text("submit", {})]
    edits: list[str] = []
    by_path: dict[str, list[dict[str, str]]] = {}
    for f in fixes:
      by_path.setdefault(f["path"], []).append(f)
    for path, path_fixes in by_path.items():
      whole = None
      if rng.random() < self.write_prob:
        whole = self.say(rng, _EDIT_THOUGHTS) + tool_call_text(
            "write_file", {"path": path, "content": self._fixed_file(task, path)})
        if len(self.renderer.encode(whole)) + 1 > request.max_new_tokens:
          whole = None  # would be cut at the turn budget; a targeted edit fits
      if whole is not None:
        edits.append(whole)
        continue
      current = (Path(task.repo_dir) / path).read_text(encoding="utf-8") if self.minimal_edits else ""
      for f in path_fixes:
        old, new = f["old"], f["new"]
        if self.minimal_edits:
          old, new = minimal_edit(current, old, new)
          current = current.replace(old, new, 1)
        edits.append(self.say(rng, _EDIT_THOUGHTS) + tool_call_text(
            "edit_file", {"path": path, "old": old, "new": new}))
    # A mistake and its recovery go right before the edits (no random draws at mistake_prob 0,
    # so the default demonstrations do not change).
    mistake: list[str] = []
    if self.mistake_prob and rng.random() < self.mistake_prob:
      mistake = self._mistake(rng, task, fixes[0], edits[0])
    optional_after: list[str] = []
    if test_cmd and rng.random() < self.run_prob:
      optional_after.append(self.say(rng, _RUN_AFTER) + tool_call_text("run", {"command": test_cmd}))
      if rng.random() < 0.2:
        optional_after.append(self.say(rng, _RUN_AFTER) + tool_call_text("run", {"command": test_cmd}))
    submit = self.say(rng, _SUBMIT_THOUGHTS) + tool_call_text("submit", {})
    # Drop optional steps (latest first) until the plan fits the turn limit.
    if len(mistake) > request.turns_left - len(edits) - 1:
      mistake = []  # no room for the mistake and its recovery
    room = request.turns_left - len(edits) - 1 - len(mistake)
    while len(optional_before) + len(optional_after) > max(room, 0):
      (optional_after or optional_before).pop()
    return optional_before + mistake + edits + optional_after + [submit]

  def _mistake(self, rng: random.Random, task: Any, fix: dict[str, str], edit: str) -> list[str]:
    """One failing turn and, where the agent needs one, a recovery turn before the real edit."""
    kind = rng.choice(MISTAKES)
    path = fix["path"]
    if kind == "wrong_path":
      existing = {p.name for p in Path(task.repo_dir).iterdir()} | {path}
      wrong = rng.choice([p for p in _WRONG_PATHS if p not in existing])
      return [self.say(rng, _READ_THOUGHTS, path=wrong) + tool_call_text("read_file", {"path": wrong}),
              self.say(rng, _WRONG_PATH_THOUGHTS) + tool_call_text("list_files", {"path": "."})]
    if kind == "old_not_found":
      text = (Path(task.repo_dir) / path).read_text(encoding="utf-8")
      # The fixed text (already "applied" in the agent's head), or the old text mis-indented.
      candidates = [fix["new"], "  " + fix["old"].lstrip(), fix["old"].strip() + " "]
      bad_old = next((c for c in candidates if c.strip() and c not in text), None)
      if bad_old is None:
        return []
      return [self.say(rng, _EDIT_THOUGHTS) + tool_call_text(
                  "edit_file", {"path": path, "old": bad_old, "new": fix["new"]}),
              self.say(rng, _NOT_FOUND_THOUGHTS) + tool_call_text("read_file", {"path": path})]
    # malformed: the edit call with its JSON's closing brace missing
    return [edit.removesuffix("}" + TOOL_CALL_END) + TOOL_CALL_END]

  def text_for(self, request: ActRequest) -> str:
    if request.mode == "single_turn":
      return self._answer(request)
    plan = self._plans.get(request.episode_id)
    if plan is None:
      plan = self._plans[request.episode_id] = self._plan(request)
    if not plan:
      return tool_call_text("submit", {})
    return plan.pop(0)

  def _answer(self, request: ActRequest) -> str:
    plan_name = (getattr(request.task, "metadata", {}) or {}).get("expert_plan")
    if plan_name:  # a family's plan may bring its own single-turn answer (rl.tasks.mle.expert)
      from rl.registry import EXPERT_PLANS  # pylint: disable=import-outside-toplevel
      answer = getattr(EXPERT_PLANS.get(plan_name), "single_turn_answer", None)
      if answer is not None:
        return answer(self, request, self._rng(request))
    target = solution_file_for(request.task)
    if target is None:
      raise ValueError(f"task {request.task.id!r}: no solution file for a single-turn answer")
    code = self._fixed_file(request.task, target)
    if not code.endswith("\n"):
      code += "\n"
    return f"Here is the corrected file.\n```python\n{code}```"

  def release(self, episode_ids: Sequence[int]) -> None:
    for i in episode_ids:
      self._plans.pop(i, None)


@functools.cache
def _row_keys_fn():
  import jax  # pylint: disable=import-outside-toplevel

  def keys(base, rollout, episode_ids, turns):
    base = jax.random.fold_in(base, rollout)
    return jax.vmap(lambda e, t: jax.random.fold_in(jax.random.fold_in(base, e), t))(episode_ids, turns)

  return jax.jit(keys)


def _row_keys(base, rollout: int, episode_ids: np.ndarray, turns: np.ndarray):
  """[B] sampling keys, fold_in(fold_in(fold_in(base, rollout), episode_id), turn) per row (one
  jitted call)."""
  return _row_keys_fn()(base, np.int32(rollout), episode_ids, turns)


class ModelPolicy:
  """The trained model as a policy: batched multi-turn decoding with `rl.env.sampling.Sampler`.

  Each episode owns one row of the sampler's conversation batch for its whole life, so its KV
  cache is kept across turns and a turn only prefills the new observation tokens. Rows are freed
  by `release` and reused by later episodes. Requests with different token budgets (episodes near
  the trajectory limit) are decoded in one call per distinct budget.

  Args:
    sampler: an `rl.env.sampling.Sampler`; its max_cache_len must hold a whole trajectory
      (>= config.agent.max_tokens_per_trajectory).
    renderer: the ChatRenderer (optional; decoding of actions is the engine's).
    params: policy weights to load into the sampler first (optional).
    batch_size: rows to allocate (grown on demand by `begin`).
    temperature, top_p, top_k: sampling settings (temperature 0 = greedy).
    seed: base of the per-call PRNG keys.
  """

  def __init__(self, sampler: Any, renderer: ChatRenderer | None = None, *, params: Any = None,
               batch_size: int = 8, temperature: float = 1.0, top_p: float = 1.0, top_k: int = 0,
               seed: int = 0):
    import jax  # pylint: disable=import-outside-toplevel
    self._jax = jax
    self.sampler = sampler
    self.renderer = renderer  # unused for decoding (the engine decodes); kept for callers
    if params is not None:
      sampler.update_params(params)
    self.temperature = float(temperature)
    self.top_p = float(top_p)
    self.top_k = int(top_k)
    self._rows: dict[int, int] = {}
    self.reseed(seed)
    self.conv = sampler.new_conversations(max(int(batch_size), 1))
    self._free = list(range(self.conv.batch_size))

  def begin(self, num_episodes: int) -> None:
    """Called by the engine before a rollout: makes room for `num_episodes` concurrent rows."""
    self._rollouts += 1
    if num_episodes > self.conv.batch_size and not self._rows:
      self.conv = self.sampler.new_conversations(num_episodes)
      self._free = list(range(num_episodes))

  def reseed(self, seed: int) -> None:
    """A fresh random stream. Each turn of each episode samples with its own key, from (seed,
    rollout since the reseed, episode id, turn): which episodes share a sampler call depends on
    sandbox timing, and must not change what any of them samples."""
    self._key = self._jax.random.key(seed)
    self._rollouts = 0  # engine.run calls (begin) since the reseed: episode ids restart in each

  def set_temperature(self, temperature: float) -> None:
    self.temperature = float(temperature)

  def update_params(self, params: Any) -> None:
    """New policy weights (an nnx State or a Transformer) for the following turns."""
    self.sampler.update_params(params)

  def _row(self, episode_id: int) -> int:
    row = self._rows.get(episode_id)
    if row is None:
      if not self._free:
        raise RuntimeError(f"ModelPolicy has {self.conv.batch_size} rows, all in use; "
                           "call begin(num_episodes) or pass a larger batch_size")
      # The same episode always gets the same row (the order requests arrive in depends on
      # sandbox timing), so sampling is reproducible.
      preferred = episode_id % self.conv.batch_size
      row = preferred if preferred in self._free else self._free[0]
      self._free.remove(row)
      self.conv.reset([row])
      self._rows[episode_id] = row
    return row

  def act(self, requests: Sequence[ActRequest]) -> list[ActResult]:
    rows = [self._row(r.episode_id) for r in requests]
    results: list[ActResult | None] = [None] * len(requests)
    for budget in sorted({r.max_new_tokens for r in requests}):
      new_tokens: list[list[int] | None] = [None] * self.conv.batch_size
      members = [i for i, r in enumerate(requests) if r.max_new_tokens == budget]
      episode_ids = np.full(self.conv.batch_size, -1, np.int32)  # -1: a row this call leaves idle
      turns = np.zeros(self.conv.batch_size, np.int32)
      for i in members:
        new_tokens[rows[i]] = list(requests[i].new_tokens)
        episode_ids[rows[i]], turns[rows[i]] = requests[i].episode_id, requests[i].turn
      out = self.sampler.generate(self.conv, new_tokens, max_new_tokens=budget,
                                  rng=_row_keys(self._key, self._rollouts, episode_ids, turns),
                                  temperature=self.temperature, top_p=self.top_p, top_k=self.top_k)
      for i in members:
        row = rows[i]
        reason = out.finish_reasons[row]
        if reason == "cache_full":
          raise RuntimeError(f"episode {requests[i].episode_id}: the sampler cache is full; "
                             "max_cache_len must be >= agent.max_tokens_per_trajectory")
        tokens = list(out.tokens[row])
        results[i] = ActResult(tokens, list(out.logprobs[row]), "", finished=reason == "stop")
    return results  # type: ignore[return-value]

  def release(self, episode_ids: Sequence[int]) -> None:
    for episode_id in episode_ids:
      row = self._rows.pop(episode_id, None)
      if row is not None:
        self._free.append(row)


def tool_call_grammar(config: Any, renderer: ChatRenderer) -> Any:
  """The tool-call grammar the sampler decodes under (`agent.constrained_tool_calls`), or None."""
  if not config.agent.constrained_tool_calls:
    return None
  from rl.env.constrained import ToolCallGrammar  # pylint: disable=import-outside-toplevel
  return ToolCallGrammar(renderer.tokenizer, stop_token_ids=sorted(renderer.stop_ids),
                         max_thought_bytes=config.agent.max_thought_bytes)


def model_policy_from_config(config: Any, graphdef: Any, params: Any, renderer: ChatRenderer, *, rows: int,
                             pad_id: int, grammar: Any = None, mesh: Any = None, rules: Any = None) -> ModelPolicy:
  """The policy of a model (`graphdef`, `params`) as the config's sampling section decodes it,
  `rows` episodes at a time: what the trainer rolls out with and scripts/evaluate.py evaluates."""
  from rl.config_fields import ConfigError  # pylint: disable=import-outside-toplevel
  from rl.env.sampling import Sampler  # pylint: disable=import-outside-toplevel

  c = config
  if c.sampling.max_cache_len < c.agent.max_tokens_per_trajectory:
    raise ConfigError(f"config.sampling.max_cache_len={c.sampling.max_cache_len} must be >= "
                      f"config.agent.max_tokens_per_trajectory={c.agent.max_tokens_per_trajectory}")
  sampler = Sampler((graphdef, params), max_cache_len=c.sampling.max_cache_len,
                    stop_token_ids=sorted(renderer.stop_ids), pad_id=pad_id, grammar=grammar, mesh=mesh,
                    rules=rules, lanes=0 if mesh is not None else c.sampling.lanes)
  return ModelPolicy(sampler, renderer, batch_size=rows, temperature=c.sampling.temperature,
                     top_p=c.sampling.top_p, top_k=c.sampling.top_k, seed=c.seed)
