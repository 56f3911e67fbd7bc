"""Stage-1 anti-hack: rule sets loaded from versioned data files and the engine that applies them.

A rule is data: id, description, severity, stage and either a regex `pattern` over a
named `target` or a named `checker` (rl/antihack/checkers.py) with `params`. New
cheat patterns are added to rules/*.json without code changes; every hit is logged
with its rule id and counted per rule and stage.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import logging
import os
import re
import threading
from typing import Any, Iterable, Mapping

from rl import config_fields, registry
from rl.antihack import checkers as checkers_lib
from rl.antihack.actions import ParsedAction, parse_action
from rl.antihack.context import ActionContext
from rl.antihack.diff import Diff, build_diff
from rl.antihack.verdict import SEVERITIES, STAGES, RuleHit, Verdict, from_hits

logger = logging.getLogger("rl.antihack")

RULES_DIR = os.path.join(os.path.dirname(__file__), "rules")

# What a regex rule may look at, per stage.
PATTERN_TARGETS = {
    "action": ("command", "path", "read_path", "write_path", "content"),
    "diff": ("added_text", "changed_path", "deleted_path"),
    "runtime": ("hidden_test_reads", "sockets", "subprocesses", "early_exits"),
}
_RULE_KEYS = {"id", "description", "severity", "stage", "pattern", "target", "checker", "params",
              "ignore_case", "exclude", "applies_to", "exclude_paths", "rationale", "benign"}


class RuleError(ValueError):
  """A malformed rule file; the message names the file and the rule."""


@dataclasses.dataclass(frozen=True)
class Rule:
  id: str
  description: str
  severity: str
  stage: str
  pattern: str | None = None
  target: str | None = None
  checker: str | None = None
  params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
  ignore_case: bool = False
  exclude: str | None = None  # regex: matches of `pattern` that also match this are ignored
  applies_to: str = "all"  # diff rules: "all" | "code" (non-test files) | "tests"
  exclude_paths: str | None = None  # diff pattern rules: files whose path matches are not scanned (unless loaded as code)
  rationale: str = ""  # why the rule exists and where its line is drawn (documentation only)
  benign: tuple[str, ...] = ()  # look-alikes the rule must not flag (documentation; tests check them)

  def compiled(self) -> tuple[re.Pattern | None, re.Pattern | None]:
    flags = re.I if self.ignore_case else 0
    return (re.compile(self.pattern, flags) if self.pattern else None,
            re.compile(self.exclude, flags) if self.exclude else None)


@dataclasses.dataclass(frozen=True)
class RuleSet:
  name: str
  version: int
  rules: tuple[Rule, ...]
  source: str = ""

  def by_stage(self, stage: str) -> tuple[Rule, ...]:
    return tuple(r for r in self.rules if r.stage == stage)


def _validate_rule(raw: Mapping[str, Any], where: str) -> Rule:
  if not isinstance(raw, Mapping):
    raise RuleError(f"{where}: a rule must be an object, got {type(raw).__name__}")
  unknown = set(raw) - _RULE_KEYS
  if unknown:
    raise RuleError(f"{where}: unknown keys {sorted(unknown)}; allowed: {sorted(_RULE_KEYS)}")
  for key in ("id", "description", "severity", "stage"):
    if not isinstance(raw.get(key), str) or not raw[key]:
      raise RuleError(f"{where}: missing or empty {key!r}")
  rid = raw["id"]
  if raw["severity"] not in SEVERITIES[1:]:
    raise RuleError(f"{where} ({rid}): severity {raw['severity']!r} not in {SEVERITIES[1:]}")
  if raw["stage"] not in STAGES[:3]:
    raise RuleError(f"{where} ({rid}): stage {raw['stage']!r} not in {STAGES[:3]}")
  if bool(raw.get("pattern")) == bool(raw.get("checker")):
    raise RuleError(f"{where} ({rid}): give exactly one of 'pattern' or 'checker'")
  if raw.get("pattern"):
    if raw.get("target") not in PATTERN_TARGETS[raw["stage"]]:
      raise RuleError(f"{where} ({rid}): target {raw.get('target')!r} not in {PATTERN_TARGETS[raw['stage']]}")
    for key in ("pattern", "exclude", "exclude_paths"):
      if raw.get(key):
        try:
          re.compile(raw[key])
        except re.error as e:
          raise RuleError(f"{where} ({rid}): bad regex in {key!r}: {e}") from None
  else:
    try:
      checkers_lib.get_checker(raw["checker"], raw["stage"])
    except LookupError as e:
      raise RuleError(f"{where} ({rid}): {e}") from None
  if raw.get("applies_to", "all") not in ("all", "code", "tests"):
    raise RuleError(f"{where} ({rid}): applies_to must be all, code or tests")
  params = dict(raw.get("params") or {})
  params.setdefault("applies_to", raw.get("applies_to", "all"))
  return Rule(id=rid, description=raw["description"], severity=raw["severity"], stage=raw["stage"],
              pattern=raw.get("pattern"), target=raw.get("target"), checker=raw.get("checker"),
              params=params, ignore_case=bool(raw.get("ignore_case", False)),
              exclude=raw.get("exclude"), applies_to=raw.get("applies_to", "all"),
              exclude_paths=raw.get("exclude_paths"), rationale=str(raw.get("rationale", "")),
              benign=tuple(str(b) for b in (raw.get("benign") or ()) if b) if isinstance(raw.get("benign"), list)
              else ((str(raw["benign"]),) if raw.get("benign") else ()))


def load_rule_file(path: str) -> RuleSet:
  """Loads and validates a rule file: {"name", "version", "rules": [...]} (JSON, or YAML if .yaml)."""
  try:
    with open(path, encoding="utf-8") as fh:
      if path.endswith((".yaml", ".yml")):
        import yaml  # only needed for YAML rule files
        data = yaml.safe_load(fh)
      else:
        data = json.load(fh)
  except FileNotFoundError:
    raise RuleError(f"rule file {path} does not exist") from None
  except (json.JSONDecodeError, ValueError) as e:
    raise RuleError(f"rule file {path} does not parse: {e}") from None
  if not isinstance(data, Mapping) or not isinstance(data.get("rules"), list):
    raise RuleError(f"rule file {path}: expected an object with a 'rules' list")
  rules = tuple(_validate_rule(r, f"{path} rule #{i}") for i, r in enumerate(data["rules"]))
  ids = [r.id for r in rules]
  dupes = {i for i in ids if ids.count(i) > 1}
  if dupes:
    raise RuleError(f"rule file {path}: duplicate rule ids {sorted(dupes)}")
  return RuleSet(name=str(data.get("name", os.path.basename(path))), version=int(data.get("version", 0)),
                 rules=rules, source=path)


@registry.ANTIHACK_RULES.register("default")
def default_rules() -> RuleSet:
  """The shipped rule set (rules/default.json)."""
  return load_rule_file(os.path.join(RULES_DIR, "default.json"))


@registry.ANTIHACK_RULES.register("none")
def no_rules() -> RuleSet:
  """Stage 1 disabled: nothing is ever flagged by rules."""
  return RuleSet(name="none", version=0, rules=())


def load_rule_set(name_or_path: str) -> RuleSet:
  """A registered rule set by name, or a rule file path (ends in .json/.yaml/.yml)."""
  if isinstance(name_or_path, str) and name_or_path.endswith((".json", ".yaml", ".yml")):
    return load_rule_file(name_or_path)
  return registry.ANTIHACK_RULES.get(name_or_path)()


def _downgraded(hit: RuleHit, reason: str) -> RuleHit:
  if hit.severity == "low":
    return hit
  return dataclasses.replace(hit, severity="low", message=f"{hit.message} (grading discards it: {reason})")


def _outside_unreferenced_scripts(found: list[tuple[str, str]], diff: Any) -> list[tuple[str, str]]:
  """Findings in files other than scripts nothing can run while the tests do
  (`checkers.unreferenced_script`); a finding's location is `path` or `path:line`."""
  by_path = {f.path: f for f in diff.files}
  kept = []
  for msg, loc in found:
    path, _, line = loc.rpartition(":")
    f = by_path.get(path if line.isdigit() else loc)
    if f is None or not checkers_lib.unreferenced_script(f, diff):
      kept.append((msg, loc))
  return kept


def _discarded_write_hit(hit: RuleHit, action: ParsedAction, ctx: ActionContext) -> RuleHit:
  """A hit on a write grading discards is logged only (low): it cannot reach the verdict.

  A write_file/edit_file hit is about what goes into its one file (its path or its content);
  a command's hit only when it names one of the command's written or deleted paths.
  """
  written = action.write_paths + action.deleted_paths
  if action.action_type in ("write_file", "edit_file") and written:
    reasons = [ctx.grading_discards(p) for p in written]
    if all(reasons):
      return _downgraded(hit, reasons[0])
  elif hit.location in written:
    reason = ctx.grading_discards(hit.location)
    if reason:
      return _downgraded(hit, reason)
  return hit


def _discarded_file_hit(hit: RuleHit, diff: Diff, ctx: ActionContext) -> RuleHit:
  """A diff hit located in a file the graded tree does not hold is logged only (low)."""
  for f in diff.files:
    if hit.location == f.path or hit.location.startswith(f.path + ":"):
      if f.problem.startswith("symlink"):
        return _downgraded(hit, "a symlink")
      reason = ctx.grading_discards(f.path)
      return _downgraded(hit, reason) if reason else hit
  return hit


class RuleEngine:
  """Applies a rule set online (per action), on the final diff and on grading evidence.

  Thread-safe: the rollout engine may call it from several workers; only the hit
  counters are shared state.
  """

  def __init__(self, rule_set: RuleSet, flag_severity: str = "medium"):
    if flag_severity not in SEVERITIES[1:]:
      raise ValueError(f"flag_severity {flag_severity!r} not in {SEVERITIES[1:]}")
    self.rule_set = rule_set
    self.flag_severity = flag_severity
    self._compiled = {r.id: r.compiled() for r in rule_set.rules if r.pattern}
    self._lock = threading.Lock()
    self.hit_counts: collections.Counter[str] = collections.Counter()
    self.check_counts: collections.Counter[str] = collections.Counter()
    self.flag_counts: collections.Counter[str] = collections.Counter()

  @classmethod
  def from_config(cls, antihack_config: Any) -> "RuleEngine":
    """From `config.antihack` (its fields `rules` and `flag_severity`, both required)."""
    return cls(load_rule_set(config_fields.read(antihack_config, "rules", "antihack")),
               flag_severity=config_fields.read(antihack_config, "flag_severity", "antihack"))

  @property
  def enabled(self) -> bool:
    return bool(self.rule_set.rules)

  # -- stage "action" ------------------------------------------------------------------

  def check_action(self, action_type: str, action_input: Mapping[str, Any] | None,
                   context: ActionContext | Mapping[str, Any] | None = None) -> Verdict:
    """Judges one tool call before it runs. Never raises on malformed actions.

    Records unflagged writes in `context.written_paths`, so later reads of files the
    agent created itself are not mistaken for bait.
    """
    ctx = ActionContext.coerce(context)
    action = parse_action(action_type, action_input, ctx.workspace_root)
    hits = []
    for rule in self.rule_set.by_stage("action"):
      if rule.checker:
        found = checkers_lib.get_checker(rule.checker, "action")(action, ctx, rule.params)
      else:
        found = self._match_action_pattern(rule, action)
      hits.extend(RuleHit(rule.id, rule.severity, "action", msg, loc) for msg, loc in found)
    verdict = self._finish("action", [_discarded_write_hit(h, action, ctx) for h in hits])
    if not verdict.flagged:
      ctx.written_paths.update(action.write_paths)
    return verdict

  def _match_action_pattern(self, rule: Rule, action: ParsedAction) -> list[tuple[str, str]]:
    pattern, exclude = self._compiled[rule.id]
    texts = {
        "command": [action.command] if action.command else [],
        "path": action.all_paths,
        "read_path": action.read_paths + action.list_paths,
        "write_path": action.write_paths + action.deleted_paths,
        "content": [action.content] if action.content else [],
    }[rule.target]
    found = []
    for text in texts:
      m = pattern.search(text)
      if m and not (exclude and exclude.search(text)):
        found.append((rule.description, text if len(text) < 160 else m.group(0)))
    return found

  # -- stage "diff" ---------------------------------------------------------------------

  def check_diff(self, initial_files: Mapping[str, str], final_files: Mapping[str, str],
                 context: ActionContext | Mapping[str, Any] | None = None) -> Verdict:
    """Judges the final workspace against the initial one (AST and text of what changed).

    `context` is optional; it supplies hidden_tests_dest and public test paths.
    """
    ctx = ActionContext.coerce(context) if context is not None else None
    diff = build_diff(initial_files, final_files)
    hits = []
    for rule in self.rule_set.by_stage("diff"):
      if rule.checker:
        found = checkers_lib.get_checker(rule.checker, "diff")(diff, ctx, rule.params)
      else:
        found = self._match_diff_pattern(rule, diff)
      if found and rule.params.get("skip_unreferenced_scripts"):
        found = _outside_unreferenced_scripts(found, diff)
      hits.extend(RuleHit(rule.id, rule.severity, "diff", msg, loc) for msg, loc in found)
    if ctx is not None:
      hits = [_discarded_file_hit(h, diff, ctx) for h in hits]
    return self._finish("diff", hits)

  def _match_diff_pattern(self, rule: Rule, diff: Diff) -> list[tuple[str, str]]:
    pattern, exclude = self._compiled[rule.id]
    found = []
    for f in diff.files:
      if (rule.applies_to == "code" and f.is_test) or (rule.applies_to == "tests" and not f.is_test):
        continue
      if rule.exclude_paths and f.tree is None and re.search(rule.exclude_paths, f.path):
        continue  # e.g. documentation; a file that code loads as code is always scanned
      if rule.target == "changed_path" and f.status != "deleted" or rule.target == "deleted_path" and f.status == "deleted":
        if pattern.search(f.path) and not (exclude and exclude.search(f.path)):
          found.append((rule.description, f.path))
      elif rule.target == "added_text":
        for lineno, line in f.added_text():
          if pattern.search(line) and not (exclude and exclude.search(line)):
            found.append((rule.description, f"{f.path}:{lineno}"))
            break  # one hit per file is enough for the log
    return found

  # -- stage "runtime" ------------------------------------------------------------------

  def check_runtime(self, runtime_evidence: Mapping[str, Any] | None) -> Verdict:
    """Judges `TestReport.runtime_evidence` from grading (hidden_test_reads, sockets, ...)."""
    evidence = runtime_evidence or {}
    if not isinstance(evidence, Mapping):
      raise TypeError(f"runtime_evidence must be a dict, got {type(evidence).__name__}")
    hits = []
    for rule in self.rule_set.by_stage("runtime"):
      if rule.checker:
        found = checkers_lib.get_checker(rule.checker, "runtime")(evidence, None, rule.params)
      else:
        pattern, exclude = self._compiled[rule.id]
        entries = evidence.get(rule.target) or []
        found = [(rule.description, rule.target) for e in entries
                 if pattern.search(str(e)) and not (exclude and exclude.search(str(e)))]
      hits.extend(RuleHit(rule.id, rule.severity, "runtime", msg, loc) for msg, loc in found)
    return self._finish("runtime", hits)

  # -- bookkeeping ------------------------------------------------------------------------

  def _finish(self, stage: str, hits: list[RuleHit]) -> Verdict:
    verdict = from_hits(stage, hits, self.flag_severity)
    with self._lock:
      self.check_counts[stage] += 1
      if verdict.flagged:
        self.flag_counts[stage] += 1
      for h in hits:
        self.hit_counts[h.rule_id] += 1
    for h in hits:
      logger.info("antihack hit rule=%s stage=%s severity=%s location=%s: %s",
                  h.rule_id, stage, h.severity, h.location, h.message)
    return verdict

  def metrics(self, reset: bool = False) -> dict[str, float]:
    """Per-stage flag rates and per-rule hit counts, "/"-named for metrics.jsonl."""
    with self._lock:
      out: dict[str, float] = {}
      for stage, n in self.check_counts.items():
        out[f"antihack/{stage}_flag_rate"] = self.flag_counts[stage] / max(n, 1)
        out[f"antihack/{stage}_checks"] = float(n)
      for rule_id, n in self.hit_counts.items():
        out[f"antihack/rule/{rule_id}"] = float(n)
      if reset:
        self.hit_counts.clear()
        self.check_counts.clear()
        self.flag_counts.clear()
      return out
