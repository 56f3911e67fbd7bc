import random

import pytest

from jobgraph import CycleError, Scheduler

WORDS = ["build", "test", "lint", "docs", "pack", "sign", "push", "fetch", "clean", "bench", "audit",
         "index", "merge", "tag", "zip", "unzip", "cache", "warm", "probe", "report"]


def reference_order(jobs, done=()):
  """The run order of `jobs` ([(name, priority, deps)], in the order added), the slow way:
  repeatedly take the best ready job. None when some job can never run."""
  done = set(done)
  pending = [j for j in jobs if j[0] not in done]
  order = []
  while pending:
    ready = [(i, j) for i, j in enumerate(pending) if all(d in done for d in j[2])]
    if not ready:
      return None
    best = max(ready, key=lambda r: (r[1][1], -r[0]))[1]
    order.append(best[0])
    done.add(best[0])
    pending = [j for j in pending if j[0] != best[0]]
  return order


def build(jobs):
  s = Scheduler()
  for name, priority, deps in jobs:
    s.add(name, priority=priority, deps=deps)
  return s


def test_equal_priority_in_order_added():
  s = build([("zip", 0, []), ("all", 0, []), ("mid", 0, [])])
  assert s.ready() == ["zip", "all", "mid"]
  assert s.run_order() == ["zip", "all", "mid"]


def test_priority_then_order_added():
  s = build([("tag", 1, []), ("push", 3, []), ("fetch", 1, []), ("audit", 3, [])])
  assert s.ready() == ["push", "audit", "tag", "fetch"]
  assert s.run_order() == ["push", "audit", "tag", "fetch"]


def test_released_job_takes_its_place():
  s = build([("sign", 0, []), ("pack", 0, ["sign"]), ("docs", 0, [])])
  assert s.run_order() == ["sign", "pack", "docs"]
  s.done("sign")
  assert s.ready() == ["pack", "docs"]


def test_duplicate_dependency():
  s = build([("a", 0, []), ("b", 0, []), ("c", 0, ["a", "a"])])
  assert s.run_order() == ["a", "b", "c"]
  s.done("a")
  assert s.ready() == ["b", "c"]


def test_duplicate_dependencies_in_chain():
  s = build([("fetch", 2, []), ("build", 1, ["fetch", "fetch"]), ("test", 1, ["build", "build", "fetch"])])
  assert s.run_order() == ["fetch", "build", "test"]


def test_dependency_added_later():
  s = build([("deploy", 5, ["test"]), ("test", 0, [])])
  assert s.ready() == ["test"]
  assert s.run_order() == ["test", "deploy"]


def test_unknown_dependency():
  s = build([("a", 0, ["ghost"])])
  with pytest.raises(KeyError):
    s.run_order()


def test_cycle_lists_stuck_jobs():
  s = build([("x", 0, []), ("c", 0, ["b"]), ("b", 0, ["c"]), ("d", 0, ["b", "b"])])
  with pytest.raises(CycleError) as info:
    s.run_order()
  assert info.value.jobs == ["c", "b", "d"]


def test_done_rules():
  s = build([("a", 0, []), ("b", 0, ["a", "a"])])
  with pytest.raises(ValueError):
    s.done("b")
  s.done("a")
  with pytest.raises(ValueError):
    s.done("a")
  s.done("b")
  assert s.ready() == [] and s.run_order() == []


def random_jobs(rng, count):
  names = rng.sample(WORDS, count)
  jobs = []
  for i, name in enumerate(names):
    picks = rng.sample(names[:i], rng.randint(0, min(i, 3)))
    deps = [d for d in picks for _ in range(rng.choice((1, 1, 2)))]
    jobs.append((name, rng.randint(0, 3), deps))
  return jobs


@pytest.mark.parametrize("seed", range(40))
def test_seeded_run_order(seed):
  rng = random.Random(seed)
  jobs = random_jobs(rng, rng.randint(3, 12))
  assert build(jobs).run_order() == reference_order(jobs)


class SchedulerMachine:
  """A hand-written rule-based state machine: random steps on a Scheduler and on a model."""

  def __init__(self, seed):
    self.rng = random.Random(seed)
    self.scheduler = Scheduler()
    self.jobs = []
    self.done = []

  def rule_add(self):
    free = [w for w in WORDS if w not in {j[0] for j in self.jobs}]
    if not free:
      return
    name = self.rng.choice(free)
    known = [j[0] for j in self.jobs]
    deps = self.rng.sample(known, self.rng.randint(0, min(2, len(known))))
    deps = [d for d in deps for _ in range(self.rng.choice((1, 2)))]
    priority = self.rng.randint(0, 2)
    self.scheduler.add(name, priority=priority, deps=deps)
    self.jobs.append((name, priority, deps))

  def rule_finish_first(self):
    ready = self.scheduler.ready()
    if ready:
      self.scheduler.done(ready[0])
      self.done.append(ready[0])

  def invariants(self):
    expected = reference_order(self.jobs, self.done)
    assert self.scheduler.run_order() == expected
    ready = self.scheduler.ready()
    assert ready[:1] == expected[:1]
    assert len(self.scheduler) == len(self.jobs)

  def run(self, steps):
    for _ in range(steps):
      rule = self.rng.choice([self.rule_add, self.rule_add, self.rule_finish_first])
      rule()
      self.invariants()


@pytest.mark.parametrize("seed", range(25))
def test_state_machine(seed):
  SchedulerMachine(seed).run(30)
