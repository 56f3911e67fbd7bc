"""Task format: loading, validation errors, manifest, patches, structured fixes, sources."""

import json
import os
import random

import pytest

from rl.registry import TASK_SOURCES
from rl.tasks import Task, TaskError, apply_patch, load_task, load_task_root, make_patch, write_manifest, write_task
from rl.tasks.importers import apply_fix, compute_fix
from rl.tasks.patch import PatchError, apply_patch_to_files
from rl.tasks.sources import TaskMixture, load_tasks


def _write(root, tid, **meta):
  return write_task(root, statement=f"fix {tid}", repo_files={"m.py": "def f():\n    return 1\n"},
                    test_files={"test_m.py": "from m import f\n\ndef test_f():\n    assert f() == 2\n"},
                    metadata={"id": tid, "source": "unit", "license": "MIT", **meta},
                    solution_patch=make_patch({"m.py": "def f():\n    return 1\n"}, {"m.py": "def f():\n    return 2\n"}))


def test_write_and_load_roundtrip(tmp_path):
  _write(tmp_path, "a", split="heldout", difficulty="easy", public_tests=["m.py"])
  _write(tmp_path, "b")
  tasks = load_task_root(tmp_path)
  assert [t.id for t in tasks] == ["a", "b"]
  a = tasks[0]
  assert a.split == "heldout" and a.difficulty == "easy" and a.public_tests == ["m.py"]
  assert a.statement == "fix a" and a.grader == "pytest" and a.hidden_tests_dest == "tests"
  assert a.repo_dir == tmp_path / "a" / "repo" and (a.tests_dir / "test_m.py").is_file()
  assert "return 2" in a.solution_patch and a.timeout_s == 30
  assert [t.id for t in load_task_root(tmp_path, split="train")] == ["b"]


@pytest.mark.parametrize("mutate, message", [
    (lambda d: (d / "task.md").unlink(), "missing file task.md"),
    (lambda d: (d / "metadata.json").write_text("{bad json"), "bad JSON in metadata.json"),
    (lambda d: (d / "metadata.json").unlink(), "missing file metadata.json"),
    (lambda d: _edit_meta(d, grader="magic"), "unknown grader 'magic'"),
    (lambda d: _edit_meta(d, hidden_tests_dest="../outside"), "escapes the task directory"),
    (lambda d: _edit_meta(d, public_tests=["/etc/passwd"]), "escapes the task directory"),
    (lambda d: _edit_meta(d, id="other"), "differs from the directory name"),
    (lambda d: _edit_meta(d, timeout_s=-1), "timeout_s must be positive"),
    (lambda d: _edit_meta(d, split="nonsense"), "unknown split"),
    (lambda d: _edit_meta(d, public_tests=["nope.py"]), "public test 'nope.py' is not in repo/"),
    (lambda d: _edit_meta(d, drop="license"), "lacks required field(s) license"),
    (lambda d: os.symlink("/etc", d / "repo" / "etc"), "symlink repo/etc escapes"),
    (lambda d: (d / "solution.patch").write_text("--- a/../../x\n+++ b/../../x\n@@ -1 +1 @@\n-a\n+b\n"),
     "escapes the workspace"),
    (lambda d: (d / "repo").rename(d / "repo2"), "missing directory repo/"),
])
def test_validation_errors_name_task_and_problem(tmp_path, mutate, message):
  _write(tmp_path, "t1")
  mutate(tmp_path / "t1")
  with pytest.raises(TaskError) as e:
    load_task_root(tmp_path)
  assert "t1" in str(e.value) and message in str(e.value)


def _edit_meta(d, drop=None, **changes):
  meta = json.loads((d / "metadata.json").read_text())
  meta.update(changes)
  if drop:
    del meta[drop]
  (d / "metadata.json").write_text(json.dumps(meta))


def test_duplicate_ids_in_manifest_are_rejected(tmp_path):
  _write(tmp_path, "a")
  line = json.dumps({"dir": "a", "metadata": load_task(tmp_path / "a").metadata})
  (tmp_path / "manifest.jsonl").write_text(line + "\n" + line + "\n")
  with pytest.raises(TaskError, match="duplicate task id 'a'"):
    load_task_root(tmp_path)


def test_manifest_loading_reads_no_task_files(tmp_path):
  for i in range(5):
    _write(tmp_path, f"t{i}", difficulty="hard" if i % 2 else "easy")
  write_manifest(tmp_path)
  for i in range(5):  # only the manifest may be read now
    (tmp_path / f"t{i}" / "metadata.json").unlink()
  tasks = load_task_root(tmp_path)
  assert [t.difficulty for t in tasks] == ["easy", "hard", "easy", "hard", "easy"]
  assert tasks[0].statement == "fix t0"  # read lazily, on demand
  with pytest.raises(TaskError):
    load_task_root(tmp_path, use_manifest=False)
  (tmp_path / "manifest.jsonl").write_text("not json\n")
  with pytest.raises(TaskError, match="manifest.jsonl:1"):
    load_task_root(tmp_path)


PATCH_CASES = [
    ({"a.py": "x = 1\ny = 2\n"}, {"a.py": "x = 1\ny = 3\n"}),
    ({"a.py": "no newline"}, {"a.py": "no newline, changed"}),
    ({"a.py": "a\n"}, {"a.py": "a\n", "pkg/new.py": "print('hi')\n"}),
    ({"a.py": "a\n", "gone.py": "bye\n"}, {"a.py": "a\n"}),
    ({"a.py": "".join(f"line {i}\n" for i in range(40))},
     {"a.py": "".join(f"line {i}\n" if i not in (3, 30) else "changed\n" for i in range(40)) + "tail"}),
    ({"a.py": "same\n" * 10 + "end\n"}, {"a.py": "same\n" * 4 + "inserted\n" + "same\n" * 6 + "end\n"}),
]


@pytest.mark.parametrize("before, after", PATCH_CASES)
def test_patch_roundtrip(tmp_path, before, after):
  patch = make_patch(before, after)
  assert apply_patch_to_files(before, patch) == after
  for path, text in before.items():
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text(text)
  apply_patch(tmp_path, patch)
  got = {p.relative_to(tmp_path).as_posix(): p.read_text() for p in tmp_path.rglob("*") if p.is_file()}
  assert got == after


def test_patch_random_edits_roundtrip():
  rng = random.Random(0)
  for _ in range(50):
    lines = [f"l{rng.randrange(5)}\n" for _ in range(rng.randrange(1, 30))]
    new = list(lines)
    for _ in range(rng.randrange(1, 4)):
      op = rng.choice("idr")
      i = rng.randrange(len(new) + (op == "i")) if new else 0
      if op == "i" or not new:
        new.insert(i, f"new{rng.randrange(9)}\n")
      elif op == "d":
        del new[i]
      else:
        new[i] = "replaced\n"
    before, after = {"f.py": "".join(lines)}, {"f.py": "".join(new)}
    assert apply_patch_to_files(before, make_patch(before, after)) == after


def test_failing_patch_leaves_workspace_untouched(tmp_path):
  (tmp_path / "a.py").write_text("one\n")
  (tmp_path / "b.py").write_text("two\n")
  patch = make_patch({"a.py": "one\n", "b.py": "zzz\n"}, {"a.py": "ONE\n", "b.py": "ZZZ\n"})
  with pytest.raises(PatchError, match="b.py"):
    apply_patch(tmp_path, patch)
  assert (tmp_path / "a.py").read_text() == "one\n"


def test_compute_fix_edits_are_unique_and_replayable():
  before = {"m.py": "def f(x):\n    return x\n\n\ndef g(x):\n    return x\n", "n.py": "a = 1\n"}
  after = {"m.py": "def f(x):\n    return x\n\n\ndef g(x):\n    return x + 1\n", "n.py": "a = 2\n"}
  fix = compute_fix(before, after)
  assert apply_fix(before, fix) == after
  for edit in fix:
    assert before[edit["path"]].count(edit["old"]) == 1
  assert "def g" in [e for e in fix if e["path"] == "m.py"][0]["old"]  # grown until unique


def test_dir_source_and_weighted_mixture(tmp_path):
  root_a, root_b = tmp_path / "a", tmp_path / "b"
  for i in range(3):
    _write(root_a, f"a{i}")
  _write(root_b, "b0", split="heldout")
  cfg = {"sources": (("dir:" + str(root_a), 3.0), ("dir:" + str(root_b), 1.0)), "root": ""}

  class Cfg:
    tasks = type("T", (), cfg)()

  mix = load_tasks(Cfg(), tmp_path)
  assert isinstance(mix, TaskMixture) and len(mix) == 4
  draws = mix.sample(2000, rng=0)
  share_b = sum(t.id == "b0" for t in draws) / len(draws)
  assert 0.2 < share_b < 0.3  # weights 3:1
  assert {t.id for t in mix.sample(20, rng=1, split="heldout")} == {"b0"}
  with pytest.raises(TaskError):
    mix.sample(1, split="test")
  with pytest.raises(LookupError, match="known task sources"):
    TASK_SOURCES.get("nope")
  assert {"dir", "synthetic"} <= set(TASK_SOURCES.names())
  assert isinstance(mix.tasks()[0], Task)


def test_epoch_batches_cover_every_task_once_per_pass(tmp_path):
  root_a, root_b = tmp_path / "a", tmp_path / "b"
  for i in range(5):
    _write(root_a, f"a{i}")
  for i in range(2):
    _write(root_b, f"b{i}")
  mix = TaskMixture([("a", 1.0, load_task_root(root_a)), ("b", 1.0, load_task_root(root_b))])
  single = TaskMixture([("a", 1.0, load_task_root(root_a))])
  # One source: consecutive batches walk shuffled passes; each pass holds every task once.
  stream = [t.id for i in range(5) for t in single.epoch_batch(3, i, seed=4)]
  for p in range(3):
    assert sorted(stream[5 * p:5 * p + 5]) == [f"a{i}" for i in range(5)]
  assert stream[:5] != stream[5:10] or stream[5:10] != stream[10:15]  # reshuffled per pass
  # Deterministic in (seed, index), independent of call order (resume-safe).
  assert [t.id for t in single.epoch_batch(3, 3, seed=4)] == stream[9:12]
  # Two sources: every source's own stream is a sequence of full passes too.
  ids = [t.id for i in range(40) for t in mix.epoch_batch(4, i, seed=0)]
  for prefix, size in (("a", 5), ("b", 2)):
    own = [x for x in ids if x.startswith(prefix)]
    whole = len(own) // size * size
    for p in range(0, whole, size):
      assert sorted(own[p:p + size]) == sorted(f"{prefix}{i}" for i in range(size))
  assert 0.4 < sum(x.startswith("a") for x in ids) / len(ids) < 0.6  # weights 1:1
  with pytest.raises(TaskError):
    mix.epoch_batch(1, 0, split="test")
