"""The scripted expert's plan for long-horizon tasks: read down the call chain, fix, submit.

`rl.env.actors.ScriptedExpert` follows this plan for tasks whose metadata names it
(`expert_plan: "call_chain"`). The expert reads what a solver needs, in order: the failing test
when the statement names only the test file, then each module of the chain from the entry down
to the buggy function, editing a file right after reading it when it holds a bug; sometimes it
reads more (a listing, a distractor module on the way, the public tests before and after). So a
successful demonstration has depth + 3 to depth + 8 turns, set by the task and varied by chance.

The expert's settings (`ScriptedExpert`) mean here: `explore_prob` the chance of a listing first
and, per step down the chain, a quarter of it for a detour through a distractor module;
`run_prob` the chance of running the public tests before (always when the statement names only
the test) and after the fix; `thought_prob` the chance of a short thought before a call;
`minimal_edits` the shortest unique `old` strings; `give_up_prob` the share of episodes that
stop reading at a point drawn uniformly along the chain (or, with `give_up_within` n > 0, after
1 to n reads) and submit without a fix (an imperfect demonstrator whose failures are short). `mistake_prob` and `write_prob` are not used.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any, Sequence

from rl.env.actors import minimal_edit, tool_call_text
from rl.registry import EXPERT_PLANS
from rl.tasks.long_horizon.generator import EXPERT_PLAN, PUBLIC_TEST_COMMAND, PUBLIC_TEST_FILE

DETOUR_SHARE = 0.25  # of explore_prob, per step down the chain

_LOOK = ("Let me see the files first.", "Listing the modules.", "")
_RUN_BEFORE = ("Running the tests to see what fails.", "Let me run the public tests.", "")
_READ_TEST = ("The failing test is in {path}; reading it.", "Let me read the test.", "")
_READ_ENTRY = ("Reading {path}, where {function} is.", "Let me open {path}.", "")
_READ_FROM_TEST = ("The test calls {function}; reading {path}.", "{function} is in {path}.", "")
_READ_NEXT = ("{caller} calls {function}; reading {path}.", "Following the call into {path}.",
              "Next: {function} in {path}.", "")
_DETOUR = ("Checking {path} too.", "Maybe {path} matters; reading it.", "")
_EDIT = ("The bug is in {function}; fixing it.", "Found it in {function}.", "Fixing this line.", "")
_RUN_AFTER = ("Running the tests again.", "Let me check the fix.", "")
_SUBMIT = ("Fixed; submitting.", "Done.", "")
_GIVE_UP = ("I cannot find the bug; submitting.", "Giving up here.", "")



def _edits(expert: Any, task: Any, path: str, fixes: Sequence[dict[str, str]]) -> list[dict[str, str]]:
  """edit_file arguments for the fixes of one file, the shortest unique ones with minimal_edits."""
  if not expert.minimal_edits:
    return [{"path": path, "old": f["old"], "new": f["new"]} for f in fixes]
  current = (Path(task.repo_dir) / path).read_text(encoding="utf-8")
  out = []
  for f in fixes:
    old, new = minimal_edit(current, f["old"], f["new"])
    current = current.replace(old, new, 1)
    out.append({"path": path, "old": old, "new": new})
  return out


@EXPERT_PLANS.register(EXPERT_PLAN)
def call_chain_plan(expert: Any, request: Any, rng: random.Random) -> list[str]:
  """The messages of one episode on a long-horizon task (generator.build_task's metadata)."""
  task = request.task
  meta = task.metadata
  chain = meta.get("chain")
  if not isinstance(chain, list) or not chain:
    raise ValueError(f"task {task.id!r}: metadata['chain'] is missing; the call_chain plan needs it")
  fixes: dict[str, list[dict[str, str]]] = {}
  for f in expert.fixes(task):
    fixes.setdefault(f["path"], []).append(f)
  distractors = list(meta.get("distractors") or [])
  test_cmd = str(meta.get("public_test_command") or PUBLIC_TEST_COMMAND)
  from_test = meta.get("statement_style") == "tests"
  steps: list[tuple[str, bool]] = []  # (message, required)
  if rng.random() < expert.explore_prob:
    steps.append((expert.say(rng, _LOOK) + tool_call_text("list_files", {"path": "."}), False))
  if rng.random() < expert.run_prob * (1.0 if from_test else 0.6):
    steps.append((expert.say(rng, _RUN_BEFORE) + tool_call_text("run", {"command": test_cmd}), False))
  reads = ([{"path": PUBLIC_TEST_FILE, "function": ""}] if from_test else []) + chain
  # A give-up stops before one of the reads (never after the bottom one: it would have fixed it).
  # With give_up_within n > 0 it stops after 1 to n reads: it looked, then gave up early.
  within = int(getattr(expert, "give_up_within", 0) or 0)
  give_up_at = -1
  if expert.give_up_prob and rng.random() < expert.give_up_prob:
    give_up_at = (rng.randint(1, min(within, len(reads) - 1)) if within > 0 and len(reads) > 1
                  else rng.randrange(len(reads)))
  for i, step in enumerate(reads):
    if i == give_up_at:
      steps.append((expert.say(rng, _GIVE_UP) + tool_call_text("submit", {}), True))
      return _fit(steps, request.turns_left)
    if i > 0 and distractors and rng.random() < expert.explore_prob * DETOUR_SHARE:
      detour = rng.choice(distractors)
      steps.append((expert.say(rng, _DETOUR, path=detour) + tool_call_text("read_file", {"path": detour}), False))
    path, function = step["path"], step["function"]
    if path == PUBLIC_TEST_FILE:
      options, fmt = _READ_TEST, {"path": path}
    elif i == 0:
      options, fmt = _READ_ENTRY, {"path": path, "function": function}
    elif reads[i - 1]["path"] == PUBLIC_TEST_FILE:
      options, fmt = _READ_FROM_TEST, {"path": path, "function": function}
    else:
      options, fmt = _READ_NEXT, {"path": path, "function": function, "caller": reads[i - 1]["function"]}
    steps.append((expert.say(rng, options, **fmt) + tool_call_text("read_file", {"path": path}), True))
    for edit in _edits(expert, task, path, fixes.get(path, [])):
      steps.append((expert.say(rng, _EDIT, function=function) + tool_call_text("edit_file", edit), True))
  if rng.random() < expert.run_prob:
    steps.append((expert.say(rng, _RUN_AFTER) + tool_call_text("run", {"command": test_cmd}), False))
  steps.append((expert.say(rng, _SUBMIT) + tool_call_text("submit", {}), True))
  return _fit(steps, request.turns_left)


def _fit(steps: list[tuple[str, bool]], turns: int) -> list[str]:
  """Drops optional steps, the latest first, until the plan fits `turns`; a chain deeper than the
  turn limit allows is cut before its submit (the episode then fails, as any agent's would)."""
  steps = list(steps)
  while len(steps) > turns and any(not required for _, required in steps):
    last_optional = max(i for i, (_, required) in enumerate(steps) if not required)
    del steps[last_optional]
  messages = [m for m, _ in steps]
  if len(messages) > turns:
    messages = messages[:max(turns - 1, 0)] + [messages[-1]]
  return messages
