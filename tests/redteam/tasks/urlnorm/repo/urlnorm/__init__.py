"""URL normalisation (RFC 3986, section 6): a library and a command line filter."""

from urlnorm.core import DEFAULT_PORTS, is_normal, normalize
from urlnorm.paths import remove_dot_segments
from urlnorm.percent import normalize_percent

__all__ = ["DEFAULT_PORTS", "is_normal", "normalize", "normalize_percent", "remove_dot_segments"]
