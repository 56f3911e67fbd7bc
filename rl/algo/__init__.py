"""The learning algorithm, free of environments: advantage estimators, losses, the jitted update
step, and the typed batch between the rollout and the update (TrainBatch, make_train_batch).

Nothing here imports rl.env, rl.outcome or rl.train (tests/test_import_direction.py checks it):
the math is testable on arrays alone.
"""
