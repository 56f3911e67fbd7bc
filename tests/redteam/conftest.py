"""The red-team fixtures are task directories, not tests of this project: never collect them."""

collect_ignore_glob = ["tasks/*"]
