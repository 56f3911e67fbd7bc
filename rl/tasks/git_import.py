"""Historical tasks from a git repository's fix commits (the `git` importer).

For a fix commit: repo/ is the parent's tree, byte for byte (binary files, latin-1 text and
CR/CRLF line endings included); the hidden tests are what the commit tests, namely the whole
test folder holding the test files it changed, at the commit's version, landing on the same
folder (so test data and the unchanged modules that read it come along); the test command
runs the changed test modules, plus the unchanged ones that read changed test data (the whole
folder when only data changed); solution.patch is the commit's change to everything else.

Metadata the importer infers so that a plain repository runs: `python_path` (`src` for a src/
layout), a version stub for packages whose `_version.py` is generated at build time
(setuptools-scm, hatch-vcs), `-o addopts=` when the repository's pytest options need plugins
the sandbox runtime lacks, and the license (LICENSE*/LICENCE*/COPYING*, mapped to a short
name). The statement comes from the commit message (trailers and bare issue references
removed, lines that quote the fix dropped) plus how to run the public tests; `--statement-from`
or a per-commit options file replace it.

The workspace gets no git repository by default. `git_history="full"` gives repo/ one holding
the parent commit and its ancestors, `"base"` the parent commit alone (rl.tasks.workspace_git:
never the fix commit, later commits, tags, other branches or remotes), so `git diff` and
`git stash` work for the agent.
"""

from __future__ import annotations

import configparser
import dataclasses
import io
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import tarfile
from typing import Any

from rl.tasks.format import TaskError, sanitize_id, write_task
from rl.tasks.patch import decode_bytes, make_patch

TEST_PATH_RE = re.compile(r"(^|/)(tests?/|testing/|test_[^/]*\.py$|[^/]*_test\.py$|conftest\.py$)")
TEST_DIR_NAMES = ("tests", "test", "testing")
TEST_MODULE_RE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test)\.py$")
# pytest options that only a plugin understands; the sandbox runtime has plain pytest.
PLUGIN_OPTIONS = ("--cov", "--no-cov", "-n", "--numprocesses", "--dist", "--timeout", "--benchmark",
                  "--mypy", "--flake8", "--pylint", "--black", "--isort", "--reruns", "--doctest-plus",
                  "--mpl", "--pep8", "--codestyle", "--pycodestyle", "--ruff", "--memray", "--html")
TRAILER_RE = re.compile(r"^[A-Za-z][A-Za-z-]*(?:-by|-to|-authored-by)?:\s+\S", re.I)
KNOWN_TRAILERS = re.compile(r"^(co-authored-by|signed-off-by|reviewed-by|acked-by|tested-by|reported-by|"
                            r"suggested-by|helped-by|cc|change-id|fixes|closes|refs|see-also|"
                            r"pr-url|pull-request):", re.I)
ISSUE_REF_RE = re.compile(r"(?<![\w#])(?:(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?|refs?|see)\s+)?"
                          r"(?:[\w.-]+/[\w.-]+)?(?:#|gh-)\d+\b[:,.]?\s*", re.I)
# Lines of squashed pull requests that bots write.
BOT_LINE_RE = re.compile(r"pre-commit\.ci|^for more information, see|^\W*\[?(dependabot|bot)\b", re.I)
DEFAULT_TIMEOUT_S = 120
GIT_HISTORY = ("none", "full", "base")
GENERIC_DATA_NAMES = {"data", "fixtures", "files", "resources", "samples", "testdata", "test_data", "valid",
                      "invalid", "input", "inputs", "output", "outputs", "expected", "cases", "examples"}
# First words of the paragraph the importer appends to every statement (the statement check
# judges the description without it).
PUBLIC_TESTS_NOTE = "Change the repository's code so that this is fixed."


def _git(repo: pathlib.Path, *args: str, text: bool = True) -> Any:
  proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=text, check=False)
  if proc.returncode != 0:
    err = proc.stderr if text else proc.stderr.decode("utf-8", "replace")
    raise TaskError(f"git {' '.join(args)} failed in {repo}: {err.strip()}")
  return proc.stdout


def tree_at(repo: pathlib.Path, rev: str) -> dict[str, bytes]:
  """{path: bytes} of every regular file at `rev` (git archive: no checkout, no line-ending
  conversion, no filters)."""
  data = _git(repo, "archive", "--format=tar", rev, text=False)
  files = {}
  with tarfile.open(fileobj=io.BytesIO(data)) as tar:
    for member in tar.getmembers():
      if member.isfile():
        extracted = tar.extractfile(member)
        if extracted is not None:
          files[member.name] = extracted.read()
  return files


# ---------------------------------------------------------------------------------------------
# Per-commit options

@dataclasses.dataclass
class CommitOptions:
  """One commit's import settings (a `--commits-file` entry); empty fields use the defaults."""
  commit: str
  test_command: str | None = None
  statement: str | None = None
  setup: list[str] | None = None
  python_path: list[str] | None = None
  env: dict[str, str] | None = None
  image: str | None = None
  timeout_s: float | None = None
  memory_mb: int | None = None
  max_procs: int | None = None
  license: str | None = None

  @classmethod
  def from_mapping(cls, entry: Any, *, where: str) -> "CommitOptions":
    if isinstance(entry, str):
      return cls(commit=entry)
    if not isinstance(entry, dict):
      raise TaskError(f"{where}: each entry must be a commit or an object, got {type(entry).__name__}")
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(entry) - known)
    if unknown:
      raise TaskError(f"{where}: unknown field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    if not isinstance(entry.get("commit"), str) or not entry["commit"].strip():
      raise TaskError(f"{where}: missing field 'commit'")
    if isinstance(entry.get("setup"), str):
      entry = {**entry, "setup": [entry["setup"]]}
    if isinstance(entry.get("python_path"), str):
      entry = {**entry, "python_path": [entry["python_path"]]}
    return cls(**entry)


def read_commits_file(path: str | os.PathLike) -> list[CommitOptions]:
  """A JSON or YAML list of commits, each a SHA or an object of CommitOptions fields."""
  path = pathlib.Path(path)
  if not path.is_file():
    raise TaskError(f"commits file {path} does not exist")
  text = path.read_text(encoding="utf-8")
  if path.suffix in (".yaml", ".yml"):
    try:
      import yaml  # pylint: disable=import-outside-toplevel
    except ImportError:
      raise TaskError(f"{path}: reading YAML needs PyYAML (pip install pyyaml); or write the list as JSON") from None
    try:
      entries = yaml.safe_load(text)
    except yaml.YAMLError as e:
      raise TaskError(f"{path}: bad YAML: {str(e).splitlines()[0]}") from None
  else:
    try:
      entries = json.loads(text)
    except json.JSONDecodeError as e:
      raise TaskError(f"{path}: bad JSON (line {e.lineno}, column {e.colno}): {e.msg}") from None
  if not isinstance(entries, list) or not entries:
    raise TaskError(f"{path}: expected a non-empty list of commits")
  return [CommitOptions.from_mapping(e, where=f"{path} entry {i + 1}") for i, e in enumerate(entries)]


def read_statements(path: str | os.PathLike) -> dict[str, str]:
  """`--statement-from`: a JSON object {commit (SHA or prefix): statement text}."""
  path = pathlib.Path(path)
  if not path.is_file():
    raise TaskError(f"statement file {path} does not exist")
  try:
    data = json.loads(path.read_text(encoding="utf-8"))
  except json.JSONDecodeError as e:
    raise TaskError(f"{path}: bad JSON (line {e.lineno}, column {e.colno}): {e.msg}") from None
  if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                           for k, v in data.items()):
    raise TaskError(f"{path}: expected a JSON object of commit: non-empty statement text")
  return data


def _statement_for(sha: str, statements: dict[str, str]) -> str | None:
  matches = [v for k, v in statements.items() if len(k) >= 4 and sha.startswith(k.lower())]
  return matches[0] if matches else None


# ---------------------------------------------------------------------------------------------
# Inference from the tree

LICENSE_NAME_RE = re.compile(r"^(licen[cs]e|copying)([._-].*)?$", re.I)
LICENSE_SIGNATURES = (  # (short name, phrases that all occur in the text, lower case, spaces squeezed)
    ("Apache-2.0", ("apache license", "version 2.0")),
    ("MPL-2.0", ("mozilla public license", "2.0")),
    ("LGPL-3.0", ("gnu lesser general public license", "version 3")),
    ("LGPL-2.1", ("gnu lesser general public license", "version 2.1")),
    ("AGPL-3.0", ("gnu affero general public license", "version 3")),
    ("GPL-3.0", ("gnu general public license", "version 3")),
    ("GPL-2.0", ("gnu general public license", "version 2")),
    ("MIT", ("permission is hereby granted, free of charge", "the above copyright notice")),
    ("ISC", ("permission to use, copy, modify, and", "distribute this software for any purpose")),
    ("BSD-3-Clause", ("redistribution and use in source and binary forms", "neither the name")),
    ("BSD-3-Clause", ("redistribution and use in source and binary forms", "names of its contributors")),
    ("BSD-2-Clause", ("redistribution and use in source and binary forms",)),
    ("PSF-2.0", ("python software foundation license",)),
    ("Unlicense", ("this is free and unencumbered software",)),
    ("CC0-1.0", ("creative commons", "cc0")),
    ("Zlib", ("this software is provided 'as-is'", "altered source versions must be plainly marked")),
)


def license_name(text: str) -> str | None:
  """The short (SPDX) name of a license text, or None when it matches no known license."""
  squeezed = " ".join(text.lower().split())
  for name, phrases in LICENSE_SIGNATURES:
    if all(p in squeezed for p in phrases):
      return name
  return None


def detect_license(tree: dict[str, bytes]) -> tuple[str | None, list[str]]:
  """(license, license files) from the root's LICENSE*/LICENCE*/COPYING* files.

  Known texts give their short names ("MIT", "Apache-2.0 OR BSD-2-Clause" for two files);
  an unknown text gives "see LICENSE" so the check still sees that a license exists.
  """
  files = sorted(p for p in tree if "/" not in p and LICENSE_NAME_RE.match(p))
  names = []
  for f in files:
    name = license_name(decode_bytes(tree[f]))
    if name and name not in names:
      names.append(name)
  if names:
    return " OR ".join(names), files
  if files:
    return f"see {files[0]}", files
  return None, []


def infer_python_path(tree: dict[str, bytes]) -> list[str]:
  """["src"] for a src/ layout (a package or module under src/ and none at the root), else ["."]."""
  src_entries = {p.split("/")[1] for p in tree if p.startswith("src/") and p.count("/") >= 1}
  src_packages = {e for e in src_entries if f"src/{e}/__init__.py" in tree or e.endswith(".py")}
  if src_packages and not any(f"{e}/__init__.py" in tree for e in src_packages if not e.endswith(".py")):
    return ["src"]
  return ["."]


def _top_level_names(tree: dict[str, bytes], root: str) -> set[str]:
  prefix = "" if root in (".", "") else root.rstrip("/") + "/"
  names = set()
  for p in tree:
    if p.startswith(prefix):
      rest = p[len(prefix):]
      if "/" not in rest and rest.endswith(".py"):
        names.add(rest[:-3])
      elif rest.count("/") == 1 and rest.endswith("/__init__.py"):
        names.add(rest.split("/")[0])
  return names


def infer_helper_roots(tree: dict[str, bytes], hidden: "HiddenTests", python_path: list[str]) -> list[str]:
  """Folders to add to python_path for modules the hidden tests import that live elsewhere in
  the repository (a conftest.py importing helpers from docs/): each missing module must be
  found in exactly one folder."""
  import ast  # pylint: disable=import-outside-toplevel
  import sys  # pylint: disable=import-outside-toplevel
  try:
    from sandbox.runtime_env import installed_modules  # pylint: disable=import-outside-toplevel
    runtime = set(installed_modules())
  except Exception:  # pylint: disable=broad-except  # no runtime here: infer nothing from it
    runtime = set()
  provided = set(sys.stdlib_module_names) | runtime | {"pytest", "_pytest"}
  for root in python_path:
    provided |= _top_level_names(tree, root)
  dest = "" if hidden.dest == "." else hidden.dest + "/"
  if dest:
    provided.add(hidden.dest.split("/")[0])  # `from tests.helpers import ...` from the root
  for rel in hidden.files:
    provided |= {rel.rsplit("/", 1)[-1][:-3]} if rel.endswith(".py") else set()
  wanted = set()
  for rel, data in hidden.files.items():
    if not rel.endswith(".py"):
      continue
    try:
      module = ast.parse(decode_bytes(data))
    except (SyntaxError, ValueError):
      continue
    for node in ast.walk(module):
      if isinstance(node, ast.Import):
        wanted.update(a.name.split(".")[0] for a in node.names)
      elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        wanted.add(node.module.split(".")[0])
  roots = []
  for name in sorted(wanted - provided):
    homes = {p[:-len(f"{name}.py")].rstrip("/") or "." for p in tree if p == f"{name}.py" or p.endswith(f"/{name}.py")}
    homes |= {p[:-len(f"{name}/__init__.py")].rstrip("/") or "." for p in tree
              if p == f"{name}/__init__.py" or p.endswith(f"/{name}/__init__.py")}
    homes = {h for h in homes if not h.startswith(dest.rstrip("/") or "\0")}
    if len(homes) == 1:
      home = homes.pop()
      if home not in python_path and home not in roots:
        roots.append(home)
  return roots


_VERSION_FILE_RE = re.compile(r"""(?:version[-_]file|write_to)\s*[=:]\s*["']([^"']+\.py)["']""")


def version_stub(tree: dict[str, bytes], version: str) -> dict[str, bytes]:
  """{path: stub} for a build-time generated version module the tree lacks (setuptools-scm,
  hatch-vcs `version-file`/`write_to`)."""
  stubs = {}
  for config in ("pyproject.toml", "setup.py", "setup.cfg"):
    if config not in tree:
      continue
    for path in _VERSION_FILE_RE.findall(decode_bytes(tree[config])):
      path = path.strip().lstrip("./")
      if path and path not in tree and ".." not in path.split("/"):
        parts = tuple(int(x) if x.isdigit() else x for x in re.split(r"[.+-]", version) if x)
        stubs[path] = (f"# Written at import time by the task importer: the real file is generated "
                       f"by the build from git tags.\n__version__ = version = {version!r}\n"
                       f"__version_tuple__ = version_tuple = {parts!r}\n").encode()
  return stubs


def _pytest_addopts(tree: dict[str, bytes]) -> str:
  """The addopts of the repository's pytest configuration (any of its config files)."""
  found = []
  for name, sections in (("pytest.ini", ("pytest",)), (".pytest.ini", ("pytest",)), ("tox.ini", ("pytest",)),
                         ("setup.cfg", ("tool:pytest",))):
    if name in tree:
      parser = configparser.RawConfigParser(strict=False)
      try:
        parser.read_string(decode_bytes(tree[name]))
      except configparser.Error:
        continue
      for section in sections:
        if parser.has_option(section, "addopts"):
          found.append(parser.get(section, "addopts"))
  if "pyproject.toml" in tree:
    text = decode_bytes(tree["pyproject.toml"])
    section = re.search(r"^\[tool\.pytest\.ini_options\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if section:
      m = re.search(r"^addopts\s*=\s*(\[.*?\]|\"\"\".*?\"\"\"|'''.*?'''|\"[^\"]*\"|'[^']*')", section.group(1), re.M | re.S)
      if m:
        found.append(m.group(1))
  return " ".join(found)


def needs_plugin_options(tree: dict[str, bytes]) -> bool:
  """Whether the repository's pytest addopts name options of plugins the runtime lacks."""
  words = re.findall(r"(?<![\w-])(-{1,2}[A-Za-z][\w-]*)", _pytest_addopts(tree))
  return any(w == opt or w.startswith(opt + "-") or (opt.startswith("--") and w.startswith(opt))
             for w in words for opt in PLUGIN_OPTIONS)


def _test_dir(path: str) -> str | None:
  """The innermost enclosing test folder of a test file ("tests", "src/pkg/tests"), or None."""
  parts = path.split("/")[:-1]
  for i in range(len(parts) - 1, -1, -1):
    if parts[i] in TEST_DIR_NAMES:
      return "/".join(parts[:i + 1])
  return None


@dataclasses.dataclass
class HiddenTests:
  """What the commit tests: files (commit versions), their destination, the modules to run."""
  files: dict[str, bytes]  # relative to dest
  dest: str
  run: list[str]  # workspace-relative test paths for the command
  changed: list[str]  # workspace-relative changed test files


def hidden_tests(changed_tests: list[str], after: dict[str, bytes]) -> HiddenTests:
  """The hidden tests of a commit that changed `changed_tests` (see the module docstring)."""
  present = [p for p in changed_tests if p in after]
  if not present:
    raise TaskError("the commit deletes its test files; nothing to use as hidden tests")
  dirs = {_test_dir(p) for p in present}
  if len(dirs) == 1 and None not in dirs:
    dest = dirs.pop()
    prefix = dest + "/"
    files = {p[len(prefix):]: data for p, data in after.items() if p.startswith(prefix)}
    modules = [p for p in present if TEST_MODULE_RE.search(p)]
    data_changes = [p for p in present if not p.endswith(".py")]
    readers = []
    candidates = {m: decode_bytes(d) for m, d in after.items()
                  if m.startswith(prefix) and TEST_MODULE_RE.search(m) and m not in modules}
    for p in data_changes:
      rel = p[len(prefix):].split("/")
      names = [rel[-1], pathlib.PurePosixPath(rel[-1]).stem, *reversed(rel[:-1])]
      # Specific names first (the file, then its folders, deepest first); generic folder names
      # such as data/ or invalid/ only when no module names anything more specific.
      specific = [k for k in names if len(k) >= 3 and k.lower() not in GENERIC_DATA_NAMES]
      generic = [k for k in names if len(k) >= 3 and k.lower() in GENERIC_DATA_NAMES]
      for keys in (specific, generic):
        found = [m for m, text in candidates.items()
                 if any(re.search(rf"['\"/]{re.escape(k)}['\"/]", text) for k in keys)]
        if found:
          readers.extend(found)
          break
    run = sorted(set(modules + readers))
    if not run:  # only fixtures or helpers changed, and no module names them: run the folder
      run = [dest]
    return HiddenTests(files=files, dest=dest, run=run, changed=sorted(present))
  # Test files beside the code (or in several folders): the changed ones, at the root.
  outside = [p for p in present if p.rsplit("/", 1)[-1] == "conftest.py" and _test_dir(p) is None]
  if outside:
    raise TaskError(f"the commit changes {outside[0]} outside a test folder; grading restores the "
                    "parent's version, so the commit's tests cannot run as committed")
  return HiddenTests(files={p: after[p] for p in present}, dest=".",
                     run=sorted(p for p in present if p.endswith(".py") and TEST_MODULE_RE.search(p)) or sorted(present),
                     changed=sorted(present))


# ---------------------------------------------------------------------------------------------
# Statement

def clean_message(message: str) -> str:
  """The commit message without trailers (Co-authored-by ...) and bare issue references."""
  lines = message.strip().splitlines()
  # Trailers: the last paragraph when every line of it is `Key: value`.
  paragraphs = "\n".join(lines).split("\n\n")
  while len(paragraphs) > 1 and all(TRAILER_RE.match(l) or KNOWN_TRAILERS.match(l)
                                    for l in paragraphs[-1].strip().splitlines() if l.strip()):
    paragraphs.pop()
  kept = []
  for line in "\n\n".join(paragraphs).splitlines():
    if (KNOWN_TRAILERS.match(line.strip()) or re.match(r"^\(cherry picked from commit", line.strip())
        or BOT_LINE_RE.search(line.strip())):
      continue
    kept.append(ISSUE_REF_RE.sub("", line).rstrip() if ISSUE_REF_RE.search(line) else line.rstrip())
  text = "\n".join(kept).strip()
  text = re.sub(r"^\W+", "", text)  # a leading ": " left by "Fix #12: ..."
  text = re.sub(r"[ \t]*\(\s*\)[ \t]*$", "", text, flags=re.M)  # "()" left by "(#135)"
  return re.sub(r"\n{3,}", "\n\n", text)


def write_statement(message: str, *, fix_added_lines: list[str], hidden_test_names: set[str],
                    public_command: str) -> str:
  """task.md from a commit message: cleaned, without lines that quote the fix or hidden test
  names, followed by how to run the public tests."""
  text = clean_message(message)
  out = []
  for line in text.splitlines():
    stripped = line.strip().strip("`").strip()
    if len(stripped) >= 12 and any(stripped and (stripped in a or a in stripped) for a in fix_added_lines if len(a) >= 12):
      continue
    if any(name in line for name in hidden_test_names if len(name) > 8):
      continue
    if re.match(r"^\s*([+-]{3}|@@ )", line):
      continue
    out.append(line)
  body = "\n".join(out).strip()
  # A message that is only an issue number leaves no description: the statement check
  # (rl.tasks.checks.check_statement) reports it, and --statement-from supplies one.
  return (f"{body}\n\n" if body else "") + (f"{PUBLIC_TESTS_NOTE} The repository's existing tests run "
                                              f"with `{public_command}`; hidden tests will check the change.\n")


# ---------------------------------------------------------------------------------------------
# The importer

def import_commit(repo: pathlib.Path, options: CommitOptions, out: str | os.PathLike, *,
                  license: str | None = None, test_command: str | None = None,
                  statements: dict[str, str] | None = None, name: str | None = None,
                  git_history: str = "none") -> Any:
  """Writes the task of one fix commit; returns the Task. Raises TaskError naming the problem.
  `git_history`: the workspace repository (module docstring)."""
  if git_history not in GIT_HISTORY:
    raise TaskError(f"unknown git_history {git_history!r}; known: {', '.join(GIT_HISTORY)}")
  if not _git_ok(repo, "rev-parse", "--verify", "--quiet", f"{options.commit}^{{commit}}"):
    raise TaskError(f"no commit {options.commit!r} in {repo}")
  sha = _git(repo, "rev-parse", "--verify", f"{options.commit}^{{commit}}").strip()
  if not _git_ok(repo, "rev-parse", "--verify", "--quiet", f"{sha}^"):
    raise TaskError("the commit has no parent, so there is no state before the fix")
  parent = _git(repo, "rev-parse", "--verify", f"{sha}^").strip()
  changed = [p for p in _git(repo, "diff", "--no-renames", "--name-only", parent, sha).splitlines() if p]
  test_paths = [p for p in changed if TEST_PATH_RE.search(p)]
  if not test_paths:
    raise TaskError("the commit touches no test files, so there are no hidden tests")
  code_paths = [p for p in changed if not TEST_PATH_RE.search(p)]
  before, after = tree_at(repo, parent), tree_at(repo, sha)
  hidden = hidden_tests(test_paths, after)
  code_after = dict(before)
  for p in code_paths:
    if p in after:
      code_after[p] = after[p]
    else:
      code_after.pop(p, None)
  if code_after == before:
    raise TaskError("the commit changes only tests, so there is nothing to fix")
  version = (_git(repo, "describe", "--tags", "--abbrev=0", parent).strip().lstrip("v")
             if _git_ok(repo, "describe", "--tags", "--abbrev=0", parent) else "0.0.0")
  if not re.match(r"^\d+(\.\d+)*", version):
    version = "0.0.0"
  stubs = version_stub(before, version)
  before.update(stubs)
  code_after.update(stubs)
  python_path = options.python_path or infer_python_path(before)
  if not options.python_path:
    python_path = python_path + infer_helper_roots(before, hidden, python_path)
  # solution.patch and the structured fix cover the files the commit changed.
  changed_before = {p: decode_bytes(before[p]) for p in code_paths if p in before}
  changed_after = {p: decode_bytes(code_after[p]) for p in code_paths if p in code_after}
  patch = make_patch(changed_before, changed_after)
  from rl.tasks.importers import compute_fix  # pylint: disable=import-outside-toplevel
  utf8 = all(_is_utf8(before.get(p, b"")) and _is_utf8(code_after.get(p, b"")) for p in code_paths)
  fix = compute_fix(changed_before, changed_after) if utf8 and set(changed_before) == set(changed_after) else None
  run = [shlex.quote(p) for p in hidden.run]
  addopts = ["-o", "addopts="] if needs_plugin_options(before) else []
  command = options.test_command or test_command or " ".join(["python", "-m", "pytest", "-q", *addopts, *run])
  public_paths = [hidden.dest] if hidden.dest != "." else [p for p in hidden.run if p in before]
  public_command = " ".join(["python", "-m", "pytest", "-q", *addopts, *public_paths]) if public_paths else \
      "python -m pytest -q"
  message = _git(repo, "log", "-1", "--format=%B", sha)
  added = [line[1:].strip() for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++")]
  test_names = set()
  for rel, data in hidden.files.items():
    test_names.update(re.findall(r"def (test\w+)", decode_bytes(data)))
  public_names = set()
  for p, data in before.items():
    if TEST_MODULE_RE.search(p):
      public_names.update(re.findall(r"def (test\w+)", decode_bytes(data)))
  statement = options.statement or _statement_for(sha, statements or {}) or write_statement(
      message, fix_added_lines=added, hidden_test_names=test_names - public_names, public_command=public_command)
  detected, license_files = detect_license(before)
  name = name or repo_name(repo)
  lic = options.license or license or detected or "unknown"
  metadata: dict[str, Any] = {
      "id": sanitize_id(f"{name}-{sha[:10]}"), "source": f"git:{name}",
      "license": lic, "timeout_s": options.timeout_s or DEFAULT_TIMEOUT_S, "hidden_tests_dest": hidden.dest,
      "test_command": command, "difficulty": "historical", "tags": ["git", "historical"], "split": "test",
      "commit": sha, "parent": parent, "fix": fix, "python_path": python_path,
      "changed_tests": hidden.changed, "public_tests": [p for p in public_paths if p in before or
                                                       any(k.startswith(p + "/") for k in before)],
  }
  if license_files:
    metadata["license_files"] = license_files
  if stubs:
    metadata["generated_files"] = sorted(stubs)
  for name in ("setup", "env", "image", "memory_mb", "max_procs"):
    value = getattr(options, name)
    if value:
      metadata[name] = value
  if git_history != "none":
    metadata["workspace_git"] = git_history
  task = write_task(out, statement=statement, repo_files=before, test_files=hidden.files,
                    metadata=metadata, solution_patch=patch)
  if git_history != "none":
    from rl.tasks.workspace_git import add_repository  # pylint: disable=import-outside-toplevel
    try:
      add_repository(task.repo_dir, repo, parent, depth=1 if git_history == "base" else None)
    except TaskError:
      shutil.rmtree(task.dir, ignore_errors=True)  # no half-made task left behind
      raise
  return task


def repo_name(repo: pathlib.Path) -> str:
  """A short name for task ids: the folder's name, without `.git`; for a folder named `repo` or
  `.git` (a mirror's or a checkout's git directory), its parent's ("owner+name" -> "owner-name")."""
  path = repo.resolve()
  name = path.name[:-4] if path.name.endswith(".git") and path.name != ".git" else path.name
  if name in ("repo", ".git", "") and path.parent.name:
    name = path.parent.name
  return sanitize_id(name.replace("+", "-"))


def _git_ok(repo: pathlib.Path, *args: str) -> bool:
  return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False).returncode == 0


def _is_utf8(data: bytes) -> bool:
  try:
    data.decode("utf-8")
    return True
  except UnicodeDecodeError:
    return False


def import_git(input_path: str | os.PathLike, out: str | os.PathLike, *, commits: list[str] | None = None,
               commits_file: str | os.PathLike | None = None, statement_from: str | os.PathLike | None = None,
               license: str | None = None, on_error: str = "skip", limit: int | None = None,
               test_command: str | None = None, repo_name: str | None = None, git_history: str = "none") -> Any:
  """Rebuilds historical tasks from a local git repository and its fix commits (see the module
  docstring). `commits_file`: per-commit options (read_commits_file); `statement_from`: a JSON
  object of commit -> statement. A commit that cannot become a task is skipped with its reason
  (on_error="skip") or stops the import (on_error="reject"). `git_history`: "none" (no
  repository in the workspace), "full" or "base" (see the module docstring)."""
  from rl.tasks.importers import ImportResult, _finish  # pylint: disable=import-outside-toplevel
  repo = pathlib.Path(input_path)
  if not repo.exists():
    raise TaskError(f"git repository {repo} does not exist")
  if not _git_ok(repo, "rev-parse", "--git-dir"):
    raise TaskError(f"{repo} is not a git repository")
  entries = [CommitOptions(commit=c) for c in commits or []]
  if commits_file:
    entries += read_commits_file(commits_file)
  if not entries:
    entries = [CommitOptions(commit=_git(repo, "rev-parse", "HEAD").strip())]
  statements = read_statements(statement_from) if statement_from else {}
  pathlib.Path(out).mkdir(parents=True, exist_ok=True)
  result = ImportResult()
  for n, options in enumerate(entries):
    if limit is not None and n >= limit:
      break
    try:
      result.tasks.append(import_commit(repo, options, out, license=license, test_command=test_command,
                                        statements=statements, name=repo_name, git_history=git_history))
    except TaskError as e:
      if on_error == "reject":
        raise TaskError(f"commit {options.commit}: {e}") from None
      result.skipped.append(f"commit {options.commit}: {e}")
  return _finish(out, result)
