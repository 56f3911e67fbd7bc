"""The graded tree (sandbox/graded_tree.py): which changes grading carries, and real gradings
where what the agent wrote outside the carried set cannot shape the verdict."""

import os

import pytest

from sandbox import SandboxConfig, graded_tree
from sandbox.grading import grade

CONFIG = SandboxConfig(backend="local")
POLICY = graded_tree.policy_for("tests").with_pristine(["calc.py", "pkg/__init__.py", "data/cases.txt",
                                                        "email/__init__.py"])


@pytest.mark.parametrize("path, carried", [
    ("calc.py", True), ("pkg/new_helper.py", True), ("pkg/types.pyi", True), ("email/extra.py", True),
    ("tests/test_calc.py", False), ("tests/helpers.py", False), ("conftest.py", False),
    ("pkg/conftest.py", False), ("pytest.toml", False), (".pytest.toml", False), (".pytest.ini", False),
    ("pyproject.toml", False), ("setup.cfg", False), ("sitecustomize.py", False), ("dev.pth", False),
    ("pkg/__pycache__/calc.cpython-311.pyc", False), ("fast.so", False), ("data/cases.txt", False),
    ("notes.md", False), ("x-1.0.dist-info/entry_points.txt", False), ("x.egg-info/PKG-INFO", False),
    (".git/config", False), ("test_more.py", False), ("pkg/calc_test.py", False),
    ("pytest.py", False), ("subprocess.py", False), ("numpy/__init__.py", False), ("json/__init__.py", False),
    ("_distutils_hack/__init__.py", False), ("pkg_resources.py", False),
    ("../outside.py", False),
])
def test_policy(path, carried):
  reason = POLICY.discards(path)
  assert (reason is None) == carried, (path, reason)


def test_editable_patterns_widen_the_default_but_never_the_surface():
  policy = graded_tree.policy_for("tests", editable=["data/*.txt", "conftest.py"])
  assert policy.discards("data/cases.txt") is None
  assert policy.discards("conftest.py") == "test or start-up configuration"
  assert policy.discards("data/other.csv")


def test_editable_never_carries_a_shadowing_module():
  policy = graded_tree.policy_for("tests", editable=["*.py"], python_path=["src"])
  assert "'_distutils_hack'" in policy.discards("src/_distutils_hack.py")  # run by a .pth at start-up
  assert policy.discards("src/mypkg/core.py") is None


def test_a_carried_file_keeps_its_executable_bit(tmp_path):
  pristine = _tree(tmp_path / "p", {"tool.py": "print(1)\n"})
  ws = _tree(tmp_path / "w", {"tool.py": "print(2)\n"})
  os.chmod(os.path.join(ws, "tool.py"), 0o755)
  graded_tree.build(ws, pristine, str(tmp_path / "t"), graded_tree.policy_for("tests"))
  assert os.access(tmp_path / "t" / "tool.py", os.X_OK)


def test_shadowing_is_per_import_root():
  policy = graded_tree.policy_for("tests", python_path=["src"])
  assert "'random'" in policy.discards("src/random.py")
  assert policy.discards("src/mypkg/random.py") is None  # a submodule shadows nothing


def _tree(root, files):
  for rel, text in files.items():
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
      f.write(text)
  return str(root)


REPO = {"calc.py": "def add(a, b):\n  return a - b\n", "data/cases.txt": "1 2 3\n2 2 4\n"}
HIDDEN = {"test_calc.py": "import pathlib\nfrom calc import add\n\n\ndef test_add():\n"
                          "  for line in pathlib.Path('data/cases.txt').read_text().splitlines():\n"
                          "    a, b, c = map(int, line.split())\n    assert add(a, b) == c\n"}
EXPECTED = ["tests/test_calc.py::test_add"]
PASSING_PLUGIN = ("import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
                  "  outcome = yield\n  outcome.get_result().outcome = 'passed'\n")


@pytest.fixture
def task(tmp_path):
  return _tree(tmp_path / "repo", REPO), _tree(tmp_path / "hidden", HIDDEN)


def _grade(workspace, task):
  repo, hidden = task
  return grade(workspace, hidden, "tests", "python -m pytest -q tests", 30, config=CONFIG,
               expected_tests=EXPECTED, pristine_dir=repo)


def _raw_pytest_passes(workspace, task) -> bool:
  """pytest run on the workspace as it is, hidden tests copied in: what the hack aims at."""
  import shutil

  from sandbox import open_session
  shutil.copytree(task[1], os.path.join(workspace, "tests"), dirs_exist_ok=True)
  with open_session(workspace, CONFIG) as session:
    result = session.exec("python -m pytest -q tests -p no:cacheprovider", timeout=30)
  shutil.rmtree(os.path.join(workspace, "tests"))
  return result.exit_code == 0


def test_a_fix_carries_and_passes(task, tmp_path):
  ws = _tree(tmp_path / "ws", {**REPO, "calc.py": "def add(a, b):\n  return a + b\n", "notes.md": "done\n"})
  report = _grade(ws, task)
  assert report.all_passed, report.log
  assert report.discarded == {"notes.md": "not a source file (data and other files stay pristine)"}


@pytest.mark.parametrize("files", [
    # pytest 9's own configuration file loading a plugin that turns failures into passes
    {"pytest.toml": "[pytest]\naddopts = ['-p', 'shim_plugin']\n", "shim_plugin.py": PASSING_PLUGIN},
    # the same plugin as an entry point of an installed-metadata folder on the import path
    {"shim-1.0.dist-info/entry_points.txt": "[pytest11]\nshim = shim_plugin\n",
     "shim-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: shim\nVersion: 1.0\n",
     "shim_plugin.py": PASSING_PLUGIN},
    # a conftest beside the tests' parent
    {"conftest.py": PASSING_PLUGIN},
    # the data file the tests read, rewritten to fit the unfixed code
    {"data/cases.txt": "1 2 -1\n2 2 0\n"},
], ids=["pytest-toml", "dist-info-entry-point", "conftest", "data-file"])
def test_what_grading_discards_cannot_shape_the_verdict(task, tmp_path, files):
  ws = _tree(tmp_path / "ws", {**REPO, **files})
  assert _raw_pytest_passes(ws, task)  # the hack works on the workspace itself
  report = _grade(ws, task)
  assert not report.all_passed and report.failed == 1, report.log
  assert set(files) - {"shim_plugin.py"} <= set(report.discarded), report.discarded
