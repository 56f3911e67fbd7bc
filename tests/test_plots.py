"""rl.train.plots: the run plots from metrics, summary and trajectories, and their bad-input message."""

import json

import pytest

from rl.train import plots

PNG = b"\x89PNG\r\n\x1a\n"


def _write_run(workdir, iterations=12, summary=True):
  workdir.mkdir(parents=True, exist_ok=True)
  rows = []
  for step in range(1, iterations + 1):
    row = {"step": step, "train/reward_mean": 0.3 + 0.02 * step, "train/success_rate": 0.3 + 0.02 * step,
           "train/pass_fraction": 0.5, "length/tokens_p10": 200, "length/tokens_p50": 300,
           "length/tokens_p90": 500, "antihack/flag_rate": 0.0}
    if step % 4 == 0:
      row["antihack/flag_rate_rules"] = 0.02
    rows.append(row)
  (workdir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
  if summary:
    (workdir / "summary.json").write_text(json.dumps({
        "heldout_pass@1_sft": 0.0, "heldout_pass@1_final": 0.17, "train_pass@1_start": 0.33,
        "train_pass@1_start_stderr": 0.1, "train_pass@1_end": 0.5, "train_pass@1_end_stderr": 0.1}))
  (workdir / "trajectories").mkdir(exist_ok=True)
  (workdir / "trajectories" / "trajectories-00000.jsonl").write_text(
      "".join(json.dumps({"steps": [{}] * n}) + "\n" for n in (2, 3, 5)))


@pytest.mark.parametrize("summary", [True, False])
def test_plot_run_writes_three_pngs(tmp_path, summary):
  _write_run(tmp_path / "run", summary=summary)
  paths = plots.plot_run(tmp_path / "run")
  assert sorted(p.name for p in paths) == ["cheat_rate.png", "lengths.png", "reward_success.png"]
  for path in paths:
    assert path.parent == tmp_path / "run" / "plots"
    assert path.read_bytes()[:8] == PNG and path.stat().st_size > 5000, path


def test_plot_run_names_the_missing_metrics(tmp_path):
  with pytest.raises(FileNotFoundError, match="metrics.jsonl is missing or empty"):
    plots.plot_run(tmp_path)
