"""pytest plugin (`-p rlcoder_verdict`) that streams every test outcome to the grader.

The command server opens two pipes before a grading run starts (`RLCODER_VERDICT_FDS`): one
holding a per-grading random key, one for the outcome stream, whose read end only the server
holds. `install_from_env` runs before any workspace code is imported (sitecustomize of a fresh
interpreter, or the fork-server's child before pytest.main): it reads the key, closes that pipe
and drops the variable, so code under test finds neither. Each line is

  seq <TAB> record (JSON) <TAB> HMAC-SHA256(key, "seq<TAB>record")

written as the event happens: test phase reports, collection failures, audit events of this
process, and an end marker from pytest_sessionfinish. The grader
(`sandbox.grading.read_verdict_stream`) rejects lines it cannot verify, gaps and repeats in
`seq`, and anything after the end marker, so a report rewritten after the fact (atexit, a
background process, a patched serialiser) or lines written to the pipe by code under test do
not count. What stays possible: code in this very process can reach the signing closure (or
rewrite pytest's own objects) and sign what it likes; see docs/sandbox.md.
"""

# Imported when this module is, before any workspace path is on sys.path (the fork-server's
# child installs the channel after its sys.path points into the workspace).
import _thread
import hashlib
import hmac
import json
import os

FDS_VAR = "RLCODER_VERDICT_FDS"
PLUGIN = "rlcoder_verdict"
KEY_BYTES = 32


def _sink(record):  # replaced by install(); a process without the channel reports nothing
  return False


def _plugin_requested(argv) -> bool:
  """Whether `argv` loads this plugin: only the graded pytest process takes the key."""
  argv = list(argv or ())
  for i, word in enumerate(argv):
    if word == "-p" and i + 1 < len(argv) and argv[i + 1] == PLUGIN:
      return True
    if word == "-p" + PLUGIN:
      return True
  return False


def _read_key(fd: int) -> bytes:
  key = b""
  try:
    while len(key) < KEY_BYTES:
      chunk = os.read(fd, KEY_BYTES - len(key))
      if not chunk:
        break
      key += chunk
  finally:
    os.close(fd)
  return key


def _make_emitter(key: bytes, fd: int):
  """The signing writer; its key lives only in this closure's HMAC state."""
  mac = hmac.new(key, digestmod=hashlib.sha256)
  # Captured now, before code under test can replace os.write or json.dumps.
  write, dumps, getpid, encode = os.write, json.dumps, os.getpid, str.encode
  get_ident = _thread.get_ident
  lock = _thread.allocate_lock()
  owner = getpid()
  seq = 0
  holder = None

  def emit(record) -> bool:
    nonlocal seq, holder
    if getpid() != owner:
      return False  # a forked child shares the pipe; its lines would collide with ours
    if holder == get_ident():
      # Re-entered on this thread (a signal handler's audit event in the middle of a line):
      # waiting would deadlock, writing would interleave; the caller falls back to the log.
      return False
    body = dumps(record, sort_keys=True, separators=(",", ":"), default=str)
    with lock:
      holder = get_ident()
      try:
        signed = mac.copy()
        signed.update(encode(f"{seq}\t{body}"))
        line = memoryview(encode(f"{seq}\t{body}\t{signed.hexdigest()}\n"))
        seq += 1
        while line:
          line = line[write(fd, line):]
      except OSError:
        return False  # the pipe was closed or replaced: the gap shows at the grader
      finally:
        holder = None
    return True

  return emit


def install(key_fd: int, channel_fd: int) -> None:
  global _sink
  key = _read_key(key_fd)
  if len(key) != KEY_BYTES:
    os.close(channel_fd)
    return
  os.set_inheritable(channel_fd, False)  # programs it starts must not inherit the stream
  _sink = _make_emitter(key, channel_fd)
  del key


def install_from_env(argv) -> None:
  """Takes the channel if this process is the graded pytest; drops it everywhere else."""
  spec = os.environ.pop(FDS_VAR, "")
  try:
    key_fd, channel_fd = (int(x) for x in spec.split(","))
  except ValueError:
    return
  if _plugin_requested(argv):
    install(key_fd, channel_fd)
  else:
    # A program before pytest in the test command (`make && pytest`) keeps its hands off.
    for fd in (key_fd, channel_fd):
      try:
        os.close(fd)
      except OSError:
        pass


# pytest's own functions that decide an outcome: replaced by code under test, they can turn a
# failing test into a report the plugin would faithfully stream as a pass.
CORE = (("_pytest.python", "Function", "runtest"), ("_pytest.python", None, "pytest_pyfunc_call"),
        ("_pytest.runner", None, "runtestprotocol"), ("_pytest.runner", None, "call_and_report"),
        ("_pytest.runner", None, "call_runtest_hook"), ("_pytest.runner", "CallInfo", "from_call"),
        ("_pytest.runner", None, "check_interactive_exception"),
        ("_pytest.reports", "TestReport", "from_item_and_call"),
        ("_pytest.skipping", None, "pytest_runtest_makereport"))
_reported = set()


def _replaced_core() -> list:
  """CORE functions whose code is no longer pytest's (defined outside its package)."""
  import sys
  try:
    root = os.path.dirname(os.path.abspath(sys.modules["_pytest"].__file__)) + os.sep
  except (KeyError, AttributeError, TypeError):
    return ["_pytest"]
  out = []
  for module, cls, name in CORE:
    owner = sys.modules.get(module)
    if owner is not None and cls:
      owner = getattr(owner, cls, None)
    if owner is None:
      continue
    func = getattr(owner, name, None)
    if func is None:
      continue  # not in this pytest version
    code = getattr(getattr(func, "__func__", func), "__code__", None)
    if code is None or not os.path.abspath(code.co_filename).startswith(root):
      out.append(".".join(p for p in (module, cls, name) if p))
  return out


def _check_core() -> None:
  replaced = [n for n in _replaced_core() if n not in _reported]
  if replaced:
    _reported.update(replaced)
    _sink({"k": "integrity", "replaced": replaced})


def channel():
  """The writer audit events of this process go through (False where there is none)."""
  return _sink


# ---------------------------------------------------------------------------
# pytest hooks (inert where install() found no channel: xdist workers, nested pytest runs)

def pytest_collectreport(report):
  if not report.passed:  # failed: a collection error; skipped: counted as junit counts it
    _sink({"k": "collect", "id": report.nodeid, "o": report.outcome})


def pytest_runtest_logreport(report):
  _check_core()
  record = {"k": "test", "id": report.nodeid, "w": report.when, "o": report.outcome,
            "x": bool(getattr(report, "wasxfail", None) is not None)}
  if getattr(report, "context", None) is not None and type(report).__name__ == "SubtestReport":
    # unittest's subTest and pytest's subtests fixture (pytest >= 9): one more report per
    # subtest, for the same test and phase. The grader lets a failed subtest fail its test
    # and never lets one pass it.
    record["sub"] = True
  _sink(record)


def pytest_internalerror(excrepr, excinfo):
  _sink({"k": "internal"})  # the junit report records it as an errored "pytest::internal"


def pytest_sessionfinish(session, exitstatus):
  _check_core()
  _sink({"k": "end", "exit": int(exitstatus)})
