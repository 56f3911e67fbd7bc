"""Process-0 metric writer: JSONL always, TensorBoard and Weights & Biases when enabled.

Every row of `metrics.jsonl` is one iteration: `step`, `time_s` (seconds since the
writer started, cumulative across resumes) and "/"-named scalars.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Mapping

import numpy as np


def _to_float(value) -> float | None:
  try:
    f = float(np.asarray(value))
  except (TypeError, ValueError):
    return None
  return f if math.isfinite(f) else None


class MetricWriter:
  """`write_scalars(step, {"train/reward_mean": ...})`: writes on process 0 only, and returns the
  row on every process (what the checkpoint of the iteration is kept by)."""

  def __init__(self, workdir: str | Path, *, tensorboard: bool = True, wandb: bool = False,
               config: dict | None = None, process_index: int = 0, time_offset_s: float = 0.0):
    self.workdir = Path(workdir)
    self.enabled = process_index == 0
    self._start = time.time() - time_offset_s
    self._tb = self._wandb = None
    if not self.enabled:
      return
    self.path = self.workdir / "metrics.jsonl"
    if tensorboard:
      try:
        from tensorboardX import SummaryWriter

        self._tb = SummaryWriter(str(self.workdir / "tensorboard"))
      except ImportError:
        self._tb = None
    if wandb:
      try:
        import wandb as wandb_lib

        self._wandb = wandb_lib.init(dir=str(self.workdir), config=config or {}, resume="allow")
      except ImportError:
        print("metrics: wandb requested but not installed; continuing with JSONL/TensorBoard")

  def elapsed_s(self) -> float:
    return time.time() - self._start

  def truncate_after(self, step: int) -> None:
    """Drops rows past `step` (a resumed run rewrites what the crashed one logged later), and
    a last row cut short by a killed process; the file is replaced atomically."""
    if not self.enabled or not self.path.exists():
      return
    text = self.path.read_text()
    lines = text.splitlines()
    if lines and not text.endswith("\n"):
      try:
        json.loads(lines[-1])
      except json.JSONDecodeError:
        lines.pop()  # the write a kill interrupted
    rows = [line for line in lines if line.strip() and json.loads(line)["step"] <= step]
    tmp = self.path.with_name(self.path.name + ".tmp")
    tmp.write_text("".join(r + "\n" for r in rows))
    os.replace(tmp, self.path)

  def write_scalars(self, step: int, scalars: Mapping[str, object]) -> dict:
    row = {"step": int(step), "time_s": round(self.elapsed_s(), 3)}
    for key, value in sorted(scalars.items()):
      f = _to_float(value)
      if f is not None:
        row[key] = f
    if not self.enabled:
      return row
    with self.path.open("a") as fh:
      fh.write(json.dumps(row) + "\n")
    if self._tb is not None:
      for key, value in row.items():
        if key != "step":
          self._tb.add_scalar(key, value, step)
      self._tb.flush()
    if self._wandb is not None:
      self._wandb.log(row, step=step)
    return row

  def close(self) -> None:
    if self._tb is not None:
      self._tb.close()
    if self._wandb is not None:
      self._wandb.finish()


def read_metrics(workdir: str | Path) -> list[dict]:
  path = Path(workdir) / "metrics.jsonl"
  if not path.exists():
    return []
  return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
