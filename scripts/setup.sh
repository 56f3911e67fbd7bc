#!/usr/bin/env bash
# Idempotent set-up: Debian packages the sandboxes need, a virtualenv at .venv with the
# trainer's pinned requirements (`--dev` adds the test dependencies), and the sandbox runtime
# at .venv/sandbox: a separate virtualenv with sandbox/requirements.txt, the only packages
# code under test can import (the bubblewrap sandbox binds it read-only).
# Re-running is cheap: pip is skipped while the requirement files are unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

reqs=requirements.txt
if [[ "${1:-}" == "--dev" ]]; then reqs=requirements-dev.txt; fi

need_pkgs=()
command -v bwrap >/dev/null 2>&1 || need_pkgs+=(bubblewrap)
command -v mmdebstrap >/dev/null 2>&1 || need_pkgs+=(mmdebstrap)
command -v patch >/dev/null 2>&1 || need_pkgs+=(patch)
command -v git >/dev/null 2>&1 || need_pkgs+=(git)
if ((${#need_pkgs[@]})); then
  sudo_cmd=""
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd="sudo"; fi
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian packages: ${need_pkgs[*]}"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
  else
    echo "setup: please install ${need_pkgs[*]} with your package manager" >&2
    exit 1
  fi
fi

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "setup: Python 3.11+ is required ($python is $("$python" --version 2>&1))" >&2
  exit 1
fi
if [[ ! -x .venv/bin/python ]]; then
  "$python" -m venv .venv
fi

stamp=.venv/.requirements-$(cat requirements*.txt | sha256sum | cut -c1-16)-$(basename "$reqs" .txt)
if [[ ! -f "$stamp" ]]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r "$reqs"
  touch "$stamp"
fi

# The sandbox runtime, from the same base interpreter (its packages only: no system site).
# Rebuilt from scratch whenever sandbox/requirements.txt changes, so it holds exactly that set.
sandbox_stamp=.venv/sandbox/.requirements-$(sha256sum < sandbox/requirements.txt | cut -c1-16)
if [[ ! -f "$sandbox_stamp" || ! -x .venv/sandbox/bin/python ]]; then
  rm -rf .venv/sandbox
  "$python" -m venv .venv/sandbox
  .venv/sandbox/bin/python -m pip install -q --upgrade pip
  # --no-deps: the file pins the whole closure, so the Docker image gets exactly the same set.
  .venv/sandbox/bin/python -m pip install -q --no-deps -r sandbox/requirements.txt
  if ! .venv/sandbox/bin/python -m pip check >/dev/null; then
    echo "setup: sandbox/requirements.txt does not pin a complete set:" >&2
    .venv/sandbox/bin/python -m pip check >&2 || true
    exit 1
  fi
  touch "$sandbox_stamp"
fi
echo "setup: ready (.venv with $reqs, .venv/sandbox with sandbox/requirements.txt)"
