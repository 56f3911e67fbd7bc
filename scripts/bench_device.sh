#!/usr/bin/env bash
# Accelerator benchmark (update MFU, sampler tokens/s) for a ~0.5B config; a few minutes.
# On an NVIDIA machine the CUDA build of the pinned jax is added to .venv first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if command -v nvidia-smi >/dev/null 2>&1; then
  jax_version=$(.venv/bin/python -c 'import jax; print(jax.__version__)')
  .venv/bin/python -m pip install -q "jax[cuda12]==${jax_version}"
fi
exec timeout 420 .venv/bin/python scripts/bench_device.py "$@"
