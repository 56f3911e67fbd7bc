"""The scripted expert's plan for MLE tasks: write a solution program, run it, submit.

`rl.env.actors.ScriptedExpert` follows this plan for tasks whose metadata names it
(`expert_plan: "mle_program"`, written by rl.tasks.mle.build.write_task). Each episode draws one
program from the grammar of rl.tasks.mle.programs (seeded by the expert's seed, the task and the
episode): mostly valid, a `program_fault_prob` share faulty (a wrong column name, a fit on the
test features, a missing submission column, a wrong submission file name). These episodes are the
MLE experiment's SFT demonstrations; the faulty ones fail their task and are cloned only with
`sft.keep_failed_demonstrations`.

An improve-previous prompt (rl.train.self_improve, `prompt_origin == "improve_previous"`) is
answered with a revision of the previous program: a failed one becomes the valid program of the
same draw when the expert wrote it (the fix), else a fresh valid draw; a valid one gets one
hyperparameter of its model changed to another value of the grammar's (or, with none to change,
another model). These are the SFT demonstrations for the self-improvement feature
(`sft.improve_demos_per_task`).

Multi-turn episodes: optionally a listing (`explore_prob`) and a look at the data's first lines
(`read_prob`), then `write_file solution.py`, `run python solution.py` and `submit`. With
`mistake_prob`, a faulty program's episode recovers: after the failing run it rewrites the valid
program of the same draw and runs it again (the episode then solves its task). Single-turn
episodes (`agent.mode = "single_turn"`, configs/experiments/mle.py) answer with the program in
a fenced code block.
"""

from __future__ import annotations

import re
import random
from typing import Any, Sequence

from rl.env.actors import tool_call_text
from rl.registry import EXPERT_PLANS
from rl.tasks.mle import programs

EXPERT_PLAN = "mle_program"

_LOOK = ("Let me see the files.", "First, what is in the workspace.", "")
_PEEK = ("Let me look at the data's first rows.", "Checking the columns.", "")
_WRITE = ("I'll write a {model} baseline.", "Writing the solution program ({model}).",
          "A {model} model on {features} features.", "")
_RUN = ("Running it.", "Let me run the program.", "Checking that it writes the submission.", "")
_FIX = ("The program failed; fixing it.", "That did not work. Rewriting the program.", "")
_SUBMIT = ("The submission is written; submitting.", "Done.", "")
_ANSWER = ("Here is the solution program.", "A {model} model on {features} features:", "")



_IMPROVE_FIX = ("The previous program failed ({error}); writing the working version.",
                "It crashed with {error}. Fixing it.", "")
_IMPROVE_TUNE = ("It ran (score {score}). Changing {name} from {old} to {new}.",
                 "Trying {name}={new} instead of {old}.", "")
_IMPROVE_SWITCH = ("It ran (score {score}). Trying a {model} model instead.", "")
# Hyperparameter values of the grammar's models (rl/tasks/mle/programs.py), the ones a revision
# may switch between.
_TUNABLE = {"C": ("0.3", "1.0", "2.0", "4.0", "10.0"), "alpha": ("0.1", "0.3", "1.0", "10.0", "50.0"),
            "n_estimators": ("40", "80", "120"), "max_depth": ("None", "8", "16"),
            "min_samples_leaf": ("1", "3", "5"), "learning_rate": ("0.05", "0.1", "0.2"),
            "max_leaf_nodes": ("15", "31"), "n_neighbors": ("5", "10", "20", "25", "50")}
_PREVIOUS = re.compile(r"## Previous solution \(score ([^,)]+)[^\n]*\n\n```python\n(.*?)\n```", re.S)
_INVALID_BELOW = -5.0  # the mle reward of an invalid submission is -10 (plus 0.1 per stage reached)


def _competition(task: Any) -> str:
  competition = task.metadata.get("competition")
  if competition not in programs.COMPETITIONS:
    raise ValueError(f"task {task.id!r}: the mle_program plan needs metadata['competition'] in "
                     f"{list(programs.COMPETITIONS)}, got {competition!r}")
  return competition


def draw_program(expert: Any, request: Any, rng: random.Random) -> tuple[programs.Program, programs.Program]:
  """(the program the episode writes first, its valid version): the same when not faulty.

  The expert remembers each draw by its source, so that an improve-previous prompt showing one
  of its faulty programs is answered with that program's fix."""
  competition = _competition(request.task)
  seed = rng.getrandbits(31)
  valid = programs.sample_program(competition, seed)
  fault_prob = float(getattr(expert, "program_fault_prob", 0.0) or 0.0)
  first = valid
  if fault_prob and rng.random() < fault_prob:
    first = programs.sample_program(competition, seed, fault="random")
  drawn = expert.__dict__.setdefault("_mle_draws", {})
  drawn[first.source.strip()] = valid
  return first, valid


def revise_program(expert: Any, request: Any, rng: random.Random) -> tuple[str, str]:
  """(the lead line, the revised program's source) for an improve-previous prompt."""
  competition = _competition(request.task)
  match = _PREVIOUS.search(request.task.statement)
  previous = match.group(2).strip() if match else ""
  try:
    score = float(match.group(1)) if match else float(request.task.parent_score)
  except (TypeError, ValueError):
    score = _INVALID_BELOW - 1
  if score < _INVALID_BELOW or not previous:
    known = expert.__dict__.get("_mle_draws", {}).get(previous)
    fixed = known or programs.sample_program(competition, rng.getrandbits(31))
    error = re.findall(r"\b(\w+(?:Error|Exception))\b", request.task.statement)
    return expert.say(rng, _IMPROVE_FIX, error=error[-1] if error else "an error"), fixed.source
  model_line = next((line for line in previous.splitlines() if line.startswith("model = ")), "")
  options = [(m.group(1), m.group(2)) for m in re.finditer(r"\b(\w+)=([\w.]+)", model_line)
             if m.group(1) in _TUNABLE and m.group(2) in _TUNABLE[m.group(1)]]
  if options:
    name, old = rng.choice(options)
    new = rng.choice([v for v in _TUNABLE[name] if v != old])
    revised_line = model_line.replace(f"{name}={old}", f"{name}={new}", 1)
    lead = expert.say(rng, _IMPROVE_TUNE, score=f"{score:.3g}", name=name, old=old, new=new)
    return lead, previous.replace(model_line, revised_line, 1) + "\n"
  other = programs.sample_program(competition, rng.getrandbits(31))
  return expert.say(rng, _IMPROVE_SWITCH, score=f"{score:.3g}", **_described(other)), other.source


def _described(program: programs.Program) -> dict[str, str]:
  return {"model": str(program.choices["model"]).replace("_", " "),
          "features": str(program.choices.get("features", "all")).split(" ")[0]}


@EXPERT_PLANS.register(EXPERT_PLAN)
def mle_program_plan(expert: Any, request: Any, rng: random.Random) -> list[str]:
  """The messages of one multi-turn episode on an MLE task."""
  first, valid = draw_program(expert, request, rng)
  solution = str(request.task.metadata.get("solution_file") or "solution.py")
  run_cmd = str(request.task.metadata.get("test_command") or f"python {solution}")
  optional: list[str] = []
  if rng.random() < expert.explore_prob:
    optional.append(expert.say(rng, _LOOK) + tool_call_text("list_files", {"path": "."}))
  if rng.random() < expert.read_prob:
    optional.append(expert.say(rng, _PEEK) + tool_call_text(
        "run", {"command": "head -n 3 train.csv sample_submission.csv"}))
  write = expert.say(rng, _WRITE, **_described(first)) + tool_call_text(
      "write_file", {"path": solution, "content": first.source})
  run = expert.say(rng, _RUN) + tool_call_text("run", {"command": run_cmd})
  recovery: list[str] = []
  if first.fault is not None and expert.mistake_prob and rng.random() < expert.mistake_prob:
    recovery = [expert.say(rng, _FIX) + tool_call_text("write_file", {"path": solution, "content": valid.source}),
                expert.say(rng, _RUN) + tool_call_text("run", {"command": run_cmd})]
  submit = expert.say(rng, _SUBMIT) + tool_call_text("submit", {})
  core = [write, run] + recovery
  # Fit the turn limit: optional looks first, then the recovery, then the run go.
  room = request.turns_left - 1
  while len(optional) + len(core) > room and optional:
    optional.pop()
  while len(core) > room and len(core) > 1:  # the write stays (a cut episode is still graded)
    core.pop()
  return optional + core + [submit]


def answer_text(program: programs.Program, lead: str = "") -> str:
  """A single-turn answer: `lead` (a line or "") and the program in a fenced code block."""
  code = program.source if program.source.endswith("\n") else program.source + "\n"
  return f"{lead}```python\n{code}```"


def single_turn_answer(expert: Any, request: Any, rng: random.Random) -> str:
  """A single-turn episode's answer: the drawn program in a fenced code block, or for an
  improve-previous prompt the revised previous program."""
  if getattr(request.task, "prompt_origin", "") == "improve_previous":
    lead, source = revise_program(expert, request, rng)
    code = source if source.endswith("\n") else source + "\n"
    return f"{lead}```python\n{code}```"
  first, _ = draw_program(expert, request, rng)
  return answer_text(first, expert.say(rng, _ANSWER, **_described(first)))


def program_records(tasks: Sequence[Any], renderer: Any, *, per_task: int, seed: int = 0,
                    fault_prob: float = 0.0, thought_prob: float = 0.5) -> list[dict[str, Any]]:
  """`per_task` single-turn demonstrations per task as trajectory records (ARCHITECTURE.md's
  format, for `sft.demonstrations` / rl.env.episode.episodes_from_records), without running them.

  The grammar's programs are valid or faulty by construction (tests/test_mle_programs.py runs
  them), so a large SFT corpus needs no sandbox time: `success` is the program's validity, and
  the faulty ones (a `fault_prob` share) are records that SFT leaves out unless told otherwise.
  The prompt is the single-turn opening as `renderer` renders it for the policy.
  """
  from rl.env import tools as tools_lib  # pylint: disable=import-outside-toplevel

  if per_task < 0 or not 0.0 <= fault_prob <= 1.0:
    raise ValueError(f"program_records: per_task must be >= 0 and fault_prob in [0, 1], got {per_task}, {fault_prob}")
  rng = random.Random(seed)
  records = []
  for task in tasks:
    competition = task.metadata.get("competition")
    if competition not in programs.COMPETITIONS:
      raise ValueError(f"task {task.id!r}: not an MLE competition task (metadata['competition'] = {competition!r})")
    prompt = renderer.render(tools_lib.initial_messages(task, "single_turn"), generation_prompt=True)
    for _ in range(per_task):
      draw = rng.getrandbits(31)
      program = programs.sample_program(competition, draw, fault="random" if rng.random() < fault_prob else None)
      lead = rng.choice(_ANSWER).format(**_described(program)) + "\n" if rng.random() < thought_prob else ""
      text = answer_text(program, lead.lstrip("\n"))
      records.append({
          "task_id": task.id, "task_version": task.version, "base_hash": "", "prompt": prompt, "mode": "single_turn",
          "model": {"checkpoint": f"grammar:{competition}:{draw}", "step": 0},
          "sampling": {"temperature": 1.0, "top_p": 1.0},
          "steps": [{"step": 0, "text": text, "action_type": "answer", "action_input": {}, "observation": "",
                     "thought": "", "reward": 0.0, "timestamp": 0.0, "duration_s": 0.0,
                     "tokens": {"action": 0, "observation": 0},
                     "hack": {"flagged": False, "stage": None, "rules": [], "response": None}}],
          "final_reward": 0.0, "success": program.valid, "terminated": "submit", "duration_s": 0.0,
          "tests": {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "total": 0},
          "hack": {"flagged": False, "stage": None, "rules": [], "judge_score": None, "reason": ""},
          "program": {"fault": program.fault, "choices": program.choices}})
  return records


mle_program_plan.single_turn_answer = single_turn_answer  # type: ignore[attr-defined]
