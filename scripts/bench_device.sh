#!/usr/bin/env bash
# Accelerator benchmark (update MFU, sampler tokens/s) for a ~0.5B config; a few minutes.
# Uses .venv (set up here; on an NVIDIA machine the CUDA build of the pinned jax is added), or,
# with RL_PYTHON=python3, an interpreter that already has jax for the accelerator, flax and optax
# (an offline GPU image, say). torch, if importable there, gives the PyTorch baselines.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${RL_PYTHON:-}
if [[ -z "$python" ]]; then
  bash scripts/setup.sh
  if command -v nvidia-smi >/dev/null 2>&1; then
    jax_version=$(.venv/bin/python -c 'import jax; print(jax.__version__)')
    .venv/bin/python -m pip install -q "jax[cuda12]==${jax_version}"
  fi
  python=.venv/bin/python
fi
exec timeout 480 "$python" scripts/bench_device.py "$@"
