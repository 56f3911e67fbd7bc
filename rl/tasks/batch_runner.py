"""Runs pytest on many prepared workspaces in one process: import pytest once, fork per state.

Standalone (stdlib + pytest only): task verification copies this file into a batch folder
and runs it inside a sandbox session (or a plain subprocess when asked). Each state runs
in a fresh forked child with its own working directory, import path and time limit, so
states cannot see each other's modules; the saving is pytest's start-up, paid once.

  python batch_runner.py JOBS.json RESULTS.json [--workers N]
JOBS.json: [{"dir": "s0", "args": ["-q", "tests"], "timeout_s": 20}, ...]
"""

import json
import os
import signal
import sys
import time


class _Collector:
  """A pytest plugin counting outcomes the way the grader reports them."""

  def __init__(self):
    self.result = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "collection_errors": []}

  def pytest_collectreport(self, report):
    if report.failed:
      self.result["collection_errors"].append(str(report.nodeid) or "collection")

  def pytest_runtest_logreport(self, report):
    if report.when == "call":
      if report.passed:
        self.result["passed"] += 1
      elif report.failed:
        self.result["failed"] += 1
      elif report.skipped:
        self.result["skipped"] += 1
    elif report.failed:  # setup or teardown error
      self.result["errors"] += 1
    elif report.skipped and report.when == "setup":
      self.result["skipped"] += 1


def _child(job, base):  # runs in the forked child; never returns
  import pytest  # pylint: disable=import-outside-toplevel
  code = 4
  out_path = os.path.join(base, job["dir"] + ".result.json")
  try:
    os.setsid()
    work = os.path.join(base, job["dir"])
    os.chdir(work)
    sys.path.insert(0, work)  # what `python -m pytest` does for the working directory
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    collector = _Collector()
    code = int(pytest.main(["-p", "no:cacheprovider", *job["args"], "--tb=no"], plugins=[collector]))
    result = collector.result
    result["exit_code"] = code
    with open(out_path, "w") as f:
      json.dump(result, f)
  finally:
    os._exit(0)  # pylint: disable=protected-access


def _warm_up(base):
  """Loads pytest and its installed plugins (some take seconds to import) before forking."""
  import pytest  # pylint: disable=import-outside-toplevel
  empty = os.path.join(base, ".warmup")
  os.makedirs(empty, exist_ok=True)
  saved = os.dup(1), os.dup(2)
  devnull = os.open(os.devnull, os.O_WRONLY)
  os.dup2(devnull, 1)
  os.dup2(devnull, 2)
  try:
    pytest.main(["-q", "-p", "no:cacheprovider", "--collect-only", empty])
  finally:
    os.dup2(saved[0], 1)
    os.dup2(saved[1], 2)
  import gc  # pylint: disable=import-outside-toplevel
  gc.collect()
  gc.freeze()  # pytest gc-collects at exit; frozen imports make that cheap in every child


def run_jobs(jobs, base, workers=2):
  _warm_up(base)
  results = [None] * len(jobs)
  pending = list(range(len(jobs)))
  running = {}
  while pending or running:
    while pending and len(running) < workers:
      i = pending.pop(0)
      pid = os.fork()
      if pid == 0:
        _child(jobs[i], base)
      running[pid] = (i, time.monotonic())
    pid, _ = os.waitpid(-1, os.WNOHANG)
    if pid == 0:
      now = time.monotonic()
      for cpid, (i, start) in list(running.items()):
        if now - start > jobs[i].get("timeout_s", 30):
          try:
            os.killpg(cpid, signal.SIGKILL)
          except ProcessLookupError:
            pass
          os.waitpid(cpid, 0)
          del running[cpid]
          results[i] = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0, "collection_errors": [],
                        "timed_out": True, "duration_s": now - start, "exit_code": None}
      time.sleep(0.002)
      continue
    if pid not in running:
      continue
    i, start = running.pop(pid)
    try:
      os.killpg(pid, signal.SIGKILL)  # stray grandchildren of the test run
    except (ProcessLookupError, PermissionError):
      pass
    path = os.path.join(base, jobs[i]["dir"] + ".result.json")
    try:
      with open(path) as f:
        res = json.load(f)
    except (OSError, ValueError):
      res = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0,
             "collection_errors": ["test process died"], "exit_code": None}
    res["timed_out"] = False
    res["duration_s"] = time.monotonic() - start
    results[i] = res
  for r in results:
    r["total"] = r["passed"] + r["failed"] + r["errors"] + r["skipped"]
    # Same rule as sandbox.grading.TestReport: a skipped test is not a pass.
    r["all_passed"] = (not r["timed_out"] and not r["collection_errors"] and r["total"] > 0
                       and r["passed"] == r["total"])
  return results


def main(argv):
  jobs_path, results_path = argv[1], argv[2]
  workers = int(argv[argv.index("--workers") + 1]) if "--workers" in argv else 2
  base = os.path.dirname(os.path.abspath(jobs_path))
  with open(jobs_path) as f:
    jobs = json.load(f)
  results = run_jobs(jobs, base, workers)
  with open(results_path, "w") as f:
    json.dump(results, f)


if __name__ == "__main__":
  main(sys.argv)
