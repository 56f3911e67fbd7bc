"""Function families: the same few loop shapes over the same few conditions, under many names.

The bundled library (`library.LIBRARY`) has a few dozen unrelated functions, and a held-out
function there shares nothing with the training ones but the language: fixing it takes a
general knowledge of what correct code looks like, which a small policy trained on a few dozen
functions does not have. Here every function is one of nine loop shapes (count, sum, product,
keep, any, all, first, last, index of first) over one of ten conditions (positive, negative,
zero, nonzero, even, odd; above, below, at_least, at_most a bound `k`), named
`<shape>_<condition>` (89 functions: the sum of the zeros is always 0 and is left out). The split stays by function name (`generator.function_split`), so a
held-out function such as `sum_even` is never seen in training, but its shape (`sum_odd`,
`sum_positive`) and its condition (`count_even`, `keep_even`) are: what a policy can learn on
the training functions (`even` is `x % 2 == 0`; a count starts at 0) carries over. This is the
generalisation the default experiment measures on held-out tasks (docs/tasks.md).

Expected values come from running each (correct) function on fixed inputs chosen to hold the
conditions' edge cases (zeros, equal neighbours, `x == k`), so that the generator's mutants
are told apart from the reference.
"""

from __future__ import annotations

import textwrap
from typing import Any

from rl.tasks.synthetic.library import LibraryFunction

# Condition name -> (expression over `x`, takes the bound `k`).
CONDITIONS: dict[str, tuple[str, bool]] = {
    "positive": ("x > 0", False),
    "negative": ("x < 0", False),
    "zero": ("x == 0", False),
    "nonzero": ("x != 0", False),
    "even": ("x % 2 == 0", False),
    "odd": ("x % 2 == 1", False),
    "above": ("x > k", True),
    "below": ("x < k", True),
    "at_least": ("x >= k", True),
    "at_most": ("x <= k", True),
}

# Shape -> (module, body with {cond} for the condition over `x`). `{args}` is the signature.
SHAPES: dict[str, tuple[str, str]] = {
    "count": ("counting", """
        def {name}({args}):
            count = 0
            for x in xs:
                if {cond}:
                    count += 1
            return count
        """),
    "sum": ("sums", """
        def {name}({args}):
            total = 0
            for x in xs:
                if {cond}:
                    total += x
            return total
        """),
    "product": ("sums", """
        def {name}({args}):
            result = 1
            for x in xs:
                if {cond}:
                    result *= x
            return result
        """),
    "keep": ("filters", """
        def {name}({args}):
            out = []
            for x in xs:
                if {cond}:
                    out.append(x)
            return out
        """),
    "any": ("search", """
        def {name}({args}):
            for x in xs:
                if {cond}:
                    return True
            return False
        """),
    "all": ("search", """
        def {name}({args}):
            for x in xs:
                if not {cond}:
                    return False
            return True
        """),
    "first": ("search", """
        def {name}({args}):
            for x in xs:
                if {cond}:
                    return x
            return None
        """),
    "last": ("search", """
        def {name}({args}):
            found = None
            for x in xs:
                if {cond}:
                    found = x
            return found
        """),
    "index": ("search", """
        def {name}({args}):
            for i in range(len(xs)):
                x = xs[i]
                if {cond}:
                    return i
            return -1
        """),
}

# Inputs holding every condition's edge cases: zeros, negatives, repeats, odd and even values.
_INPUTS = ([], [3, -1, 0, 4, -6, 7], [2, 2, 5], [-3, -8, 0], [0, 1, 1, 0], [10, 5, -5, 6, -2], [1], [-4],
           [6, 4, 8])
# (xs, k) pairs where some element equals k, some are above and some below.
_BOUNDED_INPUTS = (([], 2), ([3, -1, 0, 4, 2, 7], 2), ([2, 2, 5], 2), ([-3, -8, 0], -3), ([0, 1, 1, 0], 1),
                   ([10, 5, -5, 6, -2], 5), ([4], 4), ([1, 3], 0), ([7, 9], 8))


def _cases(name: str, code: str, bounded: bool) -> list[tuple[str, Any]]:
  namespace: dict[str, Any] = {}
  exec(compile(code, f"<{name}>", "exec"), namespace)  # pylint: disable=exec-used  # bundled code
  fn = namespace[name]
  if bounded:
    return [(f"{name}({xs!r}, {k!r})", fn(list(xs), k)) for xs, k in _BOUNDED_INPUTS]
  return [(f"{name}({xs!r})", fn(list(xs))) for xs in _INPUTS]


def _build() -> tuple[LibraryFunction, ...]:
  out = []
  for shape, (module, template) in SHAPES.items():
    for cond_name, (cond, bounded) in CONDITIONS.items():
      name = f"{shape}_{cond_name}"
      code = textwrap.dedent(template).strip().format(
          name=name, args="xs, k" if bounded else "xs", cond=cond) + "\n"
      cases = _cases(name, code, bounded)
      if len({repr(value) for _, value in cases}) < 2:
        continue  # a constant function (the sum of the zeros): no test could tell a bug
      out.append(LibraryFunction(name, module, "families", code, tuple(cases)))
  return tuple(out)


FAMILIES: tuple[LibraryFunction, ...] = _build()
