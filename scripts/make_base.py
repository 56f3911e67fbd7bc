r"""Builds the tiny base model that the default experiment starts from (rl/assets/tiny_base).

RL post-training starts from a pretrained model, not from random weights. At the default's
scale (0.9M parameters, 2 CPU cores, 15 minutes) the run cannot afford the data a model needs
to read names and lines from its context instead of recalling them (docs/experiments.md, ninth round), so
that part is done once, here, and the result is committed:

1. The corpus: every verified easy bug of the **train-split functions** of the synthetic
   library (`--library`, by default the default experiment's: the bundled functions and the
   function families), each in 1 + `--renames` spellings (other local and module names,
   rl/tasks/synthetic/rename.py). Never a held-out function; and, unless `--keep-default-bugs`,
   none of the bugs of the default experiment's training tasks (matched by function, operator
   and line, whatever the spelling), so RL in the default meets bugs the base has not seen.
2. SFT on one scripted-expert demonstration per corpus task (the expert always reads the file
   it edits), the trainer's SFT stage with `--steps` steps.
3. The policy exported as a Hugging Face directory (config.json, model.safetensors) with
   `base.json`: the corpus, the steps, the final NLL, held-out pass@1 on the corpus's held-out
   functions (greedy) and the wall time.

  .venv/bin/python scripts/make_base.py --out rl/assets/tiny_base --workdir runs/make_base

`--family long` builds the base of the long-horizon experiment (configs/experiments/long_horizon.py,
rl/assets/tiny_base_long) the same way on the long-horizon family (rl/tasks/long_horizon): a
corpus of `--num` verified call chains of both splits (another generator seed than the
experiment's; the train-split chains whose buggy-function bugs the experiment trains on
left out), one expert demonstration each (reading down the whole chain, never giving up), SFT
from `--init-from` (the default's tiny base), so that the tiny model knows the tool protocol on
chains: reading the module a function imports its callee from, many turns in a row.

  .venv/bin/python scripts/make_base.py --family long --out rl/assets/tiny_base_long --workdir runs/make_base_long

`--family mle` builds the base of the MLE experiment (configs/experiments/mle.py,
rl/assets/tiny_base_mle): `--num` programs per competition drawn from the grammar of
rl/tasks/mle/programs.py (valid ones only; another seed than the experiment's own SFT stage),
written as single-turn demonstration records without running them (the grammar's programs are
tested in the sandbox by tests/test_mle_programs.py), SFT from random weights, so that the tiny
model answers an MLE prompt with a whole scikit-learn/pandas program. Evaluated on the
experiment's held-out data variants (greedy; pass@1 = a valid submission).

  .venv/bin/python scripts/make_base.py --family mle --out rl/assets/tiny_base_mle --workdir runs/make_base_mle --steps 700

The corpus and the demonstrations are the same for the same arguments; the weights also depend
on the machine's floating-point arithmetic. With the defaults: 39 min 17 s on 2 CPU cores
(1,804 demonstrations; 21 min of it SFT), 2.1 GB peak memory. `rl/assets/tiny_base_core`, the
base of the twelfth round (`configs/experiments/core_library.py`), is this script with
`--library core --steps 2000` on the default of that round.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))


def default_training_bugs(workdir: pathlib.Path) -> set[tuple[str, str, int]]:
  """The bugs of the default experiment's training tasks (generated as its run would)."""
  from configs import default
  from rl.tasks import load_tasks
  from rl.tasks.synthetic import bug_identity

  c = default.get_config()
  mixture = load_tasks(c, workdir / "default_run")
  tasks = mixture.tasks(split=c.tasks.split, difficulty=c.tasks.difficulty or None)
  return {bug_identity(t) for t in tasks}


def _copy_corpus(tasks, root: pathlib.Path, exclude: set, bug_identity) -> tuple[list, int]:
  """Copies `tasks` into a fresh task root `root`, leaving out train-split tasks whose
  `bug_identity` is in `exclude`; returns (the kept tasks, how many were left out)."""
  from rl.tasks import format as task_format

  if root.exists():
    shutil.rmtree(root)
  root.mkdir(parents=True)
  kept, excluded = [], 0
  for task in tasks:
    if task.split == "train" and bug_identity(task) in exclude:
      excluded += 1
      continue
    shutil.copytree(task.dir, root / task.dir.name, symlinks=True)
    kept.append(task)
  task_format.write_manifest(root)
  return kept, excluded


def build_corpus(workdir: pathlib.Path, renames: int, seed: int, exclude: set,
                 num_tasks: int = 100_000, library: str = "core") -> tuple[pathlib.Path, dict]:
  """Generates every easy bug in 1 + renames spellings and keeps a root of the usable ones:
  train split minus `exclude`, and the whole held-out split (for evaluation only)."""
  from rl.tasks.synthetic import bug_identity, generate

  generated = workdir / "generated"
  result = generate(generated, num_tasks=num_tasks, seed=seed, tier_weights={"easy": 1.0}, renames=renames,
                    library=library, log=lambda s: print(s, flush=True))
  root = workdir / "corpus"
  kept, excluded = _copy_corpus(result.tasks, root, exclude, bug_identity)
  info = {"generated": len(result.tasks), "excluded_default_bugs": excluded,
          "train": sum(t.split == "train" for t in kept), "heldout": sum(t.split == "heldout" for t in kept),
          "heldout_functions": result.info.get("heldout_functions"), "renames": renames, "seed": seed,
          "library": library}
  return root, info


def long_experiment_bugs(workdir: pathlib.Path) -> set:
  """The buggy-function bugs of the long-horizon experiment's training tasks (generated as its
  run would)."""
  from configs.experiments import long_horizon
  from rl.tasks import load_tasks
  from rl.tasks.long_horizon import bug_identity

  c = long_horizon.get_config()
  tasks = load_tasks(c, workdir / "long_horizon_run").tasks(split=c.tasks.split)
  return {bug_identity(t) for t in tasks}


def build_long_corpus(workdir: pathlib.Path, num_tasks: int, seed: int, exclude: set, config) -> tuple[pathlib.Path, dict]:
  """`num_tasks` verified long-horizon tasks (both splits) minus the train-split ones in `exclude`."""
  from rl.tasks.long_horizon import LongSettings, bug_identity, generate_long
  from rl.tasks.long_horizon.source import long_settings

  experiment = long_settings(config)
  settings = LongSettings(**{**vars(experiment), "num_tasks": num_tasks, "seed": 1000 + seed, "stable_runs": 1})
  result = generate_long(workdir / "generated_long", settings, log=lambda s: print(s, flush=True))
  root = workdir / "corpus_long"
  kept, excluded = _copy_corpus(result.tasks, root, exclude, bug_identity)
  info = {"family": "long", "generated": len(result.tasks), "excluded_experiment_bugs": excluded,
          "train": sum(t.split == "train" for t in kept), "heldout": sum(t.split == "heldout" for t in kept),
          "by_depth": result.info["by_depth"], "seed": settings.seed}
  return root, info


def build_mle_corpus(workdir: pathlib.Path, per_task: int, seed: int, config) -> tuple[pathlib.Path, dict]:
  """The MLE experiment's competitions (its training variants) and `per_task` valid programs of
  the grammar (rl/tasks/mle/programs.py) per task as single-turn demonstration records; the
  programs are drawn with another seed than the experiment's own SFT stage."""
  from rl import tokenizer as tokenizer_lib
  from rl.env import tools as tools_lib
  from rl.tasks import load_tasks
  from rl.tasks.mle import expert as mle_expert

  tasks = load_tasks(config, workdir / "mle_run").tasks(split=config.tasks.split)
  renderer = tools_lib.ChatRenderer.from_config(tokenizer_lib.load_tokenizer(config.model.hf_checkpoint or None), config)
  records = mle_expert.program_records(tasks, renderer, per_task=per_task, seed=1000 + seed, fault_prob=0.0)
  path = workdir / "mle_demonstrations.jsonl"
  path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
  info = {"family": "mle", "tasks": len(tasks), "programs": len(records), "seed": 1000 + seed,
          "distinct_programs": len({r["steps"][0]["text"] for r in records})}
  return path, info


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--out", required=True, help="the Hugging Face directory to write")
  parser.add_argument("--workdir", required=True, help="scratch: task roots, the SFT run")
  parser.add_argument("--steps", type=int, default=3000, help="SFT steps on the corpus")
  # The committed bases were built at 2e-3, the default experiment's SFT rate of that time; the
  # default's own warm start is now gentler (configs/default.py), the base's is not.
  parser.add_argument("--lr", type=float, default=2e-3, help="peak SFT learning rate (cosine schedule)")
  parser.add_argument("--renames", type=int, default=3, help="renamed spellings of each bug")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--keep-default-bugs", action="store_true",
                      help="do not drop the default experiment's training bugs from the corpus")
  parser.add_argument("--library", default="",
                      help="synthetic library (core | families | all); default: the default experiment's")
  parser.add_argument("--num", type=int, default=0,
                      help="tasks to generate (default: every easy bug the library has; --family long: 400); "
                           "--family mle: programs per competition (default 300)")
  parser.add_argument("--family", choices=("easy", "long", "mle"), default="easy",
                      help="easy: the default's easy bugs; long: the long-horizon call chains; "
                           "mle: the MLE competitions' solution programs")
  parser.add_argument("--init-from", default="",
                      help="weights to start from (default: scratch; --family long: rl/assets/tiny_base)")
  args = parser.parse_args(argv)
  if args.steps <= 0 or args.renames < 0 or args.lr <= 0 or args.num < 0:
    parser.error("--steps and --lr must be positive, --renames and --num >= 0")

  from flax import nnx
  from configs import default
  from rl import models as model_lib
  from rl.train import trainer as trainer_lib

  start = time.monotonic()
  workdir = pathlib.Path(args.workdir)
  workdir.mkdir(parents=True, exist_ok=True)
  if args.family == "mle":
    from configs.experiments import mle
    base_config = mle.get_config()
    root, corpus = build_mle_corpus(workdir, args.num or 300, args.seed, base_config)
  elif args.family == "long":
    from configs.experiments import long_horizon
    base_config = long_horizon.get_config()
    exclude = set() if args.keep_default_bugs else long_experiment_bugs(workdir)
    root, corpus = build_long_corpus(workdir, args.num or 400, args.seed, exclude, base_config)
  else:
    base_config = default.get_config()
    exclude = set() if args.keep_default_bugs else default_training_bugs(workdir)
    library = args.library or default.get_config().tasks.synthetic_library
    root, corpus = build_corpus(workdir, args.renames, args.seed, exclude, args.num or 100_000, library)
  print(f"corpus: {json.dumps(corpus)}", flush=True)

  c = base_config.unlock()
  c.seed = args.seed
  if args.family == "mle":  # the experiment's own tasks (held-out data variants for evaluation)
    c.sft.demonstrations = str(root)
    c.sft.batch_size = 16
  else:
    c.tasks.sources = ((f"dir:{root}", 1.0),)
    c.tasks.eval_sources = ()  # the corpus's own held-out split
  c.tasks.difficulty = ""
  c.tasks.max_eval_tasks = 32 if args.family == "long" else 0  # long episodes: a sample of the held-out split
  c.sft.steps = args.steps
  c.sft.lr = args.lr
  c.sft.demos_per_task = 1
  c.sft.expert_read_prob = 1.0  # the base learns to read before it edits
  c.sft.expert_give_up_prob = 0.0  # the base clones only solutions
  c.sft.keep_failed_demonstrations = False
  c.trainer.iterations = 0
  c.trainer.train_eval_samples = 0
  c.trainer.plots = False
  c.init_from = args.init_from or ("rl/assets/tiny_base" if args.family == "long" else "")
  c.lock()
  run_dir = workdir / "sft"
  if run_dir.exists():
    shutil.rmtree(run_dir)
  trainer = trainer_lib.Trainer(c, run_dir)
  summary = trainer.run()
  policy = nnx.merge(trainer.policy_graphdef, trainer.state.policy)
  out = pathlib.Path(args.out)
  if out.exists():
    shutil.rmtree(out)
  model_lib.save_hf_checkpoint(policy, out, tokenizer=trainer.tokenizer)  # a complete HF directory
  info = {
      "corpus": corpus, "sft_steps": args.steps, "sft_lr": c.sft.lr, "sft_batch_size": c.sft.batch_size,
      "sft_nll_first": summary.get("sft_nll_first"), "sft_nll_last": summary.get("sft_nll_last"),
      "demonstrations": summary.get("sft_demonstrations"),
      "heldout_pass@1_greedy": summary.get("heldout_pass@1_sft"),
      "model": {"hidden_size": c.model.hidden_size, "num_layers": c.model.num_layers,
                "intermediate_size": c.model.intermediate_size, "tiny": c.model.tiny},
      "wall_time_s": round(time.monotonic() - start, 1),
      "init_from": c.init_from,
      "command": "scripts/make_base.py " + " ".join(argv if argv is not None else sys.argv[1:]),
  }
  (out / "base.json").write_text(json.dumps(info, indent=2) + "\n")
  print(json.dumps(info, indent=2))
  return 0


if __name__ == "__main__":
  sys.exit(main())
