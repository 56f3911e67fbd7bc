"""INI-style configuration files with %include directives and ${...} references."""

from confkit.loader import ConfigError, load, loads

__all__ = ["ConfigError", "load", "loads"]
