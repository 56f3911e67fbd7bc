"""Host-side batching: episodes (ragged token lists) -> one padded `RolloutBatch`.

All arrays are [B, T] aligned with the token sequence: index t describes token t.
A token's log-prob and its value V(s_t) are computed from the hidden state at
t-1 (the state that predicts token t), so index 0 is never an action token.
T is padded up to a multiple of `pad_multiple` so that jitted functions see few
distinct shapes.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np


@dataclasses.dataclass
class RolloutBatch:
  tokens: np.ndarray  # int32 [B, T]
  valid: np.ndarray  # float32 [B, T]: 1 on real tokens (prompt, actions, observations)
  action_mask: np.ndarray  # float32 [B, T]: 1 on policy-generated tokens
  sampler_logprobs: np.ndarray  # float32 [B, T]
  turn_rewards: np.ndarray  # float32 [B, T]: per-turn (process) rewards on each turn's last action token
  turn_ids: np.ndarray  # int32 [B, T]: index of the agent turn a token belongs to
  scores: np.ndarray  # float32 [B]: final (episode) reward
  group_ids: np.ndarray  # int32 [B]
  durations: np.ndarray  # float32 [B]: execution time used by duration-aware weights
  truncated: np.ndarray  # bool [B]: ended by a limit rather than by submitting
  success: np.ndarray  # bool [B]
  lengths: np.ndarray  # int32 [B]: real tokens per row

  @property
  def shape(self) -> tuple[int, int]:
    return self.tokens.shape

  def select(self, rows: np.ndarray) -> "RolloutBatch":
    return RolloutBatch(**{f.name: getattr(self, f.name)[rows] for f in dataclasses.fields(self)})


def round_up(n: int, multiple: int) -> int:
  """`n` rounded up to a multiple of `multiple` (at least one multiple): padded lengths."""
  return max(multiple, -(-n // multiple) * multiple)


def episodes_to_batch(episodes: Sequence[Any], *, pad_id: int = 0, pad_multiple: int = 128,
                      max_len: int | None = None, room: int = 0) -> RolloutBatch:
  """Pads episodes (objects with the `rl.env.episode.Episode` fields) into a RolloutBatch, with at
  least `room` padding positions after the longest (GAE's truncation bootstrap reads the value
  one position after a row's last token)."""
  if not episodes:
    raise ValueError("episodes_to_batch: no episodes")
  lengths = np.array([len(e.tokens) for e in episodes], np.int32)
  if lengths.min() < 2:
    raise ValueError("episodes_to_batch: every episode needs at least 2 tokens")
  T = round_up(int(lengths.max()) + room, pad_multiple)
  if max_len is not None and T > max_len:
    T = max_len
  B = len(episodes)
  tokens = np.full((B, T), pad_id, np.int32)
  valid = np.zeros((B, T), np.float32)
  action_mask = np.zeros((B, T), np.float32)
  sampler_logprobs = np.zeros((B, T), np.float32)
  turn_rewards = np.zeros((B, T), np.float32)
  turn_ids = np.zeros((B, T), np.int32)
  group_index: dict[Any, int] = {}
  group_ids = np.zeros((B,), np.int32)
  for i, e in enumerate(episodes):
    n = min(len(e.tokens), T)
    mask = np.asarray(e.action_mask[:n], np.float32)
    if len(e.action_mask) != len(e.tokens) or len(e.sampler_logprobs) != len(e.tokens):
      raise ValueError(f"episode {i} ({e.task_id}): tokens, action_mask and sampler_logprobs differ in length")
    if mask[0] != 0:
      raise ValueError(f"episode {i} ({e.task_id}): the first token cannot be an action token")
    tokens[i, :n] = e.tokens[:n]
    valid[i, :n] = 1.0
    action_mask[i, :n] = mask
    sampler_logprobs[i, :n] = np.asarray(e.sampler_logprobs[:n], np.float32) * mask
    # Turn ids: a new turn starts at each action token that follows a non-action token.
    starts = np.concatenate([[0.0], np.diff(mask)]) > 0
    turn_ids[i, :n] = np.maximum(np.cumsum(starts) - 1, 0)
    for turn, end in enumerate(e.turn_ends):
      if end < n and turn < len(e.turn_rewards):
        turn_rewards[i, end] += float(e.turn_rewards[turn])
    group_ids[i] = group_index.setdefault(e.group_id, len(group_index))
  return RolloutBatch(
      tokens=tokens, valid=valid, action_mask=action_mask, sampler_logprobs=sampler_logprobs,
      turn_rewards=turn_rewards, turn_ids=turn_ids,
      scores=np.array([float(e.final_reward) for e in episodes], np.float32),
      group_ids=group_ids,
      durations=np.array([float(getattr(e, "exec_time_s", 0.0) or 0.0) for e in episodes], np.float32),
      truncated=np.array([bool(getattr(e, "truncated", False)) for e in episodes]),
      success=np.array([bool(e.success) for e in episodes]),
      lengths=np.minimum(lengths, T))


def pad_length(batch: RolloutBatch, length: int, pad_id: int = 0) -> RolloutBatch:
  """`batch` with its [B, T] arrays padded to `length` positions (padding: not valid, no action),
  e.g. to a length several processes agree on."""
  B, T = batch.tokens.shape
  if length < T:
    raise ValueError(f"pad_length: the batch has {T} positions, more than {length}")
  if length == T:
    return batch
  extra = ((0, 0), (0, length - T))
  return dataclasses.replace(
      batch, tokens=np.pad(batch.tokens, extra, constant_values=pad_id), valid=np.pad(batch.valid, extra),
      action_mask=np.pad(batch.action_mask, extra), sampler_logprobs=np.pad(batch.sampler_logprobs, extra),
      turn_rewards=np.pad(batch.turn_rewards, extra), turn_ids=np.pad(batch.turn_ids, extra))


def blank_batch(length: int, pad_id: int = 0) -> RolloutBatch:
  """One row without an action token (two valid padding tokens, so that attention has keys): what
  a process without a trainable episode pads its share of a multi-process batch from."""
  B, T = 1, max(int(length), 2)
  valid = np.zeros((B, T), np.float32)
  valid[:, :2] = 1.0
  zeros = np.zeros((B, T), np.float32)
  return RolloutBatch(tokens=np.full((B, T), pad_id, np.int32), valid=valid, action_mask=zeros,
                      sampler_logprobs=zeros.copy(), turn_rewards=zeros.copy(),
                      turn_ids=np.zeros((B, T), np.int32), scores=np.zeros((B,), np.float32),
                      group_ids=np.full((B,), -1, np.int32), durations=np.zeros((B,), np.float32),
                      truncated=np.zeros((B,), bool), success=np.zeros((B,), bool),
                      lengths=np.full((B,), 2, np.int32))


ERROR_MASKING = ("none", "after_error", "episode")


def error_turn_keep(episodes: Sequence[Any], turn_ids: np.ndarray, mode: str) -> np.ndarray:
  """[B, T] 0/1 weights that leave the turns after a failed episode's first error out of the loss.

  After a malformed call or a tool error, a small policy is off its training distribution: the
  turns that follow are near-uniform samples whose push-down dominates the gradient and moves
  the weights that the policy's confident tokens rely on (docs/algorithms.md, "Error masking").
  `after_error` keeps the failed episode up to and including its first error turn (the turn that
  caused the failure keeps its negative advantage); `episode` drops every failed episode that
  contains an error (SimpleTIR's void-turn filter, Xue et al. 2025); `none` keeps everything.
  Successful episodes are always kept whole: a recovery is worth reinforcing. Rows past
  `len(episodes)` (padding) are kept; their action mask is already zero.
  `error_turns` (for demonstrations, not an `algo.error_masking` mode) drops exactly the turns
  that failed, in every episode: behaviour cloning then learns a recovery without its mistake.
  """
  if mode not in ERROR_MASKING + ("error_turns",):
    raise ValueError(f"error masking must be one of {', '.join(ERROR_MASKING)} or error_turns, got {mode!r}")
  keep = np.ones(turn_ids.shape, np.float32)
  if mode == "none":
    return keep
  for i, e in enumerate(episodes):
    errors = list(getattr(e, "turn_errors", None) or [])
    if mode == "error_turns":
      bad = [t for t, err in enumerate(errors) if err]
      if bad:
        keep[i] = (~np.isin(turn_ids[i], bad)).astype(np.float32)
      continue
    if e.success or not any(errors):
      continue
    first = errors.index(True)
    keep[i] = 0.0 if mode == "episode" else (turn_ids[i] <= first).astype(np.float32)
  return keep


def pack_rows(lengths: Sequence[int], capacity: int) -> list[list[int]]:
  """First-fit decreasing: row indices grouped into bins of at most `capacity` tokens."""
  if capacity <= 0:
    raise ValueError(f"pack_rows: capacity must be positive, got {capacity}")
  bins: list[list[int]] = []
  room: list[int] = []
  for row in sorted(range(len(lengths)), key=lambda r: (-int(lengths[r]), r)):
    n = int(lengths[row])
    if n > capacity:
      raise ValueError(f"pack_rows: row {row} has {n} tokens, more than the capacity {capacity}")
    for b, free in enumerate(room):
      if n <= free:
        bins[b].append(row)
        room[b] -= n
        break
    else:
      bins.append([row])
      room.append(capacity - n)
  return bins


# Padding fill of packed per-token arrays whose zero would mean something (rl.algo.update's inputs).
_PACK_FILL = {"support": -1}


def pack_minibatch(mb: dict[str, np.ndarray], lengths: np.ndarray, *, rows: int,
                   pad_multiple: int) -> dict[str, np.ndarray] | None:
  """Lays the sequences of a mini-batch end to end in `rows` rows, as short as that allows.

  `mb` holds [M, T, ...] per-token arrays (their first `lengths[r]` entries are row r's tokens)
  and the [M] arrays `sample_weights` (folded into `token_weights`) and `has_sampler` (which
  must be all 1). The packed rows are the shortest multiple of `pad_multiple` into which
  first-fit decreasing packs every sequence in at most `rows` rows, so a mini-batch compiles
  to one of a few shapes. The result has the same keys with [rows, capacity, ...] arrays plus
  `segment_ids` (1, 2, ... per sequence in a row, 0 = padding) for the model
  (Transformer.hidden_states). Token-level sums are unchanged, so a loss aggregated as
  token-mean or token-sum with the unpacked batch's denominators is the same. Returns None
  when the packed batch would not hold fewer token slots than [M, T], or the batch has other
  per-row inputs.
  """
  M, T = mb["tokens"].shape
  per_row = {k for k, v in mb.items() if np.ndim(v) == 1}
  if rows >= M or per_row - {"sample_weights", "has_sampler"}:
    return None
  if "has_sampler" in mb and not np.all(np.asarray(mb["has_sampler"]) == 1):
    return None
  source = {k: np.asarray(v) for k, v in mb.items() if k not in per_row}
  if "sample_weights" in mb:  # per-row weights become per-token ones
    weights = np.asarray(mb["sample_weights"], np.float32)
    if "token_weights" in source:
      source["token_weights"] = source["token_weights"] * weights[:, None]
    elif not np.all(weights == 1):
      return None
  lengths = np.asarray(lengths, np.int64)
  capacity = round_up(int(lengths.max()), pad_multiple)
  while len(bins := pack_rows(lengths, capacity)) > rows:
    capacity += pad_multiple
  if rows * capacity >= M * T:
    return None
  out: dict[str, np.ndarray] = {}
  for key, value in source.items():
    if value.shape[:2] != (M, T):
      raise ValueError(f"pack_minibatch: {key!r} has shape {value.shape}; expected [{M}, {T}, ...]")
    out[key] = np.full((rows, capacity) + value.shape[2:], _PACK_FILL.get(key, 0), value.dtype)
  segment_ids = np.zeros((rows, capacity), np.int32)
  for b, members in enumerate(bins):
    offset = 0
    for s, row in enumerate(members):
      n = int(lengths[row])
      for key, value in source.items():
        out[key][b, offset:offset + n] = value[row, :n]
      segment_ids[b, offset:offset + n] = s + 1
      offset += n
  out["segment_ids"] = segment_ids
  if "valid" in out:
    out["valid"] = (segment_ids > 0).astype(out["valid"].dtype)
  for key in per_row:  # every row's weight is now in its tokens; every row has a sampler
    out[key] = np.ones((rows,), np.asarray(mb[key]).dtype)
  return out
