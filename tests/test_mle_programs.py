"""The grammar of MLE solution programs (rl.tasks.mle.programs) and the MLE expert plan.

Programs run in the sandbox runtime (.venv/sandbox/bin/python, as the grader's sandbox does):
valid ones produce valid submissions with different scores, each faulty variant fails at its
stage, and the expert's messages are well-formed tool calls (or single-turn answers).
"""

from __future__ import annotations

import pathlib
import shutil

import pytest

from rl import registry
from rl.env import actors
from rl.env import instrumentation as instr
from rl.env import tools as tools_lib
from rl.tasks import load_task
from rl.tasks.mle import expert as mle_expert
from rl.tasks.mle import make_mle_tasks, programs, runner
from sandbox.runtime_env import runtime_python
from test_mle import SubprocessSession

PER_COMPETITION = 20  # valid programs run per competition (seeds 0..19)
FAULT_SEEDS = (0, 1)  # seeds of the faulty variants run per competition and fault


@pytest.fixture(scope="module")
def task_root(tmp_path_factory) -> pathlib.Path:
  root = tmp_path_factory.mktemp("mle_program_tasks")
  make_mle_tasks(root, seed=0, variants=1, run_references=False)
  return root


def test_programs_are_deterministic_and_the_grammar_varies():
  for competition in programs.COMPETITIONS:
    a = programs.sample_program(competition, 11)
    assert a == programs.sample_program(competition, 11)
    assert programs.sample_program(competition, 11, fault="wrong_file") == programs.sample_program(
        competition, 11, fault="wrong_file")
    drawn = [programs.sample_program(competition, s) for s in range(60)]
    assert len({p.source for p in drawn}) >= 55
    models = {p.choices["model"] for p in drawn}
    assert {"constant", "random_forest", "gradient_boosting", "knn"} <= models, models
    assert {True, False} == {p.choices["validation"] for p in drawn}
    assert len({p.choices["writer"] for p in drawn}) >= 2
    for p in drawn:
      assert p.valid and p.fault_line is None and p.submission_file == "submission.csv"
      compile(p.source, "solution.py", "exec")
      imported = {line.split()[1].split(".")[0] for line in p.source.splitlines()
                  if line.startswith(("import ", "from "))}
      assert imported <= {"numpy", "pandas", "sklearn"}, imported  # sandbox/requirements.txt only
  with pytest.raises(ValueError, match="known faults"):
    programs.sample_program("tabular-churn", 0, fault="typo")
  with pytest.raises(ValueError, match="no program grammar"):
    programs.sample_program("no-such-competition", 0)
  faulty = programs.sample_programs("insult-detection", 40, fault_prob=0.5)
  assert 10 <= sum(not p.valid for p in faulty) <= 30
  assert len({p.fault for p in faulty if p.fault}) >= 3


@pytest.mark.parametrize("competition", programs.COMPETITIONS)
def test_valid_programs_write_valid_submissions_with_different_scores(task_root, competition):
  drawn = programs.sample_programs(competition, PER_COMPETITION, seed=0)
  results = programs.run_on_host(task_root / f"mle-{competition}", drawn)
  for p, r in zip(drawn, results):
    assert r["exception"] is None, (r, p.source)
    assert r["valid"], (r["error"], p.source)
  scores = [round(r["score"], 10) for r in results]
  # Constant baselines may tie (every constant has ROC-AUC 0.5); the rest differ.
  assert len(set(scores)) >= 0.75 * len(scores), scores
  assert max(scores) - min(scores) > 0.01, scores


@pytest.mark.parametrize("competition", programs.COMPETITIONS)
def test_faulty_variants_fail_at_their_stage(task_root, competition):
  drawn = [programs.sample_program(competition, s, fault=f) for s in FAULT_SEEDS for f in programs.FAULTS]
  results = programs.run_on_host(task_root / f"mle-{competition}", drawn)
  for p, r in zip(drawn, results):
    assert not r["valid"], (p.fault, p.source)
    lines = p.source.splitlines()
    if p.stage == "load":  # a wrong column right after loading
      assert r["exception"] == "KeyError" and r["line"] == p.fault_line, (r, p.source)
      assert "train[" in lines[p.fault_line - 1]
      assert "read_csv" in lines[p.fault_line - 2] or "targets = " in lines[p.fault_line - 2]
      assert "submission.csv" not in r["files"]
    elif p.stage == "fit":  # fitted on the test rows
      assert r["exception"] == "ValueError" and r["line"] == p.fault_line, (r, p.source)
      assert lines[p.fault_line - 1].strip().startswith("model.fit(x_test, ")
      assert "submission.csv" not in r["files"]
    elif p.stage == "submission":  # runs, but the submission misses a column
      assert r["exception"] is None and "submission.csv" in r["files"], r
      assert "lacks column" in r["error"], r["error"]
    else:  # runs, but writes another file
      assert p.stage == "write"
      assert r["exception"] is None and p.submission_file != "submission.csv", r
      assert p.submission_file in r["files"] and "submission.csv" not in r["files"], r
      assert "was not found" in r["error"]
    assert p.fault_line is None or p.stage in ("load", "fit")


class RuntimeSession(SubprocessSession):
  """test_mle's stand-in for sandbox.Session, running the sandbox runtime's python (trusted programs)."""

  python = runtime_python()


def test_instrumented_stages_through_the_grader_path(task_root, tmp_path):
  """Through rl.tasks.mle.runner (as the `mle` grader runs programs), instrumented by `ast`: a valid
  program reaches every stage; a wrong column stops before a model is defined; a bad fit stops
  before the model is trained."""
  task = load_task(task_root / "mle-tabular-churn")
  # A program that reads sample_submission.csv only to write its submission gets its
  # `loaded_data` marker after that late read (the `ast` instrumenter marks the last statement of
  # a block that loads data), so the check uses a program that builds its submission frame.
  seed = next(s for s in range(100) if programs.sample_program("tabular-churn", s).choices["writer"] == "frame")
  reached = {}
  for fault in (None, "wrong_column", "fit_shape"):
    p = programs.sample_program("tabular-churn", seed, fault=fault)
    ws = tmp_path / f"ws-{fault}"
    shutil.copytree(task.repo_dir, ws)
    (ws / "solution.py").write_text(p.source)
    result = runner.run_and_grade(task, ws, instrumenter=instr.ASTInstrumenter(), session_factory=RuntimeSession)
    assert result.instrumentation["verified"]
    assert result.valid == (fault is None), result.grade.error
    reached[fault] = result.stages.stages
  assert reached[None][-1] == "wrote_submission" and "trained_model" in reached[None], reached
  assert "loaded_data" in reached["wrong_column"] and "defined_model" not in reached["wrong_column"], reached
  assert "defined_model" in reached["fit_shape"] and "trained_model" not in reached["fit_shape"], reached


# --- the expert plan ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def renderer():
  from rl.tokenizer import load_tokenizer  # pylint: disable=import-outside-toplevel
  return tools_lib.ChatRenderer(load_tokenizer(), tool_prompt="compact")


def _request(task, episode_id, *, mode="multi_turn", turns_left=8):
  return actors.ActRequest(episode_id=episode_id, task=task, new_tokens=[], context=[], messages=[], turn=0,
                           max_new_tokens=1024, turns_left=turns_left, mode=mode)


def _episode_messages(expert, task, episode_id, **kw):
  messages = []
  while True:
    text = expert.text_for(_request(task, episode_id, **kw))
    messages.append(text)
    if kw.get("mode") == "single_turn" or tools_lib.parse_action(text).type == "submit" or len(messages) > 12:
      expert.release([episode_id])  # the engine does this when an episode ends
      return messages


def test_mle_tasks_name_the_plan_and_it_is_registered(task_root):
  assert registry.EXPERT_PLANS.get("mle_program") is mle_expert.mle_program_plan
  for competition in programs.COMPETITIONS:
    assert load_task(task_root / f"mle-{competition}").metadata["expert_plan"] == "mle_program"


@pytest.mark.parametrize("fault_prob,mistake_prob", [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0)])
def test_expert_plan_writes_runs_and_submits_well_formed_calls(task_root, renderer, fault_prob, mistake_prob):
  expert = actors.ScriptedExpert(renderer, seed=3, explore_prob=0.5, thought_prob=0.5,
                                 program_fault_prob=fault_prob, mistake_prob=mistake_prob)
  for competition in programs.COMPETITIONS:
    task = load_task(task_root / f"mle-{competition}")
    written = set()
    for episode_id in range(4):
      messages = _episode_messages(expert, task, episode_id)
      actions = [tools_lib.parse_action(m) for m in messages]
      assert all(a.error is None for a in actions), [a.error for a in actions]
      assert all(a.type in tools_lib.TOOL_NAMES for a in actions)
      kinds = [a.type for a in actions]
      assert kinds[-1] == "submit"
      writes = [a.input for a in actions if a.type == "write_file"]
      runs = [a.input["command"] for a in actions if a.type == "run"]
      assert writes and all(w["path"] == "solution.py" for w in writes)
      assert "python solution.py" in runs
      program_runs = [i for i, a in enumerate(actions) if a.type == "run" and a.input["command"] == "python solution.py"]
      assert kinds.index("write_file") < program_runs[0]
      # the program is the grammar's draw for this episode, faulty exactly as configured
      first, valid = mle_expert.draw_program(expert, _request(task, episode_id), expert._rng(_request(task, episode_id)))  # pylint: disable=protected-access
      assert writes[0]["content"] == first.source
      assert (first.fault is not None) == (fault_prob == 1.0) and valid.valid
      written.add(first.source)
      if mistake_prob == 1.0:  # recovered: the valid program of the same draw is written and run last
        assert len(writes) == 2 and writes[1]["content"] == valid.source
        assert kinds[-3:] == ["write_file", "run", "submit"]
      else:
        assert len(writes) == 1 and kinds[-2:] == ["run", "submit"]
      # the same expert, task and episode give the same messages
      assert messages == _episode_messages(actors.ScriptedExpert(
          renderer, seed=3, explore_prob=0.5, thought_prob=0.5, program_fault_prob=fault_prob,
          mistake_prob=mistake_prob), task, episode_id)
    assert len(written) >= 3  # episodes draw different programs


def test_expert_plan_fits_the_turn_limit(task_root, renderer):
  expert = actors.ScriptedExpert(renderer, seed=0, explore_prob=1.0, read_prob=1.0)
  task = load_task(task_root / "mle-insult-detection")
  messages = _episode_messages(expert, task, 0, turns_left=3)
  assert [tools_lib.parse_action(m).type for m in messages] == ["write_file", "run", "submit"]


def test_single_turn_answers_are_programs(task_root, renderer):
  expert = actors.ScriptedExpert(renderer, seed=1, thought_prob=1.0, program_fault_prob=0.0)
  for competition in programs.COMPETITIONS:
    task = load_task(task_root / f"mle-{competition}")
    answers = [_episode_messages(expert, task, e, mode="single_turn")[0] for e in range(3)]
    for text in answers:
      action = tools_lib.parse_action(text, mode="single_turn")
      assert action.type == "answer" and action.error is None
      compile(action.input["code"], "solution.py", "exec")
      assert 'to_csv("submission.csv"' in action.input["code"]
    assert len(set(answers)) == 3


def test_single_turn_answers_fit_the_mle_experiments_turn_budget(task_root, renderer):
  from rl.config import load_config  # pylint: disable=import-outside-toplevel
  config = load_config("configs/experiments/mle.py")
  assert config.sft.enabled and not config.sft.demonstrations and config.agent.mode == "single_turn"
  expert = actors.ScriptedExpert(renderer, seed=0, thought_prob=1.0, program_fault_prob=0.5)
  for competition in programs.COMPETITIONS:
    task = load_task(task_root / f"mle-{competition}")
    prompt = renderer.encode("".join(m["content"] for m in tools_lib.initial_messages(task, "single_turn")))
    for episode_id in range(50):
      answer = _episode_messages(expert, task, episode_id, mode="single_turn")[0]
      tokens = len(renderer.encode(answer)) + 1  # + the stop token
      assert tokens <= config.agent.max_tokens_per_turn
      assert len(prompt) + tokens + 64 <= config.agent.max_tokens_per_trajectory  # 64: the chat template


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["multi_turn", "single_turn"])
def test_expert_episodes_in_the_sandbox_solve_unless_faulty(task_root, renderer, mode):
  """The expert's episodes through the rollout engine, the local sandbox and the `mle` grader (as
  the trainer makes its SFT demonstrations): valid programs solve their task, faulty ones fail,
  and a recovered faulty program (mistake_prob) solves it."""
  if not shutil.which("bwrap"):
    pytest.skip("bubblewrap is not installed")
  from rl.config import load_config  # pylint: disable=import-outside-toplevel
  from rl.env import rollout  # pylint: disable=import-outside-toplevel

  config = load_config("configs/experiments/mle.py").unlock()
  config.agent.mode = mode
  config.agent.max_turns = 6
  config.agent.max_tokens_per_turn = 1024
  config.agent.max_tokens_per_trajectory = 6144
  config.sampling.max_cache_len = 6144
  tasks = [load_task(task_root / f"mle-{c}") for c in ("tabular-churn", "materials-regression")]
  cases = [(0.0, 0.0, True), (1.0, 0.0, False)] + ([(1.0, 1.0, True)] if mode == "multi_turn" else [])
  for fault_prob, mistake_prob, solved in cases:
    expert = actors.ScriptedExpert(renderer, seed=2, explore_prob=0.5, program_fault_prob=fault_prob,
                                   mistake_prob=mistake_prob)
    episodes, _ = rollout.RolloutEngine(config, expert, renderer).run(tasks)
    for e in episodes:
      assert e.infra_failure is None, e.record.get("error")
      assert e.success == solved, (fault_prob, mistake_prob, e.record["mle"]["grade"], e.record["steps"][-1])
      assert e.record["terminated"] == "submit"
      assert e.record["mle"]["stages"]["stages"], e.record["mle"]  # instrumented (`ast`)


def test_program_records_are_single_turn_demonstrations_without_a_sandbox(task_root):
  """expert.program_records: valid trajectory records whose prompt is the single-turn opening the
  policy sees and whose answer is a grammar program in a fenced block; faulty programs are
  records with success False (SFT leaves them out); the same seed gives the same records; and
  episodes_from_records turns them into trainable episodes."""
  from rl.env import episode as episode_lib
  from rl.env import trajectory
  from rl.tasks import load_task_root
  from rl.tokenizer import load_tokenizer

  tasks = load_task_root(task_root)
  renderer = tools_lib.ChatRenderer(load_tokenizer())
  records = mle_expert.program_records(tasks, renderer, per_task=10, seed=3, fault_prob=0.3)
  assert len(records) == 40
  assert records == mle_expert.program_records(tasks, renderer, per_task=10, seed=3, fault_prob=0.3)
  for r in records:
    trajectory.validate_record(r)
    task = next(t for t in tasks if t.id == r["task_id"])
    assert r["prompt"] == renderer.render(tools_lib.initial_messages(task, "single_turn"), generation_prompt=True)
    text = r["steps"][0]["text"]
    code = text.split("```python\n", 1)[1].rsplit("```", 1)[0]
    compile(code, "solution.py", "exec")
    assert r["success"] == (r["program"]["fault"] is None)
  assert 4 <= sum(not r["success"] for r in records) <= 22
  episodes = episode_lib.episodes_from_records(records, tasks, renderer)
  assert len(episodes) == sum(r["success"] for r in records)
  # sft.keep_failed_demonstrations: the faulty programs too, but never a hack-flagged record.
  flagged = dict(records[0], hack={"flagged": True, "stage": "rules", "rules": ["X"], "judge_score": None, "reason": ""})
  kept = episode_lib.episodes_from_records(records + [flagged], tasks, renderer, only_successful=False)
  assert len(kept) == len(records)
  first = episodes[0]
  assert renderer.tokenizer.decode(first.tokens[:len(renderer.encode(records[0]["prompt"]))]) == records[0]["prompt"]
  with pytest.raises(ValueError, match="fault_prob"):
    mle_expert.program_records(tasks, renderer, per_task=1, fault_prob=2.0)


def test_reference_demonstrations_get_the_rendered_opening(task_root):
  """The reference-solution records of build.demonstration_records hold the bare statement; SFT
  on them sees the same chat-rendered single-turn opening and fenced answer as the policy."""
  from rl.env import episode as episode_lib
  from rl.tasks import load_task_root
  from rl.tasks.mle import build
  from rl.tokenizer import load_tokenizer

  tasks = load_task_root(task_root)
  renderer = tools_lib.ChatRenderer(load_tokenizer())
  records = build.demonstration_records([t.dir for t in tasks])
  episodes = episode_lib.episodes_from_records(records, tasks, renderer)
  assert len(episodes) == len(records) == 8
  task = next(t for t in tasks if t.id == records[0]["task_id"])
  opening = renderer.encode(renderer.render(tools_lib.initial_messages(task, "single_turn"), generation_prompt=True))
  assert episodes[0].tokens[:len(opening)] == opening
  answer = renderer.tokenizer.decode([t for t, m in zip(episodes[0].tokens, episodes[0].action_mask) if m])
  assert answer.startswith("```python\n") and "```" in answer[10:]


def test_expert_revises_a_previous_program():
  """Improve-previous prompts (rl.train.self_improve) get a revision: the expert's own failed
  program becomes its valid version, a valid one changes exactly one hyperparameter."""
  import difflib
  import random
  import types

  from rl.tasks.mle import expert as expert_lib
  from rl.train.self_improve import BufferEntry, build_improve_prompt

  class Expert:
    program_fault_prob, thought_prob = 1.0, 1.0

    def say(self, rng, options, **fmt):
      text = rng.choice(options).format(**fmt)
      return text + "\n" if text else ""

  expert, rng = Expert(), random.Random(3)
  task = types.SimpleNamespace(id="t", metadata={"competition": "tabular-churn"}, statement="Predict churn.",
                               prompt_origin="", parent_score=None)
  faulty, valid = expert_lib.draw_program(expert, types.SimpleNamespace(task=task), rng)
  assert faulty.fault is not None

  def answer(code, score, output):
    statement = build_improve_prompt(task.statement, BufferEntry("t", code, score, output, 0, 0))
    improve = types.SimpleNamespace(**{**vars(task), "statement": statement, "prompt_origin": "improve_previous",
                                       "parent_score": score})
    text = expert_lib.single_turn_answer(expert, types.SimpleNamespace(task=improve), rng)
    return text.split("```python\n", 1)[1].rsplit("```", 1)[0]

  assert answer(faulty.source, -10.0, "KeyError: 'f9'").strip() == valid.source.strip()
  revised = answer(valid.source, 0.78, "wrote 100 rows")
  changed = [line for line in difflib.ndiff(valid.source.splitlines(), revised.splitlines()) if line[:1] in "+-"]
  assert len(changed) == 2 and all(line[2:].startswith("model = ") for line in changed), changed


def test_improve_demo_tasks_are_built_from_the_first_demonstrations(tmp_path):
  import types

  from configs import default
  from rl.tasks import write_task
  from rl.train.trainer import Trainer

  config = default.get_config().unlock()
  config.sft.improve_demos_per_task = 2
  task = write_task(tmp_path, statement="Fix it.", repo_files={"a.py": "x = 1\n"}, test_files={"test_a.py": ""},
                    metadata={"id": "t1", "source": "unit", "license": "MIT"})
  episodes = [types.SimpleNamespace(task_id="t1", final_reward=r, record={"solution": {"code": f"print({r})", "output": "ok"}})
              for r in (0.5, -10.0, 0.9)]
  fake = types.SimpleNamespace(config=config, train_tasks=[task], self_improve=types.SimpleNamespace(enabled=True))
  tasks = Trainer.improve_demo_tasks(fake, episodes)
  assert len(tasks) == 2 and all(t.prompt_origin == "improve_previous" and t.id == "t1" for t in tasks)
  assert all("## Previous solution (score" in t.statement and "print(" in t.statement for t in tasks)
  assert {t.parent_score for t in tasks} <= {0.5, -10.0, 0.9}
  config.sft.improve_demos_per_task = 0
  assert Trainer.improve_demo_tasks(fake, episodes) == []
