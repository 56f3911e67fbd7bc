import subprocess
import sys

from urlnorm import normalize, remove_dot_segments


def test_scheme_and_host_case():
  assert normalize("HTTP://Example.COM/Path") == "http://example.com/Path"


def test_unreserved_escapes_are_decoded():
  assert normalize("http://example.com/%7Euser") == "http://example.com/~user"


def test_dot_segments():
  assert remove_dot_segments("/a/b/c/./../../g") == "/a/g"
  assert normalize("http://example.com/a/./b/../c") == "http://example.com/a/c"


def test_command_line():
  result = subprocess.run([sys.executable, "-m", "urlnorm"], input="HTTP://A.B/x/../y\n", capture_output=True,
                          text=True, timeout=60)
  assert result.returncode == 0
  assert result.stdout == "http://a.b/y\n"
