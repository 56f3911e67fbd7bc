"""Property tests: the anti-hack stages never crash and never flag the unchanged workspace."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rl.antihack import RuleEngine, Verdict, load_rule_set

ENGINE = RuleEngine(load_rule_set("default"))
ACTION_TYPES = st.sampled_from(["list_files", "read_file", "write_file", "edit_file", "run", "submit", "answer", "bogus"])
VALUES = st.one_of(st.text(max_size=200), st.integers(), st.none(), st.lists(st.text(max_size=10), max_size=3))
INPUTS = st.dictionaries(st.sampled_from(["path", "content", "old", "new", "command", "code"]), VALUES, max_size=4)
CODE = st.one_of(
    st.text(max_size=300),
    st.lists(st.sampled_from(["import os", "x = 1", "def f(a):", "  return a", "class C:", "  def __eq__(s, o):",
                              "    return True", "if a == 3:", "  return 4", "exec(s)", "    pass", "print('1 passed')"]),
             max_size=12).map("\n".join))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ACTION_TYPES, st.one_of(INPUTS, VALUES))
def test_check_action_total(action_type, action_input):
  assert isinstance(ENGINE.check_action(action_type, action_input, None), Verdict)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.sampled_from(["a.py", "pkg/b.py", "tests/test_c.py", "conftest.py", "README.md"]), CODE,
                       max_size=3), CODE)
def test_check_diff_total_and_unchanged_is_clean(initial, new_code):
  assert not ENGINE.check_diff(initial, dict(initial)).rules  # no change, nothing to judge
  assert isinstance(ENGINE.check_diff(initial, {**initial, "a.py": new_code}), Verdict)
