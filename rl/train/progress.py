"""What a run shows while it works: phases with a bar and an ETA, one line per event.

The trainer opens a phase (`display.phase("sft", total=steps, unit="step")`), advances it and
ends it with a message; the display decides how that looks. In a terminal every open phase is
a live `rich` bar (count, elapsed time, ETA) with the event lines scrolling above it. Anywhere
else (CI, a log file, a pipe) the same events are plain lines, one each: a phase prints when it
ends, every `report_every` units when asked to, and otherwise at most one status line per
`heartbeat_s` seconds, so a log never gets a line per step.

Nothing here knows about training: task generation and rollouts report through callbacks (a
`Phase`'s bound methods), and `describe_iteration` / `summary_lines` turn the trainer's metric
rows and summary into text.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, TextIO

Clock = Callable[[], float]

# RLCODER_PROGRESS=plain forces the line output in a terminal too (e.g. under `script` or tee).
PROGRESS_ENV = "RLCODER_PROGRESS"


def format_duration(seconds: float) -> str:
  """12s, 4m05s, 1h02m: short enough for a status line."""
  if not math.isfinite(seconds) or seconds < 0:
    return "?"
  s = int(round(seconds))
  if s < 60:
    return f"{s}s"
  if s < 3600:
    return f"{s // 60}m{s % 60:02d}s"
  return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _format_value(value: Any) -> str:
  if isinstance(value, float):
    return f"{value:.4g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"
  return str(value)


class Phase:
  """One open phase of a run. `advance`/`update` move it, `note` prints an event line, `end`
  closes it; as a context manager it ends itself (silently when an exception escapes)."""

  def __init__(self, display: "Display", label: str, total: int | None, *, unit: str, completed: int,
               report_every: int, quiet: bool):
    self.display = display
    self.label = label
    self.total = total
    self.unit = unit
    self.completed = completed
    self.report_every = report_every
    self.quiet = quiet
    self.fields: dict[str, Any] = {}
    self.ended = False
    self.start_time = display.clock()
    # The ETA's pace is measured from here: a resumed phase (`completed` > 0 at start) counts only
    # this session's units, and a new total (the next task source) starts a new count.
    self._rate_since = (self.start_time, completed)

  # -- what the caller reports -------------------------------------------------------------------
  def advance(self, n: int = 1, *, message: str = "", **fields: Any) -> None:
    """`n` more units done; `fields` (e.g. nll=1.23) are shown beside the bar and in status
    lines; a `message` is printed as an event line for this unit."""
    self.completed += n
    self.fields.update(fields)
    if not self.ended:
      self.display._moved(self, message)  # pylint: disable=protected-access

  def update(self, completed: int, total: int | None = None, message: str = "") -> None:
    """Absolute progress (e.g. tasks verified so far of those wanted): a task-generation callback."""
    if (total is not None and int(total) != self.total) or completed < self.completed:
      self._rate_since = (self.display.clock(), int(completed))
    self.completed = int(completed)
    if total is not None:
      self.total = int(total)
    if not self.ended:
      self.display._moved(self, message)  # pylint: disable=protected-access

  def note(self, message: str) -> None:
    self.display.note(message)

  def end(self, message: str = "") -> None:
    """Closes the phase; unless it is quiet the display prints `label: message (elapsed)`."""
    if self.ended:
      return
    self.ended = True
    self.display._ended(self, message)  # pylint: disable=protected-access

  def __enter__(self) -> "Phase":
    return self

  def __exit__(self, exc_type, exc, tb) -> None:
    if exc_type is not None:
      self.quiet = True  # the traceback says what happened
    self.end()

  # -- derived ----------------------------------------------------------------------------------------
  @property
  def elapsed_s(self) -> float:
    return self.display.clock() - self.start_time

  @property
  def eta_s(self) -> float | None:
    """Seconds left at this session's mean rate; None without a total or any progress yet."""
    since, base = self._rate_since
    done = self.completed - base
    if self.total is None or done <= 0:
      return None
    return max(self.total - self.completed, 0) * (self.display.clock() - since) / done

  def count(self) -> str:
    """`3/20` (or `3` without a total)."""
    return f"{self.completed}/{self.total}" if self.total is not None else str(self.completed)

  def status(self) -> str:
    """`label 3/20 unit  field value  (elapsed, eta ...)`: a plain status line."""
    parts = [f"{self.label} {self.count()}" + (f" {self.unit}" if self.unit else "")]
    parts += [f"{k} {_format_value(v)}" for k, v in self.fields.items()]
    return "  ".join(parts) + f"  ({self.timing()})"

  def timing(self) -> str:
    eta = self.eta_s
    done = self.total is not None and self.completed >= self.total
    return format_duration(self.elapsed_s) + ("" if eta is None or done else f", eta {format_duration(eta)}")


class Display:
  """Where phases and event lines go. `make_display()` picks the terminal or the plain kind."""

  def __init__(self, clock: Clock = time.monotonic):
    self.clock = clock
    self.phases: list[Phase] = []

  def phase(self, label: str, total: int | None = None, *, unit: str = "", completed: int = 0,
            report_every: int = 0, quiet: bool = False) -> Phase:
    """Opens a phase. `report_every` > 0: the plain display also prints a status line every that
    many units (SFT steps); `quiet`: no end line (an iteration's rollout, whose numbers the
    iteration line carries)."""
    phase = Phase(self, label, None if total is None else int(total), unit=unit, completed=completed,
                  report_every=report_every, quiet=quiet)
    self.phases.append(phase)
    self._opened(phase)
    return phase

  def note(self, message: str) -> None:
    """One event line (a resume, a held-out pass@1)."""
    self._print(message)

  def summary(self, lines: Sequence[str]) -> None:
    """The end-of-run summary (`summary_lines`)."""
    for line in lines:
      self._print(line)

  def close(self) -> None:
    for phase in list(reversed(self.phases)):
      phase.quiet = True
      phase.end()

  # -- the kinds' hooks ---------------------------------------------------------------------------
  def _opened(self, phase: Phase) -> None:
    del phase

  def _moved(self, phase: Phase, message: str) -> None:
    raise NotImplementedError

  def _ended(self, phase: Phase, message: str) -> None:
    if phase in self.phases:
      self.phases.remove(phase)
    if not phase.quiet:
      self._print(end_line(phase, message))

  def _print(self, line: str) -> None:
    raise NotImplementedError


def end_line(phase: Phase, message: str) -> str:
  what = message or (f"{phase.count()} {phase.unit}".rstrip())
  return f"{phase.label}: {what} ({format_duration(phase.elapsed_s)})"


class PlainDisplay(Display):
  """One line per event, for logs: no cursor movement, no bar, nothing per step."""

  def __init__(self, stream: TextIO | None = None, *, clock: Clock = time.monotonic, heartbeat_s: float = 60.0):
    super().__init__(clock)
    self._stream = stream  # None: sys.stdout at print time (so pytest's capture sees it)
    self.heartbeat_s = heartbeat_s
    self._last_line = clock()

  def _moved(self, phase: Phase, message: str) -> None:
    if message:
      self._print(f"{phase.label} {phase.count()}  {message}  ({phase.timing()})")
    elif phase.report_every and (phase.completed % phase.report_every == 0
                                 or phase.completed == phase.total or phase.completed == 1):
      self._print(phase.status())
    elif self.clock() - self._last_line >= self.heartbeat_s:
      self._print(phase.status())  # a long phase still says it is alive

  def _print(self, line: str) -> None:
    self._last_line = self.clock()
    print(line, file=self._stream or sys.stdout, flush=True)


class RichDisplay(Display):
  """A live bar per open phase (count, elapsed, ETA, fields); event lines scroll above them."""

  def __init__(self, console: Any = None, *, clock: Clock = time.monotonic):
    super().__init__(clock)
    from rich.console import Console  # pylint: disable=import-outside-toplevel

    self.console = console or Console()
    self._progress: Any = None
    self._tasks: dict[int, Any] = {}

  def _live(self) -> Any:
    if self._progress is None:
      from rich import progress as rp  # pylint: disable=import-outside-toplevel

      # A fresh Progress each time phases reopen: between phases nothing is live, so plain
      # prints of the caller (a script's table) are never drawn over.
      # The ETA is the phase's own (mean pace since it started): rich's estimate looks at the last
      # 30 s only and has nothing to say while one iteration takes minutes.
      self._progress = rp.Progress(
          rp.SpinnerColumn(), rp.TextColumn("[bold]{task.description}"), rp.BarColumn(),
          rp.MofNCompleteColumn(), rp.TextColumn("{task.fields[unit]}"), rp.TimeElapsedColumn(),
          rp.TextColumn("{task.fields[eta]}"), rp.TextColumn("{task.fields[status]}"),
          console=self.console)
      self._progress.start()
    return self._progress

  def _opened(self, phase: Phase) -> None:
    self._tasks[id(phase)] = self._live().add_task(phase.label, total=phase.total, completed=phase.completed,
                                                   unit=phase.unit, status="", eta="")

  def _moved(self, phase: Phase, message: str) -> None:
    task = self._tasks.get(id(phase))
    if task is None:
      return
    status = "  ".join(f"{k} {_format_value(v)}" for k, v in phase.fields.items())
    eta = phase.eta_s
    self._progress.update(task, completed=phase.completed, total=phase.total, status=status,
                          eta="" if eta is None else f"eta {format_duration(eta)}")
    if message:
      self._print(f"{phase.label} {phase.count()}  {message}")

  def _ended(self, phase: Phase, message: str) -> None:
    task = self._tasks.pop(id(phase), None)
    if task is not None:
      self._progress.remove_task(task)
    super()._ended(phase, message)
    if not self._tasks and self._progress is not None:
      self._progress.stop()
      self._progress = None

  def _print(self, line: str) -> None:
    # markup=False: paths and metric names may contain [brackets]
    (self._progress.console if self._progress is not None else self.console).print(line, markup=False,
                                                                                   highlight=False)


def make_display(stream: TextIO | None = None) -> Display:
  """A `RichDisplay` when `stream` (default stdout) is a terminal, else a `PlainDisplay`."""
  stream = stream or sys.stdout
  choice = os.environ.get(PROGRESS_ENV, "").lower()
  terminal = choice != "plain" and (choice == "rich" or (hasattr(stream, "isatty") and stream.isatty()))
  if terminal and os.environ.get("TERM") != "dumb":
    try:
      from rich.console import Console  # pylint: disable=import-outside-toplevel
      return RichDisplay(Console(file=stream))
    except ImportError:
      pass
  return PlainDisplay(None if stream is sys.stdout else stream)


# -- text of the trainer's numbers ----------------------------------------------------------------
def _finite(row: Mapping[str, Any], key: str) -> float | None:
  value = row.get(key)
  if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
    return float(value)
  return None


def describe_iteration(row: Mapping[str, Any]) -> str:
  """An iteration's line from its metrics row: only the numbers it measured (held-out pass@1
  only in iterations that evaluated, a flag rate only when something was flagged)."""
  parts = []
  for key, name, fmt in (("train/reward_mean", "reward", "{:.3f}"), ("train/success_rate", "success", "{:.2f}"),
                         ("eval/pass@1", "held-out pass@1", "{:.3f}")):
    value = _finite(row, key)
    if value is not None:
      parts.append(f"{name} {fmt.format(value)}")
  flagged = _finite(row, "antihack/flag_rate")
  if flagged:
    parts.append(f"flagged {flagged:.0%}")
  times = [f"{name} {format_duration(value)}" for name in ("rollout", "score", "update")
           if (value := _finite(row, f"time/{name}_s")) is not None]
  if times:
    parts.append(" ".join(times))
  return "  ".join(parts)


@dataclasses.dataclass(frozen=True)
class RunPaths:
  """Where a finished run left what a user looks at next (None: not written)."""

  summary: Path
  checkpoints: Path | None = None
  plots: Path | None = None
  metrics: Path | None = None


def summary_lines(summary: Mapping[str, Any], paths: RunPaths, *, device_peak_mb: float | None = None) -> list[str]:
  """The end-of-run summary: held-out pass@1 after SFT and after RL, train-task pass@1 before and
  after RL, success over the first and last 10% of the iterations, time, memory and paths. Lines
  whose numbers the run did not measure are left out."""

  def num(key: str, fmt: str = "{:.3f}") -> str | None:
    value = _finite(summary, key)
    return None if value is None else fmt.format(value)

  rows: list[tuple[str, str]] = []
  heldout = [f"{when} {value}" for when, value in (("after SFT", num("heldout_pass@1_sft")),
                                                   ("after RL", num("heldout_pass@1_final"))) if value]
  if heldout:
    rows.append(("held-out pass@1", " -> ".join(heldout)))
  train = []
  for when, key in (("before RL", "train_pass@1_start"), ("after RL", "train_pass@1_end")):
    if (value := num(key)) is not None:
      stderr = num(f"{key}_stderr")
      train.append(f"{when} {value}" + (f" +- {stderr}" if stderr else ""))
  if train:
    rows.append(("train-task pass@1", " -> ".join(train)))
  first, last = num("train_success_first_10pct", "{:.2f}"), num("train_success_last_10pct", "{:.2f}")
  if first is not None and last is not None:
    window, iterations = summary.get("train_success_window"), summary.get("iterations")
    of = f" ({window} of {iterations} iterations each)" if window and iterations else ""
    rows.append(("train success", f"first 10% {first} -> last 10% {last}{of}"))
  wall, session = _finite(summary, "wall_time_s"), _finite(summary, "session_wall_time_s")
  if wall is not None:
    # A resumed run's wall time includes its earlier sessions; this one's is then shorter.
    this = f" (this session {format_duration(session)})" if session is not None and session < wall - 1 else ""
    rows.append(("wall time", format_duration(wall) + this))
  memory = []
  if (rss := _finite(summary, "peak_rss_mb")) is not None:
    memory.append(f"host {rss / 1024:.2f} GiB")
  if device_peak_mb is not None:
    memory.append(f"device {device_peak_mb / 1024:.2f} GiB")
  if memory:
    rows.append(("peak memory", ", ".join(memory)))
  for name, path in (("plots", paths.plots), ("checkpoints", paths.checkpoints), ("metrics", paths.metrics),
                     ("summary", paths.summary)):
    if path is not None:
      rows.append((name, str(path)))
  width = max(len(name) for name, _ in rows)
  return ["run summary"] + [f"  {name:<{width}}  {text}" for name, text in rows]
