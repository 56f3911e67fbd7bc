"""Bad input at the command line: one line on stderr that names the problem, exit status 2.

`train.py` and the scripts wrap their work in `bad_input_exits()`. It catches only the project's
own input-error types (a malformed task, trajectory or JSONL file, an invalid config field, a
Hugging Face directory that does not load) and `InputError` (a named input path that does not
exist, a record that is not there); anything else is a bug and keeps its traceback.

For absl programs with an ml-collections config flag, `check_config_args(argv)` runs before the
flag is defined (a missing config file, an unknown `--config.a.b=` field) and `parse_flags`
replaces absl's flag parser (a value of the wrong type, a missing required flag).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from typing import Iterator, NoReturn, Sequence

EXIT_BAD_INPUT = 2  # what argparse uses for a usage error


class InputError(ValueError):
  """Bad input named on the command line that no more specific type covers."""


def input_error_types() -> tuple[type[BaseException], ...]:
  """The project's exception types that mean "the input is wrong", not "the code is wrong"."""
  # pylint: disable=import-outside-toplevel
  from rl.config import ConfigError
  from rl.models.hf import CheckpointError
  from rl.tasks.format import TaskError
  from rl.tasks.importers import JsonlError
  from rl.tasks.patch import PatchError
  from rl.env.trajectory import TrajectoryFormatError
  return (InputError, ConfigError, CheckpointError, TaskError, JsonlError, PatchError, TrajectoryFormatError)


def one_line(message: object) -> str:
  """`message` on one line: its lines joined with "; " (a JSONL error lists its bad lines), or
  with a space after a line that ends in a colon."""
  text = ""
  for line in (l.strip() for l in str(message).splitlines()):
    if line:
      text += (" " if text.endswith(":") else "; ") + line if text else line
  return text


def program_name() -> str:
  return os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "rlcoder"


def fail(message: object) -> NoReturn:
  """Prints `PROG: error: MESSAGE` on stderr and exits with status 2."""
  print(f"{program_name()}: error: {one_line(message)}", file=sys.stderr, flush=True)
  raise SystemExit(EXIT_BAD_INPUT)


@contextlib.contextmanager
def bad_input_exits(*extra: type[BaseException]) -> Iterator[None]:
  """Turns the input-error types (and `extra`, e.g. the trainer's WorkdirError) into `fail`."""
  try:
    yield
  except (*input_error_types(), *extra) as e:  # pylint: disable=catching-non-exception
    fail(e)


def require_path(path: str, what: str, *, directory: bool | None = None) -> str:
  """`path` when it exists (and is a directory, or a file, as asked); else `fail` naming it."""
  if not os.path.exists(path):
    fail(f"{what} {path} does not exist")
  if directory is True and not os.path.isdir(path):
    fail(f"{what} {path} is not a directory")
  if directory is False and os.path.isdir(path):
    fail(f"{what} {path} is a directory, not a file")
  return path


# -- ml-collections config flags -----------------------------------------------------------------
def _flag_value(argv: Sequence[str], name: str) -> str | None:
  """The value of `--name=V` / `--name V` in argv (the last one given), else None."""
  value = None
  for i, arg in enumerate(argv):
    if re.fullmatch(rf"--?{re.escape(name)}=.*", arg):
      value = arg.split("=", 1)[1]
    elif re.fullmatch(rf"--?{re.escape(name)}", arg) and i + 1 < len(argv):
      value = argv[i + 1]
  return value


def check_config_args(argv: Sequence[str], *, name: str = "config", default: str = "") -> None:
  """Fails (one line, status 2) on a config file that is missing or unreadable and on a
  `--config.a.b=` override of a field the config does not have, before the config flag is
  defined (ml_collections reports the first lazily and the second with a traceback). Errors
  inside the config file's own code are left to the traceback."""
  from ml_collections import config_dict  # pylint: disable=import-outside-toplevel
  from ml_collections.config_flags import config_flags  # pylint: disable=import-outside-toplevel

  spec = _flag_value(argv, name) or default
  path = spec.split(":", 1)[0]
  if not path:
    fail(f"--{name}: no config file given")
  if not os.path.isfile(path):
    fail(f"--{name}: config file {path} does not exist" if not os.path.exists(path)
         else f"--{name}: config file {path} is not a file")
  if not os.access(path, os.R_OK):
    fail(f"--{name}: config file {path} is not readable")
  overrides = [arg.split("=", 1)[0].lstrip("-").split(".", 1)[1] for arg in argv
               if re.match(rf"--?(no)?{re.escape(name)}\.", arg)]
  if not overrides:
    return
  config = config_flags.ConfigFileFlagParser(name, lock_config=False).parse(spec)
  for override in overrides:
    node, walked = config, name
    for part in re.sub(r"\[\d+\]", "", override).split("."):
      if not isinstance(node, (config_dict.ConfigDict, dict)) or part not in node:
        known = ", ".join(sorted(node.keys())) if isinstance(node, (config_dict.ConfigDict, dict)) else ""
        fail(f"unknown config field --{name}.{override}: {walked} has no field {part!r}"
             + (f" (its fields: {known})" if known else ""))
      node, walked = node[part], f"{walked}.{part}"


def parse_flags(argv: list[str]) -> list[str]:
  """absl's flag parsing with a usage error as one line and status 2 (absl: two lines, status 1);
  for `app.run(main, flags_parser=parse_flags)`."""
  from absl import flags  # pylint: disable=import-outside-toplevel

  try:
    return flags.FLAGS(argv)
  except flags.Error as e:
    fail(e)
