"""The progress display: plain lines for logs (one per event, never one per step), a live
terminal display that prints the same events, and the text of iteration lines and summaries."""

import io
from pathlib import Path

from rl.train import progress as progress_lib


class FakeClock:
  def __init__(self):
    self.now = 0.0

  def __call__(self) -> float:
    return self.now


def _plain(clock, heartbeat_s=60.0):
  stream = io.StringIO()
  return progress_lib.PlainDisplay(stream, clock=clock, heartbeat_s=heartbeat_s), stream


def test_plain_display_prints_events_not_steps():
  clock = FakeClock()
  display, out = _plain(clock)
  sft = display.phase("sft", total=100, unit="steps", report_every=25)
  for _ in range(100):
    clock.now += 0.5
    sft.advance(nll=1.5)
  sft.end("nll 2.000 -> 1.500")
  rollout = display.phase("rollout", total=8, unit="episodes", quiet=True)
  for _ in range(8):
    rollout.advance()
  rollout.end()
  display.note("started from scratch")
  lines = out.getvalue().splitlines()
  # The first step, every 25th and the end line: 6 lines for 100 steps; the quiet rollout none.
  assert lines == [
      "sft 1/100 steps  nll 1.5  (0s, eta 50s)",
      "sft 25/100 steps  nll 1.5  (12s, eta 38s)",
      "sft 50/100 steps  nll 1.5  (25s, eta 25s)",
      "sft 75/100 steps  nll 1.5  (38s, eta 12s)",
      "sft 100/100 steps  nll 1.5  (50s)",
      "sft: nll 2.000 -> 1.500 (50s)",
      "started from scratch",
  ]


def test_plain_display_iteration_lines_heartbeat_and_resume():
  clock = FakeClock()
  display, out = _plain(clock, heartbeat_s=60)
  # A resumed run: 3 of 5 iterations done before; the ETA uses this session's pace only.
  iterations = display.phase("iteration", total=5, completed=3)
  rollout = display.phase("rollout", total=4, unit="episodes", quiet=True)
  clock.now = 30.0
  rollout.advance()  # quiet and recent: nothing
  clock.now = 61.0
  rollout.advance()  # a minute without a line: one status line
  rollout.advance(2)
  rollout.end()
  clock.now = 100.0
  iterations.advance(message="reward 0.500  success 0.25")
  iterations.end()
  assert out.getvalue().splitlines() == [
      "rollout 2/4 episodes  (1m01s, eta 1m01s)",
      "iteration 4/5  reward 0.500  success 0.25  (1m40s, eta 1m40s)",
      "iteration: 4/5 (1m40s)",
  ]


def test_task_progress_updates_and_context_manager():
  clock = FakeClock()
  display, out = _plain(clock)
  with display.phase("tasks", unit="tasks") as tasks:
    tasks.update(0, 60, "")  # what a task source reports first: nothing to print yet
    clock.now = 10
    tasks.update(0, 60, "pre-filter: 900 killed single-line mutants of 40 functions")
    clock.now = 40
    tasks.update(60, 60, "easy: 60/60 verified")
    tasks.update(0, 12, "")  # the held-out source: a new total, a new pace for the ETA
    clock.now = 50
    tasks.update(6, 12, "easy: 6/12 verified")
    tasks.end("60 training, 12 held-out")
  try:
    with display.phase("score", total=3):
      raise KeyError("boom")
  except KeyError:
    pass
  assert not display.phases  # every phase closed, the failed one without an end line
  assert out.getvalue().splitlines() == [
      "tasks 0/60  pre-filter: 900 killed single-line mutants of 40 functions  (10s)",
      "tasks 60/60  easy: 60/60 verified  (40s)",
      "tasks 6/12  easy: 6/12 verified  (50s, eta 10s)",
      "tasks: 60 training, 12 held-out (50s)",
  ]


def test_rich_display_draws_bars_and_prints_the_same_events():
  from rich.console import Console

  out = io.StringIO()
  display = progress_lib.RichDisplay(Console(file=out, force_terminal=True, width=120))
  iterations = display.phase("iteration", total=2)
  with display.phase("rollout", total=4, unit="episodes", quiet=True) as rollout:
    rollout.advance(4)
  iterations.advance(message="reward 0.500 [no markup]")
  iterations.end()
  display.note("held-out pass@1 after RL: 0.250")
  assert display._progress is None  # pylint: disable=protected-access  # nothing live between phases
  text = out.getvalue()
  assert "iteration 1/2  reward 0.500 [no markup]" in text and "held-out pass@1 after RL: 0.250" in text


def test_make_display_is_plain_off_a_terminal(monkeypatch):
  monkeypatch.delenv(progress_lib.PROGRESS_ENV, raising=False)
  assert isinstance(progress_lib.make_display(io.StringIO()), progress_lib.PlainDisplay)
  monkeypatch.setenv(progress_lib.PROGRESS_ENV, "plain")

  class Terminal(io.StringIO):
    def isatty(self):
      return True

  assert isinstance(progress_lib.make_display(Terminal()), progress_lib.PlainDisplay)


def test_iteration_line_shows_only_measured_numbers():
  row = {"step": 3, "train/reward_mean": 0.41234, "train/success_rate": 0.375, "antihack/flag_rate": 0.0,
         "time/rollout_s": 12.2, "time/score_s": 1.4, "time/update_s": 3.0}
  assert progress_lib.describe_iteration(row) == "reward 0.412  success 0.38  rollout 12s score 1s update 3s"
  row.update({"eval/pass@1": 0.25, "antihack/flag_rate": 0.125})
  assert progress_lib.describe_iteration(row) == ("reward 0.412  success 0.38  held-out pass@1 0.250  "
                                                  "flagged 12%  rollout 12s score 1s update 3s")
  assert "nan" not in progress_lib.describe_iteration({"eval/pass@1": float("nan")})


def test_summary_lines_hold_the_results_and_paths():
  summary = {"iterations": 20, "wall_time_s": 485.0, "session_wall_time_s": 485.2, "peak_rss_mb": 2048.0,
             "heldout_pass@1_sft": 0.175, "heldout_pass@1_final": 0.2667,
             "train_pass@1_start": 0.24, "train_pass@1_start_stderr": 0.0427,
             "train_pass@1_end": 0.48, "train_pass@1_end_stderr": 0.05,
             "train_success_first_10pct": 0.2, "train_success_last_10pct": 0.55, "train_success_window": 2}
  run = Path("runs/default")
  paths = progress_lib.RunPaths(summary=run / "summary.json", checkpoints=run / "checkpoints",
                                plots=run / "plots", metrics=run / "metrics.jsonl")
  lines = progress_lib.summary_lines(summary, paths, device_peak_mb=3072.0)
  assert lines == [
      "run summary",
      "  held-out pass@1    after SFT 0.175 -> after RL 0.267",
      "  train-task pass@1  before RL 0.240 +- 0.043 -> after RL 0.480 +- 0.050",
      "  train success      first 10% 0.20 -> last 10% 0.55 (2 of 20 iterations each)",
      "  wall time          8m05s",
      "  peak memory        host 2.00 GiB, device 3.00 GiB",
      "  plots              runs/default/plots",
      "  checkpoints        runs/default/checkpoints",
      "  metrics            runs/default/metrics.jsonl",
      "  summary            runs/default/summary.json",
  ]
  # A run without SFT, train-task evaluation or plots: only what it measured.
  short = progress_lib.summary_lines({"iterations": 1, "wall_time_s": 30.0, "heldout_pass@1_final": None},
                                     progress_lib.RunPaths(summary=run / "summary.json"))
  assert short == ["run summary", "  wall time  30s", "  summary    runs/default/summary.json"]
  resumed = progress_lib.summary_lines({"wall_time_s": 600.0, "session_wall_time_s": 200.0},
                                       progress_lib.RunPaths(summary=run / "summary.json"))
  assert resumed[1] == "  wall time  10m00s (this session 3m20s)"
