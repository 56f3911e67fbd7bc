"""Property test: on random nested ML-shaped programs the ast instrumenter is verified and changes
nothing but the printed markers (run in-process, so hundreds of programs take seconds)."""

import ast
import contextlib
import io

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rl.env import instrumentation as instr

NONCE = "5eed5eed"

PRELUDE = '''\
import math
LOG = []
FLAG = True


class Model:
  def __init__(self):
    self.w = 0

  def fit(self, xs):
    self.w += sum(xs)
    return self

  def predict(self, xs):
    return [v * self.w for v in xs]


class Guard:
  def __enter__(self):
    LOG.append("enter")

  def __exit__(self, *exc):
    LOG.append("exit")


def read_csv(name):
  return [1, 2, len(name)]


data, model, preds = read_csv("x"), Model(), []
'''

SIMPLE = [
    "data = read_csv('train.csv')",
    "model = Model()",
    "model.fit(data)",
    "preds = model.predict(data)",
    "print('preds', len(preds), model.w)",
    "LOG.append(len(data))",
    "a = 1; b = a + 1",
    "if len(data) > 2: model.fit(data)",
    "LOG.append(math.floor(2.5))  # a comment",
    "import json",
    "with open('/dev/null', 'w') as sink: sink.write('x')",
]


def _indent(lines, prefix="  "):
  return [prefix + line if line else line for line in lines]


@st.composite
def blocks(draw, depth=0):
  n = draw(st.integers(1, 4))
  lines = []
  for _ in range(n):
    kind = draw(st.sampled_from(["simple"] * 4 + (["if", "for", "def", "with", "try"] if depth < 3 else [])))
    if kind == "simple":
      lines.append(draw(st.sampled_from(SIMPLE)))
    elif kind == "if":
      lines += ["if FLAG:"] + _indent(draw(blocks(depth + 1)))
      if draw(st.booleans()):
        lines += ["else:"] + _indent(draw(blocks(depth + 1)))
    elif kind == "for":
      lines += ["for _ in range(2):"] + _indent(draw(blocks(depth + 1)))
    elif kind == "def":
      name = f"step_{depth}_{len(lines)}"
      lines += [f"def {name}():", "  global data, model, preds"] + _indent(draw(blocks(depth + 1)))
      lines.append(f"{name}()")
    elif kind == "with":
      lines += ["with Guard():"] + _indent(draw(blocks(depth + 1)))
    else:
      lines += ["try:"] + _indent(draw(blocks(depth + 1))) + ["except ValueError:", "  LOG.append('never')"]
  return lines


def _run(source: str) -> tuple[str, list]:
  namespace: dict = {"__name__": "__main__"}
  out = io.StringIO()
  with contextlib.redirect_stdout(out):
    exec(compile(source, "<program>", "exec"), namespace)  # noqa: S102 (our own generated programs)
  return out.getvalue(), namespace["LOG"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks())
def test_random_programs_are_verified_and_behave_identically(lines):
  source = PRELUDE + "\n".join(lines) + "\n"
  result = instr.ASTInstrumenter().instrument(source, nonce=NONCE)
  assert result.verified, result.fallback_reason
  assert instr.verify_equivalent(source, result.source, NONCE)[0]
  stripped, removed = instr.strip_markers(ast.parse(result.source), NONCE)
  assert removed == len(result.inserted) > 0
  out_original, log_original = _run(source)
  out_new, log_new = _run(result.source)
  assert instr.strip_marker_lines(out_new, NONCE) == out_original
  assert log_new == log_original
  report = result.parse(out_new)
  assert "imported_packages" in report.stages  # the prelude's imports always run
  assert set(report.stages) <= set(result.stages)
