"""Reads INI-style configuration: [section] headers, `key = value` lines, `#`/`;` comments,
`%include PATH` directives and ${key} / ${section:key} references between values."""

import os
import re


class ConfigError(ValueError):
  """A malformed line, a missing or circular include, an unknown or circular reference."""


_SECTION = re.compile(r"\[([^\[\]]+)\]$")
_KEY = re.compile(r"([A-Za-z0-9_.-]+)\s*[=:]\s*(.*)$")
_REF = re.compile(r"\$(\$|\{([^{}]*)\})")


def load(path):
  """The configuration in the file at `path`, as {section: {key: value}} with every reference
  replaced. Relative %include paths are read relative to the file that holds the directive."""
  path = os.path.abspath(path)
  try:
    with open(path, encoding="utf-8") as fh:
      text = fh.read()
  except OSError as e:
    raise ConfigError(f"cannot read {path}: {e.strerror}") from None
  return _Parser(os.path.dirname(path)).run(text, path)


def loads(text, base_dir=None):
  """The configuration in `text`; its relative %include paths are read from `base_dir` (default:
  the current directory), those of the included files relative to each included file."""
  return _Parser(os.path.abspath(base_dir or os.getcwd())).run(text, "<string>")


class _Parser:

  def __init__(self, base_dir):
    self.base_dir = base_dir
    self.values = {}  # section -> {key: value}, in the order first seen

  def run(self, text, name):
    self.feed(text, name, None, (name,))
    return {section: dict(keys) for section, keys in self.values.items()}

  def feed(self, text, name, section, stack):
    """Reads `text` (from the file `name`); `section` is the section open where it starts and
    `stack` the files being included, outermost first."""
    for number, line in enumerate(text.splitlines(), 1):
      where = f"{name}:{number}"
      stripped = line.strip()
      if not stripped or stripped[0] in "#;":
        continue
      if stripped.startswith("%include"):
        target = stripped[len("%include"):].strip()
        if not target:
          raise ConfigError(f"{where}: %include needs a path")
        self.include(target, where, section, stack)
        continue
      match = _SECTION.match(stripped)
      if match:
        section = match.group(1).strip()
        self.values.setdefault(section, {})
        continue
      match = _KEY.match(stripped)
      if not match:
        raise ConfigError(f"{where}: cannot parse {line!r}")
      if section is None:
        raise ConfigError(f"{where}: key {match.group(1)!r} outside any section")
      self.values[section][match.group(1)] = self.expand(match.group(2).strip(), section, where)

  def include(self, target, where, section, stack):
    path = os.path.normpath(os.path.join(self.base_dir, target))
    if path in stack:
      raise ConfigError(f"{where}: circular %include of {target}")
    try:
      with open(path, encoding="utf-8") as fh:
        text = fh.read()
    except OSError as e:
      raise ConfigError(f"{where}: cannot include {target}: {e.strerror}") from None
    self.feed(text, path, section, stack + (path,))

  def expand(self, raw, section, where):
    """`raw` with each ${key} / ${section:key} replaced by that value and $$ by $."""

    def replace(match):
      if match.group(1) == "$":
        return "$"
      ref = match.group(2).strip()
      other, _, key = ref.rpartition(":")
      other = other.strip() or section
      try:
        return self.values[other][key.strip()]
      except KeyError:
        raise ConfigError(f"{where}: unknown reference ${{{ref}}}") from None

    return _REF.sub(replace, raw)
