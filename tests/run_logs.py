"""What two training runs are compared on: their metrics rows (timings aside) and their logged
episodes. Shared by the single- and multi-process resume tests, which import it from the tests
folder pytest puts on sys.path."""

import json
from pathlib import Path

import pytest

# Timings (wall clock, and the measured execution times `duration/seconds_*` summarises), and
# the grade and oracle caches' hit rates: a resumed process starts with empty caches (a hit
# returns what a fresh grading or check gives, which the reward metrics compare).
TIMING = ("time", "perf/", "rollout/wall_s", "sft/time_s", "duration/seconds", "rollout/grade_cached_frac",
          "antihack/oracle_cached_frac")


def metrics_rows(workdir) -> list[dict]:
  return [json.loads(l) for l in (Path(workdir) / "metrics.jsonl").read_text().splitlines() if l.strip()]


def comparable(row: dict) -> dict:
  return {k: v for k, v in row.items() if not any(k.startswith(t) or t in k for t in TIMING)}


def assert_same_rows(got_rows: list[dict], want_rows: list[dict], skip_prefix: str = "") -> None:
  """Row by row, every non-timing metric of `got_rows` equals `want_rows`' (float tolerance);
  keys starting with `skip_prefix` (when given) are left out, the rest must match as sets."""
  assert [r["step"] for r in got_rows] == [r["step"] for r in want_rows]
  for got, want in zip(got_rows, want_rows):
    got, want = comparable(got), comparable(want)
    if skip_prefix:
      keys = sorted(k for k in set(got) & set(want) if not k.startswith(skip_prefix))
      got, want = {k: got[k] for k in keys}, {k: want[k] for k in keys}
    assert sorted(got) == sorted(want) and len(got) > 30
    assert got == pytest.approx(want, rel=1e-4, abs=1e-5)


def episode_signatures(records) -> list[str]:
  """Each logged episode as the policy made it (timings and grade-cache marks aside), sorted:
  the grading threads finish episodes in any order."""
  return sorted(json.dumps([r["model"]["step"], r["episode_id"], r["group_id"], r["task_id"], r["final_reward"],
                            r["success"], r["terminated"], [s["action_input"] for s in r["steps"]]])
                for r in records)
