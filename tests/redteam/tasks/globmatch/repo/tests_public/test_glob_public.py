from globmatch import expand_braces, filter_paths, match


def test_star_stays_in_its_segment():
  assert match("src/*.py", "src/main.py")
  assert not match("*.py", "src/main.py")


def test_question_mark():
  assert match("file?.txt", "file1.txt")
  assert not match("file?.txt", "file10.txt")


def test_globstar_below_a_directory():
  assert match("src/**/*.py", "src/pkg/util.py")


def test_braces():
  assert expand_braces("{a,b}.txt") == ["a.txt", "b.txt"]
  assert match("{src,lib}/*.py", "lib/x.py")


def test_filter_paths_last_match_decides():
  assert filter_paths(["a.py", "b.txt", "test_a.py"], ["*.py", "!test_*"]) == ["a.py"]
