"""A fixed name (ARCHITECTURE.md): the advantage estimators live in rl.algo.advantages."""

from rl.algo.advantages import *  # noqa: F401,F403
from rl.algo.advantages import gae, grpo, masked_whiten, rloo  # noqa: F401  the fixed names
