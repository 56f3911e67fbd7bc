"""The trainer end to end on CPU: a tiny run writes every artifact, and a resumed run
continues exactly where an uninterrupted one would be."""

import json
from pathlib import Path

import numpy as np
import pytest

from configs import default
from rl.train import trainer as trainer_lib
from run_logs import assert_same_rows, episode_signatures, metrics_rows



def tiny_config(tasks_root, iterations=2, **overrides):
  c = default.get_config().unlock()
  c.model.tiny = "test"
  c.model.hidden_size = c.model.num_layers = c.model.intermediate_size = 0  # the preset's sizes
  c.init_from = ""  # the default's base has the default model's shape, not the test preset's
  c.tasks.difficulty = ""
  c.tasks.root = str(tasks_root)
  c.tasks.num_synthetic = 12
  c.tasks.synthetic_library = "core"  # the bundled functions: these runs' tasks as measured
  c.tasks.eval_sources = ()  # held-out tasks from the training root (no second root to verify)
  c.trainer.iterations = iterations
  c.trainer.tasks_per_iteration = 4
  c.trainer.eval_every = 2
  c.trainer.checkpoint_every = 1
  c.trainer.tensorboard = False
  c.trainer.plots = False  # drawn in test_tiny_run_writes_all_artifacts only
  c.trainer.pad_multiple = 256
  c.optim.mini_batch_size = 2
  c.optim.micro_batch_size = 2
  c.optim.ppo_epochs = 1
  c.optim.critic_warmup_iterations = 0  # the policy trains in these 1-2 iteration runs
  c.agent.max_turns = 3
  c.agent.max_tokens_per_turn = 96  # the expert's edit calls must fit
  c.agent.max_tokens_per_trajectory = 768
  c.sampling.max_cache_len = 1024
  c.sft.steps = 2
  c.sft.batch_size = 2
  c.sft.demos_per_task = 1
  for key, value in overrides.items():
    section, leaf = key.split(".")
    c[section][leaf] = value
  return c.lock()


@pytest.fixture(scope="module")
def tasks_root(tmp_path_factory):
  return tmp_path_factory.mktemp("tasks")


@pytest.mark.slow
def test_tiny_run_writes_all_artifacts(tmp_path, tasks_root, capsys):
  full = tmp_path / "full"
  summary = trainer_lib.run(tiny_config(tasks_root, **{"trainer.plots": True}), full)
  _check_plain_progress(capsys.readouterr().out, summary, full)
  rows = metrics_rows(full)
  assert [r["step"] for r in rows] == [1, 2]
  for key in ("train/reward_mean", "train/success_rate", "antihack/flag_rate", "perf/sample_tokens_per_s",
              "perf/update_tokens_per_s", "eval/pass@1", "critic/value_loss", "actor/pg_loss",
              "adv_len/long_success_frac", "adv_len/short_failure_frac"):
    assert key in rows[-1], key
  assert rows[0]["perf/update_new_shapes"] >= 1  # the first update compiles
  assert summary["iterations"] == 2 and summary["peak_rss_mb"] > 0
  assert "heldout_pass@1_sft" in summary and "heldout_pass@1_final" in summary
  assert json.loads((full / "config.json").read_text())["trainer"]["iterations"] == 2
  assert list((full / "trajectories").glob("*.jsonl"))
  assert (full / "checkpoints" / "last").exists()
  for name in ("reward_success.png", "lengths.png", "cheat_rate.png"):
    assert (full / "plots" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name



def _check_plain_progress(out: str, summary: dict, workdir: Path) -> None:
  """The run's stdout off a terminal (pytest captures it): one line per event, iteration lines
  with only the numbers they measured, and the end summary a user came for."""
  lines = out.splitlines()
  assert "nan" not in out
  for prefix in ("tasks: ", "demos: ", "sft: ", "held-out pass@1 after SFT: ", "train-task pass@1 (start",
                 "iteration: 2/2", "held-out pass@1 after RL: "):
    assert sum(line.startswith(prefix) for line in lines) == 1, (prefix, out)
  assert sum(line.startswith("sft ") for line in lines) <= 3  # steps 1 and 2 (of 2); never one per step
  first, second = [line for line in lines if line.startswith("iteration ") and "/2  " in line]
  assert first.startswith("iteration 1/2  reward ") and "success " in first and "rollout " in first
  # eval_every=2: held-out pass@1 only on the iteration that measured it.
  assert "pass@1" not in first and "held-out pass@1 " in second
  block = "\n".join(lines[lines.index("run summary"):])
  assert f"after SFT {summary['heldout_pass@1_sft']:.3f} -> after RL {summary['heldout_pass@1_final']:.3f}" in block
  assert f"before RL {summary['train_pass@1_start']:.3f}" in block and "after RL" in block
  assert f"first 10% {summary['train_success_first_10pct']:.2f} -> last 10% " in block
  assert "  wall time " in block and "  peak memory " in block and "host " in block
  for path in (workdir / "plots", workdir / "checkpoints", workdir / "summary.json"):
    assert str(path) in block, path


@pytest.mark.slow
def test_resumed_run_equals_uninterrupted_run(tmp_path, tasks_root):
  # Without SFT: expert demonstrations quote test timings ("1 passed in 0.05s"), which are not
  # reproducible, while a run's own rollouts and updates are, given the checkpointed state.
  overrides = {"sft.enabled": False}
  whole = tmp_path / "whole"
  trainer_lib.run(tiny_config(tasks_root, **overrides), whole)
  part = tmp_path / "part"
  trainer_lib.run(tiny_config(tasks_root, iterations=1, **overrides), part)  # "killed" after 1
  trainer_lib.run(tiny_config(tasks_root, iterations=2, **overrides), part)  # same command again
  resumed = metrics_rows(part)
  assert [r["step"] for r in resumed] == [1, 2]
  # The shorter run also evaluated at its last iteration; evaluation does not touch training state.
  assert_same_rows(resumed, metrics_rows(whole), skip_prefix="eval/")


# test_killed_runs_resume_to_the_uninterrupted_run: the points where one run directory's runs
# die (rl.killpoints), in order; each rerun of the same command resumes from the checkpoint the
# one before left and dies at the next point. Without SFT (see above); the train-task pass@1
# measurements are off, as they do not touch training state either.
KILLS = (
    "rollout:1",     # checkpoint 0 only, some of iteration 1's trajectories logged
    "checkpoint:1",  # row 1 written, checkpoint 1 left half-written (orbax's temporary directory)
    "metrics:2",     # resumes from 0 past the partial checkpoint; row 2 written, not checkpoint 2
    "score:2",       # resumes from 1
    "update:2",      # resumes from 1
)
KILLED_RUN = {"sft.enabled": False, "trainer.train_eval_samples": 0}


def _episodes(workdir):
  from rl.env.trajectory import load_trajectories

  return episode_signatures(load_trajectories(Path(workdir) / "trajectories"))


@pytest.mark.slow
def test_killed_runs_resume_to_the_uninterrupted_run(tmp_path, tasks_root):
  """SIGKILL during a rollout, a checkpoint's write, the scoring pass and an update, and between
  a metrics row and its checkpoint; after each the same command again: the finished run logs the
  uninterrupted run's metrics rows and episodes, each once."""
  import os
  import signal
  import subprocess
  import sys

  from rl import killpoints

  script = Path(__file__).resolve().parent / "helpers" / "trainer_resume_run.py"

  # JAX's persistent compilation cache: each run compiles what the first one did (about two
  # thirds of a run's time on a CPU), and a loaded program computes what a fresh compile does.
  cache = {"JAX_COMPILATION_CACHE_DIR": str(tmp_path / "jax_cache"),
           "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0", "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}

  def run(workdir, kill=""):
    env = {**os.environ, "JAX_PLATFORMS": "cpu", **cache, killpoints.ENV_VAR: kill}
    proc = subprocess.run([sys.executable, str(script), str(tasks_root), str(workdir)], env=env,
                          capture_output=True, text=True, timeout=900)
    want = -signal.SIGKILL if kill else 0
    assert proc.returncode == want, (kill, proc.returncode, proc.stderr[-3000:])

  whole, part = tmp_path / "whole", tmp_path / "part"
  run(whole)
  for kill in KILLS:
    run(part, kill)
    steps = sorted(p.name for p in (part / "checkpoints" / "last").iterdir())
    rows = [r["step"] for r in metrics_rows(part)] if (part / "metrics.jsonl").exists() else []
    if kill == "rollout:1":
      assert steps == ["0"] and rows == [] and _episodes(part)
    elif kill == "checkpoint:1":  # every file written, nothing committed
      assert steps == ["0", "1.orbax-checkpoint-tmp"] and rows == [1]
      assert (part / "checkpoints" / "last" / "1.orbax-checkpoint-tmp" / "state").is_dir()
    elif kill == "metrics:2":
      assert steps == ["0", "1"] and rows == [1, 2]
  run(part)
  resumed = metrics_rows(part)
  assert [r["step"] for r in resumed] == [1, 2]
  assert_same_rows(resumed, metrics_rows(whole))
  assert "eval/pass@1" in resumed[1]  # the evaluation of iteration 2 is compared too
  assert _episodes(part) == _episodes(whole)  # the killed runs' records dropped, none logged twice


def test_metric_writer_truncate_after_drops_later_rows_and_a_cut_line(tmp_path):
  from rl.train.metrics import MetricWriter

  writer = MetricWriter(tmp_path, tensorboard=False)
  for step in (1, 2, 3):
    writer.write_scalars(step, {"train/reward_mean": step / 10})
  with open(tmp_path / "metrics.jsonl", "a") as fh:
    fh.write('{"step": 4, "train/rew')  # the write a SIGKILL cut
  writer.truncate_after(2)
  assert [r["step"] for r in metrics_rows(tmp_path)] == [1, 2]
  writer.write_scalars(3, {"train/reward_mean": 0.3})
  assert [r["step"] for r in metrics_rows(tmp_path)] == [1, 2, 3]


def test_workdir_with_different_config_is_refused(tmp_path, tasks_root):
  trainer_lib.prepare_workdir(tiny_config(tasks_root), tmp_path)
  with pytest.raises(trainer_lib.WorkdirError, match="different config"):
    trainer_lib.prepare_workdir(tiny_config(tasks_root, **{"algo.clip_high": 0.3}), tmp_path)
  trainer_lib.prepare_workdir(tiny_config(tasks_root, iterations=5), tmp_path)  # longer run: fine


@pytest.mark.slow
def test_self_improvement_duration_weights_and_advantage_scaling_are_wired(tmp_path, tasks_root):
  cfg = tiny_config(tasks_root, iterations=1, **{
      "self_improve.enabled": True, "self_improve.probability": 1.0, "algo.duration_weight": "inverse_log",
      "trainer.eval_every": 0, "sft.enabled": False, "algo.negative_advantage_scale": 0.0,
      "reward.invalid_call_penalty": -0.5,  # the random policy's bad calls give advantages a spread
      "algo.entropy_token_fraction": 0.5})
  workdir = trainer_lib.prepare_workdir(cfg, tmp_path / "si")
  trainer = trainer_lib.Trainer(cfg, workdir)
  trainer.run()
  saved = json.loads(json.dumps(trainer.self_improve.state_dict()))
  row = metrics_rows(workdir)[-1]
  assert row["self_improve/buffer_size"] > 0 and row["self_improve/probability"] == 1.0
  assert row["duration/seconds_p10"] >= cfg.algo.duration_floor_s
  assert row["adv/min"] >= 0.0 and row["adv/std"] > 0  # negative advantages scaled to 0
  assert row["adv/entropy_kept_fraction"] == pytest.approx(0.5, abs=0.02)
  records = [json.loads(l) for f in (workdir / "trajectories").glob("*.jsonl") for l in f.read_text().splitlines()]
  with_code = [r for r in records if r.get("solution")]
  assert with_code and all(r["solution"]["code"] for r in with_code)
  for r in with_code:  # hidden-test logs never reach a prompt: counts only
    assert r["solution"]["output"].startswith("hidden tests:") and "assert" not in r["solution"]["output"]
  # Every buffered task now gets an improve-previous prompt (probability 1) quoting its code.
  buffered = [t for t in trainer.train_tasks if trainer.self_improve.buffer.entries(t.id)]
  prompted = trainer.with_improve_prompts(buffered, 1)
  for task, new in zip(buffered, prompted):
    assert new.id == task.id and new.statement != task.statement
    assert task.statement in new.statement and "Improve the previous solution" in new.statement
    assert new.prompt_origin == "improve_previous" and new.parent_score is not None and not task.prompt_origin
  # Episodes from such a prompt say so in their record (scores split by prompt kind).
  episode = trainer.eval_engine.run(prompted[:1], group_size=1)[0][0]
  assert episode.record["prompt_origin"] == {"kind": "improve_previous", "parent_score": prompted[0].parent_score}
  # The buffer is host state: a fresh trainer on the same workdir restores it.
  again = trainer_lib.Trainer(cfg, workdir)
  again.maybe_resume()
  assert json.loads(json.dumps(again.self_improve.state_dict())) == saved


@pytest.mark.slow
def test_ptx_steps_error_masking_and_train_task_pass_at_1_are_wired(tmp_path, tasks_root):
  import jax

  # Zero advantages: the policy-gradient step is exactly zero, so only PPO-ptx can move the policy.
  base = {"trainer.eval_every": 0, "sft.enabled": False, "algo.positive_advantage_scale": 0.0,
          "algo.negative_advantage_scale": 0.0, "algo.error_masking": "after_error",
          "trainer.train_eval_samples": 1}
  moved = {}
  for ptx in (0, 2):
    cfg = tiny_config(tasks_root, iterations=1, **base, **{"sft.ptx_steps": ptx})
    workdir = trainer_lib.prepare_workdir(cfg, tmp_path / f"ptx{ptx}")
    trainer = trainer_lib.Trainer(cfg, workdir)
    before = [np.array(x) for x in jax.tree.leaves(trainer.state.policy)]
    summary = trainer.run()
    after = [np.asarray(x) for x in jax.tree.leaves(trainer.state.policy)]
    moved[ptx] = max(float(np.abs(a - b).max()) for a, b in zip(after, before))
    row = metrics_rows(workdir)[-1]
    assert 0.0 <= row["adv/error_masked_fraction"] <= 1.0
    assert ("ptx/nll" in row) == (ptx > 0)
    n_tasks = len(trainer.train_tasks)
    for when in ("start", "end"):
      p, se = summary[f"train_pass@1_{when}"], summary[f"train_pass@1_{when}_stderr"]
      assert 0.0 <= p <= 1.0 and se == pytest.approx(np.sqrt(p * (1 - p) / n_tasks))
    assert summary["train_pass@1_gain"] == pytest.approx(summary["train_pass@1_end"] - summary["train_pass@1_start"])
    # Evaluating every training task ran in iteration-sized batches: the sampler did not grow.
    assert n_tasks > cfg.trainer.tasks_per_iteration
    assert trainer.model_policy.conv.batch_size == cfg.trainer.tasks_per_iteration
  assert moved[0] == 0.0 and moved[2] > 0.0
  assert np.isfinite(row["ptx/nll"]) and row["ptx/nll"] > 0


@pytest.mark.slow
def test_constrained_tool_calls_are_sampled_and_scored_under_the_grammar(tmp_path, tasks_root):
  cfg = tiny_config(tasks_root, iterations=1, **{
      "agent.constrained_tool_calls": True, "trainer.eval_every": 0, "sft.enabled": False,
      # Thoughts unbounded: a random policy's message is then a thought cut by the token budget
      # or a whole call (a bounded thought forces calls that the budget may cut).
      "agent.max_thought_bytes": 0,
      "optim.policy_lr": 1e-12})  # the policy stays the sampler's through the iteration
  workdir = trainer_lib.prepare_workdir(cfg, tmp_path / "constrained")
  trainer = trainer_lib.Trainer(cfg, workdir)
  trainer.run()
  row = metrics_rows(workdir)[-1]
  assert row["rollout/off_grammar_tokens"] == 0
  # The update scores the masked distribution the sampler drew from: no train/infer gap beyond
  # float noise. Unmasked, this random policy's tokens would differ by ~1.5e-3 nats (the mass of
  # the 6 special tokens its thoughts may not use) and a call's by nats (test_constrained.py).
  assert row["actor/sampler_logprob_abs_diff"] < 1e-4
  records = [json.loads(l) for f in (workdir / "trajectories").glob("*.jsonl") for l in f.read_text().splitlines()]
  steps = [s for r in records for s in r["steps"]]
  assert steps
  for step in steps:  # a message either is still in its thought (cut by the budget) or is a call
    assert step["action_type"] is not None or "<tool_call>" not in step["text"], step["text"]


@pytest.mark.slow
def test_trainer_on_two_fake_devices_matches_one(tmp_path, tasks_root):
  """The trainer's data-parallel path (state replicated, mini-batches split over the mesh)
  gives the same iteration as a single device: same rollouts, same losses up to reduction order."""
  import os
  import subprocess
  import sys

  script = Path(__file__).resolve().parent / "helpers" / "trainer_mesh_run.py"
  results = {}
  for devices in (1, 2):
    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}"}
    proc = subprocess.run([sys.executable, str(script), str(tasks_root), str(tmp_path / f"d{devices}")],
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")][-1]
    results[devices] = json.loads(line[len("RESULT "):])
  one, two = results[1], results[2]
  assert one["mesh"] is None and two["devices"] == 2 and two["mesh"] == {"data": 1, "fsdp": 2, "tensor": 1}
  for key in ("train/reward_mean", "train/success_rate", "length/tokens_p50"):
    assert two["row"][key] == one["row"][key], key  # rollouts do not depend on the mesh
  for key in ("actor/pg_loss", "actor/entropy", "critic/value_loss", "actor/grad_norm", "critic/grad_norm"):
    assert two["row"][key] == pytest.approx(one["row"][key], rel=2e-3, abs=1e-5), key
  # Constrained decoding on the mesh: grammar states split with the rows, the table replicated.
  proc = subprocess.run([sys.executable, str(script), str(tasks_root), str(tmp_path / "c2"), "--constrained"],
                        env={**env, "XLA_FLAGS": "--xla_force_host_platform_device_count=2"},
                        capture_output=True, text=True, timeout=900)
  assert proc.returncode == 0, proc.stderr[-3000:]
  row = json.loads([l for l in proc.stdout.splitlines() if l.startswith("RESULT ")][-1][len("RESULT "):])["row"]
  assert row["rollout/off_grammar_tokens"] == 0 and row["actor/sampler_logprob_abs_diff"] < 1e-4


def test_success_trend_compares_first_and_last_tenth_of_iterations():
  rows = [{"step": i + 1, "train/success_rate": r} for i, r in
          enumerate([0.2, 0.4] + [0.5] * 16 + [0.7, 0.9])]
  rows.insert(3, {"step": 3, "eval/pass@1": 0.0})  # rows without a success rate are skipped
  trend = trainer_lib.success_trend(rows)
  assert trend["train_success_window"] == 2
  assert trend["train_success_first_10pct"] == pytest.approx(0.3)
  assert trend["train_success_last_10pct"] == pytest.approx(0.8)
  assert trend["train_success_gain"] == pytest.approx(0.5)
  assert trainer_lib.success_trend([{"train/success_rate": 1.0}])["train_success_window"] == 1
  assert trainer_lib.success_trend([]) == {}


def test_init_from_a_hugging_face_directory(tmp_path, tasks_root, monkeypatch):
  """init_from loads an HF directory's weights into the policy (relative paths also from the
  repository), and refuses weights of another shape or a missing directory, naming the field."""
  import dataclasses

  import jax
  from flax import nnx

  from rl.models import init_model, save_hf_checkpoint
  from rl.train import state as state_lib

  cfg = tiny_config(tasks_root, iterations=0)
  trainer = trainer_lib.Trainer(cfg, trainer_lib.prepare_workdir(cfg, tmp_path / "run"))
  config = nnx.merge(trainer.policy_graphdef, trainer.state.policy).config
  other = init_model(config, seed=5)
  save_hf_checkpoint(other, tmp_path / "hf")
  policy, critic = state_lib.load_weights(tmp_path / "hf", trainer.state.policy, trainer.state.critic,
                                          trainer.policy_graphdef)
  assert critic is trainer.state.critic  # an HF directory holds a policy
  trainer.state = trainer.state.replace(policy=policy)
  for got, want in zip(jax.tree.leaves(trainer.state.policy), jax.tree.leaves(nnx.state(other, nnx.Param))):
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))

  save_hf_checkpoint(init_model(dataclasses.replace(config, intermediate_size=config.intermediate_size * 2)),
                     tmp_path / "wide")
  with pytest.raises(ValueError, match="init_from .*do not fit config.model"):
    state_lib.load_weights(tmp_path / "wide", trainer.state.policy, None, trainer.policy_graphdef)
  with pytest.raises(FileNotFoundError, match="config.init_from: no such directory"):
    state_lib.resolve_init_from(tmp_path / "missing")
  monkeypatch.chdir(tmp_path)
  assert state_lib.resolve_init_from("rl/assets") == Path(state_lib.__file__).resolve().parents[2] / "rl/assets"


def test_heldout_tasks_come_from_eval_sources_when_set(tmp_path, tasks_root):
  """config.tasks.eval_sources: the held-out tasks are the eval_split of their own mixture (the
  default's synthetic_heldout root), not of the training root."""
  c = tiny_config(tasks_root).unlock()
  c.tasks.verify_with = "subprocess"  # the bundled functions; isolation is tested elsewhere
  c.tasks.difficulty = "easy"
  c.tasks.eval_sources = (("synthetic_heldout", 1.0),)
  c.tasks.eval_num_synthetic = 5
  from rl.train import progress
  tasks = trainer_lib.load_task_sets(c.lock(), tmp_path, progress.PlainDisplay())
  train, heldout = tasks.train, tasks.heldout
  assert len(heldout) == 5 and all(t.split == "heldout" and t.difficulty == "easy" for t in heldout)
  assert not {t.id for t in heldout} & {t.id for t in train}
  assert all(str(t.dir).startswith(str(tmp_path / "tasks" / "synthetic_heldout")) for t in heldout)
  assert not {t.metadata["functions"][0] for t in heldout} & {t.metadata["functions"][0] for t in train}


# --- one iteration on scripted episodes ------------------------------------------------------------
# A Trainer whose rollout engine returns fixed episodes: the advantage, KL and update wiring of
# `train_iteration` runs as in training, without sampling or sandboxes.


def _scripted_episodes(n: int) -> list:
  """`n` episodes of two turns: odd ones succeed; episode 0 is cut off (truncated) with its last
  action token on the batch's last padded position; episode 2 fails after a tool error."""
  from rl.env.episode import Episode

  rng = np.random.default_rng(0)
  episodes = []
  for i in range(n):
    length = 256 if i == 0 else 60 + 10 * i
    mask = [0] * 20 + [1] * 15 + [0] * 5 + [1] * (length - 40)
    episodes.append(Episode(
        task_id=f"task{i}", group_id=i, tokens=rng.integers(10, 200, size=length).tolist(), action_mask=mask,
        sampler_logprobs=[-1.0 * m for m in mask], turn_ends=[34, length - 1], turn_rewards=[0.0, 0.0],
        final_reward=float(i % 2), success=bool(i % 2), terminated="max_tokens" if i == 0 else "submit",
        truncated=i == 0, duration_s=1.0, exec_time_s=1.0, record={},
        turn_errors=[True, False] if i == 2 else [False, False]))
  return episodes


@pytest.fixture(scope="module")
def scripted_iteration(tasks_root, tmp_path_factory):
  """One policy iteration (after a one-iteration critic warm-up) on scripted episodes, with an
  adaptive KL in the reward towards a tiny target, error masking, truncation bootstrap, cosine
  schedules and PPO-ptx; records every update step's inputs and each optimiser's schedule length."""
  import types

  import jax

  from rl.algo import update as update_lib

  cfg = tiny_config(tasks_root, iterations=3, **{
      "sft.enabled": False, "trainer.eval_every": 0, "trainer.train_eval_samples": 0,
      "tasks.verify_with": "subprocess", "agent.constrained_tool_calls": False, "algo.entropy_token_fraction": 1.0,
      "algo.kl_in": "reward", "algo.kl_coef": 0.1, "algo.kl_target": 1e-4,
      "algo.error_masking": "episode", "algo.truncation": "bootstrap",
      "optim.schedule": "cosine", "optim.critic_warmup_iterations": 1,
      "optim.critic_updates_per_policy_update": 2, "sft.ptx_steps": 3,
      "optim.policy_lr": 1e-12})  # the policy does not drift within the update: approx_kl ~ 0
  schedules = {}
  make_optimizer = update_lib.make_optimizer

  def recording_make_optimizer(lr, **kw):
    schedules[lr] = kw["total_steps"]
    return make_optimizer(lr, **kw)

  with pytest.MonkeyPatch.context() as patch:
    patch.setattr(update_lib, "make_optimizer", recording_make_optimizer)
    trainer = trainer_lib.Trainer(cfg, trainer_lib.prepare_workdir(cfg, tmp_path_factory.mktemp("scripted")))
  episodes = _scripted_episodes(cfg.trainer.tasks_per_iteration)
  trainer.engine = types.SimpleNamespace(run=lambda tasks, group_size: (episodes, {}),
                                         set_model_info=lambda *args: None)
  trainer._ptx_steps = lambda iteration: {}  # pylint: disable=protected-access
  # A reference far from the policy: the rollouts' KL to it is far above the target.
  noise = np.random.default_rng(1)
  trainer.ref_params = jax.tree.map(lambda x: x + 0.5 * noise.normal(size=x.shape).astype(x.dtype),
                                    trainer.state.policy)
  calls = []
  update_step = trainer.update_step

  def recording_update_step(state, mb, scalars, train_policy, train_critic):
    calls.append((jax.tree.map(np.asarray, mb), jax.tree.map(np.asarray, scalars), train_policy, train_critic))
    return update_step(state, mb, scalars, train_policy, train_critic)

  trainer.update_step = recording_update_step
  trainer.iteration = 1  # after the critic's warm-up: the policy trains
  coef_before = trainer.kl.coef
  metrics = trainer.train_iteration()
  return types.SimpleNamespace(trainer=trainer, config=cfg, episodes=episodes, metrics=metrics, calls=calls,
                               coef_before=coef_before, schedules=schedules)


def test_scoring_calls_in_lanes_give_the_scores_of_one_call_at_a_time(scripted_iteration):
  """`_score`'s calls run `update_lanes` at a time in threads (rl.lanes); each call is the same
  program on the same rows, so the scores are those of one call at a time to the bit."""
  trainer = scripted_iteration.trainer
  batch = trainer._update_batch(scripted_iteration.episodes)  # pylint: disable=protected-access
  lanes = trainer.update_lanes
  try:
    trainer.update_lanes = 1
    one = trainer._score(batch, 0.7, room=1)  # pylint: disable=protected-access
    trainer.update_lanes = 3
    three = trainer._score(batch, 0.7, room=1)  # pylint: disable=protected-access
  finally:
    trainer.update_lanes = lanes
  assert one.keys() == three.keys() and {"logprobs", "values", "ref_logprobs"} <= one.keys()
  for key in one:
    np.testing.assert_array_equal(one[key], three[key], err_msg=key)


def test_adaptive_kl_controller_follows_the_kl_to_the_reference(scripted_iteration):
  """kl_in = "reward": the controller reads the rollouts' KL to the reference (verl's
  apply_kl_penalty), not the policy's drift within one update (actor/approx_kl, ~0 here)."""
  run = scripted_iteration
  assert run.metrics["kl/reward_kl_mean"] > 1.2 * run.config.algo.kl_target
  assert abs(run.metrics["actor/approx_kl"]) < 0.8 * run.config.algo.kl_target
  assert run.trainer.kl.coef == pytest.approx(run.coef_before * 1.02)  # error clipped at +0.2, horizon 10


def test_truncation_metrics_are_logged_every_iteration(scripted_iteration):
  metrics, n = scripted_iteration.metrics, len(scripted_iteration.episodes)
  assert metrics["adv/truncated_frac"] == pytest.approx(1 / n)
  assert metrics["adv/truncation_bootstrapped"] == 1.0


def test_norm_constant_is_a_fixed_constant(scripted_iteration):
  """Dr.GRPO's constant is agent.max_tokens_per_trajectory, not the iteration's padded length
  (512 here: the truncated episode fills 256 and its bootstrap needs one more position)."""
  constants = {float(scalars["norm_constant"]) for _, scalars, _, _ in scripted_iteration.calls}
  assert constants == {float(scripted_iteration.config.agent.max_tokens_per_trajectory)}


def test_error_masked_tokens_leave_the_policy_denominators(scripted_iteration):
  """algo.error_masking: the masked tokens are out of the policy loss, its token and sequence
  counts included; the critic still trains on (and counts) every action token."""
  run = scripted_iteration
  policy_calls = [(mb, s) for mb, s, train_policy, _ in run.calls if train_policy]
  assert policy_calls
  masked_tokens = 0.0
  for mb, scalars in policy_calls:
    kept = mb["policy_mask"]
    assert np.all(kept <= mb["mask"])
    masked_tokens += float((mb["mask"] - kept).sum())
    assert float(scalars["policy_num_tokens"]) == max(float(kept.sum()), 1.0)
    assert float(scalars["policy_num_sequences"]) == max(float((kept.sum(1) > 0).sum()), 1.0)
    assert float(scalars["num_tokens"]) == max(float(mb["mask"].sum()), 1.0)
  # Episode 2 failed after an error: every one of its action tokens left the policy loss.
  assert masked_tokens == sum(run.episodes[2].action_mask) * run.config.optim.ppo_epochs


def test_learning_rate_schedules_count_each_optimisers_steps(scripted_iteration):
  """The policy steps after the critic's warm-up, PPO-ptx's steps included; the critic steps
  every iteration, critic_updates_per_policy_update times per mini-batch."""
  c = scripted_iteration.config
  updates = c.optim.ppo_epochs * c.trainer.tasks_per_iteration * c.algo.group_size // c.optim.mini_batch_size
  policy_iterations = c.trainer.iterations - c.optim.critic_warmup_iterations
  assert scripted_iteration.schedules[c.optim.policy_lr] == policy_iterations * (updates + c.sft.ptx_steps)
  assert scripted_iteration.schedules[c.optim.critic_lr] == (
      c.trainer.iterations * updates * c.optim.critic_updates_per_policy_update)
  # What the iteration ran: per mini-batch, one critic-only step and one step of both.
  steps = [(p, v) for _, _, p, v in scripted_iteration.calls]
  assert steps.count((False, True)) == steps.count((True, True)) == updates


def _bare_trainer(config):
  """A Trainer with only what `ppo_epochs` reads, and an update step that records its inputs."""
  from rl.algo import update as update_lib
  from rl.algo.batch import AlgoSettings
  from rl.train.processes import ProcessGroup

  trainer = trainer_lib.Trainer.__new__(trainer_lib.Trainer)
  trainer.config = config
  trainer.settings = update_lib.UpdateSettings.from_config(config)
  trainer.algo = AlgoSettings.from_config(config)
  trainer.kl = trainer_lib.KLController(config.algo.kl_coef, config.algo.kl_target)
  trainer.state, trainer.mesh, trainer._update_shapes = None, None, set()  # pylint: disable=protected-access
  trainer.group = ProcessGroup()
  trainer.iteration = 0
  trainer.calls = []

  def update_step(state, mb, scalars, train_policy, train_critic):
    trainer.calls.append((mb, scalars, train_policy, train_critic))
    return state, {}

  trainer.update_step = update_step
  return trainer


def _train_batch(lengths, T):
  from rl.algo.batch import TrainBatch
  rows = len(lengths)
  valid = (np.arange(T)[None] < np.asarray(lengths)[:, None]).astype(np.float32)
  mask = valid.copy()
  mask[:, :2] = 0
  zeros = lambda: np.zeros((rows, T), np.float32)  # noqa: E731
  return TrainBatch(tokens=np.ones((rows, T), np.int32), valid=valid, mask=mask, advantages=zeros(),
                    returns=zeros(), old_logprobs=zeros(), old_values=zeros(), ref_logprobs=zeros(),
                    sampler_logprobs=zeros(), token_weights=np.ones((rows, T), np.float32),
                    sample_weights=np.ones((rows,), np.float32), has_sampler=np.ones((rows,), np.float32),
                    lengths=np.asarray(lengths, np.int32), full_logprobs=zeros())


@pytest.mark.parametrize("loss_agg", ["token-mean", "seq-mean-token-mean"])
def test_gspo_minibatches_are_never_packed(tasks_root, loss_agg):
  """GSPO's ratio is a mean over its row: a packed row would average several trajectories'
  log-ratios into one. PPO's token-level loss packs."""
  lengths = np.array([40, 30, 20, 10])
  for policy_loss, packs in (("ppo", True), ("gspo", False)):
    overrides = {"algo.policy_loss": policy_loss, "algo.gspo_loss_agg": loss_agg, "optim.mini_batch_size": 4,
                 "trainer.pad_multiple": 8}
    trainer = _bare_trainer(tiny_config(tasks_root, **overrides))
    trainer.ppo_epochs(_train_batch(lengths, 64), 1.0, True, True, rng=np.random.default_rng(0))
    assert [("segment_ids" in mb) for mb, _, _, _ in trainer.calls] == [packs], policy_loss
