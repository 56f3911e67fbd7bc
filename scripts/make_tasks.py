r"""Generates verified synthetic bug-fix tasks (mutants of a bundled function library).

  .venv/bin/python scripts/make_tasks.py synthetic --out tasks/synthetic --num 300 --seed 0

Every kept task was run: its hidden tests fail on the buggy repo and pass after the
reference fix. Verification runs in the sandbox; --no-sandbox runs the (bundled, trusted)
code in plain subprocesses instead. Prints a JSON summary (counts by split and tier, time).
"""

import argparse
import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from rl.tasks.synthetic.generator import generate, parse_tier_weights  # noqa: E402


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("kind", choices=["synthetic"])
  parser.add_argument("--out", required=True, help="task root to (re)write")
  parser.add_argument("--num", type=int, default=300, help="number of verified tasks to keep")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--heldout-fraction", type=float, default=0.2, help="share of functions held out")
  parser.add_argument("--renames", type=int, default=0,
                      help="renamed variants of each bug (other variable and module names) right after it")
  parser.add_argument("--tiers", default="easy=0.5,medium=0.3,hard=0.2", help="tier weights")
  parser.add_argument("--library", default="core", choices=("core", "families", "all"),
                      help="functions to plant bugs in: the bundled library, the function families, or both")
  parser.add_argument("--workers", type=int, default=2)
  parser.add_argument("--no-sandbox", action="store_true",
                      help="verify in plain subprocesses (no isolation; the code is the bundled library)")
  parser.add_argument("--quiet", action="store_true")
  args = parser.parse_args(argv)
  weights = parse_tier_weights(args.tiers)
  start = time.monotonic()
  result = generate(args.out, num_tasks=args.num, seed=args.seed, grader="subprocess" if args.no_sandbox else "sandbox",
                    workers=args.workers, heldout_fraction=args.heldout_fraction, tier_weights=weights,
                    renames=args.renames, library=args.library,
                    log=(lambda s: None) if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True)))
  info = dict(result.info)
  info["wall_time_s"] = round(time.monotonic() - start, 2)
  print(json.dumps(info))
  return 0 if len(result.tasks) >= args.num else 1


if __name__ == "__main__":
  sys.exit(main())
