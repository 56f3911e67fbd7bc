r"""Writes PNG plots of a run directory: reward/success curves, lengths, cheat rate.

  .venv/bin/python scripts/plot.py runs/default            # -> runs/default/plots/*.png

The trainer draws the same plots at the end of a run (rl/train/plots.py); this redraws them, for
instance while a run is still going.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rl.train.plots import plot_run  # noqa: E402


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("workdir", type=Path)
  args = parser.parse_args()
  try:
    paths = plot_run(args.workdir)
  except FileNotFoundError as e:
    raise SystemExit(str(e)) from None
  for path in paths:
    print(path)


if __name__ == "__main__":
  main()
