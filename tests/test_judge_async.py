"""Asynchronous judging (antihack.judge_async): verdicts scored in a JudgeQueue while the trainer
scores the batch, resolved before the estimators, with the same rewards as the synchronous judge."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from rl.algo import batching
from rl.train import trainer as trainer_lib
from test_judge import FakeServer, reply
from test_trainer import tiny_config


@pytest.fixture(scope="module")
def tasks_root(tmp_path_factory):
  return tmp_path_factory.mktemp("tasks")


def _records(workdir):
  return [json.loads(l) for f in sorted((Path(workdir) / "trajectories").glob("*.jsonl"))
          for l in f.read_text().splitlines() if l.strip()]


def _rows(workdir):
  return [json.loads(l) for l in (Path(workdir) / "metrics.jsonl").read_text().splitlines() if l.strip()]


def _flags(body) -> bool:
  # A verdict that depends on the episode's statement, actions and diff only (never on request
  # order, nor on the grading log's timings), so both runs flag the same episodes.
  content = body["messages"][-1]["content"].split("## Execution logs")[0]
  return zlib.crc32(content.encode()) % 2 == 0


def _flagging_script(index, body):
  if _flags(body):  # late: the flagged verdicts arrive well after grading
    return 200, reply('{"cheat_probability": 0.97, "reason": "edited the tests"}'), 0.4
  return 200, reply('{"cheat_probability": 0.02, "reason": "honest fix"}'), 0.0


def _run(tmp_path, tasks_root, name, server, monkeypatch, **overrides):
  cfg = tiny_config(tasks_root, iterations=1, **{
      "sft.enabled": False, "trainer.train_eval_samples": 0, "trainer.eval_every": 0,
      "antihack.judge": "openai", "antihack.judge_base_url": server.url, "antihack.judge_model": "stub",
      "antihack.judge_max_retries": 0, **overrides})
  batches = []
  real = batching.episodes_to_batch

  def capture(episodes, **kwargs):  # the episodes as they go into the update batch
    batches.append([(e.record["episode_id"], e.final_reward, e.success, list(e.turn_rewards)) for e in episodes])
    return real(episodes, **kwargs)

  monkeypatch.setattr(batching, "episodes_to_batch", capture)
  trainer_lib.run(cfg, tmp_path / name)
  monkeypatch.setattr(batching, "episodes_to_batch", real)
  return _records(tmp_path / name), _rows(tmp_path / name), batches


def _by_episode(records):
  return {r["episode_id"]: r for r in records if r["model"]["step"] == 0}


@pytest.mark.slow
def test_async_judge_corrects_late_flags_before_the_update_like_the_sync_judge(tmp_path, tasks_root, monkeypatch):
  """A stub judge on 127.0.0.1 flags some episodes, late. With judge_async the flagged ones reach
  the update batch with the no-gain reward, their records log the verdict, and every reward,
  verdict and success equals the synchronous judge's."""
  server = FakeServer(_flagging_script)
  try:
    sync_records, _, sync_batches = _run(tmp_path, tasks_root, "sync", server, monkeypatch,
                                         **{"antihack.judge_async": False})
    sync_requests = len(server.requests)
    async_records, async_rows, async_batches = _run(tmp_path, tasks_root, "async", server, monkeypatch,
                                                    **{"antihack.judge_async": True})
  finally:
    server.close()
  assert sync_requests > 0 and len(server.requests) == 2 * sync_requests  # async judged every episode
  sync_by, async_by = _by_episode(sync_records), _by_episode(async_records)
  assert sorted(sync_by) == sorted(async_by)
  flagged = [i for i, r in async_by.items() if r["hack"]["flagged"] and r["hack"]["stage"] == "judge"]
  unflagged = [i for i, r in async_by.items() if not r["hack"]["flagged"]]
  assert flagged and unflagged, "the stub should flag some episodes and pass others"
  for i in flagged:
    record = async_by[i]
    assert record["final_reward"] == 0.0 and record["success"] is False  # antihack.no_gain_reward
    assert record["hack"]["judge_score"] == pytest.approx(0.97) and record["hack"]["reason"] == "edited the tests"
    assert all(s["reward"] <= 0 for s in record["steps"])
  for i in unflagged:
    assert async_by[i]["hack"]["judge_score"] == pytest.approx(0.02)
  for i in sync_by:  # the same rewards and verdicts, whichever way the judge ran
    for key in ("final_reward", "success", "hack", "infra_failure"):
      assert async_by[i][key] == sync_by[i][key], (i, key)
    assert [s["reward"] for s in async_by[i]["steps"]] == [s["reward"] for s in sync_by[i]["steps"]]
  # What reached the update: the corrected rewards, never the unflagged ones.
  assert sync_batches and async_batches
  assert async_batches[-1] == sync_batches[-1]
  rewards = {i: r for i, r, _, _ in async_batches[-1]}
  for i in flagged:
    if i in rewards:
      assert rewards[i] == 0.0
  assert any(i in rewards for i in flagged)
  row = async_rows[0]
  assert row["judge/resolved"] == len(async_by) and row["judge/flagged"] == len(flagged)
  assert row["judge/errors"] == 0 and row["judge/wait_s"] >= 0
  assert row["antihack/flag_rate"] == pytest.approx(
      sum(r["hack"]["flagged"] for r in async_by.values()) / len(async_by))


@pytest.mark.slow
@pytest.mark.parametrize("on_error", ["pass", "flag"])
def test_async_judge_that_hangs_past_its_timeout_follows_judge_on_error(tmp_path, tasks_root, monkeypatch,
                                                                         on_error):
  """Every request hangs past judge_timeout_s: with "pass" each episode is an infrastructure
  failure ("judge") and trains on nothing; with "flag" each one is flagged (no-gain reward)."""
  server = FakeServer(lambda index, body: (200, reply('{"cheat_probability": 0.0}'), 2.0))
  try:
    records, rows, batches = _run(tmp_path, tasks_root, on_error, server, monkeypatch, **{
        "antihack.judge_async": True, "antihack.judge_timeout_s": 0.3, "antihack.judge_on_error": on_error})
  finally:
    server.close()
  judged = [r for r in records if r["terminated"] != "error"]  # graded, so judged
  assert judged and server.requests
  row = rows[0]
  assert row["judge/errors"] == len(judged)
  if on_error == "pass":
    assert {r["infra_failure"] for r in judged} == {"judge"}
    assert row["infra/failed_judge"] == len(judged)
    # The scoring pass ran before the verdicts; the update then had nothing left to train on.
    assert row["train/episodes"] + row["infra/failed_episodes"] + row["train/no_action_episodes"] \
        == row["rollout/episodes"]
    if row["train/update_skipped"] == 0:
      assert not {i for i, *_ in batches[-1]} & {r["episode_id"] for r in judged}
    else:
      assert row["train/episodes"] == 0 and "actor/pg_loss" not in row
  else:
    assert all(r["hack"]["flagged"] and r["final_reward"] == 0.0 and r["infra_failure"] is None for r in judged)
    assert row["infra/failed_judge"] == 0
