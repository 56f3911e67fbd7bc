"""Builds the Docker sandbox image, with or without an image registry.

Both methods install the sandbox runtime, sandbox/requirements.txt, the same pinned packages
the bubblewrap backend's .venv/sandbox holds (sandbox/runtime_env.py).

Default (`--method debootstrap`): mmdebstrap (or debootstrap) builds a minimal Debian rootfs with
Debian's python3, pip downloads the pinned wheels for that interpreter into its
/usr/local/lib/python3.X/dist-packages, then `docker import` makes the image; a Debian mirror and
a Python package index are needed, no image registry. `--method dockerfile` runs `docker build`
on sandbox/image/Dockerfile for users with access to a registry.

  python scripts/build_sandbox_image.py            # the tag of SandboxConfig().docker_image
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))
from sandbox.api import SandboxConfig  # pylint: disable=wrong-import-position

DEFAULT_TAG = SandboxConfig().docker_image

PACKAGES = ("python3", "python-is-python3", "procps", "ca-certificates")
# Debian's python3 per suite: the wheels are chosen for this interpreter.
SUITE_PYTHON = {"bookworm": "3.11", "trixie": "3.13"}
# The image runs as this non-root user; the Docker backend also passes it explicitly.
SANDBOX_UID = 1000
REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SANDBOX_DIR = os.path.join(REPO, "sandbox")
REQUIREMENTS = os.path.join(SANDBOX_DIR, "requirements.txt")
IMAGE_DIR = os.path.join(SANDBOX_DIR, "image")
# The command server and grading audit hook, baked in for remote engines (local engines get
# the current copy bind-mounted read-only over it).
RUNTIME_DIR = os.path.join(SANDBOX_DIR, "runtime")

# Runs inside the rootfs after the packages are installed: the non-root user, the workspace
# mount point, and no apt lists or docs that would only bloat the image.
CUSTOMIZE = (
    'echo "sandbox:x:{uid}:{uid}::/tmp:/bin/sh" >> "$1/etc/passwd"; '
    'echo "sandbox:x:{uid}:" >> "$1/etc/group"; '
    'mkdir -p "$1/workspace" && chown {uid}:{uid} "$1/workspace"; '
    'rm -rf "$1/var/lib/apt/lists"/* "$1/usr/share/doc"/* "$1/usr/share/man"/* "$1/var/cache/apt"/*'
).format(uid=SANDBOX_UID)

IMPORT_CHANGES = (
    f"USER {SANDBOX_UID}:{SANDBOX_UID}",
    "WORKDIR /workspace",
    "ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HOME=/tmp LANG=C.UTF-8 "
    "PATH=/usr/local/bin:/usr/bin:/bin",
    'CMD ["sleep", "infinity"]',
)


def image_exists(tag: str) -> bool:
  return subprocess.run(["docker", "image", "inspect", tag], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).returncode == 0


# Console scripts of the pinned packages (pip --target leaves them with the host's shebang).
PYTEST_SCRIPT = ("#!/usr/bin/python3\nimport sys\nfrom pytest import console_main\n"
                 "sys.exit(console_main())\n")


def download_site_packages(dest: str, bin_dir: str, python_version: str) -> None:
  """Installs sandbox/requirements.txt for Debian's interpreter into `dest` (a site directory)
  and its console script (`pytest`) into `bin_dir`.

  Wheels only, for the image's interpreter and this machine's architecture, whatever Python runs
  this script; --no-deps because the file pins the whole closure.
  """
  machine = os.uname().machine
  major, minor = python_version.split(".")
  cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--only-binary=:all:",
         "--target", dest, "--python-version", python_version, "--implementation", "cp",
         "--abi", f"cp{major}{minor}", "-r", REQUIREMENTS]
  for tag in ("manylinux_2_28", "manylinux_2_17", "manylinux2014"):
    cmd += ["--platform", f"{tag}_{machine}"]
  subprocess.run(cmd, check=True)
  shutil.rmtree(os.path.join(dest, "bin"), ignore_errors=True)
  os.makedirs(bin_dir, exist_ok=True)
  with open(os.path.join(bin_dir, "pytest"), "w") as f:
    f.write(PYTEST_SCRIPT)
  os.chmod(os.path.join(bin_dir, "pytest"), 0o755)


def build_rootfs_tar(tar_path: str, suite: str, mirror: str) -> None:
  """Writes a Debian rootfs tarball with python3 and the sandbox runtime to `tar_path`."""
  if suite not in SUITE_PYTHON:
    sys.exit(f"unknown suite {suite!r}: known {sorted(SUITE_PYTHON)}")
  python_version = SUITE_PYTHON[suite]
  site_dir = f"/usr/local/lib/python{python_version}/dist-packages"
  with tempfile.TemporaryDirectory(prefix="rlcoder-site-") as tmp:
    site, bin_dir = os.path.join(tmp, "site"), os.path.join(tmp, "bin")
    download_site_packages(site, bin_dir, python_version)
    if shutil.which("mmdebstrap"):
      cmd = ["mmdebstrap", "--variant=minbase", "--include=" + ",".join(PACKAGES),
             "--customize-hook=" + CUSTOMIZE, '--customize-hook=mkdir -p "$1/opt/rlcoder"',
             f"--customize-hook=sync-in {RUNTIME_DIR} /opt/rlcoder",
             '--customize-hook=find "$1/opt/rlcoder" -name __pycache__ -prune -exec rm -rf {} +',
             f'--customize-hook=mkdir -p "$1{site_dir}" "$1/usr/local/bin"',
             f"--customize-hook=sync-in {site} {site_dir}",
             f"--customize-hook=sync-in {bin_dir} /usr/local/bin",
             f'--customize-hook=chmod -R a+rX "$1{site_dir}" "$1/usr/local/bin"',
             suite, tar_path, mirror]
      subprocess.run(cmd, check=True)
      return
    _build_rootfs_tar_debootstrap(tar_path, suite, mirror, site, site_dir, bin_dir)


def _build_rootfs_tar_debootstrap(tar_path: str, suite: str, mirror: str, site: str,
                                  site_dir: str, bin_dir: str) -> None:
  if not shutil.which("debootstrap"):
    sys.exit("neither mmdebstrap nor debootstrap found: apt-get install mmdebstrap")
  with tempfile.TemporaryDirectory(prefix="rlcoder-rootfs-") as root:
    subprocess.run(["debootstrap", "--variant=minbase", "--include=" + ",".join(PACKAGES),
                    suite, root, mirror], check=True)
    subprocess.run(["sh", "-c", CUSTOMIZE, "customize", root], check=True)
    shutil.copytree(RUNTIME_DIR, os.path.join(root, "opt", "rlcoder"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(site, root + site_dir, dirs_exist_ok=True)
    shutil.copytree(bin_dir, os.path.join(root, "usr", "local", "bin"), dirs_exist_ok=True)
    subprocess.run(["tar", "-C", root, "-cf", tar_path, "."], check=True)


def build_debootstrap(tag: str, suite: str, mirror: str) -> None:
  with tempfile.TemporaryDirectory(prefix="rlcoder-image-") as tmp:
    tar_path = os.path.join(tmp, "rootfs.tar")
    build_rootfs_tar(tar_path, suite, mirror)
    cmd = ["docker", "import"]
    for change in IMPORT_CHANGES:
      cmd += ["--change", change]
    subprocess.run(cmd + [tar_path, tag], check=True)


def build_dockerfile(tag: str) -> None:
  subprocess.run(["docker", "build", "-t", tag, "-f", os.path.join(IMAGE_DIR, "Dockerfile"),
                  SANDBOX_DIR], check=True)


def main(argv: list[str] | None = None) -> int:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--tag", default=DEFAULT_TAG, help="image name:version (config field "
                      "sandbox.docker_image)")
  parser.add_argument("--method", choices=("debootstrap", "dockerfile"), default="debootstrap")
  parser.add_argument("--suite", default="bookworm")
  parser.add_argument("--mirror", default=os.environ.get("DEBIAN_MIRROR",
                                                          "http://deb.debian.org/debian"))
  parser.add_argument("--force", action="store_true", help="rebuild even if the tag exists")
  args = parser.parse_args(argv)
  if shutil.which("docker") is None:
    sys.exit("the docker CLI is not installed")
  if image_exists(args.tag) and not args.force:
    print(f"{args.tag} already exists (use --force to rebuild)")
    return 0
  start = time.time()
  if args.method == "debootstrap":
    build_debootstrap(args.tag, args.suite, args.mirror)
  else:
    build_dockerfile(args.tag)
  print(f"built {args.tag} in {time.time() - start:.0f} s")
  return 0


if __name__ == "__main__":
  sys.exit(main())
