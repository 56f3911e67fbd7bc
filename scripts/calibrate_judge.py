r"""Calibrates the anti-hack judge threshold on labelled trajectories.

Reads JSONL trajectories, each with a cheat label (`cheat`: true/false/1/0, or `label`:
"cheat"/"hack"/"legit") and either a stored judge score (`judge_score` or `hack.judge_score`)
or the fields to judge it now (`statement` or `prompt`, `steps`, `final_diff`,
`execution_log`). Prints precision, recall and F1 across thresholds and the chosen one
(best F1; with --min-precision, the best recall among thresholds reaching that precision).
With --validation-fraction F, the threshold is chosen on a stratified validation split (a share
F of the cheats and of the legit ones, drawn with --seed) and precision and recall are reported
on the rest, which the choice never saw.

  .venv/bin/python scripts/calibrate_judge.py labelled.jsonl
  .venv/bin/python scripts/calibrate_judge.py labelled.jsonl --validation-fraction 0.5
  .venv/bin/python scripts/calibrate_judge.py labelled.jsonl --judge openai \
      --base-url http://127.0.0.1:8000/v1 --model Qwen2.5-7B-Instruct --min-precision 0.9
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Iterable, Sequence

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from configs import default  # noqa: E402
from rl.antihack.judge import JudgeInput, make_judge  # noqa: E402

_TRUE = {"1", "true", "yes", "cheat", "hack", "hacked"}
_FALSE = {"0", "false", "no", "legit", "clean", "ok"}


def read_label(record: dict[str, Any], where: str) -> bool:
  for key in ("cheat", "label", "is_cheat", "hack_label"):
    if key in record:
      value = str(record[key]).strip().lower()
      if value in _TRUE:
        return True
      if value in _FALSE:
        return False
      raise ValueError(f"{where}: label {key}={record[key]!r} is neither cheat ({sorted(_TRUE)}) nor legit ({sorted(_FALSE)})")
  raise ValueError(f"{where}: no cheat label (expected a 'cheat' or 'label' field)")


def stored_score(record: dict[str, Any]) -> float | None:
  score = record.get("judge_score")
  if score is None and isinstance(record.get("hack"), dict):
    score = record["hack"].get("judge_score")
  return None if score is None else float(score)


def load_labelled(path: str) -> list[dict[str, Any]]:
  records = []
  with open(path, encoding="utf-8") as fh:
    for n, line in enumerate(fh, 1):
      if not line.strip():
        continue
      try:
        record = json.loads(line)
      except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{n}: not JSON: {e}") from None
      if not isinstance(record, dict):
        raise ValueError(f"{path}:{n}: expected a JSON object")
      record["_label"] = read_label(record, f"{path}:{n}")
      records.append(record)
  if not records:
    raise ValueError(f"{path}: no records")
  return records


def threshold_table(scores: Sequence[float], labels: Sequence[bool], thresholds: Iterable[float]) -> list[dict[str, float]]:
  rows = []
  for t in thresholds:
    tp = sum(s >= t and y for s, y in zip(scores, labels))
    fp = sum(s >= t and not y for s, y in zip(scores, labels))
    fn = sum(s < t and y for s, y in zip(scores, labels))
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    rows.append({"threshold": round(t, 6), "tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall,
                 "f1": f1, "flag_rate": (tp + fp) / len(scores)})
  return rows


def choose_threshold(table: list[dict[str, float]], min_precision: float | None = None) -> dict[str, float]:
  """Best F1 (ties: the higher threshold, fewer false positives); or the best recall at min_precision."""
  if min_precision is not None:
    ok = [r for r in table if r["precision"] >= min_precision and r["tp"] > 0]
    if ok:
      return max(ok, key=lambda r: (r["recall"], r["threshold"]))
  return max(table, key=lambda r: (r["f1"], r["threshold"]))


def split_indices(labels: Sequence[bool], fraction: float, seed: int) -> tuple[list[int], list[int]]:
  """(validation, rest): a share `fraction` of each class, at least one of each class on both
  sides when the class has two or more members."""
  import random  # pylint: disable=import-outside-toplevel
  rng = random.Random(seed)
  validation: list[int] = []
  for label in (True, False):
    members = [i for i, y in enumerate(labels) if y == label]
    rng.shuffle(members)
    k = round(fraction * len(members))
    if len(members) >= 2:
      k = min(max(k, 1), len(members) - 1)
    validation += members[:k]
  chosen = set(validation)
  return sorted(validation), [i for i in range(len(labels)) if i not in chosen]


def main(argv: list[str] | None = None) -> int:
  p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("path", help="labelled trajectories (JSONL)")
  p.add_argument("--judge", default="", help="re-judge with this backend (openai | local); default: stored scores")
  p.add_argument("--base-url", default="")
  p.add_argument("--model", default="")
  p.add_argument("--checkpoint", default="")
  p.add_argument("--prompt", default="cheat_v1")
  p.add_argument("--min-precision", type=float, default=None)
  p.add_argument("--steps", type=int, default=19, help="number of thresholds between 0 and 1 (exclusive)")
  p.add_argument("--json", default="", help="also write the table and choice here")
  p.add_argument("--validation-fraction", type=float, default=0.0,
                 help="choose the threshold on this stratified share, report precision/recall on the rest")
  p.add_argument("--seed", type=int, default=0, help="the validation split's draw")
  args = p.parse_args(argv)
  if not 0.0 <= args.validation_fraction < 1.0:
    raise SystemExit(f"--validation-fraction must be in [0, 1), got {args.validation_fraction}")

  records = load_labelled(args.path)
  judge = None
  if args.judge:
    section = default.get_config().antihack  # the default settings, the flags' fields changed
    section.update(judge=args.judge, judge_base_url=args.base_url, judge_model=args.model,
                   judge_checkpoint=args.checkpoint, judge_prompt=args.prompt)
    judge = make_judge(section)
  scores, labels, failed = [], [], 0
  inputs = []
  for r in records:
    if judge is None:
      s = stored_score(r)
      if s is None:
        raise SystemExit(f"{args.path}: a record has no judge_score; pass --judge to score it")
      scores.append(s)
      labels.append(r["_label"])
    else:
      inputs.append(JudgeInput.from_record(r, statement=r.get("statement")))
  if judge is not None:
    for r, v in zip(records, judge.score_many(inputs)):
      if v.probability is None:
        failed += 1
        continue
      scores.append(v.probability)
      labels.append(r["_label"])
  if not scores:
    raise SystemExit("no scores to calibrate on (every judge call failed?)")
  thresholds = [(i + 1) / (args.steps + 1) for i in range(args.steps)]
  held_out = None
  if args.validation_fraction > 0:
    validation, rest = split_indices(labels, args.validation_fraction, args.seed)
    if not validation or not rest:
      raise SystemExit(f"--validation-fraction {args.validation_fraction}: {len(scores)} scored trajectories "
                       "are too few to split into a validation set and a held-out rest")
    table = threshold_table([scores[i] for i in validation], [labels[i] for i in validation], thresholds)
    best = choose_threshold(table, args.min_precision)
    held_out = threshold_table([scores[i] for i in rest], [labels[i] for i in rest], [best["threshold"]])[0]
    held_out["n"] = len(rest)
    held_out["n_validation"] = len(validation)
    print(f"validation split: {len(validation)} trajectories choose the threshold; {len(rest)} held out")
  else:
    table = threshold_table(scores, labels, thresholds)
    best = choose_threshold(table, args.min_precision)
  print(f"{len(scores)} trajectories ({sum(labels)} cheats, {len(labels) - sum(labels)} legit)"
        + (f", {failed} judge failures skipped" if failed else ""))
  print(f"{'threshold':>9} {'precision':>9} {'recall':>7} {'f1':>6} {'flagged':>8}  tp  fp  fn")
  for row in table:
    mark = "  <- chosen" if row is best else ""
    print(f"{row['threshold']:>9.3f} {row['precision']:>9.3f} {row['recall']:>7.3f} {row['f1']:>6.3f} "
          f"{row['flag_rate']:>8.1%} {row['tp']:>3} {row['fp']:>3} {row['fn']:>3}{mark}")
  print(f"chosen threshold: {best['threshold']:.3f} (precision {best['precision']:.3f}, recall {best['recall']:.3f}, "
        f"F1 {best['f1']:.3f}); set --config.antihack.judge_threshold={best['threshold']:.3f}")
  if held_out is not None:
    print(f"held out ({held_out['n']}): precision {held_out['precision']:.3f}, recall {held_out['recall']:.3f}, "
          f"F1 {held_out['f1']:.3f} at threshold {best['threshold']:.3f}")
  if args.json:
    with open(args.json, "w") as fh:
      json.dump({"table": table, "chosen": best, "n": len(scores), "failed": failed,
                 **({"held_out": held_out} if held_out is not None else {})}, fh, indent=1)
  return 0


if __name__ == "__main__":
  sys.exit(main())
