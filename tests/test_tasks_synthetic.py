"""Synthetic generator: library correctness, mutation operators, determinism, verification,
tiers, split by function and the structured fix a scripted expert replays."""

import collections
import json
import random
import shutil

import pytest

from rl.tasks import load_task_root
from rl.tasks.format import load_task
from rl.tasks.importers import apply_fix
from rl.tasks.patch import apply_patch, apply_patch_to_files, read_tree
from rl.tasks.synthetic import LIBRARY, cached_or_generate, function_split, generate
from rl.tasks.synthetic.families import CONDITIONS, FAMILIES, SHAPES
from rl.tasks.synthetic.generator import killed_mutants, plan_candidates
from rl.tasks.synthetic.mutate import OPERATORS, TIMED_OUT, enumerate_mutations, failing_cases
from rl.tasks.verify import TaskVerifier, sandbox_available

GRADER = "sandbox" if sandbox_available() else "subprocess"


def test_library_is_large_diverse_and_correct():
  assert len(LIBRARY) >= 40
  assert len({f.name for f in LIBRARY}) == len(LIBRARY)
  assert {f.category for f in LIBRARY} == {"strings", "lists", "math", "parsing", "data structures"}
  for fn in LIBRARY:
    assert failing_cases(fn.code, fn.cases) == [], fn.name
    assert len(fn.code.splitlines()) <= 16, f"{fn.name}: keep repo files small"


def test_every_operator_produces_killed_mutants():
  ops = collections.Counter(m.operator for fn in LIBRARY for m in enumerate_mutations(fn.code))
  assert set(ops) == set(OPERATORS), ops
  code = "def f(xs):\n    total = 0\n    for i in range(len(xs)):\n        if xs[i] > 0 and i < 3:\n            total += xs[i]\n    return total\n"
  new_lines = {m.new_line.strip() for m in enumerate_mutations(code)}
  for expected in ("total = 1", "if xs[i] >= 0 and i < 3:", "if xs[i] > 0:", "total -= xs[i]",
                   "for i in range(len(xs) - 1):", "return xs"):
    assert expected in new_lines, (expected, sorted(new_lines))
  for m in enumerate_mutations(code):  # single-line: exactly one line differs
    diff = [a != b for a, b in zip(code.splitlines(), m.apply(code).splitlines())]
    assert sum(diff) == 1


def test_prefilter_flags_infinite_loops():
  code = "def f(n):\n    while n > 0:\n        n += 1\n    return n\n"
  assert TIMED_OUT in failing_cases(code, [("f(1)", 0)], time_limit_s=0.2)
  assert failing_cases("def f(:\n", [("f()", 1)]) is None


def test_plan_is_deterministic_and_split_by_function():
  fns = LIBRARY[:12]
  killed = killed_mutants(fns, workers=1)
  plans = [plan_candidates(killed, random.Random(7), 0.3) for _ in range(2)]
  key = lambda plan: [(c.tier, [(km.fn.name, km.mutation.line, km.mutation.new_line) for km in c.mutants])
                      for tier in plan for c in plan[tier]]
  assert key(plans[0]) == key(plans[1])
  assert key(plans[0]) != key(plan_candidates(killed, random.Random(8), 0.3))
  for tier in plans[0].values():
    for cand in tier:  # every function in a task comes from one split
      splits = {function_split(f, 0.3) for f in [km.fn for km in cand.mutants] + list(cand.siblings)}
      assert len(splits) == 1
  assert {"multi_line", "multi_file"} <= {c.variant for c in plans[0]["hard"]}


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
  root = tmp_path_factory.mktemp("syn")
  result = generate(root, num_tasks=12, seed=3, grader=GRADER, heldout_fraction=0.2)
  return root, result


@pytest.mark.slow
def test_generated_tasks_are_verified_and_tiered(generated):
  root, result = generated
  tasks = load_task_root(root)
  assert len(tasks) == 12 and result.info["tasks"] == 12
  assert collections.Counter(t.difficulty for t in tasks) == {"easy": 6, "medium": 4, "hard": 2}
  heldout = set(result.info["heldout_functions"])
  for t in tasks:
    fns = set(t.metadata["functions"])
    assert (t.split == "heldout") == bool(fns & heldout) and (fns <= heldout or not fns & heldout)
    assert t.public_tests == ["test_public.py"] and (t.repo_dir / "test_public.py").is_file()
    assert t.metadata["license"] and t.metadata["source"] == "synthetic"
  # The kept tasks really fail before and pass after the reference fix.
  for v in TaskVerifier(GRADER).verify_many([t for t in tasks if t.difficulty != "medium"]):
    assert v.ok, v.reason


@pytest.mark.slow
def test_batch_verification_grades_each_state_once_and_agrees_with_one_by_one(generated, tmp_path):
  root, _ = generated
  tasks = [t for t in load_task_root(root) if t.difficulty != "medium"][:4]
  # Two broken tasks: hidden tests the buggy code passes, and a patch that does not apply
  # (its repository is the fixed one), which must cost that task only.
  passes = tmp_path / "a" / tasks[0].id
  shutil.copytree(tasks[0].dir, passes)
  for test in (passes / "tests").glob("test_*.py"):
    test.write_text("def test_nothing():\n    pass\n")
  no_patch = tmp_path / "b" / tasks[1].id
  shutil.copytree(tasks[1].dir, no_patch)
  apply_patch(no_patch / "repo", tasks[1].solution_patch)
  tasks += [load_task(passes), load_task(no_patch)]
  batched = TaskVerifier(GRADER)
  by_batch = batched.verify_many(tasks)
  # The batch graded every state and nothing was graded again one by one: both paths key
  # their cache the same way.
  assert batched.graded["single"] == 0 and batched.graded["batch"] >= 5
  single = TaskVerifier(GRADER)
  one_by_one = single.verify_many(tasks, batch=False)
  assert single.graded == {"single": batched.graded["batch"]}
  assert [(v.ok, v.reason) for v in by_batch] == [(v.ok, v.reason) for v in one_by_one]
  assert [v.ok for v in by_batch] == [True] * 4 + [False, False]
  assert by_batch[4].reason == "initial state already passes every hidden test"
  assert by_batch[5].reason.startswith("PatchError"), by_batch[5].reason


@pytest.mark.slow
def test_easy_tasks_name_file_and_function_and_fix_is_one_short_line(generated):
  root, _ = generated
  for t in load_task_root(root):
    repo = {k: v for k, v in read_tree(t.repo_dir).items()}
    fixed = apply_fix(repo, t.fix)
    assert fixed == apply_patch_to_files(repo, t.solution_patch)  # structured fix == patch
    assert len(t.fix) == len(t.metadata["mutations"])
    if t.difficulty == "easy":
      (edit,) = t.fix
      assert t.metadata["functions"][0] in t.statement and edit["path"] in t.statement
      assert edit["old"].count("\n") == 1 and len(edit["old"]) < 80
      assert len([p for p in repo if not p.startswith("test_")]) == 1
      assert len(repo[edit["path"]].splitlines()) <= 16


@pytest.mark.slow
def test_cached_generation_is_reused(generated, tmp_path):
  root, result = generated
  info = json.loads((root / "synthetic.json").read_text())
  tasks = cached_or_generate(root, num_tasks=info["num_tasks"], seed=info["seed"], grader=GRADER,
                             heldout_fraction=info["heldout_fraction"])
  assert sorted(t.id for t in tasks) == sorted(t.id for t in result.tasks)


@pytest.mark.slow
def test_synthetic_source_uses_the_cache(generated, tmp_path):
  from configs.default import get_config  # pylint: disable=import-outside-toplevel
  from rl.tasks import load_tasks  # pylint: disable=import-outside-toplevel
  root, result = generated
  config = get_config()
  config.tasks.sources = (("synthetic", 1.0),)
  config.tasks.root = str(root)
  config.tasks.num_synthetic = 12
  config.tasks.synthetic_library = "core"
  config.tasks.synthetic_seed = 3
  mix = load_tasks(config, tmp_path)
  assert sorted(t.id for t in mix.tasks()) == sorted(t.id for t in result.tasks)
  train = mix.sample(5, rng=0, split="train")
  assert len(train) == 5 and all(t.split == "train" for t in train)


def test_concurrent_cached_generation_generates_once(tmp_path, monkeypatch):
  """Two runs started together on one task root: the second waits for the first's tasks
  instead of colliding with its staging directory."""
  import threading
  import time

  from rl.tasks.synthetic import generator

  calls = []

  def fake_generate(out, *, num_tasks, seed, heldout_fraction, **kwargs):
    calls.append(out)
    time.sleep(0.3)  # long enough for the other thread to reach the lock
    out.mkdir(parents=True)
    generator.write_manifest(out, [])
    (out / generator.INFO_NAME).write_text(json.dumps({
        "seed": seed, "num_tasks": num_tasks, "library_hash": generator.library_hash(),
        "generator_version": generator.GENERATOR_VERSION, "heldout_fraction": heldout_fraction}))
    return generator.GenerateResult([], [], {})

  monkeypatch.setattr(generator, "generate", fake_generate)
  loaded = []
  monkeypatch.setattr(generator, "load_task_root", lambda out: loaded.append(out) or [])
  root = tmp_path / "tasks" / "synthetic"
  threads = [threading.Thread(target=generator.cached_or_generate, args=(root,),
                              kwargs={"num_tasks": 4, "seed": 0}) for _ in range(2)]
  for t in threads:
    t.start()
  for t in threads:
    t.join()
  assert calls == [root] and loaded == [root]


def test_families_are_correct_and_heldout_ones_share_shape_and_condition_with_training():
  assert len(FAMILIES) == len(SHAPES) * len(CONDITIONS) - 1  # all but sum_zero (always 0)
  names = [f.name for f in LIBRARY + FAMILIES]
  assert len(set(names)) == len(names)  # "all" has no clashes with the bundled functions
  for fn in FAMILIES:
    assert failing_cases(fn.code, fn.cases) == [], fn.name
    assert len({repr(v) for _, v in fn.cases}) >= 2, f"{fn.name}: constant expected values test nothing"
  heldout = [f for f in FAMILIES if function_split(f, 0.2) == "heldout"]
  train = [f for f in FAMILIES if function_split(f, 0.2) == "train"]
  assert heldout and len(train) > 3 * len(heldout)
  shape = lambda f: f.name.split("_", 1)[0]
  condition = lambda f: f.name.split("_", 1)[1]
  for fn in heldout:  # the premise of the held-out measurement: nothing new but the combination
    assert shape(fn) in {shape(f) for f in train} and condition(fn) in {condition(f) for f in train}, fn.name
  # Every mutation kind the training functions show also occurs in held-out functions.
  killed = killed_mutants(FAMILIES, workers=2)
  ops = lambda fns: {km.mutation.operator for km in killed if km.fn in fns}
  assert ops(heldout) <= ops(train) and len(ops(heldout)) >= 4


def test_heldout_root_plants_bugs_only_in_heldout_functions(tmp_path):
  from configs.default import get_config  # pylint: disable=import-outside-toplevel
  from rl.tasks import load_tasks  # pylint: disable=import-outside-toplevel
  config = get_config().unlock()
  config.tasks.verify_with = "subprocess"  # the bundled library's code; isolation is tested elsewhere
  config.tasks.eval_num_synthetic = 6
  config.tasks.synthetic_library = "families"
  mix = load_tasks(config, tmp_path, field="eval_sources")
  tasks = mix.tasks()
  assert len(tasks) == 6 and all(t.split == "heldout" and t.difficulty == "easy" for t in tasks)
  info = json.loads((tmp_path / "tasks" / "synthetic_heldout" / "synthetic.json").read_text())
  assert info["split"] == "heldout" and info["library"] == "families"
  families = {f.name for f in FAMILIES}
  assert all(t.metadata["functions"][0] in families for t in tasks)
  assert sorted(t.id for t in load_tasks(config, tmp_path, field="eval_sources").tasks()) == sorted(
      t.id for t in tasks)  # cached
  config.tasks.eval_num_synthetic = 0
  with pytest.raises(ValueError, match="eval_num_synthetic"):
    load_tasks(config, tmp_path / "other", field="eval_sources")
  with pytest.raises(ValueError, match="split"):
    generate(tmp_path / "bad", num_tasks=1, split="test", grader="subprocess")
