"""pytest plugin (`-p rlcoder_collect`) that writes the collected test ids to a file."""
import os


def pytest_collection_finish(session):
  path = os.environ.get("RLCODER_COLLECT_OUT")
  if path:
    with open(path, "w") as f:
      f.write("\n".join(item.nodeid for item in session.items))
