"""Splitting a URL into its components and putting it back together in normal form."""

import re

from urlnorm.paths import remove_dot_segments
from urlnorm.percent import normalize_percent

# RFC 3986, appendix B.
_URI = re.compile(r"(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?", re.S)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")
_HOST_PORT = re.compile(r"(\[[^\]]*\]|[^:]*)(?::(.*))?", re.S)
_ESCAPE_OR_TEXT = re.compile(r"%[0-9A-Fa-f]{2}|[^%]+|%")

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21}


def _lower_outside_escapes(text):
  return "".join(piece if piece.startswith("%") else piece.lower() for piece in _ESCAPE_OR_TEXT.findall(text))


def _authority(scheme, authority):
  userinfo, at, hostport = authority.rpartition("@")
  host, port = _HOST_PORT.fullmatch(hostport).groups()
  out = normalize_percent(userinfo) + at if at else ""
  out += _lower_outside_escapes(normalize_percent(host))
  if port in ("80", "443"):
    port = None
  if port is not None:
    out += ":" + port
  return out


def normalize(url):
  """The normal form of an absolute URL; ValueError if `url` is not one."""
  if not isinstance(url, str):
    raise TypeError(f"a URL is a str, not {type(url).__name__}")
  scheme, authority, path, query, fragment = _URI.fullmatch(url).groups()
  if scheme is None or not _SCHEME.fullmatch(scheme):
    raise ValueError(f"not an absolute URL: {url!r}")
  scheme = scheme.lower()
  out = scheme + ":"
  path = normalize_percent(path)
  if authority is not None:
    out += "//" + _authority(scheme, authority)
    path = remove_dot_segments(path) or "/"
  elif path.startswith("/"):
    path = remove_dot_segments(path)
  out += path
  if query is not None:
    out += "?" + normalize_percent(query)
  if fragment is not None:
    out += "#" + normalize_percent(fragment)
  return out


def is_normal(url):
  """Whether `url` is already in normal form."""
  return normalize(url) == url
