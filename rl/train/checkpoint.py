"""Whole-experiment checkpoints: device state through orbax, host state as JSON.

Layout under `<workdir>/checkpoints/`:
  last/<step>/   keep-last-N: `state` (params, optimizer states, step, rng) + `host` (JSON)
  best/<step>/   the best checkpoint by the configured eval metric (higher is better)

Resume order (documented in README): the run's own latest checkpoint, then
`config.init_from` (weights only: an HF directory or another run's workdir), then
scratch. Saves are synchronous: killing the process between saves loses at most
the iterations since the last save, never a half-written checkpoint (orbax
finalises a step directory atomically). A kill during a save leaves
`<step>.orbax-checkpoint-tmp`, which orbax never lists as a step and removes when that
step is saved again (tests/test_trainer.py kills a run there through rl.killpoints).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jax
import orbax.checkpoint as ocp

from rl import killpoints


def _temporary_path_class(root: Path) -> type | None:
  """orbax's own choice (None) unless RLCODER_KILL_AT names the "checkpoint" point: then that
  same class, with the commit of a save first reaching the kill point (rl.killpoints), so the
  process dies with every file written to the temporary step directory and nothing committed."""
  if (killpoints.armed() or ("",))[0] != "checkpoint":
    return None
  base = ocp.path.atomicity_defaults.get_default_temporary_path_class(root)

  class KilledBeforeCommit(base):
    async def finalize(self, *args, **kwargs):
      name = self.get_final().name  # a step directory, or an item's ("state", "host") inside it
      if name.isdigit():
        killpoints.reach("checkpoint", int(name))
      return await super().finalize(*args, **kwargs)

  return KilledBeforeCommit


class Checkpointer:
  """Saves and restores `(state_pytree, host_state_dict)` pairs by step."""

  def __init__(self, workdir: str | Path, *, keep: int = 2, best_metric: str | None = "eval/pass@1"):
    root = Path(workdir).absolute() / "checkpoints"
    temporary = _temporary_path_class(root)
    self._last = ocp.CheckpointManager(
        root / "last", options=ocp.CheckpointManagerOptions(max_to_keep=max(1, keep), create=True,
                                                            temporary_path_class=temporary),
        item_names=("state", "host"))
    self.best_metric = best_metric
    self._best = None
    if best_metric:
      self._best = ocp.CheckpointManager(
          root / "best",
          options=ocp.CheckpointManagerOptions(
              max_to_keep=1, create=True, best_fn=lambda m: m[best_metric], best_mode="max",
              keep_checkpoints_without_metrics=False, temporary_path_class=temporary),
          item_names=("state", "host"))

  def latest_step(self) -> int | None:
    return self._last.latest_step()

  def save(self, step: int, state: Any, host: dict, metrics: dict | None = None) -> None:
    args = ocp.args.Composite(state=ocp.args.StandardSave(state), host=ocp.args.JsonSave(host))
    self._last.save(step, args=args, force=True)
    self._last.wait_until_finished()
    if self._best is not None and metrics and self.best_metric in metrics:
      self._best.save(step, args=args, metrics={self.best_metric: float(metrics[self.best_metric])}, force=True)
      self._best.wait_until_finished()

  def restore(self, abstract_state: Any, step: int | None = None, *, best: bool = False,
              partial: bool = False) -> tuple[Any, dict, int]:
    """Restores onto the shardings/dtypes of `abstract_state` (arrays or ShapeDtypeStructs).

    `partial=True` restores only the subtree that `abstract_state` names (nested dicts keyed
    like the saved state), e.g. the weights without optimiser states of another optimiser.
    """
    manager = self._best if best else self._last
    if manager is None:
      raise FileNotFoundError("no best-checkpoint manager configured")
    step = manager.best_step() if best else (manager.latest_step() if step is None else step)
    if step is None:
      raise FileNotFoundError(f"no checkpoint under {manager.directory}")
    target = jax.tree.map(ocp.utils.to_shape_dtype_struct, abstract_state)
    if not partial:
      restored = manager.restore(step, args=ocp.args.Composite(
          state=ocp.args.StandardRestore(target), host=ocp.args.JsonRestore()))
      return restored["state"], dict(restored["host"]), step
    # A manager that saved in this process has the standard handler bound to "state"; a
    # fresh one takes the PyTree handler, the one that restores a subtree.
    reader = ocp.CheckpointManager(manager.directory)
    try:
      restored = reader.restore(step, args=ocp.args.Composite(
          state=ocp.args.PyTreeRestore(target, partial_restore=True,
                                       restore_args=ocp.checkpoint_utils.construct_restore_args(target)),
          host=ocp.args.JsonRestore()))
    finally:
      reader.close()
    return restored["state"], dict(restored["host"]), step

  def close(self) -> None:
    self._last.close()
    if self._best is not None:
      self._best.close()
