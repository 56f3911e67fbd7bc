import random

import pytest

from urlnorm import is_normal, normalize, normalize_percent, remove_dot_segments

# Each group: the normal form first, then URLs that must normalise to it.
EQUIVALENT = [
    ["http://example.com/", "HTTP://EXAMPLE.COM/", "http://example.com:80/", "http://example.com",
     "http://Example.com:/", "http://example.com/./", "http://example.com/a/.."],
    ["https://example.com/", "https://example.com:443/", "HTTPS://example.COM:443", "https://example.com:443/x/../"],
    ["http://example.com:443/", "http://EXAMPLE.com:443/"],
    ["https://example.com:80/x", "https://example.com:80/y/../x"],
    ["http://h/~user/a-b_c.d", "http://h/%7Euser/a%2Db%5Fc%2Ed", "http://h/%7euser/%61-b_c.d"],
    ["http://h/a%2Fb", "http://h/a%2fb"],
    ["http://h/a?q=%3F%23", "http://h/a?q=%3f%23"],
    ["http://h/%25", "http://h/%25"],
    ["http://h/a%20b", "http://h/a%20b"],
    ["http://h/a/", "http://h/a/b/..", "http://h/a/.", "http://h/a/b/../", "http://h/a/./"],
    ["http://h/c", "http://h/a/b/../../c", "http://h/../c", "http://h/./../c", "http://h/a/../../c"],
    ["http://u%3Ap@h/", "http://u%3ap@H/"],
    ["http://h:8080/", "http://h:8080"],
]

DIFFERENT = [
    ("http://h/a%2Fb", "http://h/a/b"),
    ("http://h/a%3Fb", "http://h/a?b"),
    ("http://h/a%23b", "http://h/a#b"),
    ("https://h:80/", "https://h/"),
    ("http://h:443/", "http://h/"),
    ("http://h/a/", "http://h/a"),
    ("http://h/A", "http://h/a"),
    ("http://h/?a=1", "http://h/?A=1"),
]


@pytest.mark.parametrize("group", EQUIVALENT, ids=["group%d" % i for i in range(len(EQUIVALENT))])
def test_equivalent_urls(group):
  for url in group:
    assert normalize(url) == group[0], url
  assert is_normal(group[0])


@pytest.mark.parametrize("a, b", DIFFERENT, ids=["pair%d" % i for i in range(len(DIFFERENT))])
def test_different_urls(a, b):
  assert normalize(a) != normalize(b)


NOT_URLS = ["no scheme here", "//h/path", "http://h:8x/", "http://h:-1/", "1http://h/", ""]


@pytest.mark.parametrize("text", NOT_URLS, ids=["text%d" % i for i in range(len(NOT_URLS))])
def test_not_urls(text):
  with pytest.raises(ValueError):
    normalize(text)


def test_normalize_percent():
  assert normalize_percent("%7e%41%2d%5F%2E") == "~A-_."
  assert normalize_percent("%2f%3a%3F%23%25%20") == "%2F%3A%3F%23%25%20"
  assert normalize_percent("100%") == "100%"
  assert normalize_percent("%zz%4") == "%zz%4"


# -- seeded paths and URLs against a slow reference -----------------------------------------


def reference_remove_dot_segments(path):
  """RFC 3986, section 5.2.4, step by step."""
  rest, out = path, ""
  while rest:
    if rest.startswith("../") or rest.startswith("./"):
      rest = rest[rest.index("/") + 1:]
    elif rest.startswith("/./") or rest == "/.":
      rest = "/" + rest[3:]
    elif rest.startswith("/../") or rest == "/..":
      rest = "/" + rest[4:]
      out = out[:out.rfind("/")] if "/" in out else ""
    elif rest in (".", ".."):
      rest = ""
    else:
      cut = rest.find("/", 1)
      cut = len(rest) if cut < 0 else cut
      out, rest = out + rest[:cut], rest[cut:]
  return out


SEGMENTS = ["a", "b", "c", ".", "..", ""]


@pytest.mark.parametrize("seed", range(5))
def test_remove_dot_segments_random(seed):
  rng = random.Random(seed)
  for _ in range(400):
    path = "/".join(rng.choice(SEGMENTS) for _ in range(rng.randint(1, 6)))
    if rng.random() < 0.7:
      path = "/" + path
    assert remove_dot_segments(path) == reference_remove_dot_segments(path), path


UNRESERVED_ESCAPES = {"%41": "A", "%7e": "~", "%7E": "~", "%5f": "_", "%2d": "-", "%30": "0"}
PATH_PIECES = ["a", "B", ".", "..", "", "%41", "%7e", "x%5fy", "%2d", "%20", "%30"]


def reference_normalize(scheme, host, port, pieces):
  scheme = scheme.lower()
  default = {"http": "80", "https": "443"}[scheme]
  path = "/" + "/".join(pieces)
  for escape, char in UNRESERVED_ESCAPES.items():
    path = path.replace(escape, char)
  path = reference_remove_dot_segments(path) or "/"
  port = "" if port in ("", default) else ":" + port
  return scheme + "://" + host.lower() + port + path


@pytest.mark.parametrize("seed", range(5))
def test_normalize_random(seed):
  rng = random.Random(500 + seed)
  for _ in range(300):
    scheme = rng.choice(["http", "HTTP", "https", "Https"])
    host = rng.choice(["Example.COM", "a.b", "localhost", "H"])
    port = rng.choice(["", "80", "443", "8080"])
    pieces = [rng.choice(PATH_PIECES) for _ in range(rng.randint(0, 5))]
    url = scheme + "://" + host + (":" + port if port or rng.random() < 0.3 else "") + "/" + "/".join(pieces)
    want = reference_normalize(scheme, host, port, pieces)
    assert normalize(url) == want, url
    assert normalize(want) == want, want
