"""Ablation tooling on synthetic runs: run_ablations.py (emit and sequential) and ablation_table.py."""

import importlib.util
import json
import math
import pathlib
import shlex
import subprocess
import sys

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent


def _load(name):
  spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


run_ablations = _load("run_ablations")
ablation_table = _load("ablation_table")


def fake_run(run_dir: pathlib.Path, rewards, success, *, pass1=None, heldout=None, lengths=None, flag=0.0):
  run_dir.mkdir(parents=True)
  with open(run_dir / "metrics.jsonl", "w") as f:
    for step, (r, s) in enumerate(zip(rewards, success)):
      row = {"step": step, "time_s": step * 1.5, "train/reward_mean": r, "train/success_rate": s,
             "antihack/flag_rate": flag}
      if lengths is None:  # the trainer's own percentiles; else only the trajectory logs have lengths
        row.update({"length/tokens_p10": 10.0, "length/tokens_p50": 20.0, "length/tokens_p90": 40.0})
      if pass1 is not None and step == len(rewards) - 1:
        row["eval/pass@1"] = pass1
      f.write(json.dumps(row) + "\n")
  summary = {"iterations": len(rewards), "wall_time_s": 12.0, "peak_rss_mb": 900.0}
  if heldout is not None:
    summary["heldout_pass@1_final"] = heldout
  (run_dir / "summary.json").write_text(json.dumps(summary))
  if lengths is not None:
    (run_dir / "trajectories").mkdir()
    with open(run_dir / "trajectories" / "traj_000.jsonl", "w") as f:
      for n in lengths:
        f.write(json.dumps({"task_id": "t", "steps": [{"tokens": {"action": n // 2, "observation": n - n // 2}}]}) + "\n")


@pytest.fixture
def root(tmp_path):
  r = tmp_path / "ablations"
  # ppo: 3 seeds, 20 iterations; the table averages the last 10% (2 iterations) of each.
  for seed, final in enumerate([0.5, 0.6, 0.7]):
    fake_run(r / "ppo" / f"seed{seed}", [0.0] * 18 + [final, final], [0.1] * 18 + [final] * 2,
             pass1=final / 2, heldout=final / 4)
  for seed, final in enumerate([0.4, 0.2]):
    fake_run(r / "grpo" / f"seed{seed}", [0.0] * 18 + [final, final], [0.0] * 20,
             lengths=[10, 20, 30, 40, 50, 60, 70, 80, 90, 100])
  fake_run(r / "no_antihack" / "seed0", [1.0] * 10, [0.3] * 10, flag=0.0)
  (r / "empty_config" / "seed0").mkdir(parents=True)  # no metrics: ignored
  return r


def test_mean_and_standard_error():
  assert ablation_table.mean_se([0.5, 0.6, 0.7]) == pytest.approx((0.6, 0.1 / math.sqrt(3)))
  assert ablation_table.mean_se([2.0]) == (2.0, None)
  with pytest.raises(ValueError):
    ablation_table.mean_se([])


def test_table_numbers_from_synthetic_runs(root):
  runs = ablation_table.collect(root)
  assert sorted(runs) == ["grpo", "no_antihack", "ppo"]
  table = ablation_table.aggregate(runs, default_baseline="ppo")
  ppo, grpo = table["ppo"], table["grpo"]
  assert ppo["seeds"] == 3 and ppo["baseline"] is None
  assert ppo["reward"] == pytest.approx((0.6, 0.1 / math.sqrt(3)))
  assert ppo["eval pass@1"] == pytest.approx((0.3, 0.05 / math.sqrt(3)))
  assert ppo["held-out pass@1"][0] == pytest.approx(0.15)
  assert ppo["len p90/p10"][0] == pytest.approx(4.0)  # from the logged percentiles
  assert grpo["baseline"] == "ppo"
  assert grpo["delta"] == pytest.approx(0.3 - 0.6) and grpo["delta_rel"] == pytest.approx(-0.5)
  lengths = np.arange(10, 101, 10)
  assert grpo["len p10"][0] == pytest.approx(np.percentile(lengths, 10))  # from the trajectory files
  assert grpo["len p90/p10"][0] == pytest.approx(np.percentile(lengths, 90) / np.percentile(lengths, 10))
  assert "critic" in grpo["paper"]
  assert table["no_antihack"]["baseline"] == "ppo"  # rules_only absent: the default baseline

  md = ablation_table.to_markdown(table)
  lines = md.splitlines()
  assert lines[0].startswith("| config | seeds | reward |")
  ppo_line = next(l for l in lines if l.startswith("| ppo |"))
  assert f"0.600 ± {0.1 / math.sqrt(3):.3f}" in ppo_line
  grpo_line = next(l for l in lines if l.startswith("| grpo |"))
  assert "-0.300 (-50.0%) vs ppo" in grpo_line and "± —" not in grpo_line
  no_line = next(l for l in lines if l.startswith("| no_antihack |"))
  assert "| 1.000 |" in no_line and "| — |" in no_line  # one seed: no ±; no eval pass@1


def test_table_cli_writes_markdown_and_json(root, tmp_path):
  out, js = tmp_path / "table.md", tmp_path / "table.json"
  proc = subprocess.run([sys.executable, str(REPO / "scripts" / "ablation_table.py"), str(root), "--out", str(out),
                         "--json", str(js)], capture_output=True, text=True, timeout=120)
  assert proc.returncode == 0, proc.stderr
  assert proc.stdout == out.read_text() and "| grpo |" in proc.stdout
  assert json.loads(js.read_text())["ppo"]["seeds"] == 3
  bad = subprocess.run([sys.executable, str(REPO / "scripts" / "ablation_table.py"), str(tmp_path / "nope")],
                       capture_output=True, text=True, timeout=120)
  assert bad.returncode == 2 and "does not exist" in bad.stderr


def test_emit_prints_one_command_per_config_and_seed(capsys):
  rc = run_ablations.main(["--configs", "ppo,no_instrumentation", "--seeds", "0,1", "--root", "R", "--emit",
                           "--set", "trainer.iterations=3", "--python", "py", "--train-script", "train.py"])
  assert rc == 0
  lines = capsys.readouterr().out.splitlines()
  assert len(lines) == 4
  first = shlex.split(lines[0])
  assert first[:2] == ["py", "train.py"]
  assert first[2] == f"--config={REPO / 'configs' / 'ablations' / 'ppo.py'}"
  assert first[3:] == ["--workdir=R/ppo/seed0", "--config.seed=0", "--config.trainer.iterations=3"]
  assert "--workdir=R/no_instrumentation/seed1" in lines[3]


def test_presets_and_config_resolution():
  for preset, names in run_ablations.PRESETS.items():
    for name in names:
      assert run_ablations.resolve_config(name).is_file(), (preset, name)
  assert run_ablations.resolve_config("mle") == REPO / "configs" / "experiments" / "mle.py"
  assert run_ablations.resolve_config("default") == REPO / "configs" / "default.py"
  with pytest.raises(FileNotFoundError, match="known: default"):
    run_ablations.resolve_config("no_such_ablation")
  with pytest.raises(ValueError, match="key=value"):
    run_ablations.build_command("py", "train.py", pathlib.Path("c.py"), pathlib.Path("w"), 0, ["oops"])


FAKE_TRAIN = '''
import json, pathlib, sys
args = dict(a.lstrip("-").split("=", 1) for a in sys.argv[1:])
workdir = pathlib.Path(args["workdir"])
seed = int(args["config.seed"])
if "fail" in args["config"]:
  sys.exit(3)
with open(workdir / "metrics.jsonl", "w") as f:
  for step in range(int(args.get("config.trainer.iterations", 5))):
    f.write(json.dumps({"step": step, "train/reward_mean": 0.1 * seed + 0.01 * step, "train/success_rate": 0.5}) + "\\n")
(workdir / "summary.json").write_text(json.dumps({"iterations": 5, "wall_time_s": 1.0}))
print("trained", args["config"])
'''


def test_sequential_runs_resume_and_feed_the_table(tmp_path, capsys):
  train = tmp_path / "fake_train.py"
  train.write_text(FAKE_TRAIN)
  root = tmp_path / "runs"
  argv = ["--configs", "ppo,grpo", "--seeds", "0,1", "--root", str(root), "--train-script", str(train),
          "--set", "trainer.iterations=4"]
  assert run_ablations.main(argv) == 0
  log = [json.loads(l) for l in (root / "runs.jsonl").read_text().splitlines()]
  assert [(e["config"], e["seed"], e["returncode"]) for e in log] == [
      ("ppo", 0, 0), ("ppo", 1, 0), ("grpo", 0, 0), ("grpo", 1, 0)]
  assert "trained" in (root / "ppo" / "seed1" / "run.log").read_text()
  capsys.readouterr()
  assert run_ablations.main(argv) == 0  # everything done: nothing reruns
  assert capsys.readouterr().out.count("done already, skipped") == 4
  assert len((root / "runs.jsonl").read_text().splitlines()) == 4
  # the trainer writes summary.json after SFT too: a run stopped during RL is rerun (and resumes)
  (root / "grpo" / "seed1" / "summary.json").write_text(json.dumps({"heldout_pass@1_sft": 0.5}))
  assert run_ablations.main(argv) == 0
  assert capsys.readouterr().out.count("done already, skipped") == 3
  assert len((root / "runs.jsonl").read_text().splitlines()) == 5
  table = ablation_table.aggregate(ablation_table.collect(root))
  assert table["ppo"]["reward"][0] == pytest.approx(np.mean([0.03, 0.13]))
  assert table["ppo"]["iterations"][0] == 4

  failing = tmp_path / "fail_cfg.py"
  failing.write_text("")
  assert run_ablations.main(["--configs", str(failing), "--seeds", "0", "--root", str(root),
                             "--train-script", str(train)]) == 1


@pytest.mark.parametrize("name,base,changes", [
    ("no_antihack", "default", {"antihack.rules": "none", "antihack.judge": "none"}),
    ("rules_only", "default", {}),
    ("judge_on", "default", {"antihack.judge": "openai"}),
    ("no_instrumentation", "mle", {"instrumentation.backend": "none"}),
    ("no_self_improve", "mle", {"self_improve.enabled": False}),
    ("dag_off", "mle", {"algo.duration_weight": "none"}),
    ("dag_inverse_log", "mle", {"algo.duration_weight": "inverse_log"}),
])
def test_ablation_configs_flip_only_their_fields(name, base, changes):
  from rl import config as config_lib

  def load(config_name):
    spec = importlib.util.spec_from_file_location(config_name, run_ablations.resolve_config(config_name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.get_config()

  ablation, baseline = load(name), load(base)
  config_lib.validate(ablation)
  flat = lambda c: {f"{s}.{k}": v for s, sub in c.to_dict().items() if isinstance(sub, dict) for k, v in sub.items()}
  a, b = flat(ablation), flat(baseline)
  for field, value in changes.items():
    assert a[field] == value, field
  differing = {k for k in a if a[k] != b.get(k)}
  allowed = set(changes) | {k for k in a if k.startswith(("antihack.judge", "self_improve."))}
  assert differing <= allowed, differing - allowed


def test_mle_experiment_config_turns_the_paper_features_on():
  spec = importlib.util.spec_from_file_location("mle_cfg", run_ablations.resolve_config("mle"))
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  c = module.get_config()
  assert c.tasks.sources == (("mle", 1.0),) and c.reward.scheme == "mle"
  assert c.instrumentation.backend == "ast" and c.self_improve.enabled
  assert c.algo.duration_weight == "linear" and c.agent.mode == "single_turn"
  from rl import config as config_lib

  config_lib.validate(c)


def _mle_run(run_dir: pathlib.Path, *, churn: float, valid: float, improve: float, scratch: float) -> None:
  """A synthetic MLE run: summary with held-out scores per task, metrics, and training records."""
  run_dir.mkdir(parents=True)
  per_task = {"mle-tabular-churn-v500": {"episodes": 2.0, "valid_rate": valid, "score_mean": churn},
              "mle-tabular-churn-v501": {"episodes": 2.0, "valid_rate": valid, "score_mean": churn + 0.02},
              "mle-insult-detection-v500": {"episodes": 2.0, "valid_rate": 0.0}}
  (run_dir / "summary.json").write_text(json.dumps({
      "heldout_mle_sft": {"valid_rate": 0.25}, "heldout_mle_final": {"valid_rate": valid, "per_task": per_task}}))
  (run_dir / "metrics.jsonl").write_text("".join(json.dumps(
      {"step": s, "mle/valid_rate": 0.4 + 0.1 * s, "mle/score_mean": 0.7, "mle/exec_time_s": 2.0, "mle/stage_mean": 4.0})
      + "\n" for s in range(1, 4)))
  traj = run_dir / "trajectories"
  traj.mkdir()
  records = [{"task_id": "mle-tabular-churn", "mle": {"grade": {"valid": True, "normalized_score": improve}},
              "prompt_origin": {"kind": "improve_previous", "parent_score": 0.5}},
             {"task_id": "mle-tabular-churn", "mle": {"grade": {"valid": True, "normalized_score": scratch}}},
             {"task_id": "mle-tabular-churn", "mle": {"grade": {"valid": False, "normalized_score": None}}}]
  (traj / "traj-00000.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def test_mle_tables_from_synthetic_runs(tmp_path):
  """The paper-feature tables: held-out score per competition (task variants averaged), valid
  rates SFT -> RL and first -> last, improve-previous vs from scratch per competition with wins."""
  root = tmp_path / "paper"
  _mle_run(root / "mle" / "seed0", churn=0.80, valid=0.75, improve=0.9, scratch=0.7)
  _mle_run(root / "mle" / "seed1", churn=0.70, valid=0.25, improve=0.8, scratch=0.7)
  _mle_run(root / "no_self_improve" / "seed0", churn=0.60, valid=0.5, improve=0.1, scratch=0.5)
  values = ablation_table.mle_run_values(root / "mle" / "seed0")
  assert values["heldout/tabular-churn"] == pytest.approx(0.81) and "heldout/insult-detection" not in values
  assert values["heldout valid"] == 0.75 and values["heldout valid sft"] == 0.25
  assert values["train valid first"] == pytest.approx(0.5) and values["train valid"] == pytest.approx(0.7)
  assert values["improve/tabular-churn"] == 0.9 and values["scratch/tabular-churn"] == 0.7
  assert values["improve_valid/tabular-churn"] == 1.0 and values["scratch_valid/tabular-churn"] == 0.5
  assert values["improve_n/tabular-churn"] == 1 and values["scratch_n/tabular-churn"] == 2
  assert ablation_table.competition_of("mle-author-identification-v12") == "author-identification"
  assert ablation_table.competition_of("mle-tabular-churn") == "tabular-churn"
  md = ablation_table.mle_markdown(root)
  mle_row = next(line for line in md.splitlines() if line.startswith("| mle |"))
  assert "| 2 | 0.760 ± 0.050 |" in mle_row and "0.50 ± 0.25" in mle_row
  table4 = [line for line in md.splitlines() if line.startswith("| mle | 0.850")]
  assert table4 and "0.850 ± 0.050 [1.00, 2] / 0.700 ± 0.000 [0.50, 4]" in table4[0], table4
  assert table4[0].endswith("| 1 of 1 |")
  (tmp_path / "other" / "ppo" / "seed0").mkdir(parents=True)  # no MLE run: no MLE tables
  assert ablation_table.mle_markdown(tmp_path / "other") == ""
