"""The long-horizon task family: deterministic generation, verified tasks, a held-out split
disjoint in functions and names, and the scripted expert solving chains in as many turns as
their depth asks (real sandbox when available, real rollout engine)."""

from __future__ import annotations

import builtins
import pathlib
import shutil
import sys

import pytest

from configs.experiments import long_horizon
from rl.env import actors
from rl.env import rollout
from rl.env import tools as tools_lib
from rl.registry import EXPERT_PLANS, TASK_SOURCES
from rl.tasks.long_horizon import LongSettings, generate_long, name_split
from rl.tasks.long_horizon.expert import _fit
from rl.tasks.long_horizon.generator import MODULE_NAMES, PREFIXES, PUBLIC_TEST_FILE, WRAPPER_NAMES
from rl.tasks.long_horizon.source import long_settings, parse_weights
from rl.tasks.synthetic.families import FAMILIES
from rl.tasks.verify import TaskVerifier, get_grade_fn, sandbox_available
from rl.tokenizer import load_tokenizer

GRADER = "sandbox" if sandbox_available() else "subprocess"
# Small roots: depths 1-6 keep the expert's episodes short enough for a test.
SMALL = dict(min_depth=1, max_depth=6, stable_runs=1)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
  out = tmp_path_factory.mktemp("long")
  return generate_long(out / "both", LongSettings(num_tasks=12, seed=3, **SMALL), grader=GRADER)


@pytest.fixture(scope="module")
def heldout_root(tmp_path_factory):
  out = tmp_path_factory.mktemp("long_heldout")
  return generate_long(out / "heldout", LongSettings(num_tasks=4, seed=3, split="heldout", **SMALL), grader=GRADER)


def _files(task) -> dict[str, str]:
  base = pathlib.Path(task.dir)
  return {p.relative_to(base).as_posix(): p.read_text() for p in sorted(base.rglob("*")) if p.is_file()}


def test_name_pools_shadow_nothing_and_split_exactly():
  """A workspace module named like a standard-library module would shadow it for pytest itself."""
  assert len(set(MODULE_NAMES)) == len(MODULE_NAMES) and len(set(WRAPPER_NAMES)) == len(WRAPPER_NAMES)
  assert not set(MODULE_NAMES) & set(sys.stdlib_module_names)
  assert not set(MODULE_NAMES) & {"pytest", "pluggy", "iniconfig", "packaging", "py", "conftest", "numpy", "pandas"}
  assert not set(WRAPPER_NAMES) & set(dir(builtins)) and not set(WRAPPER_NAMES) & {f.name for f in FAMILIES}
  assert not set(MODULE_NAMES) & set(WRAPPER_NAMES)
  assert not {f"{p}{i}" for p in PREFIXES for i in range(1, 30)} & set(sys.stdlib_module_names)
  for pool in (MODULE_NAMES, WRAPPER_NAMES):
    heldout = [n for n in pool if name_split(n, pool, 0.2) == "heldout"]
    assert len(heldout) == round(0.2 * len(pool))


def test_generation_is_deterministic_per_seed(root, tmp_path):
  again = generate_long(tmp_path / "again", LongSettings(num_tasks=12, seed=3, **SMALL), grader=GRADER)
  assert [t.id for t in again.tasks] == [t.id for t in root.tasks]
  for a, b in zip(again.tasks, root.tasks):
    assert _files(a) == _files(b)
  other = generate_long(tmp_path / "other", LongSettings(num_tasks=4, seed=4, **SMALL), grader=GRADER)
  assert {t.id for t in other.tasks} != {t.id for t in root.tasks[:4]}


def test_tasks_span_the_depths_and_read_like_chains(root, tmp_path):
  words = generate_long(tmp_path / "words", LongSettings(num_tasks=3, seed=3, naming="words", **SMALL), grader=GRADER)
  step = generate_long(tmp_path / "step", LongSettings(num_tasks=2, seed=3, naming="step", **SMALL), grader=GRADER)
  for t in step.tasks:
    assert [c["path"] for c in t.metadata["chain"]] == [f"step{i}.py" for i in range(1, t.metadata["depth"] + 2)]
  tasks = root.tasks + words.tasks
  assert sorted({t.metadata["depth"] for t in root.tasks}) == [1, 2, 3, 4, 5, 6]
  for t in tasks:
    chain = t.metadata["chain"]
    assert len(chain) == t.metadata["depth"] + 1
    stems = [c["path"][:-3] for c in chain]
    if t in root.tasks:  # numbered: <prefix>1 ... <prefix>K+1
      prefix = stems[0][:-1]
      assert prefix in PREFIXES and stems == [f"{prefix}{i}" for i in range(1, len(chain) + 1)]
    else:
      assert set(stems) <= set(MODULE_NAMES)
    repo = pathlib.Path(t.repo_dir)
    for caller, callee in zip(chain, chain[1:]):  # each module imports the next one's function
      text = (repo / caller["path"]).read_text()
      assert text.startswith(f"from {callee['path'][:-3]} import {callee['function']}\n"), (t.id, text)
      assert len(text.splitlines()) <= 8  # observations stay short
    assert "import" not in (repo / chain[-1]["path"]).read_text()  # the buggy function calls nothing
    for path in t.metadata["distractors"]:
      assert (repo / path).is_file() and path not in [c["path"] for c in chain]
    public = (repo / PUBLIC_TEST_FILE).read_text()
    assert public.startswith(f"from {chain[0]['path'][:-3]} import {chain[0]['function']}\n")
    if t.metadata["statement_style"] == "entry":
      assert chain[0]["path"] in t.statement and chain[0]["function"] in t.statement
    else:  # only the test file is named: its imports lead to the entry
      assert chain[0]["path"] not in t.statement and PUBLIC_TEST_FILE in t.statement
    assert len(t.metadata["fix"]) == (1 if t.metadata["variant"] == "single" else 2)


@pytest.mark.slow
def test_every_task_is_verified_and_both_edits_are_needed(root, heldout_root, tmp_path):
  """A fresh verifier agrees (initial state fails, reference passes, so the verdict is stable);
  for two-edit tasks, each edit alone still fails the hidden tests."""
  tasks = root.tasks + heldout_root.tasks
  for v in TaskVerifier(GRADER).verify_many(tasks):
    assert v.ok, (v.task_id, v.reason)
  grade = get_grade_fn(GRADER)
  two_edit = [t for t in tasks if len(t.metadata["fix"]) == 2][:2]
  assert two_edit, "the roots of this test hold no two-edit task"
  for t in two_edit:
    for edit in t.metadata["fix"]:
      ws = tmp_path / f"half-{t.id}"
      shutil.copytree(t.repo_dir, ws)
      path = ws / edit["path"]
      path.write_text(path.read_text().replace(edit["old"], edit["new"], 1))
      report = grade(ws, t.tests_dir, hidden_tests_dest=t.hidden_tests_dest, test_command=t.test_command,
                     timeout_s=t.timeout_s, config=None if GRADER == "subprocess" else TaskVerifier(GRADER).sandbox_config)
      shutil.rmtree(ws)
      assert not report.all_passed, (t.id, edit)


def test_heldout_split_shares_no_function_or_name_with_training(root, heldout_root):
  train = [t for t in root.tasks if t.split == "train"]
  heldout = heldout_root.tasks + [t for t in root.tasks if t.split == "heldout"]
  assert train and heldout and all(t.split == "heldout" for t in heldout_root.tasks)

  def names(tasks):
    functions, modules = set(), set()
    for t in tasks:
      functions |= {c["function"] for c in t.metadata["chain"]}
      modules |= {p.name[:-3] for p in pathlib.Path(t.repo_dir).glob("*.py") if p.name != PUBLIC_TEST_FILE}
    return functions, modules

  train_functions, train_modules = names(train)
  heldout_functions, heldout_modules = names(heldout)
  assert not train_functions & heldout_functions
  assert not train_modules & heldout_modules
  assert not {t.metadata["functions"][0] for t in train} & {t.metadata["functions"][0] for t in heldout}


def _expert_episodes(tasks, group_size: int, max_turns: int = 24, **expert_kwargs):
  renderer = tools_lib.ChatRenderer(load_tokenizer(), tool_prompt="compact")
  config = long_horizon.get_config().unlock()
  config.agent.max_turns = max_turns
  kwargs = dict(explore_prob=0.3, run_prob=0.3, thought_prob=0.3, minimal_edits=True) | expert_kwargs
  expert = actors.ScriptedExpert(renderer, seed=0, **kwargs)
  episodes, _ = rollout.RolloutEngine(config, expert, renderer).run(tasks, group_size=group_size)
  return episodes


@pytest.mark.slow
def test_expert_solves_every_task_in_as_many_turns_as_its_depth_asks(root):
  tasks = root.tasks
  episodes = _expert_episodes(tasks, 2)
  assert all(e.success for e in episodes), [(e.task_id, e.record["terminated"]) for e in episodes if not e.success]
  depth = {t.id: t.metadata["depth"] for t in tasks}
  turns = [len(e.record["steps"]) for e in episodes]
  for e, n in zip(episodes, turns):
    reads = [s["action_input"]["path"] for s in e.record["steps"] if s["action_type"] == "read_file"]
    chain = [c["path"] for c in next(t for t in tasks if t.id == e.task_id).metadata["chain"]]
    assert [p for p in reads if p in chain] == chain  # down the chain, in order
    assert n >= depth[e.task_id] + 3  # depth + 1 reads, the edit, submit
  # Lengths set by the tasks: a depth-6 chain has five more modules to read than a depth-1 one
  # (the expert's optional steps blur that by a turn or so either way).
  mean = lambda d: sum(n for e, n in zip(episodes, turns) if depth[e.task_id] == d) / sum(
      depth[e.task_id] == d for e in episodes)
  assert mean(6) >= mean(1) + 4, (mean(6), mean(1), turns)
  by_task = {}
  for e, n in zip(episodes, turns):
    by_task.setdefault(e.task_id, []).append(n)
  assert any(len(set(v)) > 1 for v in by_task.values())  # the expert varies its detours


@pytest.mark.slow
def test_expert_give_ups_end_early_and_fail(root):
  tasks = [t for t in root.tasks if t.metadata["depth"] >= 4][:2]
  episodes = _expert_episodes(tasks, 3, give_up_prob=1.0, explore_prob=0.0, run_prob=0.0)
  for e in episodes:
    actions = [s["action_type"] for s in e.record["steps"]]
    assert not e.success and actions[-1] == "submit" and "edit_file" not in actions, actions


def test_plans_fit_the_turn_limit():
  steps = [("a", True), ("b", False), ("c", True), ("d", False), ("e", True)]
  assert _fit(steps, 5) == ["a", "b", "c", "d", "e"]
  assert _fit(steps, 4) == ["a", "b", "c", "e"]
  assert _fit(steps, 3) == ["a", "c", "e"]
  assert _fit(steps, 2) == ["a", "e"]  # too deep for the limit: cut before the submit


def test_registered_and_bad_input_is_one_clear_error():
  assert {"synthetic_long", "synthetic_long_heldout"} <= set(TASK_SOURCES.names())
  assert "call_chain" in EXPERT_PLANS
  with pytest.raises(ValueError, match="num_tasks must be positive"):
    LongSettings(num_tasks=0)
  with pytest.raises(ValueError, match="min_depth <= max_depth"):
    LongSettings(num_tasks=1, min_depth=5, max_depth=2)
  with pytest.raises(ValueError, match="max_depth 40"):
    LongSettings(num_tasks=1, max_depth=40)
  with pytest.raises(ValueError, match="naming must be one of"):
    LongSettings(num_tasks=1, naming="letters")
  with pytest.raises(ValueError, match="variant_weights"):
    LongSettings(num_tasks=1, variant_weights=(("three_lines", 1.0),))
  with pytest.raises(ValueError, match="config.tasks.long.variants"):
    parse_weights("single:1", "variants")
  from configs import default
  with pytest.raises(ValueError, match="need config.tasks.long"):
    long_settings(default.get_config())
  settings = long_settings(long_horizon.get_config(), split="heldout", eval_root=True)
  assert settings.num_tasks == long_horizon.get_config().tasks.long.eval_num_tasks and settings.split == "heldout"


def test_traj_stats_step_keeps_one_iteration(tmp_path, capsys):
  """`--step N`: the statistics of iteration N's rollouts alone (the first iteration: 0)."""
  import json  # pylint: disable=import-outside-toplevel
  sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "scripts"))
  import traj_stats  # pylint: disable=import-outside-toplevel
  records = [{"task_id": "t", "success": n > 5, "model": {"step": step}, "steps": [{}] * n}
             for step, lengths in ((0, (2, 2, 14, 16)), (1, (5, 5, 5, 5))) for n in lengths]
  path = tmp_path / "trajectories.jsonl"
  path.write_text("".join(json.dumps(r) + "\n" for r in records))
  assert traj_stats.main([str(path), "--json", "--step", "0"]) == 0
  stats = json.loads(capsys.readouterr().out)
  assert stats["episodes"] == 4 and stats["p90_p10_ratio"] > 5 and stats["tasks_short_failure_long_success"] == 1
  with pytest.raises(SystemExit):
    traj_stats.main([str(path), "--step", "7"])
  assert "no trajectory records of iteration 7" in capsys.readouterr().err


def test_long_base_fits_the_experiment_model():
  """rl/assets/tiny_base_long (make_base.py --family long) loads as the experiment's model."""
  import json  # pylint: disable=import-outside-toplevel
  from rl.models import load_hf_checkpoint  # pylint: disable=import-outside-toplevel
  c = long_horizon.get_config()
  base = pathlib.Path(__file__).resolve().parents[1] / c.init_from
  model = load_hf_checkpoint(base)
  assert (model.config.hidden_size, model.config.num_layers, model.config.intermediate_size) == (
      c.model.hidden_size, c.model.num_layers, c.model.intermediate_size)
  assert load_tokenizer(base).get_vocab() == load_tokenizer().get_vocab()
  info = json.loads((base / "base.json").read_text())
  assert info["corpus"]["family"] == "long" and info["corpus"]["excluded_experiment_bugs"] > 0
  # Built from the default's base, or continued from an earlier long base whose command is kept.
  assert info["init_from"] == "rl/assets/tiny_base" or (
      info["init_from"] == c.init_from and info["init_from_base"]["command"].startswith("scripts/make_base.py --family long"))


@pytest.mark.slow
def test_make_base_long_keeps_the_experiment_bugs_out(tmp_path):
  """make_base.py --family long at toy size: a corpus of chains without the experiment's
  training bugs, demonstrations from the call_chain plan, a loadable base."""
  import importlib.util  # pylint: disable=import-outside-toplevel
  import json  # pylint: disable=import-outside-toplevel
  from rl.tasks import load_task_root  # pylint: disable=import-outside-toplevel
  from rl.tasks.long_horizon import bug_identity  # pylint: disable=import-outside-toplevel
  script = pathlib.Path(__file__).resolve().parents[1] / "scripts" / "make_base.py"
  spec = importlib.util.spec_from_file_location("make_base", script)
  make_base = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(make_base)
  out, work = tmp_path / "base", tmp_path / "work"
  assert make_base.main(["--family", "long", "--out", str(out), "--workdir", str(work), "--steps", "2",
                         "--num", "12", "--seed", "1"]) == 0
  info = json.loads((out / "base.json").read_text())
  train = [t for t in load_task_root(work / "corpus_long") if t.split == "train"]
  assert train and info["demonstrations"] == len(train) and info["init_from"] == "rl/assets/tiny_base"
  assert not {bug_identity(t) for t in train} & make_base.long_experiment_bugs(work)


def test_give_ups_within_the_first_reads(tmp_path):
  """sft.expert_give_up_within = n: every give-up of the call-chain plan stops after 1 to n reads."""
  import random  # pylint: disable=import-outside-toplevel
  import types  # pylint: disable=import-outside-toplevel
  from rl.tasks.long_horizon import expert as long_expert  # pylint: disable=import-outside-toplevel
  chain = [{"path": f"step{i}.py", "function": f"f{i}"} for i in range(1, 11)]
  task = types.SimpleNamespace(id="t", metadata={"chain": chain, "fix": [{"path": "step10.py", "old": "a", "new": "b"}]})
  reads_before_submit = {0: [], 2: []}
  for within in reads_before_submit:
    expert = types.SimpleNamespace(explore_prob=0.0, run_prob=0.0, give_up_prob=1.0, give_up_within=within,
                                   minimal_edits=False, fixes=lambda t: t.metadata["fix"],
                                   say=lambda rng, options, **kw: "")
    for seed in range(40):
      steps = long_expert.call_chain_plan(expert, types.SimpleNamespace(task=task, turns_left=40), random.Random(seed))
      reads_before_submit[within].append(sum('"read_file"' in s for s in steps))
  assert set(reads_before_submit[2]) == {1, 2} and max(reads_before_submit[0]) >= 5
