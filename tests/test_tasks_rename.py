"""Renamed variants of synthetic tasks: exact renaming, same behaviour, same bug and fix."""

import json
import random

import pytest

from rl.tasks import load_task_root
from rl.tasks.importers import apply_fix
from rl.tasks.synthetic import LIBRARY, bug_identity, generate
from rl.tasks.synthetic.mutate import enumerate_mutations, failing_cases
from rl.tasks.synthetic.rename import LOCAL_NAMES, MODULE_NAMES, all_names, draw_mapping, local_names, rename
from rl.tasks.verify import sandbox_available

GRADER = "sandbox" if sandbox_available() else "subprocess"


def test_local_names_skip_attributes_keywords_definitions_and_self():
  src = ("class Box:\n    def put(self, item, key=None):\n        self.items = sorted([item], key=len)\n"
         "        total = [k for k in self.items]\n        return total\n")
  assert local_names(src) == ["item", "key", "total", "k"]
  out = rename(src, {"item": "elem", "key": "acc", "total": "res", "k": "cur"})
  assert "self.items = sorted([elem], key=len)" in out  # attribute and keyword argument kept
  assert "def put(self, elem, acc=None):" in out
  assert "res = [cur for cur in self.items]" in out


@pytest.mark.parametrize("seed", [0, 1])
def test_renamed_library_keeps_behaviour_and_mutants_keep_failing(seed):
  rng = random.Random(seed)
  renamed_any = 0
  for fn in LIBRARY:
    mapping = draw_mapping([fn.code], rng)
    assert set(mapping.values()) <= set(LOCAL_NAMES) and len(set(mapping.values())) == len(mapping)
    assert not set(mapping.values()) & (all_names(fn.code) - set(mapping)), fn.name
    code = rename(fn.code, mapping)
    renamed_any += code != fn.code
    assert failing_cases(code, fn.cases) == [], fn.name
    mutation = enumerate_mutations(fn.code)[0]
    buggy = mutation.apply(fn.code)
    # The same mapping on the buggy text plants the same bug in the new spelling.
    assert failing_cases(rename(buggy, mapping), fn.cases) == failing_cases(buggy, fn.cases), fn.name
  assert renamed_any >= len(LIBRARY) - 2


def test_rename_raises_on_unparsable_code_and_keeps_code_without_mapping():
  with pytest.raises(SyntaxError):
    rename("def f(:\n", {"x": "y"})
  assert rename("x = 1\n", {}) == "x = 1\n"


def test_generate_renamed_variants(tmp_path):
  res = generate(tmp_path / "t", num_tasks=9, seed=3, grader=GRADER, workers=2, renames=2,
                 tier_weights={"easy": 1.0})
  assert len(res.tasks) == 9 and res.info["renames"] == 2 and not res.rejected
  tasks = load_task_root(tmp_path / "t")
  by_bug = {}
  for t in tasks:
    m = t.metadata["mutations"][0]
    by_bug.setdefault((m["function"], m["operator"]), []).append(t)
  assert all(len(v) == 3 for v in by_bug.values()), {k: len(v) for k, v in by_bug.items()}
  for variants in by_bug.values():
    original = [t for t in variants if not t.metadata.get("renamed")]
    renamed = [t for t in variants if t.metadata.get("renamed")]
    assert len(original) == 1 and sorted(t.metadata["renamed"] for t in renamed) == [1, 2]
    lib = next(f for f in LIBRARY if f.name == original[0].metadata["functions"][0])
    assert original[0].metadata["files"] == [lib.module + ".py"]
    for t in renamed:
      (path,) = t.metadata["files"]
      assert path[:-3] in MODULE_NAMES and f"`{path}`" in t.statement
      repo = {p.name: p.read_text() for p in t.repo_dir.iterdir() if p.is_file()}
      assert f"from {path[:-3]} import {lib.name}" in repo["test_public.py"]
      m = t.metadata["mutations"][0]
      assert m["path"] == path and m["buggy_line"] in repo[path].splitlines()
      fixed = apply_fix(repo, t.metadata["fix"])
      assert m["original_line"] in fixed[path].splitlines()
      assert failing_cases(fixed[path], lib.cases) == []
    codes = {(t.repo_dir / t.metadata["files"][0]).read_text() for t in variants}
    assert len(codes) == 3  # three spellings of the same code
    assert len({bug_identity(t) for t in variants}) == 1 and bug_identity(variants[0])[2] >= 0
  assert len({bug_identity(v[0]) for v in by_bug.values()}) == len(by_bug)  # one identity per bug


def test_tier_weights_from_text():
  from rl.tasks.synthetic.generator import parse_tier_weights
  assert parse_tier_weights("") is None
  assert parse_tier_weights("easy=1, medium=0.5") == {"easy": 1.0, "medium": 0.5}
  for bad in ("easy", "easy=x", "easy=-1"):
    with pytest.raises(ValueError, match="tier weights"):
      parse_tier_weights(bad)


def test_cache_is_keyed_by_renames_and_tiers(tmp_path, monkeypatch):
  from rl.tasks.synthetic import generator
  calls = []
  real = generator.generate

  def counting(*args, **kwargs):
    calls.append(kwargs.get("renames", 0))
    return real(*args, **kwargs)

  monkeypatch.setattr(generator, "generate", counting)
  kw = dict(num_tasks=3, seed=1, grader=GRADER, tier_weights={"easy": 1.0})
  generator.cached_or_generate(tmp_path / "t", renames=1, **kw)
  generator.cached_or_generate(tmp_path / "t", renames=1, **kw)
  assert calls == [1]
  generator.cached_or_generate(tmp_path / "t", renames=0, **kw)
  assert calls == [1, 0]
  generator.cached_or_generate(tmp_path / "t", renames=0, **{**kw, "tier_weights": {"easy": 1.0, "medium": 1.0}})
  assert calls == [1, 0, 0]
