"""Anti-hack stage 1 (rules) and the response to detected cheats; stage 2 lives in rl.antihack.judge.

    engine = RuleEngine.from_config(config.antihack)
    verdict = engine.check_action("read_file", {"path": "tests/test_x.py"}, ActionContext.from_task(task))
    if verdict.flagged:
      response = respond(verdict, action_type, action_input, policy=config.antihack.response)
    engine.check_diff(initial_files, final_files, context)      # after the episode
    engine.check_runtime(report.runtime_evidence)               # after grading

See docs/antihack.md for the rule file format and the full contract.
"""

from rl.antihack.actions import ACTION_TYPES, ParsedAction, parse_action
from rl.antihack.context import ActionContext, is_test_file, normalize_path
from rl.antihack.engine import (RULES_DIR, Rule, RuleEngine, RuleError, RuleSet, default_rules, load_rule_file,
                                load_rule_set, no_rules)
from rl.antihack.metrics import metrics_from_records
from rl.antihack.response import RESPONSES, CheatResponse, fake_observation, respond
from rl.antihack.verdict import SEVERITIES, STAGES, RuleHit, Verdict, combine, hack_record

__all__ = [
    "ACTION_TYPES", "ActionContext", "CheatResponse", "ParsedAction", "RESPONSES", "RULES_DIR", "Rule",
    "RuleEngine", "RuleError", "RuleHit", "RuleSet", "SEVERITIES", "STAGES", "Verdict", "combine",
    "default_rules", "fake_observation", "hack_record", "is_test_file", "load_rule_file", "load_rule_set",
    "metrics_from_records",
    "no_rules", "normalize_path", "parse_action", "respond",
]
