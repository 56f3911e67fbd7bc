"""The training loop: rollouts -> grading -> advantages -> jitted PPO updates.

`run(config, workdir)` is what `train.py` calls. One iteration (`Trainer.train_iteration`):

  sample tasks (G episodes each) -> `rollout`: batched episodes in sandboxes (rl.env.rollout;
  anti-hack, fresh-sandbox grading and rewards by rl.outcome.evaluator) -> `_score_rollout`:
  log-probs / values / reference log-probs of the padded batch -> `make_train_batch`
  (rl.algo.batch: KL in the reward, the estimator, masks and weights) -> `ppo_epochs` over
  shuffled mini-batches -> metrics (rl.train.metrics) -> checkpoint.

An optional SFT warm start on demonstrations (scripted-expert trajectories by default)
runs first. Resume order: the run's own latest checkpoint, then `config.init_from`,
then scratch; a resumed run continues with the same task order and RNG streams, so
its metrics after the resume point equal an uninterrupted run's (timings aside).

With several processes (multi-host) each process runs its own share of every iteration's
tasks and contributes its own rows to the global batch; statistics and metrics are the whole
iteration's (docs/rollouts.md, "Several processes"). One process takes none of those paths.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import resource
import time
from pathlib import Path
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
from flax import nnx

from rl import config as config_lib
from rl import killpoints
from rl import lanes as lanes_lib
from rl import models as model_lib
from rl import parallel
from rl.algo import batching
from rl.algo import update as update_lib
from rl.algo.batch import AlgoSettings, TrainBatch, make_train_batch
from rl.env import actors
from rl.env import episode as episode_lib
from rl.env import rollout as rollout_lib
from rl.outcome import duration as duration_lib
from rl.train import compilation
from rl.train import evaluate as evaluate_lib
from rl.train import metrics as metrics_lib
from rl.train import progress as progress_lib
from rl.train import sft as sft_lib
from rl.train import state as state_lib
from rl.train.metrics import MetricWriter, read_metrics
from rl.train.processes import ProcessGroup
from rl.train.self_improve import SelfImprovement


class WorkdirError(RuntimeError):
  """The run directory belongs to a different config."""


# Sections whose change does not make a run directory a different experiment. `distributed`
# says where the processes meet and which one a process is: each process of a run has its own.
_RESUMABLE_SECTIONS = {"override_workdir", "trainer", "distributed"}


def prepare_workdir(config: ml_collections.ConfigDict, workdir: str | Path) -> Path:
  """Creates the run directory and writes the resolved config.

  A directory that already holds a *different* config is refused unless
  `config.override_workdir` is set, so a resumed run never silently mixes two
  experiments. (Changing `trainer.*`, e.g. more iterations, is allowed.)
  """
  workdir = Path(workdir)
  workdir.mkdir(parents=True, exist_ok=True)
  path = workdir / "config.json"
  resolved = json.loads(config_lib.to_json(config))
  if path.exists():
    previous = json.loads(path.read_text())
    differing = sorted(k for k in set(previous) | set(resolved)
                       if k not in _RESUMABLE_SECTIONS and previous.get(k) != resolved.get(k))
    if differing and not config.override_workdir:
      raise WorkdirError(
          f"{workdir} holds a run with a different config (sections {differing} differ); "
          "use another --workdir or pass --config.override_workdir=true")
  if jax.process_index() == 0:  # one writer; the others only check (they may be reading it)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(resolved, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)
  return workdir


def peak_rss_mb() -> float:
  return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def device_peak_mb() -> float | None:
  """Peak memory in use on this process's accelerators (the largest); None where the backend
  keeps no statistics (the CPU)."""
  peaks = []
  for device in jax.local_devices():
    try:
      stats = device.memory_stats() or {}
    except Exception:  # noqa: BLE001 - a backend without statistics
      stats = {}
    if "peak_bytes_in_use" in stats:
      peaks.append(stats["peak_bytes_in_use"] / 2**20)
  return max(peaks) if peaks else None


class KLController:
  """Fixed or adaptive (Ziegler et al. 2019) KL coefficient; host state, checkpointed."""

  def __init__(self, coef: float, target: float, horizon: int = 10):
    self.coef, self.target, self.horizon = float(coef), float(target), horizon

  def update(self, observed_kl: float) -> None:
    if self.target > 0 and math.isfinite(observed_kl):
      error = float(np.clip(observed_kl / self.target - 1.0, -0.2, 0.2))
      self.coef *= 1.0 + error / self.horizon

  def state_dict(self) -> dict:
    return {"coef": self.coef}

  def load_state_dict(self, state: dict) -> None:
    self.coef = float(state["coef"])


def _to_host(x: jax.Array) -> np.ndarray:
  """A jitted output as one host array, gathered from every process where it spans several."""
  if x.is_fully_addressable:
    return np.asarray(x)
  from jax.experimental import multihost_utils
  return np.asarray(multihost_utils.process_allgather(x, tiled=True))


@dataclasses.dataclass(frozen=True)
class TaskSets:
  """A run's tasks: the training mixture (its sources and weights), its training tasks and the
  held-out ones."""

  mixture: Any  # rl.tasks.TaskMixture
  train: list
  heldout: list


def load_task_sets(config: ml_collections.ConfigDict, workdir: str | Path,
                   display: progress_lib.Display) -> TaskSets:
  """The run's tasks: generated or imported by their sources into `workdir`, verified, sorted."""
  from rl.tasks import load_tasks

  # Generating and verifying tasks can take minutes: the sources report to a phase.
  phase = display.phase("tasks", unit="tasks")
  mixture = load_tasks(config, workdir, progress=phase.update)
  for _, _, tasks in mixture.sources:
    # A freshly generated root and its cached copy list tasks in different orders; sampling
    # must not depend on which one this process saw (resumed runs draw the same tasks).
    tasks.sort(key=lambda t: t.id)
  difficulty = config.tasks.difficulty or None
  train = mixture.tasks(split=config.tasks.split, difficulty=difficulty)
  if config.tasks.eval_sources:  # a separate evaluation mixture (its eval_split)
    eval_mixture = load_tasks(config, workdir, field="eval_sources", progress=phase.update)
    for _, _, tasks in eval_mixture.sources:
      tasks.sort(key=lambda t: t.id)
    heldout = eval_mixture.tasks(split=config.tasks.eval_split, difficulty=difficulty)
  else:
    heldout = mixture.tasks(split=config.tasks.eval_split, difficulty=difficulty)
  if config.tasks.max_eval_tasks:
    heldout = heldout[:config.tasks.max_eval_tasks]
  if not train:
    raise RuntimeError(f"no training tasks for split {config.tasks.split!r} in {mixture}")
  phase.end(f"{len(train)} training, {len(heldout)} held-out")
  return TaskSets(mixture=mixture, train=train, heldout=heldout)


@dataclasses.dataclass
class ScoredRollout:
  """One iteration's rollout, ready for make_train_batch: this process's trainable episodes, their
  padded batch and the scoring pass's outputs, and what the metrics need of every process's."""

  everyone: list  # every process's episodes (light copies with several processes)
  outcomes_all: list  # every process's policy outcomes (infrastructure failures left out)
  episodes: list  # this process's trainable episodes: the first rows of `batch`
  episodes_all: list  # every process's trainable episodes, in process order
  offset: int  # this process's first episode in `episodes_all`
  batch: batching.RolloutBatch | None  # None: no process has a trainable episode
  grammar_states: np.ndarray | None
  outputs: dict | None  # the scoring pass's [B, T] arrays (logprobs, values, ref_logprobs, ...)
  metrics: dict


def _trainable(episodes: Sequence) -> tuple[list, list]:
  """(outcomes, trainable): an infrastructure failure is not the policy's outcome, and an episode
  without an action token has nothing to train; neither reaches the estimators, the group
  baselines or the losses (docs/algorithms.md, "Failed episodes"); the rollout metrics count
  them (infra/*)."""
  outcomes = [e for e in episodes if e.infra_failure is None]
  return outcomes, [e for e in outcomes if any(e.action_mask)]


class Trainer:
  """Owns the models, optimizers, rollout engine, task pools, checkpoints and metrics."""

  def __init__(self, config: ml_collections.ConfigDict, workdir: str | Path,
               display: progress_lib.Display | None = None):
    from rl.env import tools as tools_lib
    from rl import tokenizer as tokenizer_lib
    from rl.train.checkpoint import Checkpointer
    from rl.env.trajectory import TrajectoryWriter

    self.config = config
    self.workdir = Path(workdir)
    self.display = display or progress_lib.make_display()
    tasks = load_task_sets(config, self.workdir, self.display)  # before JAX builds anything
    self.task_mixture, self.train_tasks, self.eval_tasks = tasks.mixture, tasks.train, tasks.heldout
    self.tokenizer = tokenizer_lib.load_tokenizer(config.model.hf_checkpoint or None)
    self.renderer = tools_lib.ChatRenderer.from_config(self.tokenizer, config)
    self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
    eos_id = self.renderer.end_of_turn_ids[-1]
    # Several devices (across processes): one mesh, every array of the train state laid out by
    # the config's logical rules (FSDP over `fsdp`, tensor parallelism over `tensor`), mini-batch
    # rows over the batch axes. One device: no shardings, no transfers.
    self.mesh = self.rules = None
    if jax.device_count() > 1:
      self.mesh, self.rules = parallel.mesh_from_config(config)
    # Several processes (multi-host): each runs its own share of every iteration's tasks with its
    # own sandboxes and a sampler on its own devices, and contributes its own rows to the global
    # batch of the scoring pass and the update (docs/rollouts.md, "Several processes").
    self.group = ProcessGroup(count=jax.process_count(), index=jax.process_index(), mesh=self.mesh,
                              rules=self.rules)
    self.replica = None
    if self.group.multi:
      config_lib.check_process_split(config, self.group.count)
      if not parallel.rows_split_by_process(self.mesh, self.rules):
        raise config_lib.ConfigError(
            f"config.mesh.shape {tuple(config.mesh.shape)}: with {self.group.count} processes the rows "
            "of a batch must split into one block per process (the batch axes data x fsdp span "
            "the processes; tensor parallelism stays within one)")
      self.replica = parallel.LocalReplica.of(self.mesh, self.rules)
    # The episodes one process runs at a time in a training iteration (its share).
    self.rollout_rows = config.trainer.tasks_per_iteration * config.algo.group_size // self.group.count
    cfg, policy, critic = model_lib.build_models(config, len(self.tokenizer), eos_id, self.pad_id,
                                       mesh=self.mesh, rules=self.rules)
    self.model_config = cfg
    self.policy_graphdef, policy_state = nnx.split(policy, nnx.Param)
    self.critic_graphdef, critic_state = (None, None) if critic is None else nnx.split(critic, nnx.Param)
    del policy, critic  # the states hold the weights now
    self.settings = update_lib.UpdateSettings.from_config(config)  # the loss side
    self.algo = AlgoSettings.from_config(config)  # the advantage side (make_train_batch)
    policy_steps, critic_steps = self._schedule_steps()
    self.policy_tx, self.critic_tx = update_lib.optimizers_from_config(config, policy_steps, critic_steps)
    critic_params = policy_state if critic_state is None else critic_state  # what critic_tx steps
    self.state_sharding = self.policy_sharding = None
    if self.mesh is None:
      policy_opt, critic_opt = self.policy_tx.init(policy_state), self.critic_tx.init(critic_params)
    else:  # the optimizer states are born with their parameters' shardings, too
      self.state_sharding = update_lib.train_state_shardings(policy_state, critic_state, self.policy_tx,
                                                             self.critic_tx, self.mesh, self.rules)
      self.policy_sharding = self.state_sharding.policy
      policy_opt = jax.jit(self.policy_tx.init, out_shardings=self.state_sharding.policy_opt)(policy_state)
      critic_opt = jax.jit(self.critic_tx.init, out_shardings=self.state_sharding.critic_opt)(critic_params)
    self.state = state_lib.copy_tree(update_lib.TrainState(
        step=jnp.zeros((), jnp.int32), policy=policy_state, policy_opt=policy_opt,
        critic=critic_state, critic_opt=critic_opt))
    self.ref_params = None
    self._place_state()
    # Gradient programs (and scoring calls) run at once on one CPU device (rl.lanes).
    self.update_lanes = 1 if self.mesh is not None else int(config.optim.update_lanes) or lanes_lib.auto_lanes()
    self._score_pool = lanes_lib.LanePool("score-lane")
    if self.mesh is not None:  # every row array of a mini-batch split over the batch axes
      layout = {"state_sharding": self.state_sharding, "batch_sharding": self.group.rows_sharding(1)}
    else:  # one CPU device: lanes of rows, one thread each (rl.lanes)
      layout = {"lanes": self.update_lanes}
    self.update_step = update_lib.make_update_step(self.policy_graphdef, self.critic_graphdef,
                                                   self.policy_tx, self.critic_tx, self.settings, **layout)
    self._update_temp_bytes: float | None = None  # the compiled update's scratch memory, once
    self.score_fn = update_lib.make_score_fn(self.policy_graphdef, self.critic_graphdef, self.settings)
    self.kl = KLController(config.algo.kl_coef, config.algo.kl_target)
    self.self_improve = SelfImprovement.from_config(config.self_improve, total_steps=max(config.trainer.iterations, 1),
                                                    seed=config.seed)
    self.iteration = 0
    self.sft_done = not config.sft.enabled
    self._demos = None  # the SFT demonstrations, kept for PPO-ptx (sft.ptx_steps)
    self._ptx = None
    self.host_extra: dict[str, Any] = {}
    self.time_offset_s = 0.0

    self.checkpointer = Checkpointer(self.workdir, keep=config.trainer.keep_checkpoints)
    # One trajectory log per process: the processes run different episodes.
    self.traj_writer = TrajectoryWriter(
        self.workdir / "trajectories",
        **({"prefix": f"trajectories-process{self.group.index}"} if self.group.multi else {}))
    self.grammar = actors.tool_call_grammar(config, self.renderer)
    # Several processes: the sampler decodes on this process's devices only, from a whole copy of
    # the weights there (parallel.LocalReplica), so a process's rollouts never wait on another's.
    self.model_policy = actors.model_policy_from_config(
        config, self.policy_graphdef, self._sampler_params(), self.renderer, rows=self.rollout_rows,
        pad_id=self.pad_id, grammar=self.grammar, mesh=self.mesh if self.replica is None else self.replica.mesh,
        rules=self.rules)
    self._grammar_table = self.model_policy.sampler.grammar_table  # one device copy, the sampler's
    if self.group.multi and self._grammar_table is not None:  # the sampler's is process-local
      self._grammar_table = parallel.global_array(np.asarray(self._grammar_table),
                                                  parallel.replicated(self.mesh))
    # (train policy, train critic, mini-batch shape) the update step has run: a new one compiles.
    self._update_shapes: set[tuple] = set()
    self.engine = rollout_lib.RolloutEngine(config, self.model_policy, self.renderer, writer=self.traj_writer)
    # Evaluations share the policy and the evaluator (sandboxes, judge) and log no trajectories:
    # their episodes are not training data.
    self.eval_engine = rollout_lib.RolloutEngine(config, self.model_policy, self.renderer,
                                                 evaluator=self.engine.evaluator)
    self.writer: MetricWriter | None = None  # opened by run(), after a resume sets the clock

  # -- set-up --------------------------------------------------------------------------------------
  def _updates_per_iteration(self) -> int:
    c = self.config
    batch = c.trainer.tasks_per_iteration * c.algo.group_size
    return c.optim.ppo_epochs * max(batch // c.optim.mini_batch_size, 1)

  def _schedule_steps(self) -> tuple[int, int]:
    """(policy, critic) optimiser steps over the run, the length of each learning-rate schedule:
    the policy steps after the critic's warm-up, PPO-ptx's NLL steps included; the critic
    critic_updates_per_policy_update times per mini-batch from the first iteration (a shared
    head's own optimiser: all of them in the warm-up, the extra ones after it)."""
    c = self.config
    updates, iterations = self._updates_per_iteration(), max(c.trainer.iterations, 1)
    warmup = min(c.optim.critic_warmup_iterations, iterations)
    per_update = c.optim.critic_updates_per_policy_update
    policy = (iterations - warmup) * (updates + c.sft.ptx_steps)
    if c.model.value_head == "shared":
      critic = updates * (warmup * per_update + (iterations - warmup) * (per_update - 1))
    else:
      critic = iterations * updates * per_update
    return max(policy, 1), max(critic, 1)

  def _sampler_params(self):
    """The policy weights as the sampler takes them: the train state's, or with several processes
    this process's own copy (collective: every process calls it at the same point)."""
    return self.state.policy if self.replica is None else self.replica.copy(self.state.policy)

  def _set_policy(self, temperature: float, seed: int) -> None:
    """Loads the current weights into the sampler; a fresh RNG stream per phase (resume-safe),
    and with several processes one per process (they sample different episodes)."""
    self.model_policy.update_params(self._sampler_params())
    self.model_policy.set_temperature(temperature)
    self.model_policy.reseed(self.group.seed(seed))

  @contextlib.contextmanager
  def _episode_phase(self, engine, label: str, episodes: int, *, quiet: bool = False):
    """A progress phase that each episode `engine` finishes advances (a bar of episodes)."""
    with self.display.phase(label, total=episodes, unit="episodes", quiet=quiet) as phase:
      engine.on_episode_end = phase.advance
      try:
        yield phase
      finally:
        engine.on_episode_end = None

  def temperature(self) -> float:
    s, n = self.config.sampling, max(self.config.trainer.iterations - 1, 1)
    frac = min(self.iteration / n, 1.0)
    return float(s.temperature + frac * (s.temperature_final - s.temperature))

  # -- host state ----------------------------------------------------------------------------------
  def host_state(self) -> dict:
    return {"iteration": self.iteration, "sft_done": self.sft_done, "kl": self.kl.state_dict(),
            "time_s": self.writer.elapsed_s() if self.writer is not None else 0.0,
            "data_position": self.iteration, "self_improve": self.self_improve.state_dict(),
            **self.host_extra}

  def device_state(self) -> dict:
    return {"train": self.state, "ref": self.ref_params if self.ref_params is not None else {}}

  def save(self, metrics: dict | None = None) -> None:
    self.checkpointer.save(self.iteration, self.device_state(), self.host_state(), metrics)

  def maybe_resume(self) -> str:
    """Resume order: own latest checkpoint, then config.init_from, then scratch."""
    if self.checkpointer.latest_step() is not None:
      abstract = {"train": self.state, "ref": self.state.policy}
      restored, host, step = self.checkpointer.restore(abstract)
      self.state = restored["train"]
      self.ref_params = restored["ref"]
      self.iteration = int(host["iteration"])
      self.sft_done = bool(host["sft_done"])
      self.kl.load_state_dict(host["kl"])
      self.time_offset_s = float(host.get("time_s", 0.0))
      if "self_improve" in host:
        self.self_improve.load_state_dict(host["self_improve"])
      self.host_extra = {k: v for k, v in host.items()
                         if k not in ("iteration", "sft_done", "kl", "time_s", "data_position", "self_improve")}
      self._place_state()
      return f"resumed from {self.workdir / 'checkpoints'} at iteration {step}"
    if self.config.init_from:
      policy, critic = state_lib.load_weights(self.config.init_from, self.state.policy, self.state.critic,
                                              self.policy_graphdef, mesh=self.mesh, rules=self.rules)
      self.state = self.state.replace(policy=policy, critic=critic)
      self._place_state()
      return f"initialised weights from {self.config.init_from}"
    return "started from scratch"

  # -- data ----------------------------------------------------------------------------------------
  def sample_tasks(self, iteration: int) -> list:
    """Deterministic per iteration (resume-safe): source by weight, then a task; "epoch" walks
    shuffled passes over each source (every task once per pass), "replacement" draws uniformly."""
    c = self.config
    kw = dict(split=c.tasks.split, difficulty=c.tasks.difficulty or None)
    if c.trainer.task_sampling == "epoch":
      return self.task_mixture.epoch_batch(c.trainer.tasks_per_iteration, iteration, seed=c.seed, **kw)
    rng = np.random.default_rng([c.seed, iteration, 17])
    return self.task_mixture.sample(c.trainer.tasks_per_iteration, rng=rng, **kw)

  def with_improve_prompts(self, tasks: Sequence, iteration: int) -> list:
    """Self-improvement: with the scheduled probability a task's statement becomes a prompt to
    improve an earlier solution from the buffer (rl.train.self_improve); other tasks are unchanged."""
    if not self.self_improve.enabled:
      return list(tasks)
    out = []
    for task in tasks:
      prompt, parent = self.self_improve.prompt(task.id, task.statement, iteration)
      out.append(task if parent is None else task.with_statement(prompt, origin="improve_previous",
                                                                  parent_score=float(parent.score)))
    return out

  def record_solutions(self, episodes: Sequence, iteration: int) -> None:
    """Every graded final program (with its score and terminal output) goes into the buffer."""
    if not self.self_improve.enabled:
      return
    for e in episodes:
      solution = e.record.get("solution") or {}
      if solution.get("code") and not (e.record.get("hack") or {}).get("flagged"):
        self.self_improve.record(e.task_id, solution["code"], float(e.final_reward),
                                 str(solution.get("output", "")), iteration)

  # -- SFT -----------------------------------------------------------------------------------------
  def demonstrations(self) -> list:
    c = self.config
    if c.sft.demonstrations:  # logged records: the failed ones too when the config keeps them
      return episode_lib.episodes_from_records(c.sft.demonstrations, self.train_tasks, self.renderer,
                                               only_successful=not c.sft.keep_failed_demonstrations)
    engine = rollout_lib.RolloutEngine(c, sft_lib.scripted_expert(c, self.renderer), self.renderer)
    engine.set_model_info("scripted-expert", 0)
    with self._episode_phase(engine, "demos", len(self.train_tasks) * c.sft.demos_per_task) as phase:
      episodes, metrics = self.group.run_share(engine, self.train_tasks, c.sft.demos_per_task)
      # Several processes: each ran its share; every process trains on all of them, the same rows.
      episodes = self.group.all_episodes(episodes)
      episodes = [e for e in episodes if e.infra_failure is None]  # broken or unjudged: no demonstration
      ok = [e for e in episodes if e.success]
      phase.end(f"{len(ok)}/{len(episodes)} expert demonstrations solved their task")
    improve_tasks = self.improve_demo_tasks(episodes)
    if improve_tasks:
      with self._episode_phase(engine, "improve demos", len(improve_tasks)) as phase:
        more, _ = self.group.run_share(engine, improve_tasks, 1)
        more = [e for e in self.group.all_episodes(more) if e.infra_failure is None]
        phase.end(f"{sum(e.success for e in more)}/{len(more)} improve-previous demonstrations solved their task")
      episodes += more
      ok += [e for e in more if e.success]
    return episodes if c.sft.keep_failed_demonstrations else ok

  def improve_demo_tasks(self, episodes: Sequence) -> list:
    """Improve-previous prompts built from the expert's own first demonstrations (their program,
    reward and terminal output, as the self-improvement buffer would hold them): up to
    `sft.improve_demos_per_task` per training task, so SFT shows the expert revising a previous
    program (rl.tasks.mle.expert.revise_program) as well as writing one from scratch."""
    c = self.config
    per_task = int(c.sft.get("improve_demos_per_task", 0))
    if per_task <= 0 or not self.self_improve.enabled:
      return []
    from rl.train.self_improve import BufferEntry, build_improve_prompt  # pylint: disable=import-outside-toplevel
    rng = np.random.default_rng([c.seed, 98])
    by_task: dict[str, list] = {}
    for e in episodes:
      if (e.record.get("solution") or {}).get("code"):
        by_task.setdefault(e.task_id, []).append(e)
    out = []
    for task in self.train_tasks:
      parents = by_task.get(task.id, [])
      for i in rng.permutation(len(parents))[:per_task]:
        parent = parents[int(i)]
        solution = parent.record["solution"]
        entry = BufferEntry(task.id, solution["code"], float(parent.final_reward), str(solution.get("output", "")),
                            step=0, entry_id=len(out))
        out.append(task.with_statement(build_improve_prompt(task.statement, entry), origin="improve_previous",
                                       parent_score=entry.score))
    return out

  def run_sft(self) -> dict:
    c = self.config
    demos = self._demos = self.demonstrations()
    if not demos:
      raise RuntimeError("SFT: no successful demonstrations")
    batch = sft_lib.demonstration_batch(demos, pad_id=self.pad_id, pad_multiple=c.trainer.pad_multiple)
    tx = update_lib.make_optimizer(c.sft.lr, schedule=c.sft.schedule, total_steps=c.sft.steps,
                                   warmup_steps=min(20, c.sft.steps // 10), grad_clip=c.optim.grad_clip)
    settings = dataclasses.replace(self.settings, micro_batch_size=min(c.optim.micro_batch_size, c.sft.batch_size))
    step_fn = update_lib.make_sft_step(self.policy_graphdef, tx, settings)
    params, opt = state_lib.copy_tree(self.state.policy), tx.init(self.state.policy)
    rng = np.random.default_rng([c.seed, 99])
    t0 = time.perf_counter()
    # The plain (log) display prints about ten of the steps, the terminal one a live bar.
    phase = self.display.phase("sft", total=c.sft.steps, unit="steps", report_every=max(1, c.sft.steps // 10))
    params, opt, nll = sft_lib.nll_steps(step_fn, params, opt, batch, steps=c.sft.steps, batch_size=c.sft.batch_size,
                                         rng=rng, minibatch=self._sft_minibatch,
                                         on_step=lambda value: phase.advance(nll=value))
    phase.end(f"{c.sft.steps} steps, nll {nll[0]:.3f} -> {np.mean(nll[-10:]):.3f}")
    self.state = self.state.replace(policy=params)
    if self.critic_graphdef is not None:  # the critic starts from the SFT trunk
      critic = nnx.merge(self.critic_graphdef, self.state.critic)
      model_lib.copy_trunk(nnx.merge(self.policy_graphdef, params), critic)
      self.state = self.state.replace(critic=state_lib.copy_tree(nnx.state(critic, nnx.Param)))
      self.state = self.state.replace(critic_opt=self.critic_tx.init(self.state.critic))
    # With carry_optimizer_state RL starts from SFT's Adam moments (both AdamW, checked by the
    # config): fresh moments make Adam's first steps about lr * sign(g) on every parameter.
    self.state = self.state.replace(
        policy_opt=opt if c.sft.carry_optimizer_state else self.policy_tx.init(self.state.policy))
    self._place_state()
    self.sft_done = True
    return {"sft/nll_first": nll[0], "sft/nll_last": float(np.mean(nll[-10:])),
            "sft/demonstrations": len(demos), "sft/time_s": time.perf_counter() - t0}

  def _sft_minibatch(self, batch: batching.RolloutBatch, rows) -> dict:
    """The SFT step's inputs for `rows` of the padded demonstration batch, cut to their longest
    row (rounded up to pad_multiple) with `trainer.trim_padding`: a few compiled lengths."""
    sub = batch.select(rows)
    t = self._padded_length(sub.lengths, sub.tokens.shape[1], self.config.trainer.trim_padding)
    mb = {"tokens": sub.tokens[:, :t], "valid": sub.valid[:, :t], "mask": sub.action_mask[:, :t]}
    mb = self._packed(mb, sub.lengths, min(self.config.optim.micro_batch_size, len(rows)), "token-mean")
    return self.group.to_devices(mb)

  def _ptx_steps(self, iteration: int) -> dict:
    """PPO-ptx (Ouyang et al. 2022): `sft.ptx_steps` NLL steps on the demonstrations with the
    policy optimiser after the iteration's policy update, so RL does not erase what SFT taught."""
    c = self.config
    if self._ptx is None:
      demos = self._demos if self._demos is not None else self.demonstrations()
      if not demos:
        raise RuntimeError("sft.ptx_steps > 0 needs demonstrations; none solved its task")
      step_fn = update_lib.make_sft_step(self.policy_graphdef, self.policy_tx, dataclasses.replace(
          self.settings, micro_batch_size=min(c.optim.micro_batch_size, c.sft.batch_size)))
      self._ptx = (sft_lib.demonstration_batch(demos, pad_id=self.pad_id, pad_multiple=c.trainer.pad_multiple),
                   step_fn)
    batch, step_fn = self._ptx
    params, opt, nll = sft_lib.nll_steps(step_fn, self.state.policy, self.state.policy_opt, batch,
                                         steps=c.sft.ptx_steps, batch_size=c.sft.batch_size,
                                         rng=np.random.default_rng([c.seed, iteration, 71]),
                                         minibatch=self._sft_minibatch)
    self.state = self.state.replace(policy=params, policy_opt=opt)
    self._place_state()  # the SFT step's outputs are laid out as XLA chose
    return {"ptx/nll": float(np.mean(nll))}

  # -- evaluation -------------------------------------------------------------------------------
  def train_task_pass_at_1(self, when: str) -> dict:
    """pass@1 on every training task, `trainer.train_eval_samples` each at the rollout
    temperature (the schedule's start, both times), with its standard error: the same tasks
    before and after RL, unlike the per-iteration success rate, whose task mix changes from one
    iteration to the next."""
    n, t = self.config.trainer.train_eval_samples, self.config.sampling.temperature
    _, episodes = self.evaluate(tasks=self.train_tasks, samples=n, temperature=t,
                                label=f"train-task eval ({when})")
    wins = np.array([e.success for e in episodes], np.float64)
    p = float(wins.mean()) if wins.size else float("nan")
    se = float(np.sqrt(p * (1 - p) / max(wins.size, 1)))
    self.display.note(f"train-task pass@1 ({when} of RL, {len(self.train_tasks)} tasks x {n} at T={t:.2f}): "
                      f"{p:.3f} +- {se:.3f}")
    return {f"train_pass@1_{when}": p, f"train_pass@1_{when}_stderr": se, "train_pass@1_samples": n}

  def evaluate(self, tasks: Sequence | None = None, samples: int | None = None,
               temperature: float | None = None, label: str = "eval") -> tuple[dict, list]:
    """(pass@k metrics, episodes) of `tasks` (default the held-out ones) with the current weights,
    `samples` episodes each; `label` names its progress bar (the callers print the result)."""
    tasks = list(self.eval_tasks if tasks is None else tasks)
    if not tasks:
      return {}, []
    samples = samples or self.config.trainer.eval_samples
    temperature = self.config.trainer.eval_temperature if temperature is None else temperature
    self._set_policy(temperature, seed=self.config.seed + 7)
    self.eval_engine.set_model_info(str(self.workdir), self.iteration, temperature)
    # Several processes split the tasks as they split a training iteration's (tasks p, p + P, ...)
    # and every process gets everyone's episodes: all report the same pass@k.
    with self._episode_phase(self.eval_engine, label, len(self.group.share(tasks)) * samples, quiet=True):
      return evaluate_lib.evaluate(self.eval_engine, tasks, samples=samples, rows=self.rollout_rows,
                                   share=self.group.share, gather=self.group.all_episodes)

  # -- one RL iteration -----------------------------------------------------------------------------
  def _score(self, batch: batching.RolloutBatch, temperature: float,
             grammar_states: np.ndarray | None = None, *, trim: bool | None = None, room: int = 0) -> dict:
    """Log-probs, values and reference log-probs under the current params, in micro-batches.

    With `trim` (default `trainer.trim_padding`) rows of similar length share a call, each call
    cut to its longest row (rounded up to pad_multiple): causal attention and the mask make a
    row's outputs independent of the padding after it, so the long tail costs only its own rows.
    `room`: positions scored after each row's last token (the value after it, for GAE's
    truncation bootstrap).

    Several processes: `batch` holds this process's rows (as many as every other's), each call
    takes a micro-batch's share from every process, cut to the longest row of any of them.
    """
    mb = self.config.optim.micro_batch_size // self.group.count
    B, T = batch.tokens.shape
    ref = self.ref_params if self._needs_ref() else None
    trim = self.config.trainer.trim_padding if trim is None else trim
    order = np.argsort(batch.lengths, kind="stable") if trim else np.arange(B)
    calls = []  # (rows, length) of each scoring call
    for s in range(0, B, mb):
      rows = order[s:s + mb]
      calls.append((rows, self.group.agreed_length(self._padded_length(batch.lengths[rows] + room, T, trim))))

    def score_call(index: int) -> dict:
      rows, t = calls[index]
      inputs = {"tokens": batch.tokens[rows, :t], "valid": batch.valid[rows, :t],
                "needed": batch.action_mask[rows, :t] > 0}
      if grammar_states is not None:
        inputs["grammar_states"] = grammar_states[rows, :t]
      inputs = self.group.rows_to_devices(inputs)
      grammar = {} if grammar_states is None else {
          "grammar_states": inputs["grammar_states"], "grammar_table": self._grammar_table}
      out = self.score_fn(self.state.policy, self.state.critic, ref, inputs["tokens"], inputs["valid"],
                          jnp.float32(temperature), **grammar, needed=inputs["needed"])
      out = jax.tree.map(parallel.local_rows if self.group.multi else _to_host, out)
      if index == 0:
        killpoints.reach("score", self.iteration + 1)  # a test hook (rl.killpoints): a kill mid-scoring
      return out

    # The calls are independent: on one CPU device `update_lanes` of them run at once, a thread
    # each (rl.lanes); on a mesh (several processes too) one after another, in one order.
    result: dict[str, np.ndarray] = {}
    outs = self._score_pool.map(score_call, range(len(calls)), workers=self.update_lanes)
    for (rows, t), out in zip(calls, outs):
      for k, v in out.items():
        if k not in result:
          result[k] = np.zeros((B, T) + v.shape[2:], v.dtype)
          if k == "support":
            result[k] -= 1  # -1: no token (the padding's convention)
        result[k][rows, :t] = v
    return result

  def _place_state(self) -> None:
    """Lays the train state (and the reference) out on the mesh after it was replaced (SFT,
    PPO-ptx, init_from, resume): device to device, a no-op for arrays already in place."""
    if self.state_sharding is not None:
      self.state = parallel.place(self.state, self.state_sharding)
      if self.ref_params is not None and not (isinstance(self.ref_params, dict) and not self.ref_params):
        self.ref_params = parallel.place(self.ref_params, self.policy_sharding)

  def memory_metrics(self) -> dict[str, float]:
    """Bytes per device (the largest total of any device's shards) of the parameters, the
    optimizer states and the reference; with a mesh, the compiled update's scratch memory."""
    out = {"memory/params_bytes_per_device": float(parallel.bytes_per_device((self.state.policy, self.state.critic))),
           "memory/opt_state_bytes_per_device": float(parallel.bytes_per_device(
               (self.state.policy_opt, self.state.critic_opt))),
           "memory/ref_bytes_per_device": float(parallel.bytes_per_device(self.ref_params))}
    if self._update_temp_bytes is not None:
      out["memory/update_temp_bytes_per_device"] = self._update_temp_bytes
    return out

  def _needs_ref(self) -> bool:
    return self.config.algo.kl_coef > 0 or self.config.algo.kl_target > 0

  def _pad_rows(self, batch: batching.RolloutBatch, rows: int | None = None) -> batching.RolloutBatch:
    """Pads the batch to `rows` rows (default: a multiple of the mini-batch size) with fully
    masked rows."""
    m = self.config.optim.mini_batch_size
    B = batch.tokens.shape[0]
    extra = (-B) % m if rows is None else rows - B
    if not extra:
      return batch
    padded = batch.select(np.concatenate([np.arange(B), np.zeros(extra, int)]))
    padded.action_mask[B:] = 0.0
    padded.scores[B:] = 0.0
    padded.truncated[B:] = False
    padded.group_ids[B:] = -1 - np.arange(extra)
    return padded

  def _padded_length(self, lengths: np.ndarray, T: int, trim: bool) -> int:
    """The rows' longest length rounded up to pad_multiple (at most T); T without `trim`."""
    return min(T, batching.round_up(int(lengths.max()), self.config.trainer.pad_multiple)) if trim else T

  def _packed(self, mb: dict, lengths: np.ndarray, micro: int, loss_agg: str) -> dict:
    """`mb` with its sequences laid end to end in `trainer.pack_fraction` of its rows (rounded up
    to the micro-batch size; rl.algo.batching.pack_minibatch) when that holds fewer token slots: the
    same token-level losses and gradients with less padding. Only for the token-level loss
    aggregations (a per-sequence mean needs each sequence's own row) and attention "einsum" or
    "xla"; otherwise `mb` itself."""
    c = self.config
    fraction = float(c.trainer.pack_fraction)
    if fraction <= 0 or loss_agg not in ("token-mean", "token-sum") or c.model.attention == "cudnn":
      return mb
    rows = batching.round_up(math.ceil(fraction * mb["tokens"].shape[0]), micro)
    packed = batching.pack_minibatch(mb, lengths, rows=rows, pad_multiple=c.trainer.pad_multiple)
    return mb if packed is None else packed

  def ppo_epochs(self, train: TrainBatch, temperature: float, train_policy: bool, train_critic: bool, *,
                 rng: np.random.Generator, trim: bool | None = None, pack: bool = True) -> list[dict]:
    """`optim.ppo_epochs` passes over shuffled mini-batches of `train`'s rows.

    With `trim` (default `trainer.trim_padding`) each mini-batch is cut to its longest row,
    rounded up to pad_multiple: the padding after a row changes none of its outputs and costs
    quadratically in attention. With `pack` (and `trainer.pack_fraction` > 0) its sequences are
    packed into fewer rows (`_packed`; token-level losses only, never GSPO:
    `UpdateSettings.packable`). Returns each update step's metrics.

    Several processes: `train` holds this process's rows (as many as every other's); each
    mini-batch takes its share of the rows from every process, one length for all of them, and
    the loss denominators count every process's tokens.
    """
    c = self.config
    trim = c.trainer.trim_padding if trim is None else trim
    full, lengths = train.arrays(), train.lengths
    B, T = train.shape
    mbs = c.optim.mini_batch_size // self.group.count
    update_metrics: list[dict] = []
    for _ in range(c.optim.ppo_epochs):
      order = rng.permutation(B)
      for s in range(0, B, mbs):
        rows = order[s:s + mbs]
        t = self.group.agreed_length(self._padded_length(lengths[rows], T, trim))
        mb = {k: (v[rows][:, :t] if v.ndim >= 2 else v[rows]) for k, v in full.items()}
        scalars = self._update_scalars(mb, temperature)
        # Not across processes: packing picks its row count, or declines, from the rows' own
        # lengths, and every process's share of a mini-batch must have one shape. Each process
        # could pack its own rows into an agreed count, but the update is exact either way and
        # packing only saves padding, so several processes update unpacked.
        if pack and self.settings.packable and not self.group.multi:
          mb = self._packed(mb, lengths[rows], c.optim.micro_batch_size, c.algo.loss_agg)
        jmb = self.group.rows_to_devices(mb)
        if self.mesh is not None and self._update_temp_bytes is None:
          self._update_temp_bytes = update_lib.compiled_temp_bytes(
              self.update_step, self.state, jmb, scalars, train_policy, train_critic)
        shape = tuple(mb["tokens"].shape)
        self._update_shapes.add((bool(train_policy), bool(train_critic), shape))
        for _ in range(c.optim.critic_updates_per_policy_update - 1 if train_critic else 0):
          self._update_shapes.add((False, True, shape))
          self.state, _ = self.update_step(self.state, jmb, scalars, False, True)
        self.state, m = self.update_step(self.state, jmb, scalars, train_policy, train_critic)
        # Kept on the device until the epochs end: reading them here would wait for this step
        # before the next mini-batch is sliced and packed, which otherwise overlaps the step.
        update_metrics.append(m)
        killpoints.reach("update", self.iteration + 1)  # a test hook (rl.killpoints): a kill mid-update
    return [jax.tree.map(float, m) for m in update_metrics]

  def _update_scalars(self, mb: dict, temperature: float) -> dict:
    """A mini-batch's scalars: the loss denominators over the global mini-batch (every process's
    tokens), the KL coefficient, the temperature, Dr.GRPO's constant, the grammar table."""
    counts = {"num_tokens": mb["mask"].sum(), "num_sequences": (mb["mask"].sum(1) > 0).sum()}
    if "policy_mask" in mb:  # algo.error_masking: the policy counts only the tokens it keeps
      counts.update(policy_num_tokens=mb["policy_mask"].sum(),
                    policy_num_sequences=(mb["policy_mask"].sum(1) > 0).sum())
    counts = self.group.total(counts)
    scalars = {"num_tokens": jnp.float32(max(counts["num_tokens"], 1.0)),
               "num_sequences": jnp.float32(max(counts["num_sequences"], 1)),
               "kl_coef": jnp.float32(self.kl.coef), "temperature": jnp.float32(temperature),
               "norm_constant": jnp.float32(self.algo.norm_constant)}
    if "policy_mask" in mb:
      scalars["policy_num_tokens"] = jnp.float32(max(counts["policy_num_tokens"], 1.0))
      scalars["policy_num_sequences"] = jnp.float32(max(counts["policy_num_sequences"], 1))
    if "grammar_states" in mb:
      scalars["grammar_table"] = self._grammar_table
    return scalars

  def _update_batch(self, episodes: Sequence) -> batching.RolloutBatch:
    """The padded update batch of `episodes`. Several processes: this process's rows, padded to
    the row count and length every process agrees on (the largest; padding rows fully masked);
    a process without a trainable episode contributes padding only."""
    c = self.config
    room = self._bootstrap_room()
    if not self.group.multi:
      return self._pad_rows(batching.episodes_to_batch(episodes, pad_id=self.pad_id,
                                                       pad_multiple=c.trainer.pad_multiple, room=room))
    if episodes:
      batch = batching.episodes_to_batch(episodes, pad_id=self.pad_id, pad_multiple=c.trainer.pad_multiple,
                                         room=room)
    else:
      batch = batching.blank_batch(batching.round_up(2 + room, c.trainer.pad_multiple), self.pad_id)
    share = c.optim.mini_batch_size // self.group.count  # each process's rows of a mini-batch
    agreed = parallel.max_over_processes({"rows": batching.round_up(len(episodes), share),
                                          "length": batch.tokens.shape[1]})
    return self._pad_rows(batching.pad_length(batch, agreed["length"], self.pad_id), agreed["rows"])

  def _batch_and_score(self, episodes: Sequence, temperature: float) -> tuple:
    """The padded update batch of `episodes`, its grammar states, the scoring pass's outputs and
    its metrics. Rewards are not read here, so the pass may run before the judge's verdicts."""
    batch = self._update_batch(episodes)
    metrics: dict[str, float] = {}
    grammar_states = None
    if self.grammar is not None:  # each action token's state: the update scores the masked softmax
      grammar_states, off = self.grammar.action_states(batch.tokens, batch.action_mask)
      metrics["rollout/off_grammar_tokens"] = float(self.group.total({"off": off})["off"])
    with self.display.phase("score", quiet=True):
      scored = self._score(batch, temperature, grammar_states, room=self._bootstrap_room())
    return batch, grammar_states, scored, metrics

  def _bootstrap_room(self) -> int:
    """GAE's truncation bootstrap reads the value of the state after a cut row's last token: the
    batch and its scoring then keep one more position."""
    return int(self.algo.truncation == "bootstrap" and self.algo.uses_critic)

  def train_iteration(self) -> dict:
    """One RL iteration: sample tasks -> roll out -> score -> make_train_batch -> update -> metrics."""
    it = self.iteration
    compiled_s = compilation.compile_seconds()
    temperature = self.temperature()
    tasks = self.with_improve_prompts(self.sample_tasks(it), it)
    t0 = time.perf_counter()
    rollout, rollout_metrics = self.rollout(tasks, temperature)
    timings = {"time/rollout_s": time.perf_counter() - t0}
    return self.learn_from_rollout(rollout, rollout_metrics, temperature, timings, compiled_s=compiled_s)

  def rollout(self, tasks: Sequence, temperature: float) -> tuple[list, dict]:
    """This process's share of `tasks`, `algo.group_size` episodes each, with the current weights."""
    c, it = self.config, self.iteration
    self._set_policy(temperature, seed=c.seed * 100_003 + it)
    self.engine.set_model_info(str(self.workdir), it, temperature)
    # antihack.judge_async: the engine leaves the judge's verdicts out; they are scored in the
    # background during the scoring pass and resolved before the estimators.
    self.engine.defer_judge = True
    try:
      with self._episode_phase(self.engine, "rollout", len(tasks) * c.algo.group_size // self.group.count,
                               quiet=True):
        return self.group.run_share(self.engine, tasks, c.algo.group_size)
    finally:
      self.engine.defer_judge = False

  def learn_from_rollout(self, rollout: Sequence, rollout_metrics: dict, temperature: float,
                         timings: dict, *, compiled_s: float | None = None) -> dict:
    """Scoring, advantages, the PPO update and the iteration's metrics for this process's
    `rollout` (its share of the iteration's episodes with several processes). `compiled_s`:
    `compilation.compile_seconds()` when the iteration began (default: now)."""
    c, it = self.config, self.iteration
    if compiled_s is None:
      compiled_s = compilation.compile_seconds()
    t1 = time.perf_counter()
    scored = self._score_rollout(rollout, rollout_metrics, temperature, timings)
    sample_tokens = sum(sum(e.action_mask) for e in scored.everyone)
    self.record_solutions(scored.everyone, it)
    if not scored.episodes_all:
      timings["time/compile_s"] = compilation.compile_seconds() - compiled_s
      return self._skipped_iteration(scored.outcomes_all, rollout_metrics, timings, temperature, sample_tokens)
    durations = duration_lib.trajectory_durations(scored.episodes_all, floor_s=c.algo.duration_floor_s,
                                                  invalid_s=c.algo.duration_invalid_s)
    train, adv_metrics = make_train_batch(
        scored.batch, scored.outputs, settings=self.algo, kl_coef=self.kl.coef, episodes=scored.episodes,
        durations=durations, grammar_states=scored.grammar_states, exchange=self.group.row_exchange(scored.offset))
    timings["time/score_s"] = time.perf_counter() - t1

    t2 = time.perf_counter()
    shapes_before = len(self._update_shapes)
    train_policy = it >= c.optim.critic_warmup_iterations
    has_critic = "values" in scored.outputs and self.algo.uses_critic
    with self.display.phase("update", quiet=True):
      update_metrics = self.ppo_epochs(train, temperature, train_policy, has_critic,
                                       rng=np.random.default_rng([c.seed, it, 23]))
    ptx_metrics = self._ptx_steps(it) if c.sft.ptx_steps and train_policy else {}
    update_tokens = self.group.total({"valid": float(train.valid.sum())})["valid"] * c.optim.ppo_epochs
    timings["time/update_s"] = time.perf_counter() - t2
    # Tracing and compiling new shapes, inside the phases above (0 when every shape is cached).
    timings["time/compile_s"] = compilation.compile_seconds() - compiled_s

    metrics = {"train/episodes": float(len(scored.episodes_all)), "train/update_skipped": 0.0,
               "train/no_action_episodes": float(len(scored.outcomes_all) - len(scored.episodes_all)),
               **scored.metrics, **adv_metrics, **ptx_metrics}
    metrics.update(metrics_lib.mean_over_steps(update_metrics))
    metrics.update(metrics_lib.batch_metrics(
        train, scored.batch.sampler_logprobs, scored.outputs.get("values") if has_critic else None,
        real=np.arange(train.shape[0]) < len(scored.episodes), gather=self.group.global_rows))
    # The episodes' own group ids (the tasks' indices in the iteration), not the batch's: those
    # are dense per process, so two processes' groups would share an id once gathered.
    task_group_ids = -1 - np.arange(train.shape[0])
    task_group_ids[:len(scored.episodes)] = [e.group_id for e in scored.episodes]
    metrics.update(metrics_lib.length_split_metrics(
        train.advantages, scored.batch.action_mask, scored.batch.turn_ids, scored.batch.success,
        scored.batch.scores, task_group_ids, real=np.arange(train.shape[0]) < len(scored.episodes),
        gather=self.group.global_rows))
    metrics.update(metrics_lib.episode_outcome_metrics(scored.outcomes_all, scored.episodes_all, durations))
    metrics.update({
        "train/temperature": temperature,
        "kl/coef": self.kl.coef,
        "perf/sample_tokens_per_s": sample_tokens / max(rollout_metrics.get("perf/generate_s", 0.0), 1e-9),
        "perf/update_tokens_per_s": update_tokens / max(timings["time/update_s"], 1e-9),
        # Mini-batch shapes the update step met for the first time (each one compiles).
        "perf/update_new_shapes": float(len(self._update_shapes) - shapes_before),
    })
    if self.self_improve.enabled:
      metrics.update(self.self_improve.metrics(it))
    metrics.update(rollout_metrics)
    metrics.update(timings)
    metrics.update(self.memory_metrics())
    if c.algo.kl_target > 0 and "actor/approx_kl" in metrics:  # adaptive, and the policy trained
      # The KL to the reference that the penalty acts on (verl's apply_kl_penalty for the reward),
      # not actor/approx_kl: that is the policy's drift within one update.
      self.kl.update(metrics["kl/reward_kl_mean" if c.algo.kl_in == "reward" else "actor/kl_loss"])
    return metrics

  def _score_rollout(self, rollout: Sequence, rollout_metrics: dict, temperature: float,
                     timings: dict) -> ScoredRollout:
    """The trainable episodes of `rollout`, their padded batch and the scoring pass over it, with
    the judge's verdicts folded in (async judge: resolved while the scoring pass runs)."""
    pending_judge = any(e.pending_judge is not None for e in rollout)

    def resolve_judge() -> None:
      # Blocks until every verdict of this rollout is in and folds it into rewards, records
      # and metrics: no sample reaches the update with a reward the judge has not vetted.
      t = time.perf_counter()
      judge_metrics = self.engine.resolve_judge(rollout)
      rollout_metrics.update(episode_lib.verdict_metrics(rollout))
      rollout_metrics.update(judge_metrics)
      timings["time/judge_wait_s"] = time.perf_counter() - t

    batch = grammar_states = outputs = None
    score_metrics: dict[str, float] = {}
    if not self.group.multi:
      outcomes, episodes = _trainable(rollout)
      if episodes:
        batch, grammar_states, outputs, score_metrics = self._batch_and_score(episodes, temperature)
      if pending_judge:
        resolve_judge()
        scored_episodes, (outcomes, episodes) = episodes, _trainable(rollout)
        if episodes and [id(e) for e in episodes] == [id(e) for e in scored_episodes]:
          # The same rows: the scoring pass stands; the batch is rebuilt for the corrected rewards.
          batch = self._update_batch(episodes)
        elif episodes:  # rare: "pass" on a judge error took rows out; score the rest again
          batch, grammar_states, outputs, score_metrics = self._batch_and_score(episodes, temperature)
      return ScoredRollout(everyone=list(rollout), outcomes_all=outcomes, episodes=episodes,
                           episodes_all=episodes, offset=0, batch=batch, grammar_states=grammar_states,
                           outputs=outputs, metrics=score_metrics)
    # The scoring pass is collective: whether and how often it runs must not depend on one
    # process's verdicts, so the judge's are in before it (no overlap with the judge here).
    if pending_judge:
      resolve_judge()
    outcomes, episodes = _trainable(rollout)
    # Every process's episodes (light copies): the iteration's metrics, the estimators' batch
    # statistics and the self-improvement buffer are the whole iteration's, the same on every
    # process; the episode-derived rollout metrics are recomputed from them (timings, policy
    # calls and judge service metrics stay this process's own).
    shares = self.group.gather_episodes(rollout)
    everyone = [e for share in shares for e in share]
    rollout_metrics.update(episode_lib.episode_metrics(everyone))
    per_process = [_trainable(share) for share in shares]
    episodes_all = [e for _, t in per_process for e in t]
    if episodes_all:  # a process without a trainable episode contributes padding rows
      batch, grammar_states, outputs, score_metrics = self._batch_and_score(episodes, temperature)
    return ScoredRollout(everyone=everyone, outcomes_all=[e for o, _ in per_process for e in o],
                         episodes=episodes, episodes_all=episodes_all,
                         offset=sum(len(t) for _, t in per_process[:self.group.index]), batch=batch,
                         grammar_states=grammar_states, outputs=outputs, metrics=score_metrics)

  def _skipped_iteration(self, outcomes: Sequence, rollout_metrics: dict, timings: dict,
                         temperature: float, sample_tokens: int) -> dict:
    """The metrics of an iteration without a trainable episode (every one failed for an
    infrastructure reason or ended before its first action): no update, and the log says so."""
    failed = int(rollout_metrics.get("infra/failed_episodes", 0))
    self.display.note(f"iteration {self.iteration + 1}: no episode to train on ({failed} of "
                      f"{int(rollout_metrics.get('rollout/episodes', 0))} failed for infrastructure "
                      "reasons, the rest ended before their first action); update skipped")
    generate_s = max(rollout_metrics.get("perf/generate_s", 0.0), 1e-9)
    metrics = {"train/episodes": 0.0, "train/update_skipped": 1.0,
               "train/no_action_episodes": float(len(outcomes)), "train/temperature": temperature,
               "kl/coef": self.kl.coef, "perf/sample_tokens_per_s": sample_tokens / generate_s,
               "perf/update_tokens_per_s": 0.0}
    if outcomes:  # policy outcomes without action tokens: still failures to report
      metrics["train/reward_mean"] = float(np.mean([e.final_reward for e in outcomes]))
      metrics["train/success_rate"] = float(np.mean([e.success for e in outcomes]))
    metrics.update(rollout_metrics)
    metrics.update(timings)
    return metrics

  # -- the whole run ------------------------------------------------------------------------------------
  def run(self) -> dict:
    c = self.config
    t_start = time.perf_counter()
    status = self.maybe_resume()
    self.display.note(status)
    self.writer = MetricWriter(self.workdir, tensorboard=c.trainer.tensorboard, wandb=c.trainer.wandb,
                               config=c.to_dict(), process_index=jax.process_index(),
                               time_offset_s=self.time_offset_s)
    self.writer.truncate_after(self.iteration)
    # As the metrics: records of iterations after the checkpoint are redone (each process owns
    # its own trajectory log).
    self.traj_writer.truncate_after(self.iteration)
    summary_path = self.workdir / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
    if not self.sft_done:
      sft_metrics = self.run_sft()
      summary.update({k.replace("/", "_"): v for k, v in sft_metrics.items()})
      if self.eval_tasks:
        sft_eval, sft_episodes = self.evaluate(samples=c.trainer.final_eval_samples, label="held-out eval")
        summary["heldout_pass@1_sft"] = sft_eval.get("eval/pass@1")
        summary.update(_heldout_mle("sft", sft_eval, sft_episodes))
        self._note_heldout("after SFT", summary["heldout_pass@1_sft"])
      self._write_summary(summary_path, summary)
    if self.ref_params is None or (isinstance(self.ref_params, dict) and not self.ref_params):
      self.ref_params = state_lib.copy_tree(self.state.policy)
    if self.iteration == 0 and self.checkpointer.latest_step() is None:  # else resumed from step 0
      self.save()
    # Measured once, before the first iteration (a resumed run keeps the first measurement).
    if c.trainer.train_eval_samples and self.iteration == 0 and "train_pass@1_start" not in summary:
      summary.update(self.train_task_pass_at_1("start"))
      self._write_summary(summary_path, summary)
    iterations = self.display.phase("iteration", total=c.trainer.iterations, completed=self.iteration)
    while self.iteration < c.trainer.iterations:
      metrics = self.train_iteration()
      self.iteration += 1
      if c.trainer.eval_every and (self.iteration % c.trainer.eval_every == 0
                                   or self.iteration == c.trainer.iterations):
        metrics.update(self.evaluate()[0])
      row = self.writer.write_scalars(self.iteration, metrics)
      killpoints.reach("metrics", self.iteration)  # a test hook (rl.killpoints): row written, no checkpoint
      if self.iteration % c.trainer.checkpoint_every == 0 or self.iteration == c.trainer.iterations:
        self.save(row)
      iterations.advance(message=progress_lib.describe_iteration(row))
    iterations.end()
    final, final_episodes = (self.evaluate(samples=c.trainer.final_eval_samples, label="held-out eval")
                             if self.eval_tasks else ({}, []))
    summary.update(_heldout_mle("final", final, final_episodes))
    if final:
      self._note_heldout("after RL", final.get("eval/pass@1"))
    summary.update({
        "iterations": self.iteration,
        "wall_time_s": self.writer.elapsed_s(),
        "session_wall_time_s": time.perf_counter() - t_start,
        "peak_rss_mb": peak_rss_mb(),
        "heldout_pass@1_final": final.get("eval/pass@1"),
        **{k.replace("/", "_"): v for k, v in self.memory_metrics().items()},
    })
    summary.update(success_trend(read_metrics(self.workdir)))
    if c.trainer.train_eval_samples:
      summary.update(self.train_task_pass_at_1("end"))
      if summary.get("train_pass@1_start") is not None:
        summary["train_pass@1_gain"] = summary["train_pass@1_end"] - summary["train_pass@1_start"]
    self._write_summary(summary_path, summary)
    self.writer.close()
    if c.trainer.plots and jax.process_index() == 0:
      from rl.train import plots  # matplotlib only when plots are drawn
      try:
        plots.plot_run(self.workdir)
      except Exception as e:  # noqa: BLE001 - a plot must never cost a finished run
        self.display.note(f"plots: not written ({type(e).__name__}: {e})")
    plots_dir = self.workdir / "plots"
    paths = progress_lib.RunPaths(summary=summary_path, checkpoints=self.workdir / "checkpoints",
                                  plots=plots_dir if plots_dir.is_dir() else None,
                                  metrics=self.workdir / "metrics.jsonl")
    self.display.summary(progress_lib.summary_lines(summary, paths, device_peak_mb=device_peak_mb()))
    self.checkpointer.close()
    self.engine.evaluator.close()
    self.traj_writer.close()
    return summary

  def _write_summary(self, path: Path, summary: dict) -> None:
    # Process 0 writes, as it writes the metrics: every process holds the same summary (the
    # evaluations gather every process's episodes), and the run directory is shared.
    if self.group.index == 0:
      path.write_text(json.dumps(summary, indent=2))

  def _note_heldout(self, when: str, pass_at_1: float | None) -> None:
    samples = self.config.trainer.final_eval_samples
    value = "not measured" if pass_at_1 is None else f"{pass_at_1:.3f}"
    self.display.note(f"held-out pass@1 {when}: {value} ({len(self.eval_tasks)} tasks x {samples})")


def _heldout_mle(when: str, metrics: dict, episodes: Sequence) -> dict:
  """Summary entries of a held-out evaluation of MLE tasks (`heldout_mle_<when>`: valid rate,
  mean score of the valid programs, execution time, and the same per task); {} for other tasks."""
  per_task = episode_lib.mle_task_scores(episodes)
  if not per_task:
    return {}
  overall = {k[len("eval/mle/"):]: v for k, v in metrics.items() if k.startswith("eval/mle/")}
  return {f"heldout_mle_{when}": {**overall, "per_task": per_task}}


def success_trend(rows: Sequence[dict], fraction: float = 0.1) -> dict:
  """Mean training success rate over the first and the last `fraction` of the iterations
  (at least one each): the default experiment's learning criterion."""
  rates = [r["train/success_rate"] for r in rows if r.get("train/success_rate") is not None]
  if not rates:
    return {}
  k = max(1, round(fraction * len(rates)))
  first, last = float(np.mean(rates[:k])), float(np.mean(rates[-k:]))
  return {"train_success_first_10pct": first, "train_success_last_10pct": last,
          "train_success_gain": last - first, "train_success_window": k}


def run(config: ml_collections.ConfigDict, workdir: str | Path) -> dict:
  config_lib.validate(config)  # names and numbers first: nothing starts on a bad config
  parallel.initialize(config)
  compilation.use_persistent_cache(config.trainer.compilation_cache_dir,
                                   config.trainer.compilation_cache_min_s)
  compilation.start_timing()
  config_lib.validate(config, num_devices=jax.device_count(), num_processes=jax.process_count())
  workdir = prepare_workdir(config, workdir)
  display = progress_lib.make_display()
  try:
    return Trainer(config, workdir, display).run()
  finally:
    display.close()  # a failed run leaves no live bar over its traceback
