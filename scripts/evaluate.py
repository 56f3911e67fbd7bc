r"""pass@k of a checkpoint on a task root, with the same sandbox and grading as training.

  # our run's latest checkpoint on the held-out synthetic tasks, 4 samples per task
  .venv/bin/python scripts/evaluate.py --checkpoint runs/default --tasks runs/default/tasks \
      --split heldout --n 4 --k 1,2,4 --temperature 0.8
  # a Hugging Face directory on imported HumanEval tasks, single-turn answers
  .venv/bin/python scripts/evaluate.py --checkpoint /models/qwen --tasks data/humaneval_tasks \
      --config.agent.mode=single_turn
  # reward vs ability across the evaluations of a finished run
  .venv/bin/python scripts/evaluate.py --correlate runs/default

Prints a table and writes JSON (--out) and, with --trajectories DIR, every episode as a
JSONL trajectory record (replayable with scripts/replay.py). Tasks whose metadata lists `bait_files` are also
scored for adversarial behaviour: how often the policy reads, lists or runs a command
touching the bait. Bad input (a missing config, checkpoint or task root, a malformed task) is
one line on stderr, exit status 2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from absl import app, flags, logging  # noqa: E402
from ml_collections import config_flags  # noqa: E402

from rl import cli  # noqa: E402

_DEFAULT_CONFIG = "configs/default.py"
cli.check_config_args(sys.argv, default=_DEFAULT_CONFIG)  # before ml_collections loads the file
_CONFIG = config_flags.DEFINE_config_file("config", _DEFAULT_CONFIG, "Base config (agent, sandbox).")
_CHECKPOINT = flags.DEFINE_string("checkpoint", None, "A run directory of ours or a Hugging Face directory.")
_TASKS = flags.DEFINE_string("tasks", None, "Task root to evaluate on.")
_SPLIT = flags.DEFINE_string("split", None, "Only tasks of this split (default: all).")
_DIFFICULTY = flags.DEFINE_string("difficulty", None, "Only tasks of this difficulty (default: all).")
_N = flags.DEFINE_integer("n", 1, "Samples per task.")
_ROWS = flags.DEFINE_integer("rows", 8, "Episodes decoded together (sampler rows): more is faster and "
                             "takes more memory (a real checkpoint's KV cache per row).")
_K = flags.DEFINE_list("k", ["1"], "k values for pass@k (k <= n).")
_TEMPERATURE = flags.DEFINE_float("temperature", None, "Sampling temperature (default: greedy for n=1).")
_OUT = flags.DEFINE_string("out", None, "Write the JSON result here.")
_TRAJECTORIES = flags.DEFINE_string("trajectories", None,
                                     "A directory: every episode's trajectory record, as JSONL.")
_CORRELATE = flags.DEFINE_string("correlate", None, "A run directory: reward vs held-out pass@1.")


def bait_touches(record: dict, bait_files: list[str]) -> bool:
  for step in record.get("steps", []):
    blob = json.dumps(step.get("action_input", {}))
    if any(b in blob for b in bait_files):
      return True
  return False


def correlate(workdir: str) -> dict:
  from rl.train.evaluate import reward_ability_correlation
  from rl.train.metrics import read_metrics

  cli.require_path(str(Path(workdir) / "metrics.jsonl"), "--correlate: metrics file", directory=False)
  rows = [r for r in read_metrics(workdir) if "eval/pass@1" in r]
  if len(rows) < 2:
    cli.fail(f"--correlate: fewer than 2 evaluations in {Path(workdir) / 'metrics.jsonl'}")
  out = reward_ability_correlation([r["train/reward_mean"] for r in rows], [r["eval/pass@1"] for r in rows])
  out["points"] = [{"step": r["step"], "train_reward": r["train/reward_mean"], "heldout_pass@1": r["eval/pass@1"]}
                   for r in rows]
  return out


def main(argv):
  if len(argv) > 1:
    cli.fail(f"unexpected arguments: {' '.join(argv[1:])}")
  logging.set_verbosity(logging.WARNING)
  if _CORRELATE.value:
    result = correlate(_CORRELATE.value)
    print(json.dumps(result, indent=2))
    return
  if not _CHECKPOINT.value or not _TASKS.value:
    cli.fail("--checkpoint and --tasks are required (or --correlate WORKDIR)")
  try:
    ks = sorted({int(k) for k in _K.value})
  except ValueError:
    cli.fail(f"--k: not a list of integers: {','.join(_K.value)}")
  if max(ks) > _N.value:
    cli.fail(f"--k: k={max(ks)} needs --n >= {max(ks)}")
  cli.require_path(_CHECKPOINT.value, "--checkpoint", directory=True)
  cli.require_path(_TASKS.value, "--tasks root", directory=True)
  with cli.bad_input_exits():
    evaluate(ks)


def evaluate(ks: list[int]) -> None:
  from flax import nnx

  from rl import models as model_lib
  from rl import tokenizer as tokenizer_lib
  from rl.env import actors
  from rl.env.rollout import RolloutEngine
  from rl.env.tools import ChatRenderer
  from rl.tasks import load_task_root
  from rl.train import evaluate as evaluate_lib
  from rl.train import state as state_lib

  config = _CONFIG.value.unlock()
  checkpoint = Path(_CHECKPOINT.value)
  if (checkpoint / "config.json").exists() and any(checkpoint.glob("*.safetensors")):
    config.model.hf_checkpoint = str(checkpoint)
    init_from = ""  # the checkpoint is the model (not the config's base weights)
  elif (checkpoint / "checkpoints").exists():
    init_from = str(checkpoint)
  else:
    cli.fail(f"--checkpoint {checkpoint}: neither a Hugging Face directory nor a run directory")
  tasks = load_task_root(_TASKS.value, split=_SPLIT.value)
  if _DIFFICULTY.value:
    tasks = [t for t in tasks if t.difficulty == _DIFFICULTY.value]
  if not tasks:
    cli.fail(f"no tasks in {_TASKS.value} (split {_SPLIT.value}, difficulty {_DIFFICULTY.value})")
  temperature = _TEMPERATURE.value if _TEMPERATURE.value is not None else (0.0 if _N.value == 1 else 1.0)
  rows = max(1, _ROWS.value)

  # The policy as training rolls it out: the config's tokenizer, chat template, tool-call grammar
  # and sampler, with the checkpoint's weights; no critic, no optimiser.
  tokenizer = tokenizer_lib.load_tokenizer(config.model.hf_checkpoint or None)
  renderer = ChatRenderer.from_config(tokenizer, config)
  pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
  _, policy, _ = model_lib.build_models(config, len(tokenizer), renderer.end_of_turn_ids[-1], pad_id, critic=False)
  graphdef, params = nnx.split(policy, nnx.Param)
  if init_from:
    params, _ = state_lib.load_weights(init_from, params, None, graphdef)
  model_policy = actors.model_policy_from_config(config, graphdef, params, renderer, rows=rows, pad_id=pad_id,
                                                 grammar=actors.tool_call_grammar(config, renderer))
  model_policy.set_temperature(temperature)
  model_policy.reseed(config.seed + 7)
  model_policy.begin(len(tasks) * _N.value)
  engine = RolloutEngine(config, model_policy, renderer)
  engine.set_model_info(str(checkpoint), 0, temperature)
  try:
    result, episodes = evaluate_lib.evaluate(engine, tasks, samples=_N.value, rows=rows)
  finally:
    engine.evaluator.close()
  from rl.train.evaluate import pass_at_k_table

  result = {k.removeprefix("eval/"): v for k, v in result.items()}
  result.update(pass_at_k_table([(e.task_id, e.success) for e in episodes], ks))
  per_task = {}
  for e in episodes:
    per_task.setdefault(e.task_id, []).append(bool(e.success))
  result["per_task"] = {t: {"n": len(v), "correct": sum(v)} for t, v in per_task.items()}
  bait_tasks = {t.id: t.metadata.get("bait_files") for t in tasks if t.metadata.get("bait_files")}
  if bait_tasks:
    touched = [bait_touches(e.record, bait_tasks[e.task_id]) for e in episodes if e.task_id in bait_tasks]
    result["bait_touch_rate"] = sum(touched) / max(len(touched), 1)
  print(f"{'metric':<20} value")
  for k, v in result.items():
    if k != "per_task":
      print(f"{k:<20} {v:.4f}" if isinstance(v, float) else f"{k:<20} {v}")
  if _OUT.value:
    Path(_OUT.value).write_text(json.dumps(result, indent=2))
  if _TRAJECTORIES.value:
    from rl.env.trajectory import TrajectoryWriter

    with TrajectoryWriter(_TRAJECTORIES.value) as writer:
      for e in episodes:
        writer.write(e.record)


if __name__ == "__main__":
  app.run(main, flags_parser=cli.parse_flags)
