"""Tasks for coding agents: the task format, loaders, importers, generators and task sources.

    from rl.tasks import load_task_root
    tasks = load_task_root("runs/default/tasks", split="train")
"""

from rl.tasks.format import (Task, TaskError, load_task, load_task_root, sanitize_id, write_manifest,
                             write_task)
from rl.tasks.patch import PatchError, apply_patch, make_patch
from rl.tasks import sources as _sources  # registers the task sources  # noqa: F401
from rl.tasks.sources import TaskMixture, load_tasks

__all__ = ["Task", "TaskError", "load_task", "load_task_root", "apply_patch", "make_patch", "PatchError",
           "sanitize_id", "write_manifest", "write_task", "TaskMixture", "load_tasks"]
