"""Sandbox latency/throughput benchmark: session open, exec, pytest runs, sessions per second.

  python scripts/bench_sandbox.py --backend local
  python scripts/bench_sandbox.py --backend docker --iters 10

Prints median and p90 per measurement (cold = no pool / fresh interpreter, warm = pooled
sandbox / fork-server), a host `python -m pytest` baseline, and the issue's targets.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from sandbox import SandboxConfig, open_session  # noqa: E402

TESTS = "from mod import add\n" + "".join(
    f"def test_{i}():\n  assert add({i}, 1) == {i + 1}\n" for i in range(5))
TARGETS = {  # (backend, measurement) -> p50 target in seconds
    ("local", "exec('true')"): 0.030,
    ("local", "pytest 5 tests, warm (fork-server)"): 0.100,
    ("docker", "open session, warm pool"): 1.5,
    ("docker", "open session, cold"): 1.5,
    ("docker", "exec('true')"): 0.150,
}


def make_task(root: str) -> str:
  ws = os.path.join(root, "task")
  os.makedirs(os.path.join(ws, "tests"))
  with open(os.path.join(ws, "mod.py"), "w") as f:
    f.write("def add(a, b):\n  return a + b\n")
  with open(os.path.join(ws, "tests", "test_mod.py"), "w") as f:
    f.write(TESTS)
  return ws


def warm(config: SandboxConfig) -> None:
  if config.backend == "local":
    from sandbox import local
    local.warm_pool(config, wait=True)
  else:
    from sandbox import docker_backend
    docker_backend.warm_pool(config, wait=True)


def shutdown(backend: str) -> None:
  if backend == "local":
    from sandbox import local
    local.shutdown()
  else:
    from sandbox import docker_backend
    docker_backend.shutdown()


def pcts(samples: list[float]) -> tuple[float, float]:
  ordered = sorted(samples)
  p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
  return statistics.median(ordered), p90


def bench_open(ws: str, config: SandboxConfig, iters: int, pooled: bool) -> list[float]:
  times = []
  for _ in range(iters):
    if pooled:
      warm(config)  # in a rollout the pool refills while the previous episode runs
    start = time.perf_counter()
    session = open_session(ws, config)
    times.append(time.perf_counter() - start)
    session.close()
  return times


def bench_exec(ws: str, config: SandboxConfig, command: str, iters: int) -> list[float]:
  times = []
  with open_session(ws, config) as s:
    if config.pool_size:
      warm(config)  # let the pool's replacement sandbox finish starting: measure exec alone
    s.exec(command)  # first run warms file caches
    for _ in range(iters):
      start = time.perf_counter()
      r = s.exec(command)
      times.append(time.perf_counter() - start)
      if r.exit_code != 0:
        raise RuntimeError(f"{command!r} failed: {r.stdout[-500:]} {r.stderr[-500:]}")
  return times


def bench_throughput(ws: str, config: SandboxConfig, sessions: int, workers: int) -> float:
  """Full episodes (open, pytest, close) per second with `workers` threads."""
  warm(config)
  counter = iter(range(sessions))
  lock = threading.Lock()
  errors = []

  def worker():
    while True:
      with lock:
        if next(counter, None) is None:
          return
      try:
        with open_session(ws, config) as s:
          s.exec("python -m pytest -q tests")
      except Exception as e:  # reported below, the benchmark keeps going
        errors.append(e)

  start = time.perf_counter()
  threads = [threading.Thread(target=worker) for _ in range(workers)]
  for t in threads:
    t.start()
  for t in threads:
    t.join()
  elapsed = time.perf_counter() - start
  if errors:
    print(f"  ({len(errors)} sessions failed, first: {errors[0]})")
  return sessions / elapsed


def bench_grade(ws: str, config: SandboxConfig, iters: int) -> list[float]:
  """grade() of the 5-test task: fresh pooled sandbox, hidden tests overlaid, report parsed."""
  from sandbox.grading import grade
  hidden = os.path.join(ws, "tests")
  times = []
  for _ in range(iters + 1):
    warm(config)  # in a rollout the pool refills while the previous episode runs
    start = time.perf_counter()
    report = grade(ws, hidden, "tests", "python -m pytest -q tests", timeout_s=60, config=config)
    times.append(time.perf_counter() - start)
    if not report.all_passed:
      raise RuntimeError(f"grading the benchmark task failed: {report.log[-500:]}")
  return times[1:]  # the first one warms file caches


def host_pytest_baseline(ws: str, iters: int) -> list[float]:
  times = []
  env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
  for _ in range(iters):
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                   cwd=ws, env=env, capture_output=True, check=True)
    times.append(time.perf_counter() - start)
  return times


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--backend", choices=("local", "docker"), default="local")
  parser.add_argument("--iters", type=int, default=20)
  parser.add_argument("--sessions", type=int, default=20, help="episodes for the throughput run")
  parser.add_argument("--workers", type=int, default=2)
  parser.add_argument("--only-grade", action="store_true", help="measure grade() only")
  args = parser.parse_args(argv)
  base = SandboxConfig(backend=args.backend, pool_size=2, exec_timeout_s=60)
  cold = base.replace(pool_size=0, fork_server=False)
  rows = []
  with tempfile.TemporaryDirectory(prefix="rlcoder-bench-") as root:
    ws = make_task(root)
    if args.only_grade:
      rows.append(("grade 5 tests, warm pool (fork-server)", bench_grade(ws, base, args.iters)))
      shutdown(args.backend)
      print(f"\nbackend={args.backend} cpus={os.cpu_count()} load={os.getloadavg()[0]:.1f}")
      for name, samples in rows:
        p50, p90 = pcts(samples)
        print(f"{name:48s} p50 {p50 * 1000:9.1f} ms  p90 {p90 * 1000:9.1f} ms")
      return 0
    rows.append(("host python -m pytest (no sandbox, baseline)", host_pytest_baseline(ws, max(3, args.iters // 4))))
    rows.append(("open session, cold", bench_open(ws, cold, max(3, args.iters // 2), pooled=False)))
    rows.append(("open session, warm pool", bench_open(ws, base, args.iters, pooled=True)))
    rows.append(("exec('true')", bench_exec(ws, base, "true", args.iters * 2)))
    rows.append(("pytest 5 tests, cold (fresh interpreter)",
                 bench_exec(ws, cold, "python -m pytest -q tests", max(3, args.iters // 2))))
    rows.append(("pytest 5 tests, warm (fork-server)",
                 bench_exec(ws, base, "python -m pytest -q tests", args.iters)))
    rows.append(("grade 5 tests, warm pool (fork-server)", bench_grade(ws, base, args.iters)))
    throughput = bench_throughput(ws, base, args.sessions, args.workers)
    shutdown(args.backend)
  print(f"\nbackend={args.backend} cpus={os.cpu_count()} load={os.getloadavg()[0]:.1f}")
  print(f"{'measurement':48s} {'p50 ms':>9s} {'p90 ms':>9s} {'target p50':>11s}")
  for name, samples in rows:
    p50, p90 = pcts(samples)
    target = TARGETS.get((args.backend, name))
    mark = "" if target is None else f"{target * 1000:8.0f} {'ok' if p50 <= target else 'MISS'}"
    print(f"{name:48s} {p50 * 1000:9.1f} {p90 * 1000:9.1f} {mark:>11s}")
  baseline = statistics.median(rows[0][1])
  warm_pytest = statistics.median(rows[-2][1])
  print(f"warm pytest speed-up over the host baseline: {baseline / warm_pytest:.1f}x")
  print(f"sessions/s with {args.workers} workers (open + pytest + close): {throughput:.2f}")
  return 0


if __name__ == "__main__":
  sys.exit(main())
