"""Trajectory log tests: JSONL round trip, size rotation, observation truncation, validation."""

from __future__ import annotations

import json

import pytest

from rl.env import trajectory


def record(i: int, observation: str = "ok") -> dict:
  step = {"step": 0, "action_type": "run", "action_input": {"command": "ls"}, "observation": observation,
          "thought": "", "reward": 0.0, "timestamp": 0.0, "duration_s": 0.1,
          "tokens": {"action": 3, "observation": 2},
          "hack": {"flagged": False, "stage": "", "rules": [], "response": None}}
  return {"task_id": f"t{i}", "task_version": "1", "base_hash": "abc", "prompt": "p",
          "model": {"checkpoint": "", "step": 0}, "sampling": {"temperature": 1.0, "top_p": 1.0},
          "steps": [step], "final_reward": 1.0, "success": True,
          "tests": {"passed": 1, "failed": 0, "errors": 0, "skipped": 0, "total": 1},
          "hack": {"flagged": False, "stage": "", "rules": [], "judge_score": None, "reason": ""},
          "terminated": "submit", "duration_s": 1.0}


def test_round_trip_and_rotation(tmp_path):
  with trajectory.TrajectoryWriter(tmp_path, max_bytes=2000) as w:
    for i in range(20):
      w.write(record(i))
  files = trajectory.trajectory_files(tmp_path)
  assert len(files) > 2
  assert all(f.stat().st_size <= 2000 for f in files)
  back = trajectory.load_trajectories(tmp_path)
  assert [r["task_id"] for r in back] == [f"t{i}" for i in range(20)]
  assert back[3] == json.loads(json.dumps(record(3)))
  # A new writer continues after the last file instead of overwriting.
  with trajectory.TrajectoryWriter(tmp_path, max_bytes=2000) as w:
    w.write(record(99))
  assert trajectory.load_trajectories(tmp_path)[-1]["task_id"] == "t99"
  assert len(trajectory.load_trajectories(files[0])) >= 1


def test_long_observations_are_cut_with_their_size(tmp_path):
  big = "A" * 100 + "B" * 10000 + "Z" * 100
  with trajectory.TrajectoryWriter(tmp_path, observation_max_chars=500) as w:
    w.write(record(0, big))
  [back] = trajectory.load_trajectories(tmp_path)
  step = back["steps"][0]
  assert step["observation_chars"] == len(big) and len(step["observation"]) <= 500
  assert step["observation"].startswith("A") and step["observation"].endswith("Z")


def test_validation_names_the_problem(tmp_path):
  bad = record(0)
  del bad["final_reward"]
  with pytest.raises(trajectory.TrajectoryFormatError, match="final_reward"):
    trajectory.validate_record(bad)
  bad = record(0)
  bad["terminated"] = "bored"
  with pytest.raises(trajectory.TrajectoryFormatError, match="terminated"):
    trajectory.validate_record(bad)
  bad = record(0)
  bad["steps"][0]["action_type"] = "teleport"
  with pytest.raises(trajectory.TrajectoryFormatError, match="teleport"):
    trajectory.validate_record(bad)
  path = tmp_path / "x.jsonl"
  path.write_text(json.dumps(record(0)) + "\n{broken\n")
  with pytest.raises(trajectory.TrajectoryFormatError, match="x.jsonl:2"):
    trajectory.load_trajectories(path)
  with pytest.raises(FileNotFoundError):
    trajectory.load_trajectories(tmp_path / "missing")
  with pytest.raises(ValueError, match="max_bytes"):
    trajectory.TrajectoryWriter(tmp_path, max_bytes=0)


def test_truncate_after_drops_later_policies_and_a_cut_line(tmp_path):
  """A resumed run drops the records of iterations after its checkpoint (they are logged again),
  across rotated files, and the last line a killed process left unfinished."""
  with trajectory.TrajectoryWriter(tmp_path, max_bytes=2000) as w:
    for i in range(12):
      r = record(i)
      r["model"] = {"checkpoint": "", "step": i // 4}  # four episodes per iteration
      w.write(r)
  files = trajectory.trajectory_files(tmp_path)
  with open(files[-1], "ab") as fh:
    fh.write(b'{"task_id": "t12", "mod')  # the write a SIGKILL cut
  w = trajectory.TrajectoryWriter(tmp_path, max_bytes=2000)
  assert w.truncate_after(1) == 9  # steps 1 and 2, and the cut line
  assert [r["task_id"] for r in trajectory.load_trajectories(tmp_path)] == ["t0", "t1", "t2", "t3"]
  assert len(trajectory.trajectory_files(tmp_path)) < len(files)  # emptied files are removed
  w.write(record(4))  # the writer continues after the last kept file
  w.close()
  assert [r["task_id"] for r in trajectory.load_trajectories(tmp_path)][-2:] == ["t3", "t4"]
  assert w.truncate_after(1) == 0
  (tmp_path / files[0].name).write_text("{broken\n" + json.dumps(record(0)) + "\n")
  with pytest.raises(trajectory.TrajectoryFormatError, match=f"{files[0].name}:1"):
    w.truncate_after(0)  # a bad line elsewhere is not a cut write: an error, not a silent drop
