r"""Generates verified synthetic bug-fix tasks (mutants of a bundled function library).

  .venv/bin/python scripts/make_tasks.py synthetic --out tasks/synthetic --num 300 --seed 0
  # long-horizon call chains (rl/tasks/long_horizon): the bug k calls below the tested function
  .venv/bin/python scripts/make_tasks.py long --out tasks/long --num 40 --seed 0 --min-depth 1 --max-depth 12

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
  parser.add_argument("kind", choices=["synthetic", "long"])
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
  parser.add_argument("--min-depth", type=int, default=1, help="long: the shallowest chain (calls to the bug)")
  parser.add_argument("--max-depth", type=int, default=12, help="long: the deepest chain")
  parser.add_argument("--split", default="", choices=("", "train", "heldout"), help="long: only one split")
  args = parser.parse_args(argv)
  start = time.monotonic()
  log = (lambda s: None) if args.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
  if args.kind == "long":
    from rl.tasks.long_horizon import LongSettings, generate_long  # pylint: disable=import-outside-toplevel
    try:
      settings = LongSettings(num_tasks=args.num, seed=args.seed, min_depth=args.min_depth, max_depth=args.max_depth,
                              heldout_fraction=args.heldout_fraction, split=args.split)
    except ValueError as e:
      parser.error(str(e))
    result = generate_long(args.out, settings, grader="subprocess" if args.no_sandbox else "sandbox",
                           workers=args.workers, log=log)
    print(json.dumps(dict(result.info, wall_time_s=round(time.monotonic() - start, 2))))
    return 0
  weights = parse_tier_weights(args.tiers)
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
