r"""Long, uneven trajectories: PPO with a critic and per-turn GAE on the long-horizon task family.

The regime a token-level critic exists for. Tasks (rl/tasks/long_horizon, docs/tasks.md): a bug
sits k calls below the function the failing test calls, k from 1 to 12, so a solver reads
k + 1 small modules (and, for half the tasks, the test file first) before it can edit: a
success takes about k + 3 to k + 8 turns and its length is set by the task, while a give-up
or a quick wrong edit ends after a few turns. Chain modules are numbered (step1.py ->
step2.py -> ...). Training tasks: the train split of 40 generated chains (33);
held-out evaluation on 100 chains of held-out functions and wrapper names. The model starts from
rl/assets/tiny_base_long (scripts/make_base.py --family long: the default's tiny base after
120 SFT steps on 135 word-named chains, then 1,000 steps on 470 `step` chains, never this
experiment's bugs), then 80 SFT steps on this experiment's demonstrations, then PPO: 32 episodes per iteration (each
training task about once), a critic warmed up for one iteration, GAE over the agent's turns with a length-adaptive lambda.

Status (docs/ablations.md, "The long-horizon family"): after this SFT the tiny model solves
28-62% of the first iteration's episodes; first-iteration P90/P10 is 8.0 and 6.1 in tokens
(7.6 and 4.7 in turns) on seeds 0 and 1, with a short failure next to a long success on 2-3
of 8 tasks. An iteration takes about 40 s to 1.5 minutes here.

The estimator ablations on it are long_horizon_{grpo,drgrpo,rloo} (the same 32 episodes per
iteration, G = 4) and long_horizon_even (the length-even control: one depth); all runnable
through scripts/run_ablations.py (docs/ablations.md, "The long-horizon family"):

  .venv/bin/python train.py --config configs/experiments/long_horizon.py --workdir runs/long_horizon
  .venv/bin/python scripts/run_ablations.py --preset long_horizon --seeds 0,1,2,3,4 --root runs/abl_long
  .venv/bin/python scripts/traj_stats.py runs/long_horizon/trajectories --json

Override any field from the command line, e.g. `--config.tasks.long.max_depth=8`.
"""

import ml_collections

from configs import default


def get_config(arg=None):
  c = default.get_config(arg).unlock()
  c.init_from = "rl/assets/tiny_base_long"

  c.tasks.long = ml_collections.ConfigDict()
  c.tasks.long.num_tasks = 40  # both splits; about 35 train (the held-out functions are ~1/8)
  # The held-out evaluation root (held-out functions and names): 100 tasks, so that one seed's
  # standard error of held-out pass@1 is at most 0.05 (24 until 2026-12-05).
  c.tasks.long.eval_num_tasks = 100
  c.tasks.long.seed = 0
  c.tasks.long.min_depth = 1
  c.tasks.long.max_depth = 12
  c.tasks.long.heldout_fraction = 0.2
  c.tasks.long.max_distractors = 2
  c.tasks.long.stable_runs = 2  # a task is kept only when two independent verifications agree
  c.tasks.long.variants = "single=0.7,two_lines=0.15,two_places=0.15"
  c.tasks.long.styles = "entry=0.5,tests=0.5"
  # Chain modules step1.py -> step2.py -> ...: with word names (ledger.py -> basket.py) the tiny
  # model after SFT read module names it remembered, not the one its context named; with a
  # prefix per task (hop1.py -> hop2.py) it mixed the prefixes; with one name it walks the chain
  # in order (docs/ablations.md). The held-out split is then by function and wrapper names.
  c.tasks.long.naming = "step"
  c.tasks.sources = (("synthetic_long", 1.0),)
  c.tasks.eval_sources = (("synthetic_long_heldout", 1.0),)
  c.tasks.difficulty = ""  # every long task is "long"

  # A depth-12 chain read by the expert is about 20 turns and 1,500 tokens (prompt included).
  c.agent.max_turns = 24
  c.agent.max_tokens_per_turn = 128
  c.agent.max_tokens_per_trajectory = 3072
  c.sampling.max_cache_len = 3072

  # One episode per training task per iteration: 32 episodes of 4-24 turns cost about what the
  # default's 48 episodes of 3-5 turns cost twice over.
  c.trainer.tasks_per_iteration = 32
  c.trainer.iterations = 10
  c.optim.mini_batch_size = 8  # 4 Adam steps per epoch
  c.optim.critic_warmup_iterations = 1
  # Length-adaptive policy lambda (VAPO): 1 - 1/(alpha L), L = the row's action tokens, about
  # 0.8 for a three-turn give-up and 0.95-0.97 for a long solve. With the default's lam = 0.5
  # per turn the outcome reaches a turn k turns before the end as 0.5^k, and this family's critic
  # explains almost none of the return variance (0.00-0.14), so the first turns of a 15-turn
  # success got no credit at all: mean advantage -0.02 on their first three turns, against +0.14
  # under Dr.GRPO, in seed 2 of 2026-12-05 (docs/ablations.md).
  c.algo.adaptive_lam_alpha = 0.05
  c.trainer.train_eval_samples = 1

  # A short SFT on this experiment's demonstrations from the long base. The expert gives up in a
  # share of its episodes at a point along the chain; those failed demonstrations are cloned too
  # (an imperfect demonstrator, the way real agent SFT data holds give-ups), so the SFT policy
  # also ends some episodes early, as weak agents do.
  c.sft.steps = 80
  c.sft.lr = 1e-3
  c.sft.demos_per_task = 2
  c.sft.expert_give_up_prob = 0.2
  # ... after 1 to 3 reads: with give-ups anywhere along the chain, the rebuilt base's policy
  # rarely stopped early and P90/P10 stayed at 3.4-4.4 in turns (docs/ablations.md); weak agents
  # give up early, strong runs are long.
  c.sft.expert_give_up_within = 3
  c.sft.keep_failed_demonstrations = True
  return c.lock()
