"""The direction of imports, checked on the source (function-level imports included):
`sandbox` never imports `rl`; the algorithm (`rl.algo`) imports nothing of the environment,
the outcome or the training run; no library module imports an experiment config (`configs`);
and the fixed names of ARCHITECTURE.md stay importable from their old paths."""

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> set[str]:
  """Every module `path` imports, anywhere in the file ("from a.b import c" gives a.b and a.b.c)."""
  out = set()
  for node in ast.walk(ast.parse(path.read_text(), str(path))):
    if isinstance(node, ast.Import):
      out.update(alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
      out.add(node.module)
      out.update(f"{node.module}.{alias.name}" for alias in node.names)
  return out


def _violations(package: str, forbidden: tuple[str, ...]) -> list[str]:
  return [f"{path.relative_to(REPO)} imports {name}"
          for path in sorted((REPO / package).rglob("*.py"))
          for name in sorted(_imports(path))
          if any(name == f or name.startswith(f + ".") for f in forbidden)]


@pytest.mark.parametrize("package,forbidden", [
    ("sandbox", ("rl",)),
    ("rl/algo", ("rl.env", "rl.outcome", "rl.train", "rl.tasks", "rl.antihack")),
    ("rl", ("configs",)),
])
def test_imports_point_one_way(package, forbidden):
  assert _violations(package, forbidden) == []


def test_the_check_sees_function_level_imports(tmp_path):
  """The checker itself: an import inside a function counts."""
  module = tmp_path / "m.py"
  module.write_text("def f():\n  from rl.train import trainer\n  import configs.default\n")
  assert {"rl.train", "rl.train.trainer", "configs.default"} <= _imports(module)


def test_fixed_names_are_importable_from_their_old_paths():
  """ARCHITECTURE.md's fixed Python names: thin re-exports of the modules that hold them now."""
  import rl.advantages
  import rl.evaluation
  import rl.losses
  import rl.model
  from rl.algo import advantages, losses
  from rl.models import hf
  from rl.train import evaluate

  for name in ("gae", "masked_whiten", "grpo", "rloo"):
    assert getattr(rl.advantages, name) is getattr(advantages, name)
  for name in ("aggregate", "ppo_policy_loss", "value_loss", "kl_penalty"):
    assert getattr(rl.losses, name) is getattr(losses, name)
  assert rl.evaluation.pass_at_k is evaluate.pass_at_k
  assert rl.model.load_hf_checkpoint is hf.load_hf_checkpoint
  assert rl.model.save_hf_checkpoint is hf.save_hf_checkpoint
