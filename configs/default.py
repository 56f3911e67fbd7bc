r"""The default experiment: a tiny coding agent learns to fix synthetic bugs on CPU.

Tiny Qwen2-shaped model and tokenizer from the repo, starting from the committed tiny base
(rl/assets/tiny_base: scripts/make_base.py pretrained it on the train functions' other bugs, in
several spellings; it never saw a held-out function nor this experiment's training bugs),
synthetic bug-fix tasks in the bundled functions and the function families (train split;
held-out evaluation on 48 bugs in unseen functions, a root of its own), local
bubblewrap sandbox, rules-only anti-hack, a short SFT warm start on scripted-expert
demonstrations (40 steps: the tasks' fixes in part, so RL has room), then PPO with a
token-level critic and GAE: every training task twice per iteration (48 episodes), a critic
warmed up for two iterations, per-turn GAE, the policy gradient on the 20% highest-entropy
action tokens, and tool calls decoded under the call grammar.

Run (set-up included):

  bash scripts/setup.sh && .venv/bin/python train.py --config configs/default.py --workdir runs/default

Expected result, seed 0 on a 2-core CPU: 5-11 minutes in the trainer with the compiled programs
in the persistent cache (trainer.compilation_cache_dir), 6-15 minutes the first time, by CPU
(an Intel Xeon with AVX-512 fastest, a first-generation Zen EPYC slowest: 10-11 minutes warm;
README.md has the table), peak memory 1.8-2.6 GiB. SFT action-token NLL 0.51 -> 0.087; training success rate 0.38 over the
first two iterations -> 0.66-0.73 over the last two; pass@1 on the 25 training tasks (one sample
at T = 0.7) 0.40 before RL -> 0.56-0.76 after; held-out pass@1 (48 tasks, greedy) 0.250 for the base, 0.188 after SFT, 0.188-0.229 after RL.
The ranges are runs of the same seed on machines under different load: a command killed at its
timeout returns timing-dependent output, and the episodes part from there (two runs under the
same conditions agree episode for episode). A greedy pass@1 on 48 tasks has a standard error of
about 0.06. Other seeds, earlier settings and the experiments that chose these:
docs/journal/2026-12-03-default-experiment-history.md, docs/experiments.md.

Override any field from the command line, e.g. `--config.algo.clip_high=0.28`.
Ablations live in configs/ablations/ and change a few fields of this file.
"""

import ml_collections


def get_config(arg: str | None = None) -> ml_collections.ConfigDict:
  c = ml_collections.ConfigDict()
  c.seed = 0
  # Weights to start from (a Hugging Face directory or a run directory; relative paths also from
  # the repository). Resume order: the run's own latest checkpoint, then this, then scratch.
  # The tiny base knows the tool format and reads paths from its context (scripts/make_base.py).
  c.init_from = "rl/assets/tiny_base"
  c.override_workdir = False  # allow a workdir whose config.json differs

  # --- model -----------------------------------------------------------------
  c.model = ml_collections.ConfigDict()
  c.model.hf_checkpoint = ""  # a local Hugging Face directory; "" = the tiny built-in model
  c.model.tiny = "tiny"  # built-in preset when hf_checkpoint is empty
  # Size overrides of the built-in preset (0 = the preset's value). The default experiment
  # uses a 2-layer, 128-wide model (~0.9M parameters) so that it runs in minutes on 2 cores.
  c.model.hidden_size = 128
  c.model.num_layers = 2
  c.model.intermediate_size = 384
  c.model.dtype = "float32"
  c.model.param_dtype = "float32"
  c.model.value_head = "separate"  # "shared" (on the policy trunk) | "separate" (a critic model)
  c.model.remat = False
  # Training/scoring attention: "tiled" (tiles with an online softmax that skip what no query can
  # see, e.g. across a packed row's sequences; 1.9-2.3x "einsum" on the default's packed
  # mini-batches on 2 CPU cores, scripts/bench_attention.py) | "einsum" | "xla" | "cudnn" (fused
  # flash kernel on NVIDIA GPUs; scripts/bench_device.py). All give the same outputs for the
  # trainer's batches.
  c.model.attention = "tiled"
  c.model.logits_chunk = 256  # sequence chunk for log-prob/entropy in the update step

  # --- multi-host (JAX distributed runtime); empty coordinator = single process ---------
  c.distributed = ml_collections.ConfigDict()
  c.distributed.coordinator = ""  # "host:port" of process 0, or JAX_COORDINATOR_ADDRESS
  c.distributed.num_processes = 1
  c.distributed.process_id = -1  # -1: from JAX_PROCESS_ID

  # --- device mesh ---------------------------------------------------------------
  c.mesh = ml_collections.ConfigDict()
  c.mesh.shape = (1, -1, 1)  # -1 absorbs the remaining devices
  c.mesh.axes = ("data", "fsdp", "tensor")
  c.mesh.rules = (
      ("batch", ("data", "fsdp")),
      ("embed", "fsdp"),
      ("mlp", "tensor"),
      ("heads", "tensor"),
      ("kv_heads", "tensor"),
      ("vocab", "tensor"),
  )

  # --- sampling ------------------------------------------------------------------
  c.sampling = ml_collections.ConfigDict()
  c.sampling.temperature = 0.7  # rollouts; the tiny model's calls are more often well-formed
  c.sampling.temperature_final = 0.7  # linear schedule over training
  c.sampling.top_p = 1.0
  c.sampling.top_k = 0
  c.sampling.max_cache_len = 2048
  # Contiguous blocks of rows decoded concurrently, one thread and KV cache each; 0 = one per
  # CPU core on a CPU backend without a mesh (rl.lanes.auto_lanes), else 1; on a mesh the rows are
  # split over its devices instead and this is not used. What a row samples does not depend on
  # it, up to float rounding (rl.env.sampling).
  c.sampling.lanes = 0

  # --- sandbox -------------------------------------------------------------------
  c.sandbox = ml_collections.ConfigDict()
  c.sandbox.backend = "local"  # "local" (bubblewrap) | "docker"
  c.sandbox.pool_size = 2
  c.sandbox.exec_timeout_s = 10.0
  c.sandbox.memory_mb = 1024
  c.sandbox.max_procs = 64
  c.sandbox.max_file_mb = 64
  c.sandbox.output_limit_bytes = 64 * 1024
  c.sandbox.docker_image = "rlcoder-sandbox:2"
  # The interpreter of the sandbox runtime (sandbox/requirements.txt) for the local backend;
  # "" = $RLCODER_SANDBOX_PYTHON, else .venv/sandbox/bin/python (made by scripts/setup.sh).
  c.sandbox.python = ""
  c.sandbox.docker_hosts = ()  # DOCKER_HOST URLs; empty = the local engine
  c.sandbox.max_concurrency = 4
  # Failures on purpose (sandbox/faults.py), to drill how a run copes with a flaky sandbox: the
  # share of session starts, of session calls (exec, read/write/list files) and of gradings
  # that raise a SandboxError instead of running. Such episodes are infrastructure failures:
  # counted (infra/*) and left out of the update (docs/algorithms.md). 0 = off.
  c.sandbox.fault_injection = ml_collections.ConfigDict()
  c.sandbox.fault_injection.open_failure_rate = 0.0
  c.sandbox.fault_injection.exec_failure_rate = 0.0
  c.sandbox.fault_injection.grade_failure_rate = 0.0
  c.sandbox.fault_injection.seed = 0  # the same seed fails the same calls again

  # --- tasks ---------------------------------------------------------------------
  c.tasks = ml_collections.ConfigDict()
  c.tasks.sources = (("synthetic", 1.0),)  # (task source name, weight)
  c.tasks.root = ""  # "" = generate into <workdir>/tasks
  c.tasks.split = "train"
  c.tasks.eval_split = "heldout"
  c.tasks.difficulty = "easy"  # "" = every tier; easy | medium | hard
  c.tasks.max_eval_tasks = 0  # 0 = every held-out task
  # Where held-out tasks come from: () = the training sources' eval_split. The training root's
  # held-out share (a fifth of num_synthetic) is too small to measure on, so the default
  # evaluates on a root of its own: eval_num_synthetic bugs planted only in held-out functions.
  c.tasks.eval_sources = (("synthetic_heldout", 1.0),)
  c.tasks.eval_num_synthetic = 48
  c.tasks.num_synthetic = 60
  c.tasks.synthetic_seed = 0
  # Renamed variants of each synthetic bug (other parameter, variable and module names), each
  # right after it: a policy must then read names from its context (rl/tasks/synthetic/rename.py).
  c.tasks.synthetic_renames = 0
  # Functions the bugs are planted in: "core" (the bundled library), "families" (nine loop shapes
  # over ten conditions, rl/tasks/synthetic/families.py: a held-out function's shape and
  # condition both occur in training) or "all" (both).
  c.tasks.synthetic_library = "all"
  c.tasks.synthetic_tiers = ""  # "easy=1" generates only that tier; "" = easy 0.5, medium 0.3, hard 0.2
  # How generated synthetic tasks are verified (each bug fails its hidden tests, the fix passes
  # them): "sandbox" (isolated, the graders' backend) | "subprocess" (no isolation; the bundled
  # functions only, for tests).
  c.tasks.verify_with = "sandbox"
  c.tasks.mle_root = ""  # "" = generate the MLE competitions into <workdir>/tasks/mle
  c.tasks.mle_variants = 1  # training data variants (seeds) per MLE competition
  c.tasks.mle_heldout_variants = 0  # held-out data variants per competition (split "heldout")

  # --- agent / rollouts ----------------------------------------------------------
  c.agent = ml_collections.ConfigDict()
  c.agent.mode = "multi_turn"  # "multi_turn" (tools) | "single_turn" (answer code block)
  c.agent.max_turns = 5
  c.agent.max_tokens_per_turn = 128
  c.agent.max_tokens_per_trajectory = 1536
  c.agent.observation_max_chars = 1024
  c.agent.num_workers = 2
  c.agent.tool_prompt = "compact"  # "compact" (short tool list) | "schema" (Hermes JSON schemas)
  c.agent.episode_timeout_s = 0.0  # wall-clock limit per episode (reason `timeout`); 0 = none
  c.agent.min_ready_fraction = 1.0  # decode when this share of tool-waiting episodes is back
  # Episodes holding a sandbox and a sampler row at once; the rest of a rollout waits for a free
  # slot (a rollout over hundreds of tasks would otherwise start every sandbox together). 0 = all.
  c.agent.max_live_episodes = 64
  # Decode every message as free text plus one well-formed tool call (a known tool, its argument
  # names, JSON strings): the sampler masks what the call grammar rules out and the update scores
  # the same masked distribution (rl.env.constrained, docs/rollouts.md).
  c.agent.constrained_tool_calls = True
  # With constrained calls: the most bytes of free text before `<tool_call>` (then the call must
  # start); 0 = unbounded. Without a bound a drifting policy can write its call as plain text.
  c.agent.max_thought_bytes = 96  # the expert's thoughts are under 60 bytes

  # --- rewards -------------------------------------------------------------------
  c.reward = ml_collections.ConfigDict()
  c.reward.scheme = "binary"  # binary | tiered | pass_rate | mle
  c.reward.process_rewards = False
  # Grade against the hidden-test ids collected on the reference solution (once per task,
  # cached): a test the agent's code makes disappear counts as missing, not as absent.
  c.reward.expected_tests = True
  # Final workspaces with identical bytes share one grading (sandbox.grading.GradeCache): an
  # episode that edits nothing leaves the pristine repo, a learnt fix writes the same file.
  # Sound for deterministic hidden tests (every built-in task source's); turn it off for suites
  # with random or timing-dependent tests.
  c.reward.grade_cache = True
  # Per-turn format reward for a message with no usable tool call (malformed JSON, unknown
  # tool, missing arguments); any scheme, independent of process_rewards. 0 = off.
  c.reward.invalid_call_penalty = 0.0
  # Per-turn reward for a well-formed call whose tool reports an error (no such file, `old`
  # not found); a failing test run is not a tool error. 0 = off.
  c.reward.tool_error_penalty = 0.0
  # Values of the schemes (docs/rewards.md).
  c.reward.compile_reward = 0.5  # tiered
  c.reward.pass_reward = 10.0  # tiered
  c.reward.partial_scale = 1.0  # tiered: partial credit = partial_scale * pass_reward * pass fraction
  c.reward.slow_threshold_s = 0.0  # tiered: > 0 enables the slow-execution penalty
  c.reward.slow_penalty = 0.5
  c.reward.regression_reward = -1.0  # pass_rate: a test that passed before the agent's changes fails
  c.reward.invalid_reward = -10.0  # mle
  c.reward.stage_bonus = 0.1  # mle: per instrumentation stage reached
  # Per-turn process rewards (process_rewards=True), summed per turn and clipped below at
  # turn_reward_min.
  c.reward.compile_error_penalty = -0.5  # the code stopped compiling
  c.reward.lint_improvement_reward = 0.1  # fewer lint errors
  c.reward.newly_passing_reward = 0.2  # per test that now passes
  c.reward.newly_failing_penalty = -0.2  # per test that passed and now fails
  c.reward.repeat_command_penalty = -0.1  # the same command with the same output as before
  c.reward.turn_reward_min = -1.0

  # --- anti-hack -------------------------------------------------------------------
  c.antihack = ml_collections.ConfigDict()
  c.antihack.rules = "default"  # a rule set name; "none" disables stage 1
  c.antihack.response = "fake"  # fake | block | terminate
  c.antihack.no_gain_reward = 0.0
  c.antihack.judge = "none"  # none | openai | local
  c.antihack.judge_threshold = 0.5
  c.antihack.judge_base_url = ""
  c.antihack.judge_model = ""
  c.antihack.judge_async = False  # judge in background threads; verdicts resolved before each update
  c.antihack.flag_severity = "medium"  # rule hits at or above this flag; "low" ones are only logged
  c.antihack.judge_checkpoint = ""  # local judge: a Hugging Face checkpoint directory
  c.antihack.judge_api_key_env = ""  # openai judge: environment variable holding the API key
  c.antihack.judge_timeout_s = 60.0
  c.antihack.judge_max_retries = 2
  c.antihack.judge_concurrency = 4
  c.antihack.judge_prompt = "cheat_v1"  # rl/antihack/judge_prompts/<name>.*.txt
  c.antihack.judge_on_error = "pass"  # pass | flag, when the judge cannot answer
  c.antihack.judge_max_observation_chars = 400  # per tool observation in the judge's prompt
  c.antihack.judge_max_section_chars = 6000  # openai judge: per prompt section (diff, logs)
  # The differential oracle (rl/outcome/oracle.py): a passing fix of a task with a reference
  # solution must also agree with it on held-out inputs generated from the hidden tests' calls.
  c.antihack.oracle = True
  c.antihack.oracle_inputs = 24  # held-out calls per task
  c.antihack.oracle_tolerance = 0.0  # share of disagreeing calls still accepted
  c.antihack.oracle_timeout_s = 30.0  # one check (all calls, one sandbox command)
  # Replay the hidden tests themselves on perturbed literals and data files
  # (rl/outcome/oracle_replay.py): "auto" when some hidden test makes no call the oracle can
  # reproduce (methods on fixture objects, data-driven tests), "always", "never".
  c.antihack.oracle_replay = "auto"
  c.antihack.oracle_replay_variants = 31  # copies of the hidden folder: the first keeps the literals

  # --- algorithm -------------------------------------------------------------------
  c.algo = ml_collections.ConfigDict()
  c.algo.advantage_estimator = "gae"  # gae | grpo | drgrpo | rloo | reinforce_pp
  c.algo.policy_loss = "ppo"
  c.algo.value_loss = "clipped"
  c.algo.group_size = 1  # episodes per task (G); >1 for group-relative estimators
  c.algo.gamma = 1.0
  # Policy lambda 0.5 over turns, after the critic's warm-up: with an untrained critic and
  # lam < 1, a success's early tokens get a failure's negative whitened advantage; lam 1 is the
  # safe choice without a warm-up (docs/algorithms.md). Values still use value_lam.
  c.algo.lam = 0.5  # with discount_per = "turn" and a critic warmed up for two iterations
  c.algo.value_lam = 1.0  # decoupled lambda for value targets
  c.algo.adaptive_lam_alpha = 0.0  # >0: policy lambda = 1 - 1/(alpha * L)
  c.algo.discount_per = "turn"  # token | turn: GAE over the agent's turns
  # A cut episode (max_turns/max_tokens/timeout) is still graded and over: its reward is its
  # whole future. "bootstrap" (+ the value of the state after the last action token) is for
  # trajectories cut before grading (docs/algorithms.md).
  c.algo.truncation = "terminal"  # terminal | bootstrap
  c.algo.whiten_advantages = True
  c.algo.clip_low = 0.2
  c.algo.clip_high = 0.2
  c.algo.clip_c = 3.0
  # Multiplies negative advantages after the estimator: 1 = plain PPO; 0 = reinforce only
  # better-than-expected tokens (docs/algorithms.md, "Negative advantages").
  c.algo.negative_advantage_scale = 1.0
  c.algo.positive_advantage_scale = 1.0  # 0 = only push down worse-than-expected tokens
  # Failed episodes: leave the turns after the first malformed call or tool error out of the
  # policy loss ("after_error"), or the whole episode ("episode"); docs/algorithms.md.
  c.algo.error_masking = "none"
  # The policy gradient reaches only this share of the batch's action tokens, those of highest
  # entropy under the rollout policy (docs/algorithms.md, "High-entropy tokens"); 1 = all.
  c.algo.entropy_token_fraction = 0.2
  c.algo.value_clip = 0.5
  c.algo.loss_agg = "token-mean"
  # GSPO's own settings (algo.policy_loss = "gspo", Zheng et al. 2025), the paper's: its ratio is
  # a length-normalised ratio of whole sequences, so its clip range is three orders of magnitude
  # narrower than PPO's, and its loss a mean over sequences. clip_low, clip_high and loss_agg
  # above are PPO's and CISPO's (loss_agg also the value loss's). GSPO mini-batches are never
  # packed (trainer.pack_fraction): a packed row would share one ratio between sequences.
  c.algo.gspo_clip_low = 3e-4
  c.algo.gspo_clip_high = 4e-4
  c.algo.gspo_loss_agg = "seq-mean-token-mean"
  c.algo.entropy_coef = 0.0
  c.algo.kl_coef = 0.0
  c.algo.kl_in = "loss"  # loss | reward
  c.algo.kl_kind = "k3"
  # >0 (with kl_in = "loss"): the KL in the loss is exact over the reference's top-k tokens plus
  # one bucket for the rest of the vocabulary, instead of the sampled-token estimator kl_kind.
  c.algo.kl_topk = 0
  # >0: adaptive KL controller (Ziegler et al. 2019) towards this target, starting from kl_coef
  # (> 0); it reads the KL the penalty acts on, kl/reward_kl_mean or actor/kl_loss.
  c.algo.kl_target = 0.0
  c.algo.duration_weight = "none"  # none | linear (dt / mean dt) | inverse_log
  c.algo.duration_floor_s = 1.0  # execution times below this count as this (rl.outcome.duration)
  c.algo.duration_invalid_s = 1.0  # the time charged to a trajectory whose output is invalid
  c.algo.tis_cap = 0.0  # >0: truncated importance weights against the sampler
  # "sampler": the update's log-probs are those of the distribution the sampler draws from
  # (softmax renormalised on the sampling policy's top-k / top-p support; needs sampling.top_k > 0),
  # so no gradient reaches tokens the sampler could not have drawn. "full": the whole softmax.
  c.algo.logprob_support = "full"
  c.algo.value_coef = 0.5

  # --- optimisation --------------------------------------------------------------
  c.optim = ml_collections.ConfigDict()
  # With 48 episodes per iteration, 1e-4 learns steadily; higher rates let entropy rise and
  # success fall in some seeds (docs/experiments.md).
  c.optim.policy_lr = 1e-4
  c.optim.critic_lr = 1e-3
  # constant | cosine | linear; each optimiser's schedule spans its own steps over the run (the
  # policy's after the critic warm-up, PPO-ptx's included; the critic's extra steps included).
  c.optim.schedule = "constant"
  c.optim.warmup_steps = 0
  c.optim.weight_decay = 0.0
  c.optim.policy_optimizer = "adamw"  # adamw | sgd (momentum 0.9; lr is then a gradient multiplier)
  c.optim.policy_adam_eps = 1e-8
  # A regular expression over parameter paths ("layers/0/mlp/up_proj", "norm/weight"): RL updates
  # only the policy parameters it matches and freezes the rest; "" = all (docs/algorithms.md).
  c.optim.policy_trainable = ""
  c.optim.adam_b2 = 0.95
  c.optim.grad_clip = 1.0
  c.optim.ppo_epochs = 2
  c.optim.mini_batch_size = 12  # 4 Adam steps per epoch
  # One packed row per gradient-accumulation step: exact (rl.algo.update), and on 2 CPU cores the
  # fastest (a row's activations stay in the cores' caches) and the least padded, since packed
  # rows are rounded up to a multiple of it (scripts/bench_padding.py: the PPO epochs of a
  # default-shaped iteration 5.6 s against 7.6 s with 4, together with pack_fraction 0.25).
  c.optim.micro_batch_size = 1
  # Gradient programs run at once, a thread each, then summed: the policy's and a separate
  # critic's, and even lanes of their micro-batches when there are lanes to spare; scoring calls
  # too (rl.lanes). 0 = one per CPU core on a CPU backend without a mesh, else 1; not used on a
  # mesh (the step is one sharded program there). The same update up to float summation order
  # (to the bit with two lanes and a separate critic).
  c.optim.update_lanes = 0
  c.optim.critic_warmup_iterations = 2  # critic-only iterations before the policy trains
  c.optim.critic_updates_per_policy_update = 1

  # --- trainer -------------------------------------------------------------------
  c.trainer = ml_collections.ConfigDict()
  c.trainer.iterations = 20  # the first and last 10% are 2 each
  c.trainer.tasks_per_iteration = 48  # about two shuffled passes over the 25 training tasks
  # "epoch": shuffled passes over the training tasks, each task once per pass (less noise in the
  # per-iteration success rate than independent draws); "replacement": independent uniform draws.
  c.trainer.task_sampling = "epoch"
  c.trainer.eval_every = 0  # held-out pass@1 after SFT and at the end only
  c.trainer.eval_samples = 1
  c.trainer.eval_temperature = 0.0  # 0 = greedy decoding for evaluation
  c.trainer.final_eval_samples = 1  # samples per held-out task after SFT and at the end
  # Samples per training task for pass@1 before and after RL at the rollout temperature (summary
  # train_pass@1_start/_end): the same tasks both times; 0 = off.
  c.trainer.train_eval_samples = 1
  c.trainer.pad_multiple = 256  # sequence padding bucket (fewer recompilations)
  # Cut each scoring call and PPO mini-batch to its own longest row (rounded up to pad_multiple)
  # instead of the iteration's longest: same results, less padding (scripts/bench_padding.py).
  c.trainer.trim_padding = True
  # Lay the sequences of each SFT and PPO mini-batch end to end in this share of its rows
  # (rounded up to the micro-batch size), each row as long as that needs, each sequence attending
  # only to itself: the same token-level losses with less padding (rl.algo.batching.pack_minibatch;
  # scripts/bench_padding.py). Fewer, longer rows pack tighter: a quarter of the rows (3 of a
  # 12-row mini-batch) left 0.75x the PPO epochs' time of a half. 0 = off; only token-mean/
  # token-sum losses, never GSPO.
  c.trainer.pack_fraction = 0.25
  # Compiled XLA programs are kept here and reused by later runs with the same shapes (other
  # seeds, resumed runs): a run's compile time (time/compile_s) is paid once ("" = off).
  c.trainer.compilation_cache_dir = "~/.cache/rlcoder/jax"
  c.trainer.compilation_cache_min_s = 0.5  # programs that compile faster are not kept
  c.trainer.checkpoint_every = 5
  c.trainer.keep_checkpoints = 2
  c.trainer.plots = True  # PNGs in <workdir>/plots at the end of the run (rl/train/plots.py)
  c.trainer.tensorboard = True
  c.trainer.wandb = False

  # --- SFT warm start ---------------------------------------------------------------
  c.sft = ml_collections.ConfigDict()
  c.sft.enabled = True
  c.sft.demonstrations = ""  # JSONL trajectories; "" = scripted expert on the train tasks
  # From the tiny base, 40 steps teach part of the training tasks' fixes and leave RL room:
  # many more steps memorise them all and leave nothing to learn. The gentle rate keeps most of
  # the base's held-out ability, which 2e-3 (configs/experiments/sft_lr2e3.py) loses
  # (docs/experiments.md, fourteenth round). From random weights (init_from = "") more steps at
  # a higher rate are needed (configs/experiments/scratch.py).
  c.sft.steps = 40
  c.sft.lr = 5e-4
  c.sft.schedule = "cosine"  # cosine (to 0.1 lr) | constant | linear, after a short warm-up
  c.sft.batch_size = 8
  c.sft.demos_per_task = 2  # scripted-expert episodes per training task
  # Improve-previous demonstrations per training task, built from the first ones (self-improvement
  # on; the MLE plan revises a program, rl/tasks/mle/expert.py): 0 = none.
  c.sft.improve_demos_per_task = 0
  # The scripted expert's habits (rl.env.actors.ScriptedExpert): how often it lists and reads
  # files and runs the public tests before/after its edit, rewrites a whole file, and says a
  # thought; `expert_minimal_edits` makes edit_file's `old` the shortest unique string.
  # The default experiment keeps demonstrations short (~300-700 tokens) so the tiny model can
  # learn them in a few minutes; the class defaults give longer, chattier trajectories.
  c.sft.expert_explore_prob = 0.3
  c.sft.expert_read_prob = -1.0  # reading the file to edit; < 0 = expert_explore_prob
  c.sft.expert_run_prob = 0.3
  c.sft.expert_write_prob = 0.0
  c.sft.expert_thought_prob = 0.3
  c.sft.expert_minimal_edits = True
  # An imperfect demonstrator: this share of the expert's episodes explore and then submit
  # without a fix. 0 = every demonstration solves its task.
  c.sft.expert_give_up_prob = 0.0
  # Where a give-up happens on a plan that reads along a chain (the long-horizon family): after
  # 1 to this many reads; 0 = at a point drawn uniformly along the chain.
  c.sft.expert_give_up_within = 0
  # This share of the expert's episodes make one mistake (a wrong path, an `old` string not in
  # the file, broken JSON) and recover from it; the failed turn is left out of the SFT loss.
  # 0: demonstrations with recovered mistakes made SFT worse for a model trained from random
  # weights, which recalled paths instead of copying them from its context (docs/experiments.md,
  # eleventh round); not measured from the tiny base.
  c.sft.expert_mistake_prob = 0.0
  # Program-writing tasks (the MLE competitions, rl/tasks/mle/expert.py): this share of the
  # expert's programs is faulty (a wrong column, a fit on the test rows, a missing submission
  # column, a wrong file name) and fails its task; with expert_mistake_prob it may recover.
  c.sft.expert_program_fault_prob = 0.0
  # Clone every demonstration, failed ones included (False: only those that solved their task).
  c.sft.keep_failed_demonstrations = False
  # PPO-ptx: NLL steps on the demonstrations after each RL policy update (policy optimiser,
  # batches of sft.batch_size); 0 = off.
  c.sft.ptx_steps = 0
  # Start RL's policy optimiser from the SFT optimiser's moments instead of fresh ones.
  c.sft.carry_optimizer_state = False

  # --- paper features ---------------------------------------------------------------
  c.instrumentation = ml_collections.ConfigDict()
  c.instrumentation.backend = "none"  # none | ast | llm
  c.instrumentation.llm_base_url = ""  # llm: an OpenAI-compatible server with a frozen model
  c.instrumentation.llm_model = ""
  c.instrumentation.llm_api_key_env = ""  # llm: environment variable holding the API key
  c.instrumentation.llm_timeout_s = 60.0
  c.self_improve = ml_collections.ConfigDict()
  c.self_improve.enabled = False
  c.self_improve.capacity = 8
  c.self_improve.probability = 0.0
  c.self_improve.probability_final = -1.0  # <0: constant; else linear schedule over training
  c.self_improve.eviction = "lowest_score"  # lowest_score | oldest
  c.self_improve.temperature = 1.0  # prioritised sampling: p ~ exp(score / temperature)

  if arg:
    _apply_arg(c, arg)
  return c.lock()


def _apply_arg(c: ml_collections.ConfigDict, arg: str) -> None:
  """`--config=configs/default.py:key=value,key2=value2` shorthand (big_vision style)."""
  for item in arg.split(","):
    key, _, value = item.partition("=")
    node = c
    *parents, leaf = key.strip().split(".")
    for p in parents:
      node = node[p]
    old = node[leaf]
    node[leaf] = type(old)(value) if not isinstance(old, bool) else value.lower() in ("1", "true", "yes")
