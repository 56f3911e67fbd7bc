r"""Generates the offline MLE-style competitions with their reference leaderboards.

  .venv/bin/python scripts/make_mle_tasks.py --out runs/mle_tasks
  .venv/bin/python scripts/make_mle_tasks.py --out runs/mle_tasks --variants 3 --demos runs/mle_tasks/demos.jsonl

Writes one task directory per competition and variant (ARCHITECTURE.md format, grader
`mle`), runs the constant, linear and gradient-boosting reference solutions on the host
and prints the leaderboard. `--demos` also writes SFT demonstrations (reference answers).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from rl.tasks.mle import build  # noqa: E402
from rl.tasks.mle.competitions import COMPETITIONS  # noqa: E402


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  parser.add_argument("--out", required=True, help="task root to write (existing tasks are replaced)")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--variants", type=int, default=1, help="data variants per competition")
  parser.add_argument("--competitions", default=",".join(COMPETITIONS),
                      help=f"comma-separated subset of: {', '.join(COMPETITIONS)}")
  parser.add_argument("--no-references", action="store_true", help="skip the reference leaderboard")
  parser.add_argument("--jobs", type=int, default=2, help="reference solutions run in parallel")
  parser.add_argument("--demos", default="", help="also write SFT demonstrations (JSONL) here")
  args = parser.parse_args(argv)
  names = [n.strip() for n in args.competitions.split(",") if n.strip()]
  unknown = sorted(set(names) - set(COMPETITIONS))
  if unknown:
    parser.error(f"unknown competition(s) {unknown}; known: {', '.join(COMPETITIONS)}")
  if args.variants < 1:
    parser.error("--variants must be >= 1")
  start = time.monotonic()
  dirs = build.make_mle_tasks(args.out, seed=args.seed, variants=args.variants, competitions=names,
                              run_references=not args.no_references, jobs=args.jobs)
  print(f"wrote {len(dirs)} tasks to {args.out} in {time.monotonic() - start:.1f}s")
  if not args.no_references:
    print(f"\n| task | metric | {' | '.join(build.references.REFERENCE_NAMES)} |")
    print("|---|---|" + "---|" * len(build.references.REFERENCE_NAMES))
    failed = 0
    for d in dirs:
      board = json.loads((d / build.LEADERBOARD_FILE).read_text())
      by_name = {e["name"]: e for e in board["entries"]}
      cells = []
      for name in build.references.REFERENCE_NAMES:
        e = by_name[name]
        failed += not e["valid"]
        cells.append(f"{e['score']:.4f} ({e['runtime_s']:.1f}s)" if e["valid"] else f"INVALID: {e['error'][:60]}")
      arrow = "higher" if board["higher_is_better"] else "lower"
      print(f"| {d.name} | {board['metric']} ({arrow} is better) | {' | '.join(cells)} |")
    if failed:
      print(f"{failed} reference solution(s) failed", file=sys.stderr)
      return 1
  if args.demos:
    records = build.demonstration_records(dirs)
    path = pathlib.Path(args.demos)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    print(f"wrote {len(records)} demonstrations to {path}")
  return 0


if __name__ == "__main__":
  raise SystemExit(main())
