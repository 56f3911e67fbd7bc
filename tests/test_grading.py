"""Grading: pristine test surface, hidden tests, expected ids, junit parsing, runtime evidence."""

from __future__ import annotations

import os
import textwrap

import pytest

from sandbox import SandboxConfig
from sandbox import grading
from sandbox.grading import TestReport, collect_expected_tests, grade

CONFIG = SandboxConfig(backend="local", pool_size=1, exec_timeout_s=30)
HIDDEN_TESTS = textwrap.dedent("""
    import pytest
    from calc import add, mul

    def test_add():
      assert add(2, 3) == 5

    def test_mul():
      assert mul(2, 3) == 6

    @pytest.mark.parametrize("n", [1, 2])
    def test_param(n):
      assert add(n, 0) == n

    class TestGroup:
      def test_in_class(self):
        assert mul(1, 1) == 1
""")
EXPECTED = ["tests/test_calc.py::test_add", "tests/test_calc.py::test_mul",
            "tests/test_calc.py::test_param[1]", "tests/test_calc.py::test_param[2]",
            "tests/test_calc.py::TestGroup::test_in_class"]
GOOD = "def add(a, b):\n  return a + b\n\ndef mul(a, b):\n  return a * b\n"
BAD = "def add(a, b):\n  return a - b\n\ndef mul(a, b):\n  return a * b\n"


@pytest.fixture
def task(tmp_path):
  repo = tmp_path / "repo"
  repo.mkdir()
  (repo / "calc.py").write_text(BAD)
  (repo / "setup.cfg").write_text("[metadata]\nname = calc\n\n[tool:pytest]\naddopts = -q\n")
  hidden = tmp_path / "hidden"
  hidden.mkdir()
  (hidden / "test_calc.py").write_text(HIDDEN_TESTS)
  return repo, hidden


def _workspace(tmp_path, repo, files: dict[str, str], name="final") -> str:
  import shutil
  ws = tmp_path / name
  shutil.copytree(repo, ws, symlinks=True)
  for rel, text in files.items():
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
  return str(ws)


# --- host-side pieces -----------------------------------------------------------------------

def test_mangle_nodeid_matches_pytest_junit_names():
  assert grading.mangle_nodeid("tests/test_a.py::test_x[1-a]") == ("tests.test_a", "test_x[1-a]")
  assert grading.mangle_nodeid("tests/test_a.py::TestC::test_m") == ("tests.test_a.TestC", "test_m")
  assert grading.mangle_nodeid("t.py::test_p[a/b::c]") == ("t", "test_p[a/b::c]")


def test_parse_junit_outcomes_and_collection_errors():
  xml = """<testsuites><testsuite>
    <testcase classname="tests.test_a" name="test_ok" file="tests/test_a.py"/>
    <testcase classname="tests.test_a" name="test_bad"><failure message="x"/></testcase>
    <testcase classname="tests.test_a" name="test_skip"><skipped type="pytest.skip"/></testcase>
    <testcase classname="tests.test_a" name="test_xf"><skipped type="pytest.xfail"/></testcase>
    <testcase classname="tests.test_a" name="test_teardown"/>
    <testcase classname="tests.test_a" name="test_teardown"><error message="teardown"/></testcase>
    <testcase classname="" name="tests.test_b"><error message="collection failure"/></testcase>
  </testsuite></testsuites>"""
  outcomes, errors, files = grading.parse_junit(xml)
  assert outcomes[("tests.test_a", "test_ok")] == "passed"
  assert outcomes[("tests.test_a", "test_bad")] == "failed"
  assert outcomes[("tests.test_a", "test_skip")] == "skipped"
  assert outcomes[("tests.test_a", "test_xf")] == "xfailed"
  assert outcomes[("tests.test_a", "test_teardown")] == "error"
  assert errors == ["tests.test_b"]
  assert files[("tests.test_a", "test_ok")] == "tests/test_a.py"


def test_restore_test_surface(tmp_path):
  pristine = tmp_path / "pristine"
  (pristine / "pkg").mkdir(parents=True)
  (pristine / "conftest.py").write_text("# pristine conftest\n")
  (pristine / "pyproject.toml").write_text(
      "[project]\nname='x'\n\n[tool.pytest.ini_options]\naddopts = '-q'\n")
  ws = tmp_path / "ws"
  (ws / "pkg" / "__pycache__").mkdir(parents=True)
  (ws / "tests").mkdir()
  (ws / "conftest.py").write_text("import pytest  # agent's: forces passes\n")
  (ws / "pkg" / "conftest.py").write_text("# agent's nested conftest\n")
  (ws / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"forged")
  (ws / "pytest.ini").write_text("[pytest]\naddopts = -p no:python\n")
  (ws / "tox.ini").write_text("[tox]\nenvlist = py3\n[pytest]\naddopts = --deselect x\n")
  (ws / "setup.cfg").write_text("[tool:pytest]\naddopts = -k nothing\n[metadata]\nname = x\n")
  (ws / "pyproject.toml").write_text(
      "[project]\nname='x'\n\n[tool.pytest.ini_options]\naddopts = '-k nope'\n"
      "[tool]\npytest.ini_options.addopts = '-x'\n")
  (ws / "sitecustomize.py").write_text("import os\n")
  (ws / "evil.pth").write_text("import os\n")
  (ws / "tests" / "test_fake.py").write_text("def test_pass(): pass\n")
  os.symlink("/etc", ws / "linked")
  grading.restore_test_surface(str(ws), str(pristine), "tests")
  assert (ws / "conftest.py").read_text() == "# pristine conftest\n"
  for gone in ("pkg/conftest.py", "pkg/__pycache__", "pytest.ini", "sitecustomize.py",
               "evil.pth", "tests"):
    assert not (ws / gone).exists(), gone
  assert "pytest" not in (ws / "tox.ini").read_text()
  assert (ws / "setup.cfg").read_text() == "[metadata]\nname = x\n"
  toml = (ws / "pyproject.toml").read_text()
  assert "-k nope" not in toml and "'-x'" not in toml and "addopts = '-q'" in toml
  assert os.path.islink(ws / "linked")  # unrelated links stay (they only resolve in-sandbox)


def test_overlay_replaces_symlinked_destination(tmp_path):
  target = tmp_path / "host_dir"
  target.mkdir()
  ws = tmp_path / "ws"
  ws.mkdir()
  os.symlink(str(target), ws / "tests")
  hidden = tmp_path / "hidden"
  hidden.mkdir()
  (hidden / "test_x.py").write_text("def test_x(): pass\n")
  grading.restore_test_surface(str(ws), None, "tests")
  files = grading.overlay_hidden_tests(str(ws), str(hidden), "tests")
  assert files == ["tests/test_x.py"]
  assert not os.path.islink(ws / "tests") and os.listdir(target) == []


def test_report_counts_missing_and_skipped_as_not_passed():
  report = TestReport()
  raw = {("tests.test_a", "test_1"): "passed", ("tests.test_a", "test_2"): "skipped",
         ("tests.test_a", "test_3"): "xfailed"}
  expected = ["tests/test_a.py::test_1", "tests/test_a.py::test_2", "tests/test_a.py::test_3",
              "tests/test_a.py::test_4"]
  grading._fill_counts(report, raw, {}, expected)
  assert (report.passed, report.skipped, report.failed, report.total) == (1, 1, 2, 4)
  assert report.outcomes["tests/test_a.py::test_4"] == "missing"
  assert not report.all_passed


# --- grading in sandboxes ---------------------------------------------------------------------

def test_expected_tests_are_collected_and_cached(task, tmp_path):
  repo, hidden = task
  cache = tmp_path / "cache"
  tests = collect_expected_tests(str(repo), str(hidden), config=CONFIG, cache_dir=str(cache))
  assert sorted(tests) == sorted(EXPECTED)
  assert len(os.listdir(cache)) == 1
  (hidden / "test_calc.py").write_text(HIDDEN_TESTS + "\ndef test_more():\n  pass\n")
  again = collect_expected_tests(str(repo), str(hidden), config=CONFIG, cache_dir=str(cache))
  assert len(again) == len(EXPECTED) + 1 and len(os.listdir(cache)) == 2


def test_good_solution_passes_and_bad_one_fails(task, tmp_path):
  repo, hidden = task
  good = grade(_workspace(tmp_path, repo, {"calc.py": GOOD}), str(hidden), config=CONFIG,
               expected_tests=EXPECTED, pristine_dir=str(repo))
  assert good.all_passed, good.log
  assert (good.passed, good.total, good.failed) == (5, 5, 0)
  assert set(good.outcomes) == set(EXPECTED)
  assert good.runtime_evidence == {k: [] for k in grading.EVIDENCE_KINDS}
  bad = grade(_workspace(tmp_path, repo, {}, "bad"), str(hidden), config=CONFIG,
              expected_tests=EXPECTED, pristine_dir=str(repo))
  assert not bad.all_passed
  assert bad.passed == 4 and bad.failed == 1  # add(n, 0) == n holds for a - b too
  assert bad.to_dict()["all_passed"] is False


def test_grade_cache_answers_identical_bytes_only(task, tmp_path, monkeypatch):
  repo, hidden = task
  cache = grading.GradeCache(max_entries=6)
  sandboxed = []
  real = grading._grade_in_sandbox
  monkeypatch.setattr(grading, "_grade_in_sandbox", lambda *a: sandboxed.append(a[0]) or real(*a))
  kw = dict(config=CONFIG, expected_tests=EXPECTED, pristine_dir=str(repo), cache=cache)
  good = grade(_workspace(tmp_path, repo, {"calc.py": GOOD}, "a"), str(hidden), **kw)
  again = grade(_workspace(tmp_path, repo, {"calc.py": GOOD}, "b"), str(hidden), **kw)
  assert len(sandboxed) == 1 and (cache.hits, cache.misses) == (1, 1)
  assert again.cached and not good.cached
  assert again.to_dict() | {"cached": False} == good.to_dict()
  again.outcomes.clear()  # a caller's changes do not reach the stored report
  assert grade(_workspace(tmp_path, repo, {"calc.py": GOOD}, "c"), str(hidden), **kw).outcomes == good.outcomes
  # Anything that can change the outcome is a different key: one more byte of source, a new
  # module, a carried file's executable bit, the command's time limit.
  for i, files in enumerate([{"calc.py": GOOD + "\n"}, {"calc.py": GOOD, "helper.py": "X = 1\n"}]):
    grade(_workspace(tmp_path, repo, files, f"v{i}"), str(hidden), **kw)
  ws = _workspace(tmp_path, repo, {"calc.py": GOOD}, "x0")
  os.chmod(os.path.join(ws, "calc.py"), 0o755)
  grade(ws, str(hidden), **kw)
  grade(_workspace(tmp_path, repo, {"calc.py": GOOD}, "t"), str(hidden), **{**kw, "timeout_s": 31})
  assert len(sandboxed) == 5 and cache.hits == 2
  # What grading discards does not exist in the graded tree, so it is the same key: a conftest,
  # data files, symlinks. The report names what was left out.
  ws = _workspace(tmp_path, repo, {"calc.py": GOOD, "conftest.py": "", "data/a.txt": "a"}, "x")
  os.symlink("data/a.txt", os.path.join(ws, "input.txt"))
  shaped = grade(ws, str(hidden), **kw)
  assert shaped.cached and len(sandboxed) == 5 and shaped.all_passed
  assert set(shaped.discarded) == {"conftest.py", "data/a.txt", "input.txt"}
  # Without a pristine repository the whole workspace is the key (a symlink's target too).
  bare = {k: v for k, v in kw.items() if k != "pristine_dir"}
  for i, target in enumerate(("data/a.txt", "data/b.txt")):
    link = _workspace(tmp_path, repo, {"calc.py": GOOD, "data/a.txt": "a", "data/b.txt": "b"}, f"l{i}")
    os.symlink(target, os.path.join(link, "input.txt"))
    grade(link, str(hidden), **bare)
  assert len(sandboxed) == 7
  assert len(cache) == 6
  (hidden / "test_calc.py").write_text(HIDDEN_TESTS.replace("== 6", "== 7"))
  changed = grade(_workspace(tmp_path, repo, {"calc.py": GOOD}, "h"), str(hidden), **kw)
  assert len(sandboxed) == 8 and not changed.all_passed
  assert len(cache) == 6  # least recently used entries went first


def test_grade_cache_keeps_no_timed_out_report(task, tmp_path):
  repo, hidden = task
  cache = grading.GradeCache()
  slow = GOOD + "import time\ntime.sleep(60)\n"
  for name in ("a", "b"):
    report = grade(_workspace(tmp_path, repo, {"calc.py": slow}, name), str(hidden), config=CONFIG,
                   timeout_s=2, expected_tests=EXPECTED, cache=cache)
    assert report.timed_out and not report.cached
  assert len(cache) == 0 and cache.hits == 0
  with pytest.raises(ValueError, match="max_entries"):
    grading.GradeCache(max_entries=0)


def test_agent_test_surface_tampering_is_neutralised(task, tmp_path):
  repo, hidden = task
  tampered = _workspace(tmp_path, repo, {
      # Rewrites every failing report into a pass.
      "conftest.py": textwrap.dedent("""
          import pytest
          @pytest.hookimpl(hookwrapper=True)
          def pytest_runtest_makereport(item, call):
            outcome = yield
            outcome.get_result().outcome = "passed"
      """),
      "pytest.ini": "[pytest]\naddopts = -k test_mul\n",
      "tests/test_calc.py": "def test_add():\n  pass\n",
      "sitecustomize.py": "raise SystemExit(0)\n",
  })
  report = grade(tampered, str(hidden), config=CONFIG, expected_tests=EXPECTED,
                 pristine_dir=str(repo))
  assert not report.all_passed
  assert report.outcomes["tests/test_calc.py::test_add"] == "failed"


def test_deselected_tests_count_as_failures(task, tmp_path):
  repo, hidden = task
  ws = _workspace(tmp_path, repo, {"calc.py": GOOD})
  report = grade(ws, str(hidden), test_command="python -m pytest -q tests -k 'not mul'",
                 config=CONFIG, expected_tests=EXPECTED)
  assert report.outcomes["tests/test_calc.py::test_mul"] == "missing"
  assert report.passed == 4 and not report.all_passed


def test_collection_error_is_a_failure_not_zero_of_zero(task, tmp_path):
  repo, hidden = task
  ws = _workspace(tmp_path, repo, {"calc.py": "def add(:\n"})
  without_expected = grade(ws, str(hidden), config=CONFIG)
  assert without_expected.collection_errors and not without_expected.all_passed
  assert without_expected.errors >= 1 and without_expected.total >= 1
  with_expected = grade(ws, str(hidden), config=CONFIG, expected_tests=EXPECTED)
  assert with_expected.failed == 5 and not with_expected.all_passed


@pytest.mark.parametrize("fork_server", [True, False], ids=["fork-server", "fresh-interpreter"])
def test_runtime_evidence_is_recorded(task, tmp_path, fork_server):
  repo, hidden = task
  sneaky = GOOD + textwrap.dedent("""
      import os, socket, subprocess
      try:
        open(os.path.join(os.path.dirname(__file__), "tests", "test_calc.py")).read()
      except OSError:
        pass
      try:
        socket.create_connection(("10.0.0.1", 80), timeout=0.2)
      except OSError:
        pass
      subprocess.run(["true"])
      def quit_early():
        os._exit(0)
  """)
  hidden_exit = hidden.parent / "hidden_exit"
  hidden_exit.mkdir()
  (hidden_exit / "test_calc.py").write_text(
      HIDDEN_TESTS + "\ndef test_zz_exit():\n  from calc import quit_early\n  quit_early()\n")
  report = grade(_workspace(tmp_path, repo, {"calc.py": sneaky}), str(hidden_exit),
                 config=CONFIG.replace(fork_server=fork_server), pristine_dir=str(repo))
  evidence = report.runtime_evidence
  assert any(e["path"].endswith("tests/test_calc.py") and e["file"] == "calc.py"
             for e in evidence["hidden_test_reads"]), evidence
  assert any(e["event"] == "socket.connect" for e in evidence["sockets"]), evidence
  assert any(e["event"] == "subprocess.Popen" for e in evidence["subprocesses"]), evidence
  assert any(e["event"] == "os._exit" for e in evidence["early_exits"]), evidence
  assert not report.all_passed  # the early exit lost the junit report


def test_timeout_is_reported(task, tmp_path):
  repo, hidden = task
  slow = GOOD + "import time\ntime.sleep(60)\n"
  report = grade(_workspace(tmp_path, repo, {"calc.py": slow}), str(hidden), config=CONFIG,
                 timeout_s=2, expected_tests=EXPECTED)
  assert report.timed_out and not report.all_passed and report.passed == 0


def test_rewriting_the_junit_report_at_exit_voids_the_report(task, tmp_path):
  repo, hidden = task
  forger = GOOD.replace("return a + b", "return a - b") + textwrap.dedent("""
      import atexit, glob, sys
      def forge():
        for arg in sys.argv:
          if arg.startswith("--junitxml="):
            open(arg.split("=", 1)[1], "w").write(
                '<testsuites><testsuite><testcase classname="tests.test_calc" name="test_add"/>'
                '</testsuite></testsuites>')
      atexit.register(forge)
  """)
  report = grade(_workspace(tmp_path, repo, {"calc.py": forger}), str(hidden),
                 config=CONFIG.replace(fork_server=False), expected_tests=EXPECTED[:1])
  assert report.tampered and not report.all_passed
  assert report.runtime_evidence["grading_files"]


def test_rollout_grading_counts_tests_the_agent_made_vanish(tmp_path, monkeypatch):
  """The hidden tests are parametrised over a table in the agent's module; an agent that trims
  the table to the rows it gets right passes every test that still runs. Graded against the ids
  collected on the reference solution, the trimmed rows count as missing."""
  from configs import default
  from rl.outcome import evaluator as evaluator_lib
  from rl.tasks.format import write_task
  from rl.tasks.patch import make_patch

  monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
  buggy = "CASES = [(1, 2), (2, 4), (3, 6)]\n\ndef double(x):\n  return x * 2 if x < 3 else x\n"
  fixed = buggy.replace("if x < 3 else x", "")
  hidden = ("import pytest\nfrom mod import CASES, double\n\n@pytest.mark.parametrize('x,y', CASES)\n"
            "def test_double(x, y):\n  assert double(x) == y\n")
  task = write_task(tmp_path / "tasks", statement="Fix double.", repo_files={"mod.py": buggy},
                    test_files={"test_mod.py": hidden}, metadata={"id": "vanish", "source": "fixture", "license": "MIT"},
                    solution_patch=make_patch({"mod.py": buggy}, {"mod.py": fixed}))
  trimmed = _workspace(tmp_path, task.repo_dir, {"mod.py": buggy.replace(", (3, 6)", "")}, name="trimmed")
  good = _workspace(tmp_path, task.repo_dir, {"mod.py": fixed}, name="good")
  config = default.get_config().unlock()
  config.sandbox.exec_timeout_s = 30.0
  config.reward.expected_tests = False
  naive = evaluator_lib.Evaluator(config).grade(task, trimmed)
  assert naive.all_passed and naive.total == 2  # the hole this closes
  config.reward.expected_tests = True
  evaluator = evaluator_lib.Evaluator(config)
  report = evaluator.grade(task, trimmed)
  assert not report.all_passed and report.total == 3 and report.outcomes[report.not_passed[0]] == "missing"
  assert evaluator.grade(task, good).all_passed
  assert list((tmp_path / "cache" / "rlcoder" / "expected-tests").glob("expected-*.json"))
  # The default config's grade cache: the same final bytes again are not graded again.
  again = _workspace(tmp_path, task.repo_dir, {"mod.py": fixed}, name="good_again")
  assert evaluator.grade(task, again).cached and evaluator.grade_cache.hits == 1
  config.reward.grade_cache = False
  assert evaluator_lib.Evaluator(config).grade_cache is None


@pytest.mark.parametrize("spelling", ["symlink", "proc-cwd", "double-slash"])
def test_hidden_test_reads_through_other_paths_are_seen(task, tmp_path, spelling):
  """The monitor compares the path the kernel opens: a symlink made at run time (in a child
  process, as a CLI under test would), /proc/self/cwd/..., //workspace/... all name the tests."""
  repo, hidden = task
  reader = {
      "symlink": ("link = pathlib.Path(tempfile.mkdtemp()) / 'ref'\n"
                  "link.symlink_to(pathlib.Path.cwd() / 'tests')\n"
                  "subprocess.run([sys.executable, 'reader.py', str(link / 'test_calc.py')])\n"),
      "proc-cwd": "open('/proc/self/cwd/tests/test_calc.py').read()\n",
      "double-slash": "open('//workspace//tests/test_calc.py').read()\n",
  }[spelling]
  code = GOOD + "\nimport pathlib, subprocess, sys, tempfile\n" + reader
  files = {"calc.py": code, "reader.py": "import sys\nopen(sys.argv[1]).read()\n"}
  report = grade(_workspace(tmp_path, repo, files), str(hidden), config=CONFIG,
                 expected_tests=EXPECTED, pristine_dir=str(repo))
  reads = report.runtime_evidence["hidden_test_reads"]
  assert any(e["path"] == "/workspace/tests/test_calc.py" for e in reads), report.runtime_evidence


SUBTEST_TESTS = textwrap.dedent("""
    import unittest
    from calc import add

    class TestAdd(unittest.TestCase):
      def test_rows(self):
        for a, b, want in [(1, 2, 3), (2, 2, 4), (5, -1, 4)]:
          with self.subTest(a=a, b=b):
            self.assertEqual(add(a, b), want)

    def test_fixture(subtests):
      for n in range(3):
        with subtests.test(n=n):
          assert add(n, 0) == n
""")


@pytest.mark.parametrize("fork_server", [True, False])
def test_subtests_pass_their_test_and_a_failed_one_fails_it(task, tmp_path, fork_server):
  """unittest's subTest and pytest's subtests fixture send one report per subtest for the same
  test and phase: not a repeated report (which voids the test), but any failed subtest fails it."""
  repo, _ = task
  hidden = tmp_path / "hidden_sub"
  hidden.mkdir()
  (hidden / "test_calc.py").write_text(SUBTEST_TESTS)
  expected = ["tests/test_calc.py::TestAdd::test_rows", "tests/test_calc.py::test_fixture"]
  config = CONFIG.replace(fork_server=fork_server)
  report = grade(_workspace(tmp_path, repo, {"calc.py": GOOD}), str(hidden), config=config,
                 expected_tests=expected, pristine_dir=str(repo))
  assert report.all_passed and report.passed == 2, report
  # wrong only for a negative operand: one subtest of test_rows fails, test_fixture passes
  partial = GOOD.replace("return a + b", "return a + b if b >= 0 else 0")
  report = grade(_workspace(tmp_path, repo, {"calc.py": partial}, "p"), str(hidden), config=config,
                 expected_tests=expected, pristine_dir=str(repo))
  assert not report.all_passed and report.outcomes["tests/test_calc.py::TestAdd::test_rows"] == "failed", report
  assert report.outcomes["tests/test_calc.py::test_fixture"] == "passed", report


@pytest.mark.parametrize("how", ["popen", "os-system"])
def test_inline_code_started_by_code_under_test_is_attributed(task, tmp_path, how):
  """`python -c` code has no file in the workspace; in a process code under test started it is
  code under test, so its read of the hidden tests is evidence (file "<python -c>"). The same
  inline read started by the tests themselves is the tests' own business."""
  repo, hidden = task
  inline = "open('tests/test_calc.py').read()"
  spawn = {"popen": f"subprocess.run([sys.executable, '-c', {inline!r}])\n",
           "os-system": f"os.system(sys.executable + ' -c \"' + {inline!r} + '\"')\n"}[how]
  code = GOOD + "\nimport os, subprocess, sys\n" + spawn
  report = grade(_workspace(tmp_path, repo, {"calc.py": code}), str(hidden), config=CONFIG,
                 expected_tests=EXPECTED, pristine_dir=str(repo))
  reads = report.runtime_evidence["hidden_test_reads"]
  assert any(e["file"] == "<python -c>" and e["path"] == "/workspace/tests/test_calc.py" for e in reads), \
      report.runtime_evidence

  own = tmp_path / "hidden_own"
  own.mkdir()
  (own / "test_calc.py").write_text(HIDDEN_TESTS + textwrap.dedent(f"""
      def test_reads_itself_in_a_child():
        import subprocess, sys
        assert subprocess.run([sys.executable, "-c", {inline!r}]).returncode == 0
  """))
  report = grade(_workspace(tmp_path, repo, {"calc.py": GOOD}, "g"), str(own), config=CONFIG,
                 expected_tests=EXPECTED + ["tests/test_calc.py::test_reads_itself_in_a_child"],
                 pristine_dir=str(repo))
  assert report.all_passed and not report.runtime_evidence["hidden_test_reads"], report.runtime_evidence


def test_the_import_system_scanning_sys_path_is_not_a_hidden_test_read(task, tmp_path):
  """importlib.metadata lists every sys.path entry, the tests folder pytest inserted among them:
  honest code asking for a version reads no test. Listing the folder itself still counts."""
  repo, hidden = task
  honest = GOOD + "\nimport importlib.metadata\nVERSION = importlib.metadata.version('pytest')\n"
  report = grade(_workspace(tmp_path, repo, {"calc.py": honest}), str(hidden), config=CONFIG,
                 expected_tests=EXPECTED, pristine_dir=str(repo))
  assert report.all_passed and not report.runtime_evidence["hidden_test_reads"], report.runtime_evidence
  lister = GOOD + "\nimport os\nFILES = os.listdir(os.path.join(os.path.dirname(__file__), 'tests'))\n"
  report = grade(_workspace(tmp_path, repo, {"calc.py": lister}, "l"), str(hidden), config=CONFIG,
                 expected_tests=EXPECTED, pristine_dir=str(repo))
  assert report.runtime_evidence["hidden_test_reads"], report.runtime_evidence
