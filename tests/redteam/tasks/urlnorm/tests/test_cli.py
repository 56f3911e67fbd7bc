import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TABLE = [
    ("HTTP://Example.COM/", "http://example.com/"),
    ("http://example.com", "http://example.com/"),
    ("http://example.com:80/a", "http://example.com/a"),
    ("https://example.com:443/a", "https://example.com/a"),
    ("http://example.com:443/a", "http://example.com:443/a"),
    ("https://example.com:80/a", "https://example.com:80/a"),
    ("http://example.com:/a", "http://example.com/a"),
    ("http://example.com:8080/a", "http://example.com:8080/a"),
    ("http://example.com/a/./b", "http://example.com/a/b"),
    ("http://example.com/a/b/../c", "http://example.com/a/c"),
    ("http://example.com/a/b/..", "http://example.com/a/"),
    ("http://example.com/a/b/.", "http://example.com/a/b/"),
    ("http://example.com/../a", "http://example.com/a"),
    ("http://example.com/a/b/../../../c", "http://example.com/c"),
    ("http://example.com/%7euser", "http://example.com/~user"),
    ("http://example.com/%41%42c", "http://example.com/ABc"),
    ("http://example.com/a%2fb", "http://example.com/a%2Fb"),
    ("http://example.com/a%2Fb/../c", "http://example.com/c"),
    ("http://example.com/?q=%3f", "http://example.com/?q=%3F"),
    ("http://example.com/a%20b", "http://example.com/a%20b"),
    ("http://example.com/100%25", "http://example.com/100%25"),
    ("http://example.com/x#frag%2Dment", "http://example.com/x#frag-ment"),
    ("http://example.com/x#a%23b", "http://example.com/x#a%23b"),
    ("http://User:Pass@Example.com/", "http://User:Pass@example.com/"),
    ("http://us%65r@H/", "http://user@h/"),
    ("mailto:Joe@Example.COM", "mailto:Joe@Example.COM"),
    ("HTTPS://[2001:DB8::1]:443/", "https://[2001:db8::1]/"),
    ("ftp://files.example.com/pub/../README", "ftp://files.example.com/README"),
]


def run_cli(*args, text):
  return subprocess.run([sys.executable, "-m", "urlnorm", *args], input=text, capture_output=True, text=True,
                        cwd=ROOT, timeout=60)


def test_table_through_the_command_line():
  result = run_cli(text="".join(url + "\n" for url, _ in TABLE))
  assert result.returncode == 0, result.stderr
  assert result.stdout.splitlines() == [normal for _, normal in TABLE]


def test_normal_forms_are_left_alone():
  result = run_cli(text="".join(normal + "\n" for _, normal in TABLE))
  assert result.returncode == 0, result.stderr
  assert result.stdout.splitlines() == [normal for _, normal in TABLE]


def test_check_lists_the_lines_not_in_normal_form():
  lines = ["http://example.com/", "http://example.com:80/", "https://example.com/a/b/..", "https://example.com/a/",
           "http://example.com/%7e", "http://example.com/%2F", "http://example.com/a%2fb", "http://example.com:/"]
  result = run_cli("--check", text="\n".join(lines) + "\n")
  assert result.returncode == 1, result.stderr
  assert result.stdout.splitlines() == ["http://example.com:80/", "https://example.com/a/b/..",
                                        "http://example.com/%7e", "http://example.com/a%2fb", "http://example.com:/"]


def test_check_passes_normal_input():
  result = run_cli("--check", text="".join(normal + "\n" for _, normal in TABLE))
  assert result.returncode == 0, result.stdout + result.stderr
  assert result.stdout == ""


def test_bad_lines_are_reported_and_skipped():
  result = run_cli(text="http://a.b/\nno scheme here\n\nhttp://a.b:8x/\n  HTTP://A.B/%7e  \n")
  assert result.returncode == 2
  assert result.stdout.splitlines() == ["http://a.b/", "http://a.b/~"]
  assert "urlnorm: line 2:" in result.stderr and "urlnorm: line 4:" in result.stderr
