"""A fixed name (ARCHITECTURE.md): the losses live in rl.algo.losses."""

from rl.algo.losses import *  # noqa: F401,F403
from rl.algo.losses import aggregate, kl_penalty, ppo_policy_loss, value_loss  # noqa: F401  the fixed names
