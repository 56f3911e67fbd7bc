"""scripts/compare_estimators.py: per-seed records, the paired tests, the record file and the plot."""

import importlib.util
import json
import pathlib

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("compare_estimators", REPO / "scripts" / "compare_estimators.py")
compare = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare)


def _write_run(run_dir: pathlib.Path, success: list[float], heldout: tuple[float, float], train: tuple[float, float],
               finished: bool = True, extra: dict | None = None) -> None:
  run_dir.mkdir(parents=True)
  with open(run_dir / "metrics.jsonl", "w") as f:
    for step, s in enumerate(success, 1):
      row = {"step": step, "train/success_rate": s, "length/turns_p10": 3.0, "length/turns_p90": 18.0,
             "length/turns_p50": 9.0, "length/tokens_p10": 200.0, "length/tokens_p90": 1500.0, **(extra or {})}
      f.write(json.dumps(row) + "\n")
  summary = {"heldout_pass@1_sft": heldout[0], "train_pass@1_start": train[0]}
  if finished:
    summary.update({"heldout_pass@1_final": heldout[1], "train_pass@1_end": train[1], "wall_time_s": 60.0})
  (run_dir / "summary.json").write_text(json.dumps(summary))


def test_sign_flip_and_t_test_p_values():
  assert compare.sign_flip_p([1.0] * 5) == pytest.approx(2 / 32)  # only all-plus and all-minus are as extreme
  assert compare.sign_flip_p([1.0, -1.0]) == pytest.approx(1.0)
  assert compare.t_test_p([0.0, 0.0, 0.0]) == 1.0
  # d = (1, 2, 3): t = 2 / (1 / sqrt 3) = 3.464 on 2 degrees of freedom: p = 0.0742
  assert compare.t_test_p([1.0, 2.0, 3.0]) == pytest.approx(0.0742, abs=1e-3)
  assert compare.t_test_p([1.0]) is None


def test_table_pairs_seeds_and_skips_unfinished_runs(tmp_path, capsys):
  root = tmp_path / "runs"
  for seed in range(3):
    _write_run(root / "ppo" / f"seed{seed}", [0.5, 0.6, 0.7], (0.40, 0.50 + 0.01 * seed), (0.5, 0.7),
               extra={"critic/explained_variance": 0.1 * seed})
    _write_run(root / "grpo" / f"seed{seed}", [0.5, 0.5, 0.6], (0.40, 0.45), (0.5, 0.6),
               extra={"groups/zero_variance_frac": 0.25})
  _write_run(root / "grpo" / "seed3", [0.1], (0.4, 0.0), (0.5, 0.0), finished=False)  # still going: left out
  record = tmp_path / "record.json"
  plot = tmp_path / "img" / "success.png"
  assert compare.main([str(root), "--baseline", "ppo", "--record", str(record), "--plot", str(plot)]) == 0
  out = capsys.readouterr().out
  assert "| ppo | 3 |" in out and "| grpo | 3 |" in out
  # held-out after RL: grpo - ppo = 0.45 - (0.50, 0.51, 0.52) -> mean -0.06, every pair negative
  row = next(line for line in out.splitlines() if line.startswith("| grpo | held-out pass@1 after RL"))
  assert "| 3 | -0.060 ± 0.006 |" in row and row.endswith("| 0.250 |")  # sign flip: 2 of 8
  assert "0.25" in out  # zero-variance groups
  assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
  # the record alone reproduces the table, and merging keeps earlier runs
  assert compare.main([str(record), "--baseline", "ppo"]) == 0
  assert capsys.readouterr().out == out.replace(f"plot: {plot}\n", "")
  (root / "ppo" / "seed0").rename(tmp_path / "gone")
  assert compare.main([str(root), "--baseline", "ppo", "--record", str(record)]) == 0
  assert "| ppo | 3 |" in capsys.readouterr().out


def test_a_missing_baseline_or_root_is_one_clear_line(tmp_path, capsys):
  assert compare.main([str(tmp_path / "nowhere"), "--baseline", "ppo"]) == 2
  assert "neither a run root nor a record file" in capsys.readouterr().err
  _write_run(tmp_path / "runs" / "grpo" / "seed0", [0.5], (0.4, 0.5), (0.5, 0.6))
  assert compare.main([str(tmp_path / "runs"), "--baseline", "ppo"]) == 2
  assert "baseline 'ppo' has no finished run" in capsys.readouterr().err
