"""Replay and grading of logged trajectories: rewards reproduce, grading is deterministic, CLIs work."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from rl.env import actors
from rl.env import rollout
from rl.env import tools as tools_lib
from rl.env.trajectory import TrajectoryWriter, load_trajectories
from rl.outcome import replay as replay_lib
from rl.tokenizer import load_tokenizer
from test_rollout_helpers import make_config, make_engine, make_task

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def renderer():
  return tools_lib.ChatRenderer(load_tokenizer(), tool_prompt="compact")


def mixed_policy(renderer):
  """The expert on most episodes; every fourth episode submits a wrong fix (reward 0) or cheats."""
  expert = actors.ScriptedExpert(renderer, seed=3)
  wrong = ['<tool_call>{"name": "edit_file", "arguments": {"path": "pkg/ops.py", "old": "return", '
           '"new": "return 0 *"}}</tool_call>', '<tool_call>{"name": "submit", "arguments": {}}</tool_call>']
  cheat = ['<tool_call>{"name": "read_file", "arguments": {"path": "tests/check_hidden.py"}}</tool_call>']

  class Mixed(actors.TextPolicy):
    def text_for(self, r):
      if r.episode_id % 8 == 3:
        return wrong[min(r.turn, 1)]
      if r.episode_id % 8 == 7 and r.turn == 0:
        return cheat[0]
      return expert.text_for(r)

  return Mixed(renderer)


@pytest.mark.slow
def test_replay_of_50_logged_trajectories_reproduces_every_reward(tmp_path, renderer):
  tasks = [make_task(tmp_path / "tasks", i) for i in range(10)]
  config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  engine = make_engine(config, mixed_policy(renderer), renderer,
                       writer=TrajectoryWriter(tmp_path / "traj", max_bytes=20_000))
  episodes, _ = engine.run(tasks, group_size=5)
  records = load_trajectories(tmp_path / "traj")
  assert len(records) == 50
  rewards = {e.final_reward for e in episodes}
  assert rewards == {0.0, 1.0}, "the logged set should hold successes and failures"
  assert any(r["hack"]["flagged"] for r in records)
  by_id = {t.id: t for t in tasks}
  for record in records:
    out = replay_lib.replay_record(record, by_id[record["task_id"]], engine.evaluator,
                                open_session=engine.open_session)
    assert out["reward"] == record["final_reward"], out
    assert out["differences"] == [], out["differences"]
    assert out["hack"]["flagged"] == record["hack"]["flagged"]


def test_grading_twice_gives_the_same_reward(tmp_path, renderer):
  task = make_task(tmp_path / "tasks", 1)
  config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  engine = make_engine(config, actors.ScriptedExpert(renderer), renderer)
  [ep], _ = engine.run([task])
  first = replay_lib.replay_record(ep.record, task, engine.evaluator, open_session=engine.open_session)
  second = replay_lib.replay_record(ep.record, task, engine.evaluator, open_session=engine.open_session)
  assert first["reward"] == second["reward"] == ep.final_reward == 1.0
  assert first["tests"] == second["tests"]
  # The untouched repo fails, through the workspace path as well.
  out = replay_lib.grade_workspace(task, task.repo_dir, engine.evaluator)
  assert out["reward"] == 0.0 and out["tests"]["failed"] == 1


def test_replay_reports_a_changed_observation_and_reward(tmp_path, renderer):
  task = make_task(tmp_path / "tasks", 0)
  config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  engine = make_engine(config, actors.ScriptedExpert(renderer, seed=2), renderer)
  [ep], _ = engine.run([task])
  record = json.loads(json.dumps(ep.record))
  edit = next(s for s in record["steps"] if s["action_type"] in ("edit_file", "write_file"))
  edit["observation"] = "something else"
  record["final_reward"] = 0.5
  out = replay_lib.replay_record(record, task, engine.evaluator, open_session=engine.open_session)
  fields = {d["field"] for d in out["differences"]}
  assert fields == {"observation", "final_reward"}
  with pytest.raises(ValueError, match="not"):
    replay_lib.replay_record(dict(record, task_id="other"), task, engine.evaluator)


def test_normalize_observation_masks_durations():
  a = "3 passed in 0.12s\n<obj at 0x7f00aa11bb22>"
  b = "3 passed in 1.5s\n<obj at 0x7f00aa11cc33>"
  assert replay_lib.normalize_observation(a) == replay_lib.normalize_observation(b)


def test_traj_stats_on_logged_trajectories(tmp_path, renderer):
  sys.path.insert(0, os.path.join(REPO, "scripts"))
  import traj_stats  # pylint: disable=import-outside-toplevel
  records = []
  for task, lengths in (("a-1", [(2, False), (9, True)]), ("a-2", [(3, True), (3, True)]),
                        ("b-1", [(1, False), (12, True), (4, False)])):
    for n, ok in lengths:
      records.append({"task_id": task, "success": ok, "steps": [
          {"tokens": {"action": 10, "observation": 5}} for _ in range(n)]})
  stats = traj_stats.compute_stats(records)
  assert stats["episodes"] == 7 and stats["overall"]["p50"] == 3
  assert stats["tasks_short_failure_long_success"] == 2 and stats["tasks_with_several_episodes"] == 3
  assert stats["p90_p10_ratio"] > 5 and stats["recommendation"].startswith("critic-based PPO")
  assert set(traj_stats.compute_stats(records, group="prefix")["groups"]) == {"a", "b"}
  assert traj_stats.compute_stats(records, by="tokens")["overall"]["p50"] == 45
  short = [dict(r, steps=r["steps"][:1] or [{}]) for r in records]
  assert traj_stats.compute_stats(short)["recommendation"].startswith("group-relative")
  with pytest.raises(ValueError):
    traj_stats.compute_stats([])
  path = tmp_path / "t.jsonl"
  path.write_text("".join(json.dumps(r) + "\n" for r in records))
  out = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "traj_stats.py"), str(path)],
                       capture_output=True, text=True, timeout=120, check=True).stdout
  assert "P90/P10 ratio" in out and "recommendation: critic-based PPO" in out


def _sandbox_usable() -> str:
  if shutil.which("bwrap") is None:
    return "bubblewrap is not installed"
  try:
    from sandbox import SandboxConfig, open_session  # pylint: disable=import-outside-toplevel
    import tempfile  # pylint: disable=import-outside-toplevel
    with tempfile.TemporaryDirectory() as d:
      with open_session(d, SandboxConfig(pool_size=0)) as s:
        if s.exec("true", timeout=20).exit_code != 0:
          return "the local sandbox cannot run commands here"
  except Exception as e:  # pylint: disable=broad-except
    return f"the local sandbox is unusable: {type(e).__name__}: {e}"
  return ""


@pytest.mark.slow
def test_grade_and_replay_clis_in_the_real_sandbox(tmp_path, renderer):
  reason = _sandbox_usable()
  if reason:
    pytest.skip(reason)
  from rl.tasks import load_task  # pylint: disable=import-outside-toplevel
  tasks = [load_task(make_task(tmp_path / "tasks", i, pytest_style=True).dir) for i in range(2)]
  config = make_config(max_turns=8, max_tokens_per_turn=256, max_tokens_per_trajectory=4096)
  engine = rollout.RolloutEngine(config, actors.ScriptedExpert(renderer, seed=4), renderer,
                                 writer=TrajectoryWriter(tmp_path / "traj"))
  episodes, _ = engine.run(tasks)
  assert [e.final_reward for e in episodes] == [1.0, 1.0], [e.record for e in episodes]
  traj = str(tmp_path / "traj")
  env = dict(os.environ, PYTHONPATH=REPO)
  out = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "grade.py"), "--task", str(tasks[0].dir),
                        "--trajectory", traj], capture_output=True, text=True, timeout=300, env=env)
  assert out.returncode == 0, out.stderr
  graded = json.loads(out.stdout.strip().splitlines()[-1])
  assert graded["reward"] == 1.0 and graded["tests"]["passed"] == 2 and graded["hack"]["flagged"] is False
  out = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "grade.py"), "--task", str(tasks[1].dir),
                        "--workspace", str(tasks[1].repo_dir)], capture_output=True, text=True, timeout=300,
                       env=env)
  assert out.returncode == 0, out.stderr
  assert json.loads(out.stdout.strip().splitlines()[-1])["reward"] == 0.0
  out = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "replay.py"), "--trajectory", traj,
                        "--tasks", str(tmp_path / "tasks")], capture_output=True, text=True, timeout=300, env=env)
  assert out.returncode == 0, out.stdout + out.stderr
  summary = json.loads(out.stdout.strip().splitlines()[-1])
  assert summary == {"replayed": 2, "reward_mismatches": 0, "records_with_step_differences": 0}


def test_traj_stats_outcomes_name_the_first_kind_of_failure():
  sys.path.insert(0, os.path.join(REPO, "scripts"))
  import traj_stats  # pylint: disable=import-outside-toplevel
  step = lambda kind, obs="": {"action_type": kind, "observation": obs, "tokens": {"action": 5}}
  records = [
      {"task_id": "t", "success": True, "steps": [step("edit_file", "Edited a.py"), step("submit")]},
      {"task_id": "t", "success": False, "hack": {"flagged": True}, "steps": [step("submit")]},
      {"task_id": "t", "success": False, "steps": [step(None, "Error: not JSON"), step("edit_file", "Edited a.py")]},
      {"task_id": "t", "success": False, "steps": [step("edit_file", "Error: the `old` string was not found"),
                                                   step(None, "Error: not JSON")]},
      {"task_id": "t", "success": False, "steps": [step("read_file", "def f(): ..."), step(None, "Error: x")]},
      {"task_id": "t", "success": False, "steps": [step("read_file", "def f(): ..."), step("submit")]},
  ]
  assert [traj_stats.outcome(r) for r in records] == list(traj_stats.OUTCOMES)
  stats = traj_stats.compute_stats(records)
  assert stats["outcomes"] == {k: 1 / 6 for k in traj_stats.OUTCOMES}
  assert "outcomes: success 0.17" in traj_stats.format_table(stats)
