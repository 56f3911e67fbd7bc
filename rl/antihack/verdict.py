"""Anti-hack verdicts: what a rule stage or the judge decided about one action or episode.

A `Verdict` is the unit every stage returns and the trajectory log stores; `combine`
folds the verdicts of several stages into the episode's single `hack` record.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

# Ordered from harmless to certain. Hits at or above the engine's flag severity
# (default "medium") flag the verdict; lower ones are only logged.
SEVERITIES = ("none", "low", "medium", "high")
STAGES = ("action", "diff", "runtime", "judge", "oracle")


def severity_rank(severity: str) -> int:
  try:
    return SEVERITIES.index(severity)
  except ValueError:
    raise ValueError(f"unknown severity {severity!r}; known: {', '.join(SEVERITIES)}") from None


@dataclasses.dataclass(frozen=True)
class RuleHit:
  """One rule that matched: which rule, how bad, and where."""

  rule_id: str
  severity: str
  stage: str
  message: str
  location: str = ""  # a path, "path:line", or the command that matched

  def to_dict(self) -> dict[str, Any]:
    return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Verdict:
  """The decision of one stage.

  flagged: True when the action or episode is judged a cheat.
  stage: "action" | "diff" | "runtime" | "judge" ("" for an empty verdict).
  rules: ids of every rule that matched, flagging or not, in match order.
  severity: the highest severity among the hits ("none" when nothing matched).
  reason: a short human-readable explanation (the first flagging hit, or the judge's reason).
  hits: the individual matches, for the log.
  score: the judge's cheat probability (None for rule stages).
  """

  flagged: bool = False
  stage: str = ""
  rules: tuple[str, ...] = ()
  severity: str = "none"
  reason: str = ""
  hits: tuple[RuleHit, ...] = ()
  score: float | None = None
  flagging_rules: tuple[str, ...] = ()  # the rules whose hits caused the flag

  def __bool__(self) -> bool:
    return self.flagged

  def to_dict(self) -> dict[str, Any]:
    return {
        "flagged": self.flagged,
        "stage": self.stage,
        "rules": list(self.rules),
        "severity": self.severity,
        "reason": self.reason,
        "score": self.score,
        "flagging_rules": list(self.flagging_rules),
        "hits": [h.to_dict() for h in self.hits],
    }

  @classmethod
  def from_dict(cls, d: dict[str, Any]) -> "Verdict":
    return cls(flagged=bool(d.get("flagged", False)), stage=d.get("stage", ""),
               rules=tuple(d.get("rules", ())), severity=d.get("severity", "none"),
               reason=d.get("reason", ""), score=d.get("score"),
               hits=tuple(RuleHit(**h) for h in d.get("hits", ())),
               flagging_rules=tuple(d.get("flagging_rules", ())))


def from_hits(stage: str, hits: Iterable[RuleHit], flag_severity: str = "medium") -> Verdict:
  """Builds a stage verdict from its hits; flagged when any hit reaches `flag_severity`."""
  hits = tuple(hits)
  if not hits:
    return Verdict(stage=stage)
  threshold = severity_rank(flag_severity)
  top = max(hits, key=lambda h: severity_rank(h.severity))
  flagging = [h for h in hits if severity_rank(h.severity) >= threshold]
  first = flagging[0] if flagging else top
  return Verdict(
      flagged=bool(flagging),
      stage=stage,
      rules=tuple(dict.fromkeys(h.rule_id for h in hits)),
      severity=top.severity,
      reason=f"[{first.rule_id}] {first.message}" + (f" ({first.location})" if first.location else ""),
      hits=hits,
      flagging_rules=tuple(dict.fromkeys(h.rule_id for h in flagging)),
  )


def combine(verdicts: Iterable[Verdict | None]) -> Verdict:
  """Folds stage verdicts into one: flagged if any is, stage/reason of the first flagged one.

  The judge score (if any) is carried over so the trajectory's `hack.judge_score` is set
  even when the judge did not flag.
  """
  verdicts = [v for v in verdicts if v is not None]
  if not verdicts:
    return Verdict()
  flagged = [v for v in verdicts if v.flagged]
  lead = flagged[0] if flagged else max(verdicts, key=lambda v: severity_rank(v.severity))
  score = next((v.score for v in verdicts if v.score is not None), None)
  return Verdict(
      flagged=bool(flagged),
      stage=lead.stage if flagged else "",
      rules=tuple(dict.fromkeys(r for v in verdicts for r in v.rules)),
      severity=max((v.severity for v in verdicts), key=severity_rank),
      reason=lead.reason if flagged else "",
      hits=tuple(h for v in verdicts for h in v.hits),
      score=score,
      flagging_rules=tuple(dict.fromkeys(r for v in flagged for r in (v.flagging_rules or v.rules))),
  )


def hack_record(verdict: Verdict) -> dict[str, Any]:
  """The trajectory record's episode-level `hack` field (ARCHITECTURE.md)."""
  return {
      "flagged": verdict.flagged,
      "stage": verdict.stage,
      "rules": list(verdict.flagging_rules if verdict.flagged else verdict.rules),
      "judge_score": verdict.score,
      "reason": verdict.reason,
  }
