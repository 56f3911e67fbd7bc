"""Scheduler: named jobs with a priority and the jobs they depend on."""

import heapq


class CycleError(ValueError):
  """Raised by run_order when some jobs can never run; `.jobs` names them in the order added."""

  def __init__(self, jobs):
    super().__init__(f"jobs that can never run: {', '.join(map(str, jobs))}")
    self.jobs = list(jobs)


class Scheduler:
  """A job is ready once every job it depends on is done. Among ready jobs the highest priority
  runs first; jobs of equal priority run in the order they were added."""

  def __init__(self):
    self._priority = {}   # name -> priority, in the order added
    self._index = {}      # name -> position in the order added
    self._deps = {}       # name -> the names it waits for
    self._done = set()

  def add(self, name, priority=0, deps=()):
    """Adds job `name`; `deps` is any iterable of names (added before or after this job)."""
    if name in self._priority:
      raise ValueError(f"duplicate job: {name!r}")
    self._index[name] = len(self._index)
    self._priority[name] = priority
    self._deps[name] = list(deps)

  def __len__(self):
    return len(self._priority)

  def _key(self, name):
    return (-self._priority[name], name)

  def _unknown(self):
    return sorted({d for deps in self._deps.values() for d in deps if d not in self._priority}, key=str)

  def ready(self):
    """The jobs not done whose dependencies are all done, in the order they would run."""
    jobs = [n for n in self._priority
            if n not in self._done and all(d in self._done for d in self._deps[n])]
    return sorted(jobs, key=self._key)

  def done(self, name):
    """Marks a ready job done; ValueError if it is unknown, already done or still waiting."""
    if name not in self._priority or name in self._done:
      raise ValueError(f"not a pending job: {name!r}")
    if any(d not in self._done for d in self._deps[name]):
      raise ValueError(f"job {name!r} is still waiting")
    self._done.add(name)

  def run_order(self):
    """Every job not yet done, in the order they would run if each were done as soon as it is
    first in ready(). KeyError names an unknown dependency; CycleError lists the jobs that can
    never run."""
    unknown = self._unknown()
    if unknown:
      raise KeyError(unknown[0])
    waiting = {}
    dependents = {n: [] for n in self._priority}
    for name, deps in self._deps.items():
      if name in self._done:
        continue
      waiting[name] = 0
      for dep in deps:
        if dep not in self._done:
          waiting[name] += 1
          dependents[dep].append(name)
    heap = [self._key(n) + (n,) for n, count in waiting.items() if count == 0]
    heapq.heapify(heap)
    order = []
    while heap:
      name = heapq.heappop(heap)[-1]
      order.append(name)
      for other in set(dependents[name]):
        waiting[other] -= 1
        if waiting[other] == 0:
          heapq.heappush(heap, self._key(other) + (other,))
    if len(order) < len(waiting):
      placed = set(order)
      raise CycleError([n for n in self._priority if n in waiting and n not in placed])
    return order
