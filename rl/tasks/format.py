"""The on-disk task format: the `Task` type, loading and validation of task roots.

A task is a directory (statement, initial repo, hidden tests, metadata, optional reference
patch; see shared/ARCHITECTURE.md). A task root is a folder of such directories plus an
optional `manifest.jsonl` that lets a loader skip opening every task's files.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
from typing import Any, Iterable

from rl.tasks.patch import decode_bytes, encode_text

GRADERS = ("pytest", "mle")
REQUIRED_FIELDS = ("id", "version", "source", "license", "language", "grader", "test_command",
                   "hidden_tests_dest", "timeout_s")
MLE_FIELDS = ("metric", "submission_file", "answers_file")
MANIFEST_NAME = "manifest.jsonl"
SPLITS = ("train", "heldout", "test", "dev")


class TaskError(ValueError):
  """A task (or task root) is malformed; the message names the task and the problem."""


def _safe_relpath(value: Any, *, field: str, task: str, allow_dot: bool = False) -> str:
  """Returns `value` if it is a relative path that stays inside its base directory."""
  if not isinstance(value, str) or not value:
    raise TaskError(f"task {task!r}: {field} must be a non-empty relative path, got {value!r}")
  p = pathlib.PurePosixPath(value.replace("\\", "/"))
  if p.is_absolute() or ".." in p.parts:
    raise TaskError(f"task {task!r}: {field} {value!r} escapes the task directory")
  if not allow_dot and str(p) == ".":
    raise TaskError(f"task {task!r}: {field} must name a path, got {value!r}")
  return str(p)


@dataclasses.dataclass
class Task:
  """One task directory. Statement and patch are read lazily (a manifest supplies metadata)."""

  dir: pathlib.Path
  metadata: dict[str, Any]
  _statement: str | None = dataclasses.field(default=None, repr=False)
  _solution_patch: str | None | bool = dataclasses.field(default=False, repr=False)
  # Where a replaced statement came from ("improve_previous": rl.train.self_improve) and the
  # score of the earlier solution it shows; episodes record both, so their scores can be split
  # by prompt kind (the paper's improve-previous vs from-scratch comparison).
  prompt_origin: str = ""
  parent_score: float | None = None

  @property
  def id(self) -> str:
    return self.metadata["id"]

  @property
  def version(self) -> str:
    return str(self.metadata["version"])

  @property
  def statement(self) -> str:
    if self._statement is None:
      self._statement = (self.dir / "task.md").read_text(encoding="utf-8")
    return self._statement

  def with_statement(self, statement: str, *, origin: str = "", parent_score: float | None = None) -> "Task":
    """The same task with another statement (e.g. an improve-previous prompt, `origin` says
    which); same id."""
    return dataclasses.replace(self, _statement=statement, prompt_origin=origin, parent_score=parent_score)

  @property
  def repo_dir(self) -> pathlib.Path:
    return self.dir / "repo"

  @property
  def tests_dir(self) -> pathlib.Path:
    return self.dir / "tests"

  @property
  def grader(self) -> str:
    return self.metadata["grader"]

  @property
  def test_command(self) -> str:
    return self.metadata["test_command"]

  @property
  def hidden_tests_dest(self) -> str:
    return self.metadata["hidden_tests_dest"]

  @property
  def timeout_s(self) -> float:
    return float(self.metadata["timeout_s"])

  @property
  def public_tests(self) -> list[str]:
    return list(self.metadata.get("public_tests") or [])

  @property
  def solution_patch(self) -> str | None:
    if self._solution_patch is False:
      p = self.dir / "solution.patch"
      # Bytes, not read_text: universal newlines would turn the CR of a CRLF line into LF.
      self._solution_patch = decode_bytes(p.read_bytes()) if p.is_file() else None
    return self._solution_patch  # type: ignore[return-value]

  @property
  def grading_editable(self) -> tuple[str, ...]:
    """Workspace paths (fnmatch patterns) whose changes grading carries beyond source files
    (sandbox/graded_tree.py): the metadata's `grading_editable` and every file the reference
    fix changes (the task's own word that a fix may change it)."""
    patterns = list(self.metadata.get("grading_editable") or [])
    patch = self.solution_patch
    if patch:
      from rl.tasks.patch import PatchError, parse_patch  # pylint: disable=import-outside-toplevel
      try:
        patterns += [p for fp in parse_patch(patch) for p in (fp.old_path, fp.new_path) if p]
      except PatchError:
        pass  # validate_task_files reports a malformed patch
    return tuple(dict.fromkeys(patterns))

  @property
  def environment(self) -> "TaskEnvironment":
    """The task's own environment and limits (metadata setup, python_path, env, image ...)."""
    return TaskEnvironment.from_metadata(self.metadata, task=self.id)

  @property
  def split(self) -> str:
    return self.metadata.get("split", "train")

  @property
  def difficulty(self) -> str:
    return str(self.metadata.get("difficulty", "unknown"))

  @property
  def tags(self) -> list[str]:
    return list(self.metadata.get("tags") or [])

  @property
  def fix(self) -> list[dict[str, str]] | None:
    """Structured reference edits [{"path", "old", "new"}] when the task provides them."""
    return self.metadata.get("fix")

  def __repr__(self) -> str:
    return f"Task({self.id!r}, split={self.split!r}, difficulty={self.difficulty!r})"


@dataclasses.dataclass(frozen=True)
class TaskEnvironment:
  """What a task needs from the sandbox beyond the shared runtime (all optional metadata).

  setup: shell commands run once, in a sandbox on a copy of repo/, when the task's environment
    is built; they install into $RLCODER_TASK_ENV/site (e.g. `pip install --no-deps --target
    $RLCODER_TASK_ENV/site vendor/x.whl`), which is then read-only and on PYTHONPATH after the
    workspace.
    The result is cached by a hash of repo/, the commands and the runtime.
  python_path: workspace-relative import roots put first on PYTHONPATH (`src` for a src/
    layout), so the workspace's package wins over any installed copy.
  env: extra environment variables for every command and the grading run.
  image: a Docker image for the task (Docker backend; the default image when empty).
  memory_mb, max_procs: resource limits replacing the sandbox defaults (resident memory).
  """
  setup: tuple[str, ...] = ()
  python_path: tuple[str, ...] = ()
  env: tuple[tuple[str, str], ...] = ()
  image: str = ""
  memory_mb: int | None = None
  max_procs: int | None = None

  @classmethod
  def from_metadata(cls, metadata: dict[str, Any], *, task: str) -> "TaskEnvironment":
    setup = metadata.get("setup") or []
    if isinstance(setup, str):
      setup = [setup]
    if not isinstance(setup, list) or not all(isinstance(c, str) and c.strip() for c in setup):
      raise TaskError(f"task {task!r}: setup must be a command or a list of non-empty commands")
    python_path = metadata.get("python_path") or []
    if isinstance(python_path, str):
      python_path = [python_path]
    if not isinstance(python_path, list):
      raise TaskError(f"task {task!r}: python_path must be a path or a list of paths")
    python_path = [_safe_relpath(p, field="python_path entry", task=task, allow_dot=True) for p in python_path]
    env = metadata.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and k and isinstance(v, (str, int, float))
                                            for k, v in env.items()):
      raise TaskError(f"task {task!r}: env must be an object of NAME: string values")
    if "PYTHONPATH" in env:
      raise TaskError(f"task {task!r}: set import roots with python_path, not env PYTHONPATH")
    image = metadata.get("image") or ""
    if not isinstance(image, str):
      raise TaskError(f"task {task!r}: image must be a Docker image name, got {image!r}")
    limits = {}
    for name in ("memory_mb", "max_procs"):
      value = metadata.get(name)
      if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
        raise TaskError(f"task {task!r}: {name} must be a positive integer, got {value!r}")
      limits[name] = value
    return cls(setup=tuple(setup), python_path=tuple(python_path),
               env=tuple(sorted((k, str(v)) for k, v in env.items())), image=image, **limits)


def validate_metadata(metadata: Any, *, task: str) -> dict[str, Any]:
  """Checks the fields of metadata.json; returns it. Raises TaskError naming the problem."""
  if not isinstance(metadata, dict):
    raise TaskError(f"task {task!r}: metadata.json must hold a JSON object, got {type(metadata).__name__}")
  missing = [f for f in REQUIRED_FIELDS if f not in metadata]
  if missing:
    raise TaskError(f"task {task!r}: metadata.json lacks required field(s) {', '.join(missing)}")
  if not isinstance(metadata["id"], str) or not metadata["id"]:
    raise TaskError(f"task {task!r}: metadata id must be a non-empty string")
  if metadata["grader"] not in GRADERS:
    raise TaskError(f"task {task!r}: unknown grader {metadata['grader']!r}; known graders: {', '.join(GRADERS)}")
  if metadata["grader"] == "mle":
    missing = [f for f in MLE_FIELDS if not metadata.get(f)]
    if missing:
      raise TaskError(f"task {task!r}: mle task lacks field(s) {', '.join(missing)}")
  if not isinstance(metadata["test_command"], str) or not metadata["test_command"].strip():
    raise TaskError(f"task {task!r}: test_command must be a non-empty string")
  _safe_relpath(metadata["hidden_tests_dest"], field="hidden_tests_dest", task=task, allow_dot=True)
  try:
    timeout = float(metadata["timeout_s"])
  except (TypeError, ValueError):
    raise TaskError(f"task {task!r}: timeout_s must be a number, got {metadata['timeout_s']!r}") from None
  if not timeout > 0:
    raise TaskError(f"task {task!r}: timeout_s must be positive, got {timeout}")
  public = metadata.get("public_tests") or []
  if not isinstance(public, list):
    raise TaskError(f"task {task!r}: public_tests must be a list of paths")
  for p in public:
    _safe_relpath(p, field="public_tests entry", task=task)
  editable = metadata.get("grading_editable") or []
  if not isinstance(editable, list) or not all(isinstance(p, str) and p for p in editable):
    raise TaskError(f"task {task!r}: grading_editable must be a list of path patterns")
  for p in editable:
    _safe_relpath(p, field="grading_editable entry", task=task)
  for edit in metadata.get("fix") or []:
    if not isinstance(edit, dict) or not {"path", "old", "new"} <= set(edit):
      raise TaskError(f"task {task!r}: each fix entry needs path, old and new")
    _safe_relpath(edit["path"], field="fix path", task=task)
  TaskEnvironment.from_metadata(metadata, task=task)
  split = metadata.get("split", "train")
  if split not in SPLITS:
    raise TaskError(f"task {task!r}: unknown split {split!r}; known splits: {', '.join(SPLITS)}")
  return metadata


def _check_no_escaping_links(task_dir: pathlib.Path, *, task: str) -> None:
  """Symlinks inside a task must resolve inside it, or copying the repo could leak host files."""
  base = task_dir.resolve()
  for dirpath, dirnames, filenames in os.walk(task_dir):
    for name in dirnames + filenames:
      p = pathlib.Path(dirpath) / name
      if p.is_symlink():
        target = p.resolve()
        if target != base and base not in target.parents:
          raise TaskError(f"task {task!r}: symlink {p.relative_to(task_dir)} escapes the task directory")


def read_metadata(task_dir: pathlib.Path) -> dict[str, Any]:
  task = task_dir.name
  path = task_dir / "metadata.json"
  if not path.is_file():
    raise TaskError(f"task {task!r}: missing file metadata.json in {task_dir}")
  try:
    return json.loads(path.read_text(encoding="utf-8"))
  except json.JSONDecodeError as e:
    raise TaskError(f"task {task!r}: bad JSON in metadata.json (line {e.lineno}, column {e.colno}): {e.msg}") from None


def load_task(task_dir: str | os.PathLike, *, validate: bool = True) -> Task:
  """Loads one task directory. With `validate` the files are checked, not only metadata."""
  task_dir = pathlib.Path(task_dir)
  if not task_dir.is_dir():
    raise TaskError(f"task directory {task_dir} does not exist")
  metadata = validate_metadata(read_metadata(task_dir), task=task_dir.name)
  if metadata["id"] != task_dir.name:
    raise TaskError(f"task {task_dir.name!r}: metadata id {metadata['id']!r} differs from the directory name")
  task = Task(dir=task_dir, metadata=metadata)
  if validate:
    validate_task_files(task)
  return task


def validate_task_files(task: Task) -> None:
  """Checks that the files the metadata promises exist, that no path escapes the task and that
  a repo/.git holds only the base commit and its ancestors (rl.tasks.workspace_git)."""
  d, tid = task.dir, task.id
  if not (d / "task.md").is_file():
    raise TaskError(f"task {tid!r}: missing file task.md")
  if not task.repo_dir.is_dir():
    raise TaskError(f"task {tid!r}: missing directory repo/")
  if task.grader == "pytest" and not task.tests_dir.is_dir():
    raise TaskError(f"task {tid!r}: missing directory tests/ (hidden tests)")
  for p in task.public_tests:
    if not (task.repo_dir / p).exists():
      raise TaskError(f"task {tid!r}: public test {p!r} is not in repo/")
  _check_no_escaping_links(d, task=tid)
  # A repo/ that is a git checkout must hold nothing but the base commit and its ancestors:
  # the workspace copies it, and tags, future commits or stashes can hold the fix.
  from rl.tasks.workspace_git import check_repository, has_repository  # pylint: disable=import-outside-toplevel
  if has_repository(task.repo_dir):
    check_repository(task.repo_dir, task=tid)
  patch = task.solution_patch
  if patch is not None:
    from rl.tasks.patch import PatchError, parse_patch  # pylint: disable=import-outside-toplevel
    try:
      for file_patch in parse_patch(patch):
        for path in (file_patch.old_path, file_patch.new_path):
          if path is not None:
            _safe_relpath(path, field="solution.patch path", task=tid)
    except PatchError as e:
      raise TaskError(f"task {tid!r}: solution.patch: {e}") from None


def _iter_task_dirs(root: pathlib.Path) -> Iterable[pathlib.Path]:
  for p in sorted(root.iterdir()):
    if p.is_dir() and not p.name.startswith("."):
      yield p


def load_task_root(root: str | os.PathLike, *, split: str | None = None, use_manifest: bool = True,
                   validate: bool = True) -> list[Task]:
  """Loads every task under `root`, sorted by id; duplicate ids are an error.

  With a manifest.jsonl (and `use_manifest`) only the manifest is read: its lines carry each
  task's metadata, so large roots load without opening thousands of files. `validate`
  then only checks metadata; pass use_manifest=False for a full file-level validation.
  """
  root = pathlib.Path(root)
  if not root.is_dir():
    raise TaskError(f"task root {root} does not exist or is not a directory")
  manifest = root / MANIFEST_NAME
  tasks: list[Task] = []
  if use_manifest and manifest.is_file():
    tasks = read_manifest(root, validate=validate)
  else:
    for d in _iter_task_dirs(root):
      if not (d / "metadata.json").exists() and not (d / "task.md").exists():
        continue  # not a task folder (e.g. a cache); a half-written task still fails below
      tasks.append(load_task(d, validate=validate))
  seen: dict[str, pathlib.Path] = {}
  for t in tasks:
    if t.id in seen:
      raise TaskError(f"duplicate task id {t.id!r} in {seen[t.id]} and {t.dir}")
    seen[t.id] = t.dir
  if split is not None:
    tasks = [t for t in tasks if t.split == split]
  return sorted(tasks, key=lambda t: t.id)


def manifest_entry(task: Task) -> dict[str, Any]:
  return {"dir": task.dir.name, "metadata": task.metadata}


def write_manifest(root: str | os.PathLike, tasks: Iterable[Task] | None = None) -> pathlib.Path:
  """Writes root/manifest.jsonl for `tasks` (default: all task dirs, fully validated)."""
  root = pathlib.Path(root)
  if tasks is None:
    tasks = load_task_root(root, use_manifest=False)
  path = root / MANIFEST_NAME
  tmp = path.with_suffix(".jsonl.tmp")
  with tmp.open("w", encoding="utf-8") as f:
    for t in sorted(tasks, key=lambda t: t.id):
      f.write(json.dumps(manifest_entry(t), sort_keys=True) + "\n")
  tmp.replace(path)
  return path


def read_manifest(root: pathlib.Path, *, validate: bool = True) -> list[Task]:
  tasks = []
  path = root / MANIFEST_NAME
  with path.open(encoding="utf-8") as f:
    for lineno, line in enumerate(f, 1):
      if not line.strip():
        continue
      try:
        entry = json.loads(line)
        dirname, metadata = entry["dir"], entry["metadata"]
      except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise TaskError(f"{path}:{lineno}: bad manifest line ({e})") from None
      name = _safe_relpath(dirname, field="manifest dir", task=str(dirname))
      if validate:
        validate_metadata(metadata, task=name)
      tasks.append(Task(dir=root / name, metadata=metadata))
  return tasks


def sanitize_id(raw: str) -> str:
  """A directory-safe task id: 'HumanEval/12' -> 'humaneval-12'."""
  out = "".join(c if c.isalnum() or c in "-_." else "-" for c in raw.strip().lower())
  out = "-".join(filter(None, out.split("-")))
  if not out or out.startswith("."):
    raise TaskError(f"cannot make a task id from {raw!r}")
  return out


def write_task(root: str | os.PathLike, *, statement: str, repo_files: dict[str, str | bytes],
               test_files: dict[str, str | bytes], metadata: dict[str, Any],
               solution_patch: str | None = None, overwrite: bool = True) -> Task:
  """Writes one task directory under `root` (named by metadata["id"]) and returns it.

  File contents are bytes (written as they are) or str (UTF-8, surrogate escapes turned back
  into their bytes, no newline translation), so every file keeps its exact bytes.
  """
  import shutil  # pylint: disable=import-outside-toplevel
  meta = {"version": "1", "language": "python", "grader": "pytest", "hidden_tests_dest": "tests",
          "test_command": "python -m pytest -q tests", "timeout_s": 30, "split": "train", "tags": []}
  meta.update(metadata)
  validate_metadata(meta, task=str(meta.get("id")))
  d = pathlib.Path(root) / meta["id"]
  if d.exists():
    if not overwrite:
      raise TaskError(f"task {meta['id']!r}: directory {d} already exists")
    shutil.rmtree(d)
  for sub, files in (("repo", repo_files), ("tests", test_files)):
    (d / sub).mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
      rel = _safe_relpath(rel, field=f"{sub} file", task=meta["id"])
      p = d / sub / rel
      p.parent.mkdir(parents=True, exist_ok=True)
      p.write_bytes(text if isinstance(text, bytes) else encode_text(text))
  (d / "task.md").write_text(statement, encoding="utf-8")
  (d / "metadata.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
  if solution_patch is not None:
    (d / "solution.patch").write_bytes(encode_text(solution_patch))
  return Task(dir=d, metadata=meta)
