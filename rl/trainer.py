"""The training loop: rollouts -> grading -> advantages -> jitted PPO updates.

`run(config, workdir)` is what `train.py` calls. The loop body lives in
`Trainer`; the math it calls is in rl.advantages, rl.losses and rl.update.
"""

from __future__ import annotations

import json
from pathlib import Path

import ml_collections

from rl import config as config_lib


class WorkdirError(RuntimeError):
  """The run directory belongs to a different config."""


def prepare_workdir(config: ml_collections.ConfigDict, workdir: str | Path) -> Path:
  """Creates the run directory and writes the resolved config.

  A directory that already holds a *different* config is refused unless
  `config.override_workdir` is set, so a resumed run never silently mixes two
  experiments.
  """
  workdir = Path(workdir)
  workdir.mkdir(parents=True, exist_ok=True)
  path = workdir / "config.json"
  resolved = json.loads(config_lib.to_json(config))
  if path.exists():
    previous = json.loads(path.read_text())
    ignore = {"override_workdir", "trainer"}
    differing = sorted(k for k in set(previous) | set(resolved)
                       if k not in ignore and previous.get(k) != resolved.get(k))
    if differing and not config.override_workdir:
      raise WorkdirError(
          f"{workdir} holds a run with a different config (sections {differing} differ); "
          "use another --workdir or pass --config.override_workdir=true")
  path.write_text(json.dumps(resolved, indent=2, sort_keys=True) + "\n")
  return workdir


def run(config: ml_collections.ConfigDict, workdir: str | Path) -> None:
  import jax

  config_lib.validate(config, num_devices=jax.device_count())
  workdir = prepare_workdir(config, workdir)
  print(f"config written to {workdir / 'config.json'}")
