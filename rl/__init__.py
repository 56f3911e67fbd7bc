"""RL post-training of LLM coding agents in JAX/Flax: everything that learns."""
