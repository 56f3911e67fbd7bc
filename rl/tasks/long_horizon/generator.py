"""The verified generator of long-horizon bug-fix tasks: call chains of depth k over small modules.

A task is a flat package of small modules. The function the tests call (the entry) lives in one
module and calls a function of a second module, which calls one of a third, and so on; the bug
sits in the function `depth` calls below the entry (a function of the synthetic library, with a
mutation from `rl.tasks.synthetic.mutate`). The functions on the way pass their arguments on,
so a wrong result at the top comes from the bottom, and nothing but reading along the chain
finds it: the traceback of a wrong value ends in the test. A solver therefore reads depth + 1
modules (plus the test file when the statement names only the failing test) before it can
edit, and the length of a successful episode is set by the task, from 3 turns (depth 1) to
over 15 (depth 12). Every module is a few lines, so a long episode is many turns but few
tokens per turn.

Variants (each task one):
  single      one single-line bug in the bottom function;
  two_lines   two bugs on two lines of the bottom function (two edits);
  two_places  a bug in the bottom function and one in a function on the way (it drops the
              first element before passing the list on): two edits in two modules.
Statement styles: `entry` names the entry function and its module; `tests` names only the
failing test file, whose imports the solver must read to find the entry.
Distractor modules hold correct functions nothing on the chain calls. Naming: chain modules
are numbered (`step1.py` imports from `step2.py`, ...; the prefix drawn per task) or, with
`naming="words"`, words drawn from a pool (`ledger.py` imports from `basket.py`).

Verified like every synthetic task: the hidden tests fail on the initial state and pass on the
reference, in every one of `stable_runs` independent runs; for the two-edit variants each edit
alone still fails some case, so both are needed. The split is by function and by name: a
held-out task's buggy function is a held-out function of the library (generator.function_split)
and its module prefix or names and wrapper names come from held-out shares of the name pools, so a held-out
chain is made of code and names never seen in training. Deterministic in the seed.
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
from typing import Any, Callable, Mapping, Sequence

from rl.tasks.format import MANIFEST_NAME, Task, TaskError, load_task, load_task_root, write_manifest, write_task
from rl.tasks.importers import compute_fix
from rl.tasks.patch import make_patch
from rl.tasks.synthetic.generator import (KilledMutant, function_split, killed_mutants, library_functions,
                                          library_hash)
from rl.tasks.synthetic.library import LibraryFunction
from rl.tasks.synthetic.mutate import TIMED_OUT, prefilter

GENERATOR_VERSION = "1"
INFO_NAME = "long_horizon.json"
SOURCE_NAME = "synthetic_long"
PUBLIC_TEST_FILE = "test_public.py"
PUBLIC_TEST_COMMAND = f"python -m pytest -q --tb=short {PUBLIC_TEST_FILE}"
TIMEOUT_S = 20
EXPERT_PLAN = "call_chain"  # rl.tasks.long_horizon.expert
VARIANTS = ("single", "two_lines", "two_places")
STYLES = ("entry", "tests")
DEFAULT_VARIANT_WEIGHTS = {"single": 0.7, "two_lines": 0.15, "two_places": 0.15}
DEFAULT_STYLE_WEIGHTS = {"entry": 0.5, "tests": 0.5}

# Module names: nouns that name no module of the standard library or of pytest's dependencies
# (a workspace module shadows them: the tests import from the workspace root). Checked by
# tests/test_long_horizon.py.
MODULE_NAMES = (
    "anchor", "anvil", "arrow", "badger", "bamboo", "barrel", "basket", "beacon", "blossom", "bramble",
    "bucket", "cactus", "candle", "canyon", "carpet", "cedar", "cellar", "chisel", "cinder", "clover",
    "cobalt", "comet", "compass", "copper", "coral", "cradle", "crater", "crystal", "dagger", "dune",
    "ember", "fabric", "falcon", "feather", "fennel", "fjord", "forest", "fossil", "garnet", "glacier",
    "granite", "gravel", "hammer", "harbor", "harvest", "helmet", "heron", "hollow", "island", "ivory",
    "jasper", "juniper", "kettle", "ladder", "lagoon", "lantern", "ledger", "lily", "magnet", "mantle",
    "maple", "marble", "meadow", "mirror", "mosaic", "nectar", "nickel", "nutmeg", "orchard", "oyster",
    "paddle", "parcel", "pebble", "pepper", "pigeon", "pillar", "plume", "prism", "quarry", "quartz",
    "quiver", "raven", "reef", "ribbon", "ridge", "rocket", "saddle", "saffron", "scroll", "shovel",
    "sierra", "silver", "sketch", "spindle", "spruce", "summit", "tablet", "thimble", "thistle", "timber",
    "torch", "trellis", "tulip", "tundra", "tunnel", "turnip", "umber", "valley", "velvet", "vessel",
    "violet", "wagon", "walnut", "walrus", "willow", "winter", "yarrow", "zephyr",
)
# Module prefixes of numbered chains (naming "numbered": the entry is <prefix>1.py, the function
# it calls is in <prefix>2.py, ...). The tiny model does not learn to copy an arbitrary word
# from its context in the SFT a run can afford (docs/ablations.md, the long-horizon family), but
# it can count; held-out tasks use held-out prefixes.
PREFIXES = ("step", "layer", "stage", "level", "part", "unit", "tier", "phase", "hop", "link")
# "step": every chain is step1.py, step2.py, ... (the split is then by function and wrapper names).
NAMINGS = ("numbered", "step", "words")
# Names of the functions on the way: verbs, none a builtin or a library function's name.
WRAPPER_NAMES = (
    "assess", "audit", "bundle", "capture", "classify", "collect", "combine", "consult", "convert",
    "deliver", "derive", "digest", "dispatch", "estimate", "evaluate", "examine", "extract", "fetch",
    "finalize", "forward", "gather", "gauge", "handle", "inspect", "judge", "launch", "lookup", "marshal",
    "measure", "narrow", "observe", "obtain", "pick", "poll", "prepare", "probe", "process", "produce",
    "query", "quote", "rank", "rate", "reckon", "relay", "render", "report", "resolve", "retrieve",
    "review", "route", "scan", "screen", "settle", "sift", "summarize", "survey", "tabulate", "tally",
    "trace", "track", "unpack", "verify", "vet", "watch", "weigh", "whittle", "adjust", "align",
    "annotate", "arrange", "assemble", "balance", "cluster", "condense", "curate", "distill", "frame",
    "glean", "muster", "ponder", "refine", "tidy",
)
# Bodies of the functions on the way; {xs} is where the two_places bug drops an element.
_WRAPPER_TEMPLATES = (
    "from {module} import {callee}\n\n\ndef {name}({params}):\n    return {callee}({xs}{rest})\n",
    "from {module} import {callee}\n\n\ndef {name}({params}):\n    result = {callee}({xs}{rest})\n    return result\n",
    "from {module} import {callee}\n\n\ndef {name}({params}):\n    values = list({xs})\n    return {callee}(values{rest})\n",
)
WRAPPER_BUG = "xs[1:]"  # the two_places bug on the way: the first element is dropped


@dataclasses.dataclass(frozen=True)
class LongSettings:
  """What a long-horizon task root is generated from (config.tasks.long; the cache key)."""
  num_tasks: int
  seed: int = 0
  min_depth: int = 1
  max_depth: int = 12
  library: str = "families"
  heldout_fraction: float = 0.2
  variant_weights: tuple[tuple[str, float], ...] = tuple(DEFAULT_VARIANT_WEIGHTS.items())
  style_weights: tuple[tuple[str, float], ...] = tuple(DEFAULT_STYLE_WEIGHTS.items())
  max_distractors: int = 2
  split: str = ""  # "" both splits; "train" or "heldout" only that one
  stable_runs: int = 2
  naming: str = "numbered"  # chain modules: "numbered" (<prefix>1.py, <prefix>2.py, ...) or "words"

  def __post_init__(self):
    if self.num_tasks <= 0:
      raise ValueError(f"long-horizon tasks: num_tasks must be positive, got {self.num_tasks}")
    if not 1 <= self.min_depth <= self.max_depth:
      raise ValueError(f"long-horizon tasks: need 1 <= min_depth <= max_depth, got {self.min_depth}..{self.max_depth}")
    if self.naming not in NAMINGS:
      raise ValueError(f"long-horizon tasks: naming must be one of {', '.join(NAMINGS)}, got {self.naming!r}")
    if self.library != "families":
      raise ValueError(f"long-horizon tasks: library must be 'families' (functions of a list `xs`), got {self.library!r}")
    deepest = min(len(_pool(WRAPPER_NAMES, "heldout", self.heldout_fraction)),
                  len(_pool(MODULE_NAMES, "heldout", self.heldout_fraction)) - 1 - self.max_distractors)
    if self.max_depth > deepest:
      raise ValueError(f"long-horizon tasks: max_depth {self.max_depth} is above {deepest}, the deepest chain "
                       "the held-out name pools can spell")
    if self.split not in ("", "train", "heldout"):
      raise ValueError(f"long-horizon tasks: split must be '', 'train' or 'heldout', got {self.split!r}")
    if not 0.0 < self.heldout_fraction < 1.0:
      raise ValueError(f"long-horizon tasks: heldout_fraction must be in (0, 1), got {self.heldout_fraction}")
    if self.max_distractors < 0 or self.stable_runs < 1:
      raise ValueError("long-horizon tasks: max_distractors must be >= 0 and stable_runs >= 1")
    for field, known in (("variant_weights", VARIANTS), ("style_weights", STYLES)):
      weights = dict(getattr(self, field))
      unknown = set(weights) - set(known)
      if unknown or not weights or any(w < 0 for w in weights.values()) or not sum(weights.values()) > 0:
        raise ValueError(f"long-horizon tasks: {field} {weights} must give non-negative weights, not all 0, "
                         f"to names among {', '.join(known)}")

  def to_json(self) -> dict[str, Any]:
    d = dataclasses.asdict(self)
    d["variant_weights"] = dict(self.variant_weights)
    d["style_weights"] = dict(self.style_weights)
    return d


@dataclasses.dataclass(frozen=True)
class ChainSpec:
  """One task before it is written: the chain, the bugs and how the task is stated."""
  depth: int  # calls from the entry function down to the buggy one
  mutants: tuple[KilledMutant, ...]  # the bottom function's bugs (one, or two on two lines)
  modules: tuple[str, ...]  # depth + 1 module stems, the entry's first, the buggy function's last
  wrappers: tuple[str, ...]  # the depth functions on the way, the entry first
  templates: tuple[int, ...]  # each wrapper's body (_WRAPPER_TEMPLATES)
  distractors: tuple[LibraryFunction, ...]
  distractor_modules: tuple[str, ...]
  style: str
  variant: str
  wrapper_bug: int | None  # index of the wrapper carrying the two_places bug
  split: str

  @property
  def leaf(self) -> LibraryFunction:
    return self.mutants[0].fn


def name_split(name: str, pool: Sequence[str], heldout_fraction: float) -> str:
  """Held-out membership of a pool name: the round(fraction * len(pool)) names of lowest hash
  are held out (an exact share, stable across seeds and runs)."""
  ranked = sorted(pool, key=lambda n: hashlib.sha256(f"split:{n}".encode()).hexdigest())
  heldout = set(ranked[:max(1, round(heldout_fraction * len(pool)))])
  return "heldout" if name in heldout else "train"


def _pool(pool: Sequence[str], split: str, heldout_fraction: float) -> list[str]:
  return [n for n in pool if name_split(n, pool, heldout_fraction) == split]


def _bounded(fn: LibraryFunction) -> bool:
  return f"def {fn.name}(xs, k)" in fn.code


def _params(fn: LibraryFunction) -> str:
  signature = fn.code.split("(", 1)[1].split(")", 1)[0]
  return signature


def _wrapper(spec: ChainSpec, i: int, *, buggy: bool) -> str:
  """The module of wrapper i (0 = the entry), calling wrapper i+1 or the buggy function."""
  callee = spec.wrappers[i + 1] if i + 1 < spec.depth else spec.leaf.name
  xs = WRAPPER_BUG if buggy and spec.wrapper_bug == i else "xs"
  return _WRAPPER_TEMPLATES[spec.templates[i]].format(
      module=spec.modules[i + 1], callee=callee, name=spec.wrappers[i], params=_params(spec.leaf),
      xs=xs, rest=", k" if _bounded(spec.leaf) else "")


def _leaf(spec: ChainSpec, mutated: Sequence[KilledMutant]) -> str:
  lines = spec.leaf.code.splitlines(keepends=True)
  for km in mutated:
    lines[km.mutation.line] = km.mutation.new_line + "\n"
  return "".join(lines)


def _modules(spec: ChainSpec, *, wrapper_bug: bool, mutated: Sequence[KilledMutant]) -> dict[str, str]:
  files = {f"{spec.modules[i]}.py": _wrapper(spec, i, buggy=wrapper_bug) for i in range(spec.depth)}
  files[f"{spec.modules[-1]}.py"] = _leaf(spec, mutated)
  for stem, fn in zip(spec.distractor_modules, spec.distractors):
    files[f"{stem}.py"] = fn.code
  return files


def _entry_cases(spec: ChainSpec) -> list[tuple[str, Any]]:
  """The buggy function's cases, called through the entry function."""
  name, entry = spec.leaf.name, spec.wrappers[0]
  return [(entry + expr[len(name):], expected) for expr, expected in spec.leaf.cases]


def _one_module(spec: ChainSpec, *, wrapper_bug: bool, mutated: Sequence[KilledMutant]) -> str:
  """The chain as one module (imports dropped), for the in-process pre-check of its cases."""
  files = _modules(spec, wrapper_bug=wrapper_bug, mutated=mutated)
  chain = [f"{m}.py" for m in spec.modules]
  body = [line for path in chain for line in files[path].splitlines(keepends=True) if not line.startswith("from ")]
  return "".join(body)


def _check_jobs(spec: ChainSpec) -> list[tuple[str, list]]:
  """States whose cases must fail: the initial one, and for two-edit variants each half-fixed one."""
  cases = _entry_cases(spec)
  bug = spec.wrapper_bug is not None
  jobs = [(_one_module(spec, wrapper_bug=bug, mutated=spec.mutants), cases)]
  if spec.variant == "two_lines":
    jobs += [(_one_module(spec, wrapper_bug=False, mutated=[km]), cases) for km in spec.mutants]
  if spec.variant == "two_places":
    jobs += [(_one_module(spec, wrapper_bug=True, mutated=()), cases),
             (_one_module(spec, wrapper_bug=False, mutated=spec.mutants), cases)]
  return jobs


def _test_file(spec: ChainSpec, indices: Sequence[int]) -> str:
  entry_module, entry = spec.modules[0], spec.wrappers[0]
  cases = _entry_cases(spec)
  lines = [f"from {entry_module} import {entry}"]
  for i in indices:
    expr, expected = cases[i]
    lines.append(f"\n\ndef test_{entry}_{i}():\n    assert {expr} == {expected!r}")
  return "\n".join(lines) + "\n"


def build_task(spec: ChainSpec, failing: Sequence[int], rng: random.Random) -> dict[str, Any]:
  """The files and metadata of one spec (not yet verified); `failing` are the indices of the
  cases the initial state fails (the public tests hold one or two of them)."""
  buggy = _modules(spec, wrapper_bug=spec.wrapper_bug is not None, mutated=spec.mutants)
  original = _modules(spec, wrapper_bug=False, mutated=())
  passing = [i for i in range(len(spec.leaf.cases)) if i not in failing]
  public = sorted(rng.sample(list(failing), min(2, len(failing))) + rng.sample(passing, min(1, len(passing))))
  repo_files = dict(buggy)
  repo_files[PUBLIC_TEST_FILE] = _test_file(spec, public)
  hidden = {"test_hidden.py": _test_file(spec, range(len(spec.leaf.cases)))}
  entry_path, entry = f"{spec.modules[0]}.py", spec.wrappers[0]
  run_public = f"Run `{PUBLIC_TEST_COMMAND}` to see the failing tests."
  if spec.style == "entry":
    statement = (f"`{entry}` in `{entry_path}` returns wrong results. The bug may be in a function it calls. "
                 f"Fix it.\n{run_public}\n")
  else:
    statement = f"A test in `{PUBLIC_TEST_FILE}` fails. Find the bug and fix it.\n{run_public}\n"
  chain = [{"path": f"{m}.py", "function": f} for m, f in zip(spec.modules, spec.wrappers + (spec.leaf.name,))]
  # The fix in chain order, one file at a time (the expert edits a file right after reading it).
  fix = []
  for step in chain:
    path = step["path"]
    if buggy[path] != original[path]:
      fix += compute_fix({path: buggy[path]}, {path: original[path]}) or []
  mutations = [{"path": chain[-1]["path"], "function": spec.leaf.name, "operator": km.mutation.operator,
                "buggy_line": km.mutation.new_line, "original_line": km.mutation.old_line} for km in spec.mutants]
  if spec.wrapper_bug is not None:
    path = chain[spec.wrapper_bug]["path"]
    mutations.append({"path": path, "function": spec.wrappers[spec.wrapper_bug], "operator": "dropped_element",
                      "buggy_line": next(l for l in buggy[path].splitlines() if WRAPPER_BUG in l),
                      "original_line": next(l for l in original[path].splitlines()
                                            if l not in buggy[path].splitlines())})
  digest = hashlib.sha256(json.dumps([sorted(buggy.items()), spec.style]).encode()).hexdigest()[:8]
  tid = f"long-d{spec.depth:02d}-{spec.leaf.name.lower()}-{digest}"
  metadata = {
      "id": tid, "version": GENERATOR_VERSION, "source": SOURCE_NAME,
      "license": "Apache-2.0 (generated from this project's function library)",
      "language": "python", "grader": "pytest", "hidden_tests_dest": "tests",
      "test_command": "python -m pytest -q tests", "timeout_s": TIMEOUT_S, "split": spec.split,
      "difficulty": "long", "depth": spec.depth, "variant": spec.variant, "statement_style": spec.style,
      "public_tests": [PUBLIC_TEST_FILE], "public_test_command": PUBLIC_TEST_COMMAND,
      "tags": [SOURCE_NAME, f"depth{spec.depth}", spec.variant, spec.style],
      "functions": [spec.leaf.name], "entry": chain[0], "chain": chain,
      "distractors": [f"{m}.py" for m in spec.distractor_modules],
      "mutations": mutations, "fix": fix, "expert_plan": EXPERT_PLAN,
  }
  return {"statement": statement, "repo_files": repo_files, "test_files": hidden, "metadata": metadata,
          "solution_patch": make_patch(buggy, original)}


def _weighted(rng: random.Random, weights: Mapping[str, float]) -> str:
  names = sorted(n for n, w in weights.items() if w > 0)
  return rng.choices(names, weights=[weights[n] for n in names])[0]


class _Planner:
  """Draws specs: depths in shuffled rounds over [min_depth, max_depth] (every depth equally
  often), buggy functions of the split, names from the split's pools."""

  def __init__(self, settings: LongSettings, killed: Sequence[KilledMutant], functions: Sequence[LibraryFunction]):
    self.s = settings
    self.rng = random.Random(f"long:{settings.seed}")
    self.by_fn: dict[str, list[KilledMutant]] = collections.defaultdict(list)
    for km in killed:
      self.by_fn[km.fn.name].append(km)
    self.split_of = {fn.name: function_split(fn, settings.heldout_fraction) for fn in functions}
    self.functions = {split: [fn for fn in functions if self.split_of[fn.name] == split] for split in ("train", "heldout")}
    self.leaves = {split: sorted(n for n in self.by_fn if self.split_of[n] == split) for split in ("train", "heldout")}
    self.modules = {split: _pool(MODULE_NAMES, split, settings.heldout_fraction) for split in ("train", "heldout")}
    self.wrappers = {split: _pool(WRAPPER_NAMES, split, settings.heldout_fraction) for split in ("train", "heldout")}
    self.prefixes = {split: _pool(PREFIXES, split, settings.heldout_fraction) for split in ("train", "heldout")}
    self._depths: list[int] = []

  def _depth(self) -> int:
    if not self._depths:
      self._depths = list(range(self.s.min_depth, self.s.max_depth + 1))
      self.rng.shuffle(self._depths)
    return self._depths.pop()

  def draw(self) -> ChainSpec:
    rng = self.rng
    depth = self._depth()
    if self.s.split:
      split = self.s.split
    else:  # a function drawn from all: the splits' shares follow the library's
      split = self.split_of[rng.choice(sorted(self.by_fn))]
    leaf_name = rng.choice(self.leaves[split])
    variant = _weighted(rng, dict(self.s.variant_weights))
    kms = self.by_fn[leaf_name]
    if variant == "two_lines":
      # Lines apart, so the fix is two edits (adjacent lines would make one).
      pairs = [(a, b) for i, a in enumerate(kms) for b in kms[i + 1:] if abs(a.mutation.line - b.mutation.line) > 1]
      mutants = rng.choice(pairs) if pairs else (rng.choice(kms),)
      variant = variant if pairs else "single"
    else:
      mutants = (rng.choice(kms),)
    leaf = mutants[0].fn
    others = [fn for fn in self.functions[split] if fn.name != leaf.name]
    distractors = tuple(rng.sample(others, rng.randint(min(1, self.s.max_distractors), self.s.max_distractors)))
    modules = rng.sample(self.modules[split], depth + 1 + len(distractors))
    if self.s.naming in ("numbered", "step"):  # the chain numbered, the distractors still words
      prefix = rng.choice(self.prefixes[split]) if self.s.naming == "numbered" else "step"
      modules = [f"{prefix}{i}" for i in range(1, depth + 2)] + modules[depth + 1:]
    wrappers = tuple(rng.sample(self.wrappers[split], depth))
    return ChainSpec(depth=depth, mutants=tuple(mutants), modules=tuple(modules[:depth + 1]), wrappers=wrappers,
                     templates=tuple(rng.randrange(len(_WRAPPER_TEMPLATES)) for _ in range(depth)),
                     distractors=distractors, distractor_modules=tuple(modules[depth + 1:]),
                     style=_weighted(rng, dict(self.s.style_weights)), variant=variant,
                     wrapper_bug=rng.randrange(depth) if variant == "two_places" else None, split=split)


@dataclasses.dataclass
class LongResult:
  tasks: list[Task]
  rejected: list[dict[str, Any]]
  info: dict[str, Any]


def generate_long(out: str | os.PathLike, settings: LongSettings, *, grader: str = "sandbox",
                  sandbox_config: Any = None, workers: int = 2, log: Callable[[str], None] = lambda s: None,
                  progress: Callable[[int, int, str], None] | None = None) -> LongResult:
  """Generates `settings.num_tasks` verified long-horizon tasks into `out` (replacing what is there).

  `progress(done, wanted, note)` hears of each verified batch (rl.tasks.sources.TaskProgress).
  """
  from rl.tasks.verify import TaskVerifier  # pylint: disable=import-outside-toplevel
  start = time.monotonic()
  functions = library_functions(settings.library)
  out = pathlib.Path(out)
  if out.exists() and any(out.iterdir()):
    if not (out / INFO_NAME).is_file():
      raise TaskError(f"refusing to overwrite {out}: it is not empty and was not written by this generator")
    shutil.rmtree(out)
  staging = out / ".staging"
  staging.mkdir(parents=True)
  kept: list[Task] = []
  rejected: list[dict[str, Any]] = []

  def report(note: str) -> None:
    log(f"{note} ({time.monotonic() - start:.1f}s)")
    if progress is not None:
      progress(len(kept), settings.num_tasks, note)

  if progress is not None:
    progress(0, settings.num_tasks, "")
  killed = killed_mutants(functions, workers=workers)
  planner = _Planner(settings, killed, functions)
  for split in ("train", "heldout"):
    if settings.split in ("", split) and not planner.leaves[split]:
      raise TaskError(f"long-horizon tasks: library {settings.library!r} has no {split} function with a usable bug")
  report(f"pre-filter: {len(killed)} killed mutants of {len(functions)} functions")
  verifiers = [TaskVerifier(grader, workers=workers, sandbox_config=sandbox_config) for _ in range(settings.stable_runs)]
  spec_rng = random.Random(f"long-public:{settings.seed}")
  seen: set[str] = set()
  attempts = 0
  while len(kept) < settings.num_tasks:
    need = settings.num_tasks - len(kept)
    attempts += 1
    if attempts > 50:
      raise TaskError(f"long-horizon tasks: only {len(kept)} of {settings.num_tasks} verified after 50 rounds "
                      f"(last rejections: {rejected[-3:]})")
    specs = [planner.draw() for _ in range(need + need // 4 + 2)]
    jobs = [job for spec in specs for job in _check_jobs(spec)]
    results = iter(prefilter(jobs, workers=workers))
    staged, staged_specs = [], []
    for spec in specs:
      outcomes = [next(results) for _ in _check_jobs(spec)]
      if any(r is None or not r or TIMED_OUT in r for r in outcomes):
        rejected.append({"spec": f"{spec.leaf.name} depth {spec.depth} {spec.variant}",
                         "reason": "a state that must fail passes every case (or errs, or times out)"})
        continue
      task_spec = build_task(spec, outcomes[0], spec_rng)
      tid = task_spec["metadata"]["id"]
      if tid in seen:
        continue
      seen.add(tid)
      staged.append(write_task(staging, **task_spec))
      staged_specs.append(spec)
    runs = [verifier.verify_many(staged) for verifier in verifiers]
    for i, task in enumerate(staged):
      verdicts = [run[i] for run in runs]
      if all(v.ok for v in verdicts) and len(kept) < settings.num_tasks:
        dest = out / task.id
        shutil.move(str(task.dir), dest)
        kept.append(load_task(dest))
      else:
        bad = next((v for v in verdicts if not v.ok), None)
        if bad is not None:
          rejected.append({"id": task.id, "reason": bad.reason or "unstable"})
        shutil.rmtree(task.dir, ignore_errors=True)
    report(f"long-horizon: {len(kept)}/{settings.num_tasks} verified")
  shutil.rmtree(staging, ignore_errors=True)
  write_manifest(out, kept)
  info = {"generator_version": GENERATOR_VERSION, "settings": settings.to_json(), "grader": grader,
          "library_hash": library_hash(settings.library), "tasks": len(kept),
          "by_split": dict(collections.Counter(t.split for t in kept)),
          "by_depth": {str(k): v for k, v in sorted(collections.Counter(t.metadata["depth"] for t in kept).items())},
          "by_variant": dict(collections.Counter(t.metadata["variant"] for t in kept)),
          "heldout_functions": sorted(n for n, s in planner.split_of.items() if s == "heldout"),
          "rejected": len(rejected), "wall_time_s": round(time.monotonic() - start, 2)}
  (out / INFO_NAME).write_text(json.dumps(info, indent=2) + "\n")
  return LongResult(kept, rejected, info)


def cached_or_generate_long(out: str | os.PathLike, settings: LongSettings, *, grader: str = "sandbox",
                            progress: Callable[[int, int, str], None] | None = None, **kwargs: Any) -> list[Task]:
  """Loads `out` when it was generated with the same settings; generates it otherwise. Processes
  sharing `out` take turns on a lock file next to it (the first generates, the others load)."""
  out = pathlib.Path(out)
  out.parent.mkdir(parents=True, exist_ok=True)
  with open(out.parent / f".{out.name}.lock", "w") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
      info_path = out / INFO_NAME
      if info_path.is_file() and (out / MANIFEST_NAME).is_file():
        try:
          info = json.loads(info_path.read_text())
        except json.JSONDecodeError:
          info = {}
        if (info.get("generator_version") == GENERATOR_VERSION and info.get("settings") == settings.to_json()
            and info.get("library_hash") == library_hash(settings.library)):
          tasks = load_task_root(out)
          if progress is not None:
            progress(len(tasks), len(tasks), f"{len(tasks)} cached in {out}")
          return tasks
      return generate_long(out, settings, grader=grader, progress=progress, **kwargs).tasks
    finally:
      fcntl.flock(lock, fcntl.LOCK_UN)


def bug_identity(task: Task) -> tuple[str, tuple[str, ...]]:
  """A long-horizon task's bugs in its buggy function, whatever the chain above it: the function
  and its buggy lines (make_base.py keeps the experiment's bugs out of the base's corpus)."""
  mutations = [m for m in task.metadata["mutations"] if m["function"] == task.metadata["functions"][0]]
  return (task.metadata["functions"][0], tuple(sorted(m["buggy_line"] for m in mutations)))
