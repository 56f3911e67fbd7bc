"""The sandbox runtime: the one Python environment code under test sees, in every backend.

Code under test (an agent's commands, a task's tests, an MLE program) imports what
`sandbox/requirements.txt` pins: pytest and the scientific set (numpy, pandas, scikit-learn)
with their dependencies, nothing else. `scripts/setup.sh` installs that file into its own
virtualenv, `.venv/sandbox`, which the bubblewrap backend binds read-only; the Docker image
installs the same file (`scripts/build_sandbox_image.py`). The trainer's environment (`.venv`:
jax, flax, transformers, this project) is never visible inside a sandbox, so a task cannot
depend on it by accident and an agent cannot reach it.

The runtime is found, in order: `SandboxConfig.python`, the `RLCODER_SANDBOX_PYTHON`
environment variable, `.venv/sandbox/bin/python` in the repository.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import subprocess

from sandbox.api import SandboxError

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REQUIREMENTS = os.path.join(REPO_ROOT, "sandbox", "requirements.txt")
DEFAULT_VENV = os.path.join(REPO_ROOT, ".venv", "sandbox")
ENV_VAR = "RLCODER_SANDBOX_PYTHON"
SETUP_HINT = "run `bash scripts/setup.sh` (it installs sandbox/requirements.txt into .venv/sandbox)"

# Asks the runtime interpreter where it lives. The base interpreter's own site directories are
# listed so they can be hidden: a virtualenv does not put them on sys.path, but code under test
# could add them, and they may hold packages (a system numpy, say) that differ from the pins.
_PROBE = r"""
import json, os, site, sys
base_sites = [p for p in site.getsitepackages([sys.base_prefix]) if os.path.isdir(p)]
print(json.dumps({"executable": sys.executable, "prefix": sys.prefix,
                  "base_prefix": sys.base_prefix, "base_sites": base_sites,
                  "version": list(sys.version_info[:3])}))
"""


@dataclasses.dataclass(frozen=True)
class Runtime:
  """Where the sandbox runtime lives on the host.

  Attributes:
    python: the interpreter to run (a virtualenv's `bin/python`, not resolved, so that the
      virtualenv's site-packages apply).
    bin_dir: the directory put first on PATH inside the sandbox (`python`, `pytest`).
    roots: host directories to bind read-only: the virtualenv and its base installation.
    hidden_sites: the base installation's site directories, masked inside the sandbox; empty
      when the runtime is not a virtualenv (its packages then live there).
    version: the interpreter's (major, minor, micro).
    venv: the virtualenv's directory (its sys.prefix) when the runtime is one, else "". The
      bubblewrap backend mounts it at a fixed path, so what code under test sees (tracebacks,
      `__file__`, sys.path) does not depend on where the project is checked out.
  """
  python: str
  bin_dir: str
  roots: tuple[str, ...]
  hidden_sites: tuple[str, ...]
  version: tuple[int, ...]
  venv: str = ""


def runtime_python(configured: str = "") -> str:
  """The runtime interpreter's path (see the module docstring for the search order)."""
  path = configured or os.environ.get(ENV_VAR, "") or os.path.join(DEFAULT_VENV, "bin", "python")
  if not os.path.isfile(path) or not os.access(path, os.X_OK):
    source = ("SandboxConfig.python" if configured else ENV_VAR if os.environ.get(ENV_VAR)
              else "the default location")
    raise SandboxError(f"the sandbox runtime interpreter {path} ({source}) does not exist: "
                       f"{SETUP_HINT}")
  return os.path.abspath(path)


def is_inside(path: str, directory: str) -> bool:
  """Whether `path` is `directory` or lies below it (compared as strings, not resolved)."""
  return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _outermost(paths: list[str]) -> tuple[str, ...]:
  """Drops paths that lie inside another one of the list (binding the parent covers them)."""
  kept: list[str] = []
  for path in sorted(set(paths), key=len):
    if not any(is_inside(path, k) for k in kept):
      kept.append(path)
  return tuple(kept)


@functools.lru_cache(maxsize=None)
def _probe(python: str) -> Runtime:
  try:
    proc = subprocess.run([python, "-s", "-c", _PROBE], capture_output=True, text=True,
                          timeout=60, check=True, env={"PATH": "/usr/bin:/bin"})
    info = json.loads(proc.stdout)
  except (OSError, subprocess.SubprocessError, ValueError) as e:
    raise SandboxError(f"the sandbox runtime interpreter {python} does not run ({e}): "
                       f"{SETUP_HINT}") from e
  prefix, base = info["prefix"], info["base_prefix"]
  roots = [prefix, os.path.realpath(prefix), base, os.path.realpath(base)]
  # The virtualenv's `python` is a symlink to the base interpreter; both ends must resolve.
  roots.append(os.path.dirname(os.path.realpath(python)))
  in_venv = os.path.realpath(prefix) != os.path.realpath(base)
  hidden = tuple(os.path.realpath(p) for p in info["base_sites"]) if in_venv else ()
  # A virtualenv whose interpreter sits in its own bin/ (the layout `python -m venv` makes).
  venv = prefix if in_venv and os.path.dirname(os.path.dirname(python)) == prefix else ""
  return Runtime(python=python, bin_dir=os.path.dirname(python), roots=_outermost(roots),
                 hidden_sites=hidden, version=tuple(info["version"]), venv=venv)


def runtime(configured: str = "") -> Runtime:
  """The sandbox runtime, probed once per interpreter path and process."""
  return _probe(runtime_python(configured))


def requirement_pins(path: str = REQUIREMENTS) -> dict[str, str]:
  """`name -> version` for every `name==version` line of a requirements file (names normalised)."""
  pins = {}
  with open(path, encoding="utf-8") as f:
    for line in f:
      line = line.split("#", 1)[0].strip()
      if "==" in line:
        name, version = line.split("==", 1)
        pins[normalise(name)] = version.strip()
  return pins


def normalise(name: str) -> str:
  """A distribution name in PEP 503 form (`Scikit_Learn` -> `scikit-learn`)."""
  return "-".join(name.strip().lower().replace("_", "-").replace(".", "-").split("-"))


@functools.lru_cache(maxsize=None)
def installed_modules(configured: str = "") -> frozenset[str]:
  """Top-level import names the sandbox runtime provides (its installed distributions')."""
  python = runtime_python(configured)
  probe = ("import importlib.metadata as m, json; "
           "print(json.dumps(sorted(n for n in m.packages_distributions() if not n.startswith('_'))))")
  try:
    proc = subprocess.run([python, "-s", "-c", probe], capture_output=True, text=True, timeout=60, check=True,
                          env={"PATH": "/usr/bin:/bin"})
    return frozenset(json.loads(proc.stdout))
  except (OSError, subprocess.SubprocessError, ValueError) as e:
    raise SandboxError(f"the sandbox runtime interpreter {python} does not run ({e}): {SETUP_HINT}") from e
