"""The training run around the update step: the trainer loop, SFT, resume and checkpoints,
evaluation (pass@k), metrics, plots, the self-improvement buffer and progress display."""
