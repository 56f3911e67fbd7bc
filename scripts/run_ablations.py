r"""Runs a list of ablation configs over several seeds, or prints the commands for a cluster.

  # the small CPU set, sequentially here (each run: ROOT/<config>/seed<S>/)
  .venv/bin/python scripts/run_ablations.py --preset cpu --seeds 0,1 --root runs/ablations \
      --set trainer.iterations=4
  # the same runs as one command per line, for a job array
  .venv/bin/python scripts/run_ablations.py --configs ppo,grpo,no_antihack --seeds 0,1,2 --emit

A config name is looked up in configs/ablations/, then configs/experiments/ (`default` is
configs/default.py; a path to a .py file works too). Finished runs (a summary.json with the end-of-run fields)
are skipped, so rerunning the command resumes a sweep (a run stopped part-way resumes
from its last checkpoint). Then:
  .venv/bin/python scripts/ablation_table.py runs/ablations
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shlex
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parent.parent

PRESETS = {
    # runnable on a laptop CPU with the built-in tiny model (no judge server needed)
    "cpu": ("ppo", "grpo", "rloo", "no_antihack", "rules_only"),
    "estimators": ("ppo", "grpo", "drgrpo", "rloo"),
    "antihack": ("rules_only", "no_antihack", "judge_on"),
    "paper": ("mle", "no_instrumentation", "no_self_improve", "dag_off", "dag_inverse_log"),
    # the estimators on the long-horizon family (configs/experiments/long_horizon*.py); its
    # length-even control is the same preset with --set tasks.long.min_depth=D
    # --set tasks.long.max_depth=D (docs/ablations.md)
    "long_horizon": ("long_horizon", "long_horizon_grpo", "long_horizon_drgrpo", "long_horizon_rloo"),
}


def resolve_config(name: str, repo: pathlib.Path = REPO) -> pathlib.Path:
  """configs/ablations/<name>.py, configs/experiments/<name>.py, `default`, or a .py path."""
  if name.endswith(".py"):
    path = pathlib.Path(name)
    path = path if path.is_absolute() else repo / path
    if not path.is_file():
      raise FileNotFoundError(f"config file {name} does not exist")
    return path
  if name == "default":
    return repo / "configs" / "default.py"
  for folder in ("ablations", "experiments"):
    path = repo / "configs" / folder / f"{name}.py"
    if path.is_file():
      return path
  known = sorted(p.stem for folder in ("ablations", "experiments")
                 for p in (repo / "configs" / folder).glob("*.py") if p.stem != "__init__")
  raise FileNotFoundError(f"unknown config {name!r}; known: default, {', '.join(known)}")


def config_label(name: str) -> str:
  return pathlib.Path(name).stem if name.endswith(".py") else name


def build_command(python: str, train_script: str, config_path: pathlib.Path, workdir: pathlib.Path, seed: int,
                  overrides: list[str]) -> list[str]:
  cmd = [python, train_script, f"--config={config_path}", f"--workdir={workdir}", f"--config.seed={seed}"]
  for item in overrides:
    key, sep, value = item.partition("=")
    if not sep or not key:
      raise ValueError(f"--set expects key=value (e.g. trainer.iterations=4), got {item!r}")
    cmd.append(f"--config.{key}={value}")
  return cmd


def plan(configs: list[str], seeds: list[int], root: pathlib.Path, *, python: str, train_script: str,
         overrides: list[str], repo: pathlib.Path = REPO) -> list[dict]:
  runs = []
  for name in configs:
    path = resolve_config(name, repo)
    for seed in seeds:
      workdir = root / config_label(name) / f"seed{seed}"
      runs.append({"config": config_label(name), "seed": seed, "workdir": str(workdir),
                   "command": build_command(python, train_script, path, workdir, seed, overrides)})
  return runs


def finished(workdir: pathlib.Path) -> bool:
  """Whether the run in `workdir` ended: its summary.json holds the end-of-run fields. The trainer
  writes summary.json after SFT too, so a run stopped during RL is not finished; rerunning its
  command resumes it from its last checkpoint."""
  try:
    summary = json.loads((workdir / "summary.json").read_text(encoding="utf-8"))
  except (OSError, ValueError):
    return False
  return isinstance(summary, dict) and "wall_time_s" in summary


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--configs", default="", help="comma-separated config names or .py paths")
  parser.add_argument("--preset", default="", choices=("",) + tuple(PRESETS), help="a named list of configs")
  parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds")
  parser.add_argument("--root", default="runs/ablations", help="one workdir per config and seed under here")
  parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                      help="config override for every run, e.g. trainer.iterations=4 (repeatable)")
  parser.add_argument("--emit", action="store_true", help="print the commands instead of running them")
  parser.add_argument("--python", default=sys.executable)
  parser.add_argument("--train-script", default=str(REPO / "train.py"))
  parser.add_argument("--rerun", action="store_true", help="also rerun runs that have a summary.json")
  parser.add_argument("--keep-going", action="store_true", help="continue after a failed run")
  args = parser.parse_args(argv)

  configs = [c.strip() for c in args.configs.split(",") if c.strip()] + list(PRESETS.get(args.preset, ()))
  if not configs:
    parser.error("name some configs with --configs or --preset")
  try:
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
  except ValueError:
    parser.error(f"--seeds must be comma-separated integers, got {args.seeds!r}")
  if not seeds:
    parser.error("--seeds is empty")
  root = pathlib.Path(args.root)
  try:
    runs = plan(configs, seeds, root, python=args.python, train_script=args.train_script, overrides=args.set)
  except (FileNotFoundError, ValueError) as e:
    parser.error(str(e))

  if args.emit:
    for run in runs:
      print(shlex.join(run["command"]))
    return 0

  root.mkdir(parents=True, exist_ok=True)
  failures = 0
  for k, run in enumerate(runs, 1):
    workdir = pathlib.Path(run["workdir"])
    if finished(workdir) and not args.rerun:
      print(f"[{k}/{len(runs)}] {run['config']} seed {run['seed']}: done already, skipped")
      continue
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"[{k}/{len(runs)}] {run['config']} seed {run['seed']}: {shlex.join(run['command'])}", flush=True)
    start = time.monotonic()
    with open(workdir / "run.log", "ab") as log:
      rc = subprocess.call(run["command"], stdout=log, stderr=subprocess.STDOUT, cwd=REPO,
                           env={**os.environ, "PYTHONUNBUFFERED": "1"})
    wall = time.monotonic() - start
    entry = {**run, "returncode": rc, "wall_s": round(wall, 2), "finished": time.time()}
    with open(root / "runs.jsonl", "a", encoding="utf-8") as f:
      f.write(json.dumps(entry) + "\n")
    print(f"    exit {rc} after {wall:.1f}s (log: {workdir / 'run.log'})", flush=True)
    if rc != 0:
      failures += 1
      if not args.keep_going:
        print(f"stopping: {run['config']} seed {run['seed']} failed; see its run.log", file=sys.stderr)
        return 1
  return 1 if failures else 0


if __name__ == "__main__":
  raise SystemExit(main())
