"""Builds the Docker sandbox image, with or without an image registry.

Default (`--method debootstrap`): mmdebstrap (or debootstrap) builds a minimal Debian rootfs with
python3, pytest, numpy, pandas and scikit-learn from Debian packages, then `docker import`s it;
only a Debian mirror is needed. `--method dockerfile` runs `docker build` on
sandbox/image/Dockerfile for users with access to a registry.

  python scripts/build_sandbox_image.py --tag rlcoder-sandbox:1
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

PACKAGES = ("python3", "python-is-python3", "python3-pytest", "python3-numpy", "python3-pandas", "python3-sklearn",
            "procps", "ca-certificates")
# The image runs as this non-root user; the Docker backend also passes it explicitly.
SANDBOX_UID = 1000
SANDBOX_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                           "sandbox"))
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


def build_rootfs_tar(tar_path: str, suite: str, mirror: str) -> None:
  """Writes a Debian rootfs tarball with the sandbox packages to `tar_path`."""
  if shutil.which("mmdebstrap"):
    cmd = ["mmdebstrap", "--variant=minbase", "--include=" + ",".join(PACKAGES),
           "--customize-hook=" + CUSTOMIZE, '--customize-hook=mkdir -p "$1/opt/rlcoder"',
           f"--customize-hook=sync-in {RUNTIME_DIR} /opt/rlcoder",
           '--customize-hook=find "$1/opt/rlcoder" -name __pycache__ -prune -exec rm -rf {} +',
           suite, tar_path, mirror]
    subprocess.run(cmd, check=True)
    return
  if not shutil.which("debootstrap"):
    sys.exit("neither mmdebstrap nor debootstrap found: apt-get install mmdebstrap")
  with tempfile.TemporaryDirectory(prefix="rlcoder-rootfs-") as root:
    subprocess.run(["debootstrap", "--variant=minbase", "--include=" + ",".join(PACKAGES),
                    suite, root, mirror], check=True)
    subprocess.run(["sh", "-c", CUSTOMIZE, "customize", root], check=True)
    shutil.copytree(RUNTIME_DIR, os.path.join(root, "opt", "rlcoder"),
                    ignore=shutil.ignore_patterns("__pycache__"))
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
  parser.add_argument("--tag", default="rlcoder-sandbox:1", help="image name:version (config "
                      "field sandbox.docker_image)")
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
