"""The length-split advantage diagnostics and the zero-variance group share (metrics.length_split_metrics)."""

import numpy as np
import pytest

from rl.train.metrics import length_split_metrics


def _rows(turns_per_row, T=12):
  """[B, T] action mask and turn ids: row b has turns_per_row[b] turns of two action tokens each,
  each followed by one observation token."""
  B = len(turns_per_row)
  mask = np.zeros((B, T), np.float32)
  turn_ids = np.zeros((B, T), np.int32)
  for b, n in enumerate(turns_per_row):
    pos = 0
    for t in range(n):
      mask[b, pos:pos + 2] = 1
      turn_ids[b, pos:pos + 3] = t
      pos += 3
  return mask, turn_ids


def test_long_successes_and_short_failures_are_split_by_the_median_turn_count():
  mask, turn_ids = _rows([4, 1, 4, 1])  # median 2.5: rows 0 and 2 long, 1 and 3 short
  adv = np.zeros(mask.shape, np.float32)
  adv[0] = np.where(turn_ids[0] < 3, 1.0, 5.0) * mask[0]  # early 1.0, the 4th turn 5.0
  adv[1] = -2.0 * mask[1]
  adv[2] = 0.5 * mask[2]  # a long failure: in neither split
  adv[3] = 7.0 * mask[3]  # a short success: in neither split
  m = length_split_metrics(adv, mask, turn_ids, success=np.array([True, False, False, True]),
                           scores=np.array([1.0, 0.0, 0.0, 1.0]), group_ids=np.array([0, 0, 1, 1]),
                           real=np.ones(4, bool))
  assert m["adv_len/long_success_early"] == pytest.approx(1.0)
  assert m["adv_len/long_success"] == pytest.approx((6 * 1.0 + 2 * 5.0) / 8)
  assert m["adv_len/short_failure"] == pytest.approx(-2.0)
  assert m["adv_len/long_success_frac"] == pytest.approx(0.25)
  assert m["adv_len/short_failure_frac"] == pytest.approx(0.25)
  assert m["groups/zero_variance_frac"] == pytest.approx(0.0)  # both groups hold a 1 and a 0


def test_zero_variance_groups_and_padding_rows():
  mask, turn_ids = _rows([2, 2, 3, 3, 1])
  adv = mask.copy()
  m = length_split_metrics(adv, mask, turn_ids, success=np.array([True, True, False, True, True]),
                           scores=np.array([1.0, 1.0, 0.0, 1.0, 1.0]), group_ids=np.array([0, 0, 1, 1, 2]),
                           real=np.array([True, True, True, True, False]))  # the last row is padding
  # group 0 is all successes (no signal), group 1 mixed; group 2 is padding only
  assert m["groups/zero_variance_frac"] == pytest.approx(0.5)
  # one episode per group id: no group statistic at all
  m = length_split_metrics(adv, mask, turn_ids, success=np.ones(5, bool), scores=np.ones(5),
                           group_ids=np.arange(5), real=np.ones(5, bool))
  assert "groups/zero_variance_frac" not in m


def test_a_batch_without_action_tokens_reports_nothing():
  mask = np.zeros((2, 4), np.float32)
  assert length_split_metrics(mask, mask, np.zeros((2, 4), np.int32), success=np.ones(2, bool),
                              scores=np.ones(2), group_ids=np.zeros(2, int), real=np.ones(2, bool)) == {}
