"""Long-horizon bug-fix tasks: a bug sits k calls below the function the test calls.

The family for long, uneven coding-agent trajectories: the length of a successful episode
is set by the task (the depth of a call chain the agent must read along), so one task set spans
episodes of 3 to 20 turns. `generator` builds and verifies the tasks, `expert` is the scripted
expert's plan for them (SFT demonstrations), `source` registers the task sources
`synthetic_long` and `synthetic_long_heldout`.
"""

from rl.tasks.long_horizon import expert as _expert  # registers the "call_chain" expert plan  # noqa: F401
from rl.tasks.long_horizon import source as _source  # registers the task sources  # noqa: F401
from rl.tasks.long_horizon.generator import (ChainSpec, LongSettings, bug_identity, cached_or_generate_long,
                                             generate_long, name_split)

__all__ = ["ChainSpec", "LongSettings", "bug_identity", "cached_or_generate_long", "generate_long", "name_split"]
