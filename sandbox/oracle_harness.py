"""The differential oracle's child: calls a tree's functions on given inputs, reports the results.

Shipped as source into the tree under test (`sandbox.oracle` writes it to ORACLE_DIR) and run
there as a fresh interpreter inside the sandbox. It never runs on the host, and the grader
never imports it. Everything it needs is taken before any code of the tree is imported:
the signed outcome channel of the grading runtime (rlcoder_verdict, installed by sitecustomize
because the command line asks for its plugin), the inputs, and the builtins it encodes with.

Each result is encoded to builtin values with exact type checks (`type(x) is float`, not
isinstance), so a float subclass, an always-equal object or a list subclass comes back as
an opaque type name and never as the reference's value. A call that raises, exits or runs past
its time limit comes back as the exception's type name. A command-line call (`argv`) runs
`python *argv` from the tree's root in a child process (code under test, like the CLI the
hidden tests start) and comes back as ["cli", exit status, standard output].
"""

import ast
import json
import os
import signal
import subprocess
import sys

ORACLE_DIR = ".rlcoder_oracle"


def _take_channel():
  try:
    import rlcoder_verdict  # on PYTHONPATH from the runtime, imported by sitecustomize already
  except ImportError:
    return None
  return rlcoder_verdict.channel()


_emit = _take_channel()
_type, _repr, _sorted, _len, _dumps = type, repr, sorted, len, json.dumps
_int, _float, _str, _bool, _bytes = int, float, str, bool, bytes
_list, _tuple, _dict, _set, _frozenset = list, tuple, dict, set, frozenset
MAX_ITEMS = 10_000  # per container: a result this large is compared by its head only
MAX_DEPTH = 20


class _CallTimeout(BaseException):
  pass


def encode(x, depth=0):
  """A JSON value that names x's exact type and holds only builtin values."""
  t = _type(x)
  if depth > MAX_DEPTH:
    return ["deep"]
  if x is None:
    return ["None"]
  if t is _bool:
    return ["bool", x]
  if t is _int:
    return ["int", _str(x) if abs(x) > 2 ** 53 else x]
  if t is _float:
    return ["float", _repr(x)]
  if t is _str:
    return ["str", x]
  if t is _bytes:
    return ["bytes", x.hex()]
  if t is _list or t is _tuple:
    items = _list(x[:MAX_ITEMS]) if _len(x) > MAX_ITEMS else x
    return [t.__name__, [encode(v, depth + 1) for v in items], _len(x)]
  if t is _set or t is _frozenset:
    return [t.__name__, _sorted(_dumps(encode(v, depth + 1), sort_keys=True) for v in x)]
  if t is _dict:
    pairs = [[_dumps(encode(k, depth + 1), sort_keys=True), encode(v, depth + 1)] for k, v in x.items()]
    return ["dict", _sorted(pairs, key=lambda p: p[0])]
  return ["opaque", getattr(t, "__qualname__", "?")]


def _on_alarm(signum, frame):
  raise _CallTimeout()


def _run_command_line(argv, cwd, timeout):
  """["cli", exit status, stdout] of `python *argv`. Its standard error is a terminal (a pty,
  drained and discarded), as in an interactive run: a program that behaves differently when
  nobody watches its output cannot tell this run from one a person makes."""
  import threading
  try:
    master, slave = os.openpty()
  except OSError:  # no pty in this sandbox: standard error discarded instead
    done = subprocess.run([sys.executable, *argv], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True, cwd=cwd, timeout=timeout, errors="replace")
    return ["cli", done.returncode, done.stdout.rstrip()[:20000]]

  def drain():
    try:
      while os.read(master, 65536):
        pass
    except OSError:
      pass

  reader = threading.Thread(target=drain, daemon=True)
  reader.start()
  try:
    done = subprocess.run([sys.executable, *argv], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=slave, text=True, cwd=cwd, timeout=timeout, errors="replace")
  finally:
    os.close(slave)
    reader.join(timeout=1.0)
    os.close(master)
  return ["cli", done.returncode, done.stdout.rstrip()[:20000]]


def main(argv):
  spec_path = argv[1]
  with open(spec_path, encoding="utf-8") as f:
    spec = json.load(f)
  roots = spec.get("roots") or ["."]
  here = os.path.dirname(os.path.abspath(__file__))
  sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
  for root in reversed(roots):
    sys.path.insert(0, os.path.abspath(root))
  per_call = float(spec.get("call_timeout_s", 2.0))
  signal.signal(signal.SIGALRM, _on_alarm)
  # Bound now: code the calls import may rebind this module's globals.
  emit, encode_result, setitimer, timer = _emit, encode, signal.setitimer, signal.ITIMER_REAL
  import importlib
  tree = os.getcwd()
  # Command lines first: they run before this process imports any of the tree's code, which
  # could otherwise replace subprocess here and answer for the child.
  calls = [c for c in spec["calls"] if c.get("argv")] + [c for c in spec["calls"] if not c.get("argv")]
  for call in calls:
    record = {"k": "oracle", "id": call["id"]}
    if call.get("argv"):
      try:
        record["r"] = _run_command_line(call["argv"], tree, per_call * 5)
      except subprocess.TimeoutExpired:
        record["r"] = ["raises", "Timeout"]
      except BaseException as e:
        record["r"] = ["raises", _type(e).__name__]
      if emit is None or not emit(record):
        sys.stdout.write(_dumps(record) + "\n")
      continue
    try:
      # The module's import has its own, longer limit: a fix may import a heavy library.
      setitimer(timer, per_call * 10)
      try:
        module = importlib.import_module(call["module"])
      finally:
        setitimer(timer, 0)
      setitimer(timer, per_call)
      try:
        function = getattr(module, call["function"])
        args, kwargs = ast.literal_eval(call["args"]), ast.literal_eval(call.get("kwargs") or "{}")
        record["r"] = encode_result(function(*args, **kwargs))
      finally:
        setitimer(timer, 0)
    except _CallTimeout:
      record["r"] = ["raises", "Timeout"]
    except BaseException as e:  # SystemExit and KeyboardInterrupt are answers too
      record["r"] = ["raises", _type(e).__name__]
    if emit is None or not emit(record):
      sys.stdout.write(_dumps(record) + "\n")  # no channel: the parent counts nothing of this
  if emit is not None:
    emit({"k": "end", "exit": 0})
  sys.stdout.flush()
  os._exit(0)  # no atexit handlers or finalisers of the tree's code after the last result


if __name__ == "__main__":
  main(sys.argv)
