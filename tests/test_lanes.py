"""rl.lanes: lane counts and bounds, and the thread pool that runs one call per lane."""

import threading
import time

import pytest

from rl import lanes


def test_lane_bounds_split_rows_into_near_equal_blocks_of_whole_units():
  assert lanes.lane_bounds(7, 3) == (0, 2, 5, 7)
  assert lanes.lane_bounds(2, 4) == (0, 1, 2)  # never an empty lane
  assert lanes.lane_bounds(12, 2, unit=2) == (0, 6, 12)
  assert lanes.lane_bounds(12, 4, unit=4) == (0, 4, 8, 12)  # three micro-batches: three lanes
  assert lanes.lane_bounds(4, 8, unit=4) == (0, 4)
  assert [lanes.even_lanes(6, n) for n in (1, 2, 4, 8)] == [1, 2, 3, 6]
  assert lanes.even_lanes(3, 2) == 1 and lanes.even_lanes(0, 4) == 1


def test_auto_lanes_is_one_on_a_mesh_and_at_most_the_cores():
  assert lanes.auto_lanes(mesh=object()) == 1
  assert 1 <= lanes.auto_lanes() <= min(lanes.cpu_cores(), lanes.MAX_LANES)


def test_pool_keeps_the_order_and_bounds_how_many_run_at_once():
  pool = lanes.LanePool("test-lane")
  running, most, lock = [0], [0], threading.Lock()

  def call(item):
    with lock:
      running[0] += 1
      most[0] = max(most[0], running[0])
    time.sleep(0.05)
    with lock:
      running[0] -= 1
    return item * item

  assert pool.map(call, range(6), workers=2) == [0, 1, 4, 9, 16, 25]
  assert most[0] == 2
  most[0] = 0
  assert pool.map(call, range(3)) == [0, 1, 4]  # workers 0: all at once
  assert most[0] == 3
  assert pool.map(call, [5]) == [25]  # one call runs in the caller's thread


def test_pool_raises_a_lanes_exception_after_the_others_end():
  pool = lanes.LanePool("test-lane")
  finished = []

  def call(item):
    if item == 0:
      raise ValueError("lane 0 failed")
    time.sleep(0.05)
    finished.append(item)
    return item

  with pytest.raises(ValueError, match="lane 0 failed"):
    pool.map(call, range(3))
  assert sorted(finished) == [1, 2]
