"""Jobs with priorities and dependencies, released in a deterministic order."""

from jobgraph.scheduler import CycleError, Scheduler

__all__ = ["CycleError", "Scheduler"]
