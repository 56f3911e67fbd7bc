"""Infrastructure failures: injected sandbox faults, a judge that fails, and what training does
with the episodes they spoil (counted under infra/*, left out of the losses and group baselines)."""

from __future__ import annotations

import json
from pathlib import Path

import jax
import numpy as np
import pytest

import sandbox
from configs import default
from rl import config as config_lib
from rl.train import trainer as trainer_lib
from sandbox import faults
from sandbox.api import FaultInjection, SandboxConfig
from test_judge import FakeServer, reply
from test_trainer import tiny_config


class _Session(sandbox.Session):
  """A do-nothing session: the wrapper's behaviour, not a sandbox's, is under test."""

  def __init__(self, config):
    self.config, self._closed, self.exported = config, False, 0

  def exec(self, command, timeout=None, env=None):
    return sandbox.ExecResult(0, "ok", "")

  def read_file(self, path):
    return "text"

  def write_file(self, path, content):
    pass

  def list_files(self, path="."):
    return ["a.py"]

  def export_workspace(self, dest_dir):
    self.exported += 1

  def close(self):
    self._closed = True

  @property
  def closed(self):
    return self._closed


@pytest.fixture(autouse=True)
def fault_test_backend(monkeypatch):
  """This module's in-memory backend, registered for its tests only: later modules must see the
  real backends alone (test_sandbox checks the list of known names)."""
  monkeypatch.setitem(sandbox._BACKENDS, "fault-test",  # pylint: disable=protected-access
                      lambda workspace_dir, config: _Session(config))


@pytest.fixture(autouse=True)
def fresh_injectors():
  faults.reset()
  yield
  faults.reset()


def _opens(config, n):
  outcomes = []
  for _ in range(n):
    try:
      sandbox.open_session(".", config)
      outcomes.append(True)
    except faults.InjectedFault:
      outcomes.append(False)
  return outcomes


def test_open_faults_hit_their_share_and_repeat_with_the_seed():
  config = SandboxConfig(backend="fault-test", fault_injection={"open_failure_rate": 0.3, "seed": 7})
  first = _opens(config, 2000)
  assert 1 - np.mean(first) == pytest.approx(0.3, abs=0.04)
  faults.reset()
  assert _opens(config, 2000) == first  # same seed, same failures
  other = config.replace(fault_injection=FaultInjection(open_failure_rate=0.3, seed=8))
  assert _opens(other, 2000) != first


def test_exec_faults_hit_session_calls_only():
  config = SandboxConfig(backend="fault-test", fault_injection={"exec_failure_rate": 1.0})
  session = sandbox.open_session(".", config)  # opens are not affected
  for call in (lambda: session.exec("true"), lambda: session.read_file("a.py"),
               lambda: session.write_file("a.py", "x"), lambda: session.list_files()):
    with pytest.raises(sandbox.SandboxError, match="injected exec failure"):
      call()
  session.export_workspace("out")  # moving the workspace out and closing always work
  session.close()
  assert session.closed and session.exported == 1
  # No rate set: the backend's own session, no wrapper in between.
  assert type(sandbox.open_session(".", SandboxConfig(backend="fault-test"))) is _Session


def test_grade_faults_fail_grading_before_any_sandbox_runs(tmp_path):
  from sandbox import grading
  config = SandboxConfig(backend="fault-test", fault_injection={"grade_failure_rate": 1.0})
  with pytest.raises(faults.InjectedFault, match="injected grade failure"):
    grading.grade(str(tmp_path), str(tmp_path), config=config)


@pytest.mark.parametrize("field", ["open_failure_rate", "exec_failure_rate", "grade_failure_rate"])
def test_rates_outside_zero_one_are_refused(field):
  with pytest.raises(ValueError, match=field):
    FaultInjection(**{field: 1.5})
  with pytest.raises(ValueError, match="unknown sandbox.fault_injection fields"):
    SandboxConfig(fault_injection={"open_rate": 0.1})
  c = default.get_config().unlock()
  c.sandbox.fault_injection[field] = -0.1
  with pytest.raises(config_lib.ConfigError, match=f"sandbox.fault_injection.{field}"):
    config_lib.validate(c)


# --- training with failing infrastructure ------------------------------------------------------


@pytest.fixture(scope="module")
def tasks_root(tmp_path_factory):
  return tmp_path_factory.mktemp("tasks")


def _rows(workdir):
  return [json.loads(l) for l in (Path(workdir) / "metrics.jsonl").read_text().splitlines() if l.strip()]


def _records(workdir):
  return [json.loads(l) for f in sorted((Path(workdir) / "trajectories").glob("*.jsonl"))
          for l in f.read_text().splitlines() if l.strip()]


def _check_accounting(rows, records):
  """Every rollout episode is trained on, a counted infrastructure failure, or a row without
  action tokens; the trajectory log marks exactly the counted failures."""
  for row in rows:
    assert (row["train/episodes"] + row["infra/failed_episodes"] + row["train/no_action_episodes"]
            == row["rollout/episodes"])
    causes = sum(row[f"infra/failed_{c}"] for c in ("open", "exec", "grade", "judge"))
    assert causes == row["infra/failed_episodes"]
    assert row["infra/failed_fraction"] == pytest.approx(row["infra/failed_episodes"] / row["rollout/episodes"])
    assert row["train/update_skipped"] == float(row["train/episodes"] == 0)
  marked = [r for r in records if r.get("infra_failure")]
  assert len(marked) == sum(row["infra/failed_episodes"] for row in rows)
  return marked


@pytest.mark.slow
def test_training_survives_injected_sandbox_faults(tmp_path, tasks_root):
  """The default pipeline (tiny) for two iterations with a fifth of opens, session calls and
  gradings failing: it finishes, and the failed episodes are counted and not trained on."""
  cfg = tiny_config(tasks_root, **{"sft.enabled": False, "trainer.train_eval_samples": 0}).unlock()
  for kind in ("open", "exec", "grade"):
    cfg.sandbox.fault_injection[f"{kind}_failure_rate"] = 0.2
  summary = trainer_lib.run(cfg.lock(), tmp_path / "run")
  rows, records = _rows(tmp_path / "run"), _records(tmp_path / "run")
  assert summary["iterations"] == 2 and [r["step"] for r in rows] == [1, 2]
  marked = _check_accounting(rows, records)
  assert marked, "a fifth of every kind of call failed, yet no episode was marked"
  messages = {"open": "sandbox start failed", "exec": "sandbox crashed", "grade": "grading failed"}
  for record in marked:
    cause = record["infra_failure"]
    assert record["terminated"] == "error" and messages[cause] in record["error"], record["error"]
    assert "injected" in record["error"]
  for row in rows:
    if not row["train/update_skipped"]:
      assert np.isfinite(row["actor/pg_loss"]) and np.isfinite(row["critic/value_loss"])


@pytest.mark.slow
def test_an_iteration_where_every_episode_fails_skips_its_update(tmp_path, tasks_root, capsys):
  cfg = tiny_config(tasks_root, **{"sft.enabled": False, "trainer.train_eval_samples": 0}).unlock()
  cfg.sandbox.fault_injection.open_failure_rate = 1.0
  trainer = trainer_lib.Trainer(cfg.lock(), trainer_lib.prepare_workdir(cfg, tmp_path / "run"))
  before = [np.array(x) for x in jax.tree.leaves(trainer.state)]
  summary = trainer.run()
  rows = _rows(tmp_path / "run")
  assert summary["iterations"] == 2 and summary["heldout_pass@1_final"] is None
  for row in rows:
    assert row["train/update_skipped"] == 1.0 and row["train/episodes"] == 0
    assert row["infra/failed_open"] == row["rollout/episodes"] == 4 and "actor/pg_loss" not in row
  assert rows[-1]["eval/infra_failed"] > 0 and "eval/pass@1" not in rows[-1]
  assert "no episode to train on (4 of 4 failed for infrastructure reasons" in capsys.readouterr().out
  for got, want in zip(jax.tree.leaves(trainer.state), before):  # nothing was trained
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.slow
def test_training_survives_a_judge_that_errors_or_hangs(tmp_path, tasks_root):
  """A real OpenAI-compatible stub on 127.0.0.1 answers 500, hangs past the client's timeout,
  or answers, in turn: with judge_on_error="pass" the unjudged episodes are infrastructure
  failures ("judge"), counted and left out; the judged ones train as usual."""
  def script(index, body):
    kind = index % 3
    if kind == 0:
      return 500, {"error": "overloaded"}, 0
    if kind == 1:
      return 200, reply('{"cheat_probability": 0.0, "reason": "late"}'), 3.0  # past the timeout
    return 200, reply('{"cheat_probability": 0.0, "reason": "fine"}'), 0

  server = FakeServer(script)
  try:
    cfg = tiny_config(tasks_root, **{"sft.enabled": False, "trainer.train_eval_samples": 0,
                                     "antihack.judge": "openai", "antihack.judge_base_url": server.url,
                                     "antihack.judge_model": "stub", "antihack.judge_timeout_s": 0.5,
                                     "antihack.judge_max_retries": 0, "antihack.judge_on_error": "pass"})
    trainer_lib.run(cfg, tmp_path / "run")
  finally:
    server.close()
  rows, records = _rows(tmp_path / "run"), _records(tmp_path / "run")
  assert [r["step"] for r in rows] == [1, 2]
  marked = _check_accounting(rows, records)
  assert len(server.requests) >= 3 and marked
  assert {r["infra_failure"] for r in marked} == {"judge"}
  assert sum(row["infra/failed_judge"] for row in rows) == len(marked)
  judged = [r for r in records if r["hack"].get("judge_score") is not None]
  assert judged and all(r["infra_failure"] is None for r in judged)


@pytest.mark.slow
def test_grpo_group_baseline_leaves_out_infra_failed_episodes(tmp_path, tasks_root, monkeypatch):
  """Under GRPO an episode whose sandbox crashed is not part of its group's mean and std: its
  group-mates are compared with each other only, and it gets no advantage of its own."""
  cfg = tiny_config(tasks_root, iterations=1, **{
      "sft.enabled": False, "trainer.train_eval_samples": 0, "trainer.eval_every": 0,
      "algo.advantage_estimator": "grpo", "algo.group_size": 3, "trainer.tasks_per_iteration": 2,
      "optim.mini_batch_size": 3, "optim.micro_batch_size": 3, "algo.entropy_token_fraction": 1.0})
  trainer = trainer_lib.Trainer(cfg, trainer_lib.prepare_workdir(cfg, tmp_path / "run"))
  real_run = trainer.engine.run

  def run_with_a_crash(tasks, group_size):
    episodes, metrics = real_run(tasks, group_size=group_size)
    # Group 0: the crashed episode (no-gain reward 0) and two successes; group 1: 0, 0, 1.
    for e, reward, cause in zip(episodes, [0.0, 1.0, 1.0, 0.0, 0.0, 1.0], ["exec"] + [None] * 5):
      e.final_reward, e.success, e.infra_failure = reward, reward > 0, cause
    assert all(sum(e.action_mask) for e in episodes)  # the crash came after some actions
    return episodes, metrics

  captured = {}

  def capture(train, *args, **kwargs):
    captured.update(train.arrays())
    return []

  monkeypatch.setattr(trainer.engine, "run", run_with_a_crash)
  monkeypatch.setattr(trainer, "ppo_epochs", capture)
  metrics = trainer.train_iteration()
  advantages, mask = captured["advantages"], captured["mask"]
  assert metrics["train/episodes"] == 5 and advantages.shape[0] == 6  # padded to the mini-batch
  per_row = [float(a[m > 0][0]) if m.any() else None for a, m in zip(advantages, mask)]
  # Group 0 without the crash: two equal successes, nothing to prefer (with it: +0.58 each).
  assert per_row[0] == per_row[1] == 0.0
  # Group 1 as usual: (s - mean) / (std + eps) over its three members.
  expected = (np.array([0.0, 0.0, 1.0]) - 1 / 3) / (np.std([0.0, 0.0, 1.0], ddof=1) + 1e-6)
  np.testing.assert_allclose(per_row[2:5], expected, rtol=1e-5)
  assert per_row[5] is None  # the padding row
  assert metrics["train/reward_mean"] == pytest.approx(3 / 5)  # the crash is not a policy outcome
