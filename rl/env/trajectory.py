"""Trajectory logs: one JSON record per episode (the ARCHITECTURE.md format) in size-rotated JSONL.

Long observations are cut (head and tail kept) in the log with their original size noted in
`observation_chars`; action inputs are never cut, so a logged trajectory can always be replayed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Any, Iterator, Mapping

from rl.env.tools import ACTION_TYPES, truncate_observation

TERMINATION_REASONS = ("submit", "max_steps", "max_tokens", "timeout", "error")
RECORD_KEYS = ("task_id", "task_version", "base_hash", "prompt", "model", "sampling", "steps",
               "final_reward", "success", "tests", "hack", "terminated", "duration_s")
STEP_KEYS = ("step", "action_type", "action_input", "observation", "thought", "reward",
             "timestamp", "duration_s", "tokens", "hack")


class TrajectoryFormatError(ValueError):
  """A trajectory record or file that does not follow the record format."""


def validate_record(record: Mapping[str, Any]) -> None:
  """Raises TrajectoryFormatError naming the first missing or wrong field."""
  if not isinstance(record, Mapping):
    raise TrajectoryFormatError(f"a trajectory record must be a JSON object, got {type(record).__name__}")
  missing = [k for k in RECORD_KEYS if k not in record]
  if missing:
    raise TrajectoryFormatError(f"trajectory record lacks field(s) {', '.join(missing)}")
  if record["terminated"] not in TERMINATION_REASONS:
    raise TrajectoryFormatError(
        f"terminated={record['terminated']!r}; expected one of {', '.join(TERMINATION_REASONS)}")
  if not isinstance(record["steps"], list):
    raise TrajectoryFormatError("steps must be a list")
  for i, step in enumerate(record["steps"]):
    missing = [k for k in STEP_KEYS if k not in step]
    if missing:
      raise TrajectoryFormatError(f"step {i} lacks field(s) {', '.join(missing)}")
    # action_type None marks a malformed call (the error observation is still logged).
    if step["action_type"] is not None and step["action_type"] not in ACTION_TYPES:
      raise TrajectoryFormatError(f"step {i} has unknown action_type {step['action_type']!r}")
    if not isinstance(step["action_input"], dict):
      raise TrajectoryFormatError(f"step {i}: action_input must be an object")


def truncate_for_log(record: Mapping[str, Any], observation_max_chars: int) -> dict[str, Any]:
  """A copy of `record` whose step observations are at most `observation_max_chars` long."""
  out = dict(record)
  steps = []
  for step in record.get("steps", []):
    obs = step.get("observation")
    if isinstance(obs, str) and len(obs) > observation_max_chars:
      step = dict(step)
      step["observation_chars"] = len(obs)
      step["observation_log_max_chars"] = observation_max_chars  # lets a replay cut the same way
      step["observation"] = truncate_observation(obs, observation_max_chars)
    steps.append(step)
  out["steps"] = steps
  return out


class TrajectoryWriter:
  """Appends records to `<directory>/<prefix>-NNNNN.jsonl`, starting a new file past `max_bytes`.

  Thread-safe; an existing directory is continued after its highest-numbered file.
  """

  def __init__(self, directory: str | os.PathLike, *, prefix: str = "trajectories",
               max_bytes: int = 64 * 2**20, observation_max_chars: int = 8192,
               validate: bool = True):
    if max_bytes <= 0:
      raise ValueError(f"max_bytes must be positive, got {max_bytes}")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", prefix):
      raise ValueError(f"prefix {prefix!r} must be a plain file-name stem")
    self.directory = Path(directory)
    self.directory.mkdir(parents=True, exist_ok=True)
    self.prefix = prefix
    self.max_bytes = int(max_bytes)
    self.observation_max_chars = int(observation_max_chars)
    self.validate = validate
    self._lock = threading.Lock()
    existing = sorted(self._existing())
    self._index = existing[-1][0] if existing else 0
    self._file = None
    self.records_written = 0

  def _existing(self) -> list[tuple[int, Path]]:
    pattern = re.compile(re.escape(self.prefix) + r"-(\d+)\.jsonl")
    found = []
    for p in self.directory.iterdir():
      m = pattern.fullmatch(p.name)
      if m:
        found.append((int(m.group(1)), p))
    return found

  @property
  def path(self) -> Path:
    return self.directory / f"{self.prefix}-{self._index:05d}.jsonl"

  def write(self, record: Mapping[str, Any]) -> Path:
    """Writes one record (observations cut for the log); returns the file it went to."""
    if self.validate:
      validate_record(record)
    line = json.dumps(truncate_for_log(record, self.observation_max_chars), ensure_ascii=False,
                      default=_json_default) + "\n"
    data = line.encode("utf-8")
    with self._lock:
      path = self.path
      size = path.stat().st_size if path.exists() else 0
      if size > 0 and size + len(data) > self.max_bytes:
        self._close_file()
        self._index += 1
        path = self.path
      if self._file is None:
        self._file = open(path, "ab")
      self._file.write(data)
      self._file.flush()
      self.records_written += 1
      return path

  def truncate_after(self, step: int) -> int:
    """Drops the records of policies past `step` (`model.step` >= step) and returns how many.

    A resumed run calls it with its checkpoint's iteration: the records of the iterations after
    it were logged by the killed process and are logged again. A line cut short by that kill is
    dropped too. Files are rewritten newest first until one keeps every record (records are
    appended in step order), each replaced atomically.
    """
    removed = 0
    with self._lock:
      self._close_file()
      for _, path in sorted(self._existing(), reverse=True):
        lines = path.read_bytes().splitlines(keepends=True)
        kept = [line for i, line in enumerate(lines)
                if _logged_before(line, step, path, i + 1, last=i == len(lines) - 1)]
        if len(kept) == len(lines):
          break
        removed += len(lines) - len(kept)
        if kept:
          tmp = path.with_name(path.name + ".tmp")
          tmp.write_bytes(b"".join(kept))
          os.replace(tmp, path)
        else:
          path.unlink()
      existing = sorted(self._existing())
      self._index = existing[-1][0] if existing else 0
    return removed

  def _close_file(self) -> None:
    if self._file is not None:
      self._file.close()
      self._file = None

  def close(self) -> None:
    with self._lock:
      self._close_file()

  def __enter__(self) -> "TrajectoryWriter":
    return self

  def __exit__(self, *exc: Any) -> None:
    self.close()


def _logged_before(line: bytes, step: int, path: Path, lineno: int, *, last: bool) -> bool:
  """Whether a log line stays when truncating after `step`: a record without a model step
  stays; an unreadable line goes only when it is a file's last, unterminated one (a killed write)."""
  if not line.strip():
    return False
  try:
    record = json.loads(line)
  except json.JSONDecodeError as e:
    if last and not line.endswith(b"\n"):
      return False
    raise TrajectoryFormatError(f"{path}:{lineno}: not valid JSON ({e})") from None
  model_step = (record.get("model") or {}).get("step") if isinstance(record, dict) else None
  return model_step is None or int(model_step) < step


def _json_default(obj: Any) -> Any:
  # numpy / jax scalars and arrays end up in records through rewards and log-probs.
  if hasattr(obj, "tolist"):
    return obj.tolist()
  if isinstance(obj, (set, tuple)):
    return list(obj)
  if isinstance(obj, Path):
    return str(obj)
  raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def trajectory_files(path: str | os.PathLike) -> list[Path]:
  """The JSONL files of `path`: the file itself, or a directory's *.jsonl in rotation order."""
  path = Path(path)
  if path.is_file():
    return [path]
  if path.is_dir():
    def key(p: Path) -> tuple[str, int, str]:
      m = re.fullmatch(r"(.*)-(\d+)\.jsonl", p.name)
      return (m.group(1), int(m.group(2)), p.name) if m else (p.stem, -1, p.name)
    return sorted(path.glob("*.jsonl"), key=key)
  raise FileNotFoundError(f"no trajectory file or directory at {str(path)!r}")


def read_trajectories(path: str | os.PathLike, *, validate: bool = True) -> Iterator[dict[str, Any]]:
  """Yields the records of a trajectory file or directory; bad lines raise with file:line."""
  for file in trajectory_files(path):
    with open(file, encoding="utf-8") as f:
      for lineno, line in enumerate(f, 1):
        if not line.strip():
          continue
        try:
          record = json.loads(line)
        except json.JSONDecodeError as e:
          raise TrajectoryFormatError(f"{file}:{lineno}: not valid JSON ({e})") from None
        if validate:
          try:
            validate_record(record)
          except TrajectoryFormatError as e:
            raise TrajectoryFormatError(f"{file}:{lineno}: {e}") from None
        yield record


def load_trajectories(path: str | os.PathLike, *, validate: bool = True) -> list[dict[str, Any]]:
  return list(read_trajectories(path, validate=validate))


def repo_hash(repo_dir: str | os.PathLike) -> str:
  """Content hash of a task's initial repo (paths and bytes), the record's `base_hash`."""
  h = hashlib.sha256()
  root = Path(repo_dir)
  for p in sorted(root.rglob("*")):
    if p.is_file() and "__pycache__" not in p.parts:
      h.update(p.relative_to(root).as_posix().encode() + b"\0")
      h.update(p.read_bytes() + b"\0")
  return h.hexdigest()[:16]
