import pytest

from jobgraph import CycleError, Scheduler


def test_priority_first():
  s = Scheduler()
  s.add("a", priority=1)
  s.add("b", priority=5)
  s.add("c", priority=3)
  assert s.ready() == ["b", "c", "a"]


def test_dependencies_wait():
  s = Scheduler()
  s.add("build")
  s.add("test", deps=["build"])
  s.add("deploy", priority=9, deps=["test"])
  assert s.ready() == ["build"]
  assert s.run_order() == ["build", "test", "deploy"]
  s.done("build")
  assert s.ready() == ["test"]


def test_equal_priority_keeps_order():
  s = Scheduler()
  for name in ("a", "b", "c"):
    s.add(name)
  assert s.run_order() == ["a", "b", "c"]


def test_cycle():
  s = Scheduler()
  s.add("a", deps=["b"])
  s.add("b", deps=["a"])
  s.add("c")
  with pytest.raises(CycleError) as info:
    s.run_order()
  assert info.value.jobs == ["a", "b"]
