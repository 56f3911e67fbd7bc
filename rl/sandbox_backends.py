"""Sandbox backends as registry entries.

`sandbox/` never imports `rl`, so its backends are named here: each entry is the
backend name that `sandbox.SandboxConfig(backend=...)` understands.
"""

from rl import registry

registry.SANDBOX_BACKENDS.register("local", "local")  # bubblewrap, the embedded default
registry.SANDBOX_BACKENDS.register("docker", "docker")  # Docker engine(s), for scale
