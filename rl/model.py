"""A fixed name (ARCHITECTURE.md): the model code lives in rl.models."""

from rl.models import *  # noqa: F401,F403
from rl.models import load_hf_checkpoint, save_hf_checkpoint  # noqa: F401  the fixed names
