"""The verified synthetic bug-fix task generator.

Plants bugs from `mutate` into functions of the bundled `library`, lays them out as task
directories in three difficulty tiers, runs the hidden tests on every task (initial state
must fail, reference must pass) and keeps only the verified ones. Deterministic from a seed;
the train/held-out split is by function, so held-out tasks contain only unseen code.

  easy    one single-line bug; the repo is one small file holding only the buggy function;
          the statement names the file and the function.
  medium  one single-line bug; the repo holds two modules with a few functions each; the
          statement names only the function.
  hard    two bugs: two lines of one function, or two functions in two files; the statement
          names neither file nor function.
"""

from __future__ import annotations

import collections
import dataclasses
import fcntl
import hashlib
import json
import os
import pathlib
import random
import shutil
import time
from typing import Any, Callable, Sequence

from rl.tasks.format import MANIFEST_NAME, Task, TaskError, load_task_root, write_manifest, write_task
from rl.tasks.importers import compute_fix
from rl.tasks.patch import make_patch
from rl.tasks.synthetic.families import FAMILIES
from rl.tasks.synthetic.library import LIBRARY, LibraryFunction
from rl.tasks.synthetic.rename import MODULE_NAMES, draw_mapping, rename
from rl.tasks.synthetic.mutate import TIMED_OUT, Mutation, enumerate_mutations, prefilter

GENERATOR_VERSION = "1"
TIERS = ("easy", "medium", "hard")
DEFAULT_TIER_WEIGHTS = {"easy": 0.5, "medium": 0.3, "hard": 0.2}
INFO_NAME = "synthetic.json"
PUBLIC_TEST_FILE = "test_public.py"
TIMEOUT_S = 20
# Function libraries a task root can draw from: the bundled functions, the function families
# (families.py: shared loop shapes and conditions, so held-out functions resemble training
# ones), or both.
LIBRARIES: dict[str, tuple[LibraryFunction, ...]] = {"core": LIBRARY, "families": FAMILIES, "all": LIBRARY + FAMILIES}


def library_functions(library: str) -> tuple[LibraryFunction, ...]:
  """The functions of a named library (LIBRARIES); a clear error for an unknown name."""
  if library not in LIBRARIES:
    raise ValueError(f"unknown synthetic library {library!r}; known: {', '.join(LIBRARIES)}")
  return LIBRARIES[library]


def function_split(fn: LibraryFunction, heldout_fraction: float) -> str:
  """Held-out membership by a hash of the function's name: stable across seeds and runs."""
  h = int(hashlib.sha256(f"split:{fn.name}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
  return "heldout" if h < heldout_fraction else "train"


@dataclasses.dataclass(frozen=True, eq=False)
class KilledMutant:
  fn: LibraryFunction
  mutation: Mutation
  failing: tuple[int, ...]  # indices of the function's cases that fail on the mutant


@dataclasses.dataclass
class Candidate:
  tier: str
  variant: str  # single_line | multi_line | multi_file
  mutants: tuple[KilledMutant, ...]
  siblings: tuple[LibraryFunction, ...] = ()  # unmutated functions placed in the repo (medium)
  rename: int = 0  # 0: the library's spelling; k > 0: the k-th renamed variant (rename.py)


def killed_mutants(functions: Sequence[LibraryFunction], workers: int = 2) -> list[KilledMutant]:
  """Single-line mutants that at least one test case kills, without time-outs."""
  jobs, index = [], []
  for fn in functions:
    for m in enumerate_mutations(fn.code):
      jobs.append((m.apply(fn.code), fn.cases))
      index.append((fn, m))
  results = prefilter(jobs, workers=workers)
  return [KilledMutant(fn, m, tuple(r)) for (fn, m), r in zip(index, results)
          if r and TIMED_OUT not in r]


# killed_mutants per library hash, for this process: a run that generates a training root and a
# held-out root from one library pre-filters its mutants once (about 5 s on 2 cores).
_KILLED_BY_LIBRARY: dict[str, list[KilledMutant]] = {}


def library_killed_mutants(library: str, workers: int = 2) -> list[KilledMutant]:
  """`killed_mutants` of a named library, computed once per process."""
  key = library_hash(library)
  if key not in _KILLED_BY_LIBRARY:
    _KILLED_BY_LIBRARY[key] = killed_mutants(library_functions(library), workers=workers)
  return _KILLED_BY_LIBRARY[key]


def _test_file(functions: Sequence[LibraryFunction], module_of: dict[str, str],
               pick: Callable[[LibraryFunction], Sequence[int]]) -> str:
  imports = collections.defaultdict(list)
  for fn in functions:
    imports[module_of[fn.name]].append(fn.name)
  lines = [f"from {mod} import {', '.join(names)}" for mod, names in sorted(imports.items())]
  for fn in functions:
    for i in pick(fn):
      expr, expected = fn.cases[i]
      lines.append(f"\n\ndef test_{fn.name.lower()}_{i}():\n    assert {expr} == {expected!r}")
  return "\n".join(lines) + "\n"


def _public_cases(km_list: Sequence[KilledMutant], fn: LibraryFunction, rng: random.Random) -> list[int]:
  """A few cases for the public tests; at least one fails on each bug in `fn`."""
  chosen = set()
  for km in km_list:
    if km.fn.name == fn.name:
      chosen.add(rng.choice(km.failing))
  others = [i for i in range(len(fn.cases)) if i not in chosen]
  rng.shuffle(others)
  chosen.update(others[:max(0, 2 - len(chosen))])
  return sorted(chosen)


def build_task(cand: Candidate, split: str, rng: random.Random) -> dict[str, Any]:
  """The files and metadata of one candidate (not yet verified)."""
  targets = list(dict.fromkeys(km.fn for km in cand.mutants))
  functions = targets + [s for s in cand.siblings if s not in targets]
  module_of = {fn.name: fn.module for fn in functions}
  original: dict[str, str] = {}
  for fn in sorted(functions, key=lambda f: (module_of[f.name], f.name)):
    path = module_of[fn.name] + ".py"
    original[path] = (original[path] + "\n\n" if path in original else "") + fn.code
  buggy = dict(original)
  bug_lines = []  # (path, line index in the file) of each mutation
  for km in cand.mutants:
    path = module_of[km.fn.name] + ".py"
    source = buggy[path]
    # Apply to this function's current text (it may already carry another mutation).
    start = source.index(km.fn.code.splitlines()[0])
    fn_lines = source[start:].splitlines(keepends=True)
    fn_lines[km.mutation.line] = km.mutation.new_line + "\n"
    buggy[path] = source[:start] + "".join(fn_lines)
    bug_lines.append((path, source[:start].count("\n") + km.mutation.line))
  if cand.rename:
    module_of, original, buggy, bug_lines = _renamed(cand, module_of, original, buggy, bug_lines)
  public = {fn.name: _public_cases(cand.mutants, fn, rng) for fn in targets}
  repo_files = dict(buggy)
  repo_files[PUBLIC_TEST_FILE] = _test_file(targets, module_of, lambda f: public[f.name])
  hidden = {"test_hidden.py": _test_file(targets, module_of, lambda f: range(len(f.cases)))}
  names = [fn.name for fn in targets]
  files = sorted({module_of[n] + ".py" for n in names})
  run_public = f"Run `python -m pytest -q {PUBLIC_TEST_FILE}` to see failing tests."
  if cand.tier == "easy":
    statement = f"The function `{names[0]}` in `{files[0]}` has a bug. Fix it.\n{run_public}\n"
  elif cand.tier == "medium":
    statement = f"`{names[0]}` gives wrong results for some inputs. Find the bug and fix it.\n{run_public}\n"
  else:
    statement = f"Some tests fail: there are {len(cand.mutants)} bugs in this code. Find and fix them.\n{run_public}\n"
  digest = hashlib.sha256(json.dumps(sorted(buggy.items())).encode() + cand.tier.encode()).hexdigest()[:8]
  tid = f"syn-{cand.tier}-{names[0].lower()}-{digest}"
  operators = [km.mutation.operator for km in cand.mutants]
  metadata = {
      "id": tid, "version": GENERATOR_VERSION, "source": "synthetic",
      "license": "Apache-2.0 (generated from this project's function library)",
      "language": "python", "grader": "pytest", "hidden_tests_dest": "tests",
      "test_command": "python -m pytest -q tests", "timeout_s": TIMEOUT_S, "split": split,
      "difficulty": cand.tier, "variant": cand.variant, "public_tests": [PUBLIC_TEST_FILE],
      "tags": ["synthetic", cand.tier, cand.variant, *sorted(set(operators)), *sorted({f.category for f in targets})],
      "functions": names, "files": files,
      "mutations": [{"function": km.fn.name, "path": path, "operator": km.mutation.operator,
                     "buggy_line": buggy[path].splitlines()[line], "original_line": original[path].splitlines()[line]}
                    for km, (path, line) in zip(cand.mutants, bug_lines)],
      "fix": compute_fix(buggy, original),
  }
  if cand.rename:
    metadata["renamed"] = cand.rename
  return {"statement": statement, "repo_files": repo_files, "test_files": hidden, "metadata": metadata,
          "solution_patch": make_patch(buggy, original)}


def _renamed(cand: Candidate, module_of: dict[str, str], original: dict[str, str], buggy: dict[str, str],
             bug_lines: list[tuple[str, int]]):
  """A renamed variant's modules: new file names and local names, drawn from a seed of the
  candidate alone (the same variant whatever else is generated)."""
  key = "|".join([cand.tier, cand.variant, str(cand.rename)]
                 + [f"{km.fn.name}:{km.mutation.line}:{km.mutation.new_line}" for km in cand.mutants]
                 + [s.name for s in cand.siblings])
  rng = random.Random(hashlib.sha256(key.encode()).hexdigest())
  stems = sorted({path[:-3] for path in original})
  new_stem = dict(zip(stems, rng.sample(MODULE_NAMES, len(stems))))
  new_path = {path: new_stem[path[:-3]] + ".py" for path in original}
  new_original, new_buggy = {}, {}
  for path in sorted(original):
    mapping = draw_mapping([original[path], buggy[path]], rng)
    new_original[new_path[path]] = rename(original[path], mapping)
    new_buggy[new_path[path]] = rename(buggy[path], mapping)
  return ({name: new_stem[stem] for name, stem in module_of.items()}, new_original, new_buggy,
          [(new_path[path], line) for path, line in bug_lines])


def _interleave(groups: dict[str, list[Candidate]], rng: random.Random) -> list[Candidate]:
  """Round-robin over functions (shuffled) so a prefix of the list covers many functions."""
  keys = sorted(groups)
  rng.shuffle(keys)
  for k in keys:
    rng.shuffle(groups[k])
  out = []
  while any(groups[k] for k in keys):
    for k in keys:
      if groups[k]:
        out.append(groups[k].pop())
  return out


def plan_candidates(killed: Sequence[KilledMutant], rng: random.Random, heldout_fraction: float,
                    renames: int = 0, functions: Sequence[LibraryFunction] = LIBRARY) -> dict[str, list[Candidate]]:
  """All candidates of each tier, ordered for diverse prefixes; with `renames` > 0 each one
  also in that many renamed variants (rename.py), each right after the library's spelling."""
  by_fn: dict[str, list[KilledMutant]] = collections.defaultdict(list)
  for km in killed:
    by_fn[km.fn.name].append(km)
  split_of = {fn.name: function_split(fn, heldout_fraction) for fn in functions}
  same_split = collections.defaultdict(list)
  for fn in functions:
    same_split[split_of[fn.name]].append(fn)
  easy, medium, hard = collections.defaultdict(list), collections.defaultdict(list), collections.defaultdict(list)
  for name, kms in sorted(by_fn.items()):
    pool = same_split[split_of[name]]
    for km in kms:
      easy[name].append(Candidate("easy", "single_line", (km,)))
      same_module = [f for f in pool if f.module == km.fn.module and f.name != name]
      other_module = [f for f in pool if f.module != km.fn.module]
      siblings = tuple(rng.sample(same_module, min(2, len(same_module)))
                       + rng.sample(other_module, min(2, len(other_module))))
      medium[name].append(Candidate("medium", "single_line", (km,), siblings))
    for i, a in enumerate(kms):
      for b in kms[i + 1:]:
        if a.mutation.line != b.mutation.line:
          hard[name].append(Candidate("hard", "multi_line", (a, b)))
  names = sorted(by_fn)
  for name in names:
    partners = [n for n in names if split_of[n] == split_of[name] and by_fn[n][0].fn.module != by_fn[name][0].fn.module]
    for partner in rng.sample(partners, min(3, len(partners))):
      hard[name].append(Candidate("hard", "multi_file", (rng.choice(by_fn[name]), rng.choice(by_fn[partner]))))
  tiers = {"easy": _interleave(easy, rng), "medium": _interleave(medium, rng), "hard": _interleave(hard, rng)}
  return {tier: [dataclasses.replace(c, rename=k) for c in cands for k in range(renames + 1)]
          for tier, cands in tiers.items()}


def parse_tier_weights(text: str) -> dict[str, float] | None:
  """`"easy=1,medium=0.5"` -> {"easy": 1.0, "medium": 0.5}; "" -> None (DEFAULT_TIER_WEIGHTS).
  Tier names are checked by `generate`."""
  if not text.strip():
    return None
  weights = {}
  for item in text.split(","):
    name, _, value = item.partition("=")
    try:
      weight = float(value)
    except ValueError:
      weight = -1.0
    if weight < 0:
      raise ValueError(f"tier weights {text!r}: expected tier=weight pairs such as 'easy=1,medium=0.5'")
    weights[name.strip()] = weight
  return weights


def _tier_counts(num_tasks: int, weights: dict[str, float]) -> dict[str, int]:
  """Largest-remainder apportionment of num_tasks over the tiers."""
  total = sum(weights.values())
  exact = {t: num_tasks * w / total for t, w in weights.items()}
  counts = {t: int(v) for t, v in exact.items()}
  for t in sorted(weights, key=lambda t: -(exact[t] - counts[t]))[:num_tasks - sum(counts.values())]:
    counts[t] += 1
  return counts


@dataclasses.dataclass
class GenerateResult:
  tasks: list[Task]
  rejected: list[dict[str, Any]]
  info: dict[str, Any]


def generate(out: str | os.PathLike, *, num_tasks: int = 300, seed: int = 0, grader: str = "sandbox",
             workers: int = 2, heldout_fraction: float = 0.2, tier_weights: dict[str, float] | None = None,
             sandbox_config: Any = None, batch_size: int = 160, renames: int = 0, library: str = "core",
             split: str = "", log: Callable[[str], None] = lambda s: None,
             progress: Callable[[int, int, str], None] | None = None) -> GenerateResult:
  """Generates `num_tasks` verified tasks into `out` (replacing what is there).

  `renames` > 0 follows every candidate by that many renamed variants (other parameter,
  variable and module names; rename.py): the same bug in `renames + 1` spellings, so that a
  policy has to read names from its context instead of recalling them. `library` names the
  functions to plant bugs in (LIBRARIES); `split` ("train" or "heldout"), when given, keeps
  only the bugs of that split's functions (a held-out evaluation root). `progress(done, wanted,
  note)` hears of each verified batch (rl.tasks.sources.TaskProgress); `log` gets the notes.
  """
  functions = library_functions(library)
  if split not in ("", "train", "heldout"):
    raise ValueError(f"split must be '', 'train' or 'heldout', got {split!r}")
  if renames < 0:
    raise ValueError(f"renames must be >= 0, got {renames}")
  from rl.tasks.verify import TaskVerifier  # pylint: disable=import-outside-toplevel
  start = time.monotonic()
  weights = dict(tier_weights or DEFAULT_TIER_WEIGHTS)
  unknown = set(weights) - set(TIERS)
  if unknown:
    raise ValueError(f"unknown difficulty tier(s) {sorted(unknown)}; known tiers: {', '.join(TIERS)}")
  out = pathlib.Path(out)
  if out.exists() and any(out.iterdir()):
    if not (out / INFO_NAME).is_file():
      raise TaskError(f"refusing to overwrite {out}: it is not empty and was not written by this generator")
    shutil.rmtree(out)
  staging = out / ".staging"
  staging.mkdir(parents=True)
  rng = random.Random(seed)
  kept: list[Task] = []

  def report(note: str) -> None:
    log(f"{note} ({time.monotonic() - start:.1f}s)")
    if progress is not None:
      progress(len(kept), num_tasks, note)

  if progress is not None:
    progress(0, num_tasks, "")
  killed = library_killed_mutants(library, workers=workers)
  report(f"pre-filter: {len(killed)} killed single-line mutants of {len(functions)} functions")
  candidates = plan_candidates(killed, rng, heldout_fraction, renames, functions)
  if split:
    candidates = {tier: [c for c in cands if function_split(c.mutants[0].fn, heldout_fraction) == split]
                  for tier, cands in candidates.items()}
  wanted = _tier_counts(num_tasks, weights)
  verifier = TaskVerifier(grader, workers=workers, sandbox_config=sandbox_config)
  rejected: list[dict[str, Any]] = []
  split_of = {fn.name: function_split(fn, heldout_fraction) for fn in functions}
  for tier in TIERS:
    need = wanted.get(tier, 0)
    queue = candidates[tier]
    got = 0
    while got < need and queue:
      take = min(len(queue), max(need - got + (need - got) // 8 + 2, 1), batch_size)
      batch, queue = queue[:take], queue[take:]
      staged = []
      for cand in batch:
        spec = build_task(cand, split_of[cand.mutants[0].fn.name], rng)
        if (out / spec["metadata"]["id"]).exists() or any(s.id == spec["metadata"]["id"] for s in staged):
          continue
        staged.append(write_task(staging, **spec))
      results = verifier.verify_many(staged)
      for task, v in zip(staged, results):
        if v.ok and got < need:
          dest = out / task.id
          shutil.move(str(task.dir), dest)
          kept.append(load_task_root_single(dest))
          got += 1
        else:
          if not v.ok:
            rejected.append({"id": task.id, "reason": v.reason})
          shutil.rmtree(task.dir, ignore_errors=True)
      report(f"{tier}: {got}/{need} verified")
  shutil.rmtree(staging, ignore_errors=True)
  write_manifest(out, kept)
  info = {"generator_version": GENERATOR_VERSION, "seed": seed, "num_tasks": num_tasks,
          "heldout_fraction": heldout_fraction, "tier_weights": weights, "grader": grader,
          "renames": renames, "library": library, "library_hash": library_hash(library), "split": split, "tasks": len(kept),
          "by_split": dict(collections.Counter(t.split for t in kept)),
          "by_difficulty": dict(collections.Counter(t.difficulty for t in kept)),
          "heldout_functions": sorted(n for n, s in split_of.items() if s == "heldout"),
          "rejected": len(rejected), "wall_time_s": round(time.monotonic() - start, 2)}
  (out / INFO_NAME).write_text(json.dumps(info, indent=2) + "\n")
  return GenerateResult(kept, rejected, info)


def bug_identity(task: Task) -> tuple[str, str, int]:
  """A synthetic task's bug, whatever its spelling: function, mutation operator and the line
  number of the buggy line in its module (renamed variants keep every line where it was)."""
  m = task.metadata["mutations"][0]
  lines = (pathlib.Path(task.repo_dir) / m["path"]).read_text(encoding="utf-8").splitlines()
  line = next((i for i, text in enumerate(lines) if text == m["buggy_line"]), -1)
  return (m["function"], m["operator"], line)


def load_task_root_single(task_dir: pathlib.Path) -> Task:
  from rl.tasks.format import load_task  # pylint: disable=import-outside-toplevel
  return load_task(task_dir)


def library_hash(library: str = "core") -> str:
  return hashlib.sha256(json.dumps([(f.name, f.module, f.code, repr(f.cases))
                                    for f in library_functions(library)]).encode()).hexdigest()[:12]


def cached_or_generate(out: str | os.PathLike, *, num_tasks: int, seed: int, grader: str = "sandbox",
                       heldout_fraction: float = 0.2, log: Callable[[str], None] = lambda s: None,
                       progress: Callable[[int, int, str], None] | None = None, **kwargs: Any) -> list[Task]:
  """Loads `out` when it was generated with the same parameters; generates it otherwise.

  Processes sharing `out` (two runs started together on one task root) take turns on a lock
  file next to it: the first generates, the others then find the cache.
  """
  out = pathlib.Path(out)
  out.parent.mkdir(parents=True, exist_ok=True)
  with open(out.parent / f".{out.name}.lock", "w") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
      return _cached_or_generate(out, num_tasks=num_tasks, seed=seed, grader=grader,
                                 heldout_fraction=heldout_fraction, log=log, progress=progress, **kwargs)
    finally:
      fcntl.flock(lock, fcntl.LOCK_UN)


def _cached_or_generate(out: pathlib.Path, *, num_tasks: int, seed: int, grader: str,
                        heldout_fraction: float, log: Callable[[str], None],
                        progress: Callable[[int, int, str], None] | None, **kwargs: Any) -> list[Task]:
  info_path = out / INFO_NAME
  if info_path.is_file() and (out / MANIFEST_NAME).is_file():
    try:
      info = json.loads(info_path.read_text())
    except json.JSONDecodeError:
      info = {}
    library = kwargs.get("library", "core")
    if (info.get("seed") == seed and info.get("num_tasks") == num_tasks and info.get("library", "core") == library
        and info.get("split", "") == kwargs.get("split", "")
        and info.get("library_hash") == library_hash(library)
        and info.get("generator_version") == GENERATOR_VERSION and info.get("heldout_fraction") == heldout_fraction
        and info.get("renames", 0) == kwargs.get("renames", 0)
        and info.get("tier_weights", DEFAULT_TIER_WEIGHTS)
        == dict(kwargs.get("tier_weights") or DEFAULT_TIER_WEIGHTS)):
      tasks = load_task_root(out)
      if progress is not None:
        progress(len(tasks), len(tasks), f"{len(tasks)} cached in {out}")
      return tasks
  return generate(out, num_tasks=num_tasks, seed=seed, grader=grader, heldout_fraction=heldout_fraction,
                  log=log, progress=progress, **kwargs).tasks
