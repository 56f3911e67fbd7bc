"""A fixed name (ARCHITECTURE.md): pass@k lives in rl.train.evaluate."""

from rl.train.evaluate import pass_at_k, pass_at_k_table  # noqa: F401
