"""The bundled library of small, correct Python functions the synthetic generator mutates.

Written for this project. Each entry is self-contained (no imports, no calls to other
entries) so any subset forms a valid module, and carries test cases as
(expression, expected value) pairs from which hidden and public tests are generated.
"""

from __future__ import annotations

import dataclasses
import textwrap
from typing import Any


@dataclasses.dataclass(frozen=True, eq=False)  # identity hash: cases hold lists
class LibraryFunction:
  name: str
  module: str  # the file (without .py) the function lives in
  category: str
  code: str
  cases: tuple[tuple[str, Any], ...]  # (call expression, expected value)


def _fn(name: str, module: str, category: str, code: str, cases: list[tuple[str, Any]]) -> LibraryFunction:
  return LibraryFunction(name, module, category, textwrap.dedent(code).strip() + "\n", tuple(cases))


LIBRARY: tuple[LibraryFunction, ...] = (
    # --- strings -----------------------------------------------------------------------
    _fn("count_vowels", "strs", "strings", """
        def count_vowels(s):
            count = 0
            for ch in s.lower():
                if ch in "aeiou":
                    count += 1
            return count
        """, [("count_vowels('hello')", 2), ("count_vowels('')", 0), ("count_vowels('AEIOU')", 5),
              ("count_vowels('xyz')", 0), ("count_vowels('banana')", 3)]),
    _fn("is_palindrome", "strs", "strings", """
        def is_palindrome(s):
            i = 0
            j = len(s) - 1
            while i < j:
                if s[i] != s[j]:
                    return False
                i += 1
                j -= 1
            return True
        """, [("is_palindrome('racecar')", True), ("is_palindrome('ab')", False), ("is_palindrome('')", True),
              ("is_palindrome('a')", True), ("is_palindrome('abca')", False), ("is_palindrome('abba')", True),
              ("is_palindrome('abcab')", False)]),
    _fn("capitalize_words", "strs", "strings", """
        def capitalize_words(s):
            words = s.split(" ")
            out = []
            for w in words:
                out.append(w[:1].upper() + w[1:])
            return " ".join(out)
        """, [("capitalize_words('hello world')", "Hello World"), ("capitalize_words('a')", "A"),
              ("capitalize_words('')", ""), ("capitalize_words('abc def ghi')", "Abc Def Ghi")]),
    _fn("reverse_words", "strs", "strings", """
        def reverse_words(s):
            words = s.split()
            result = []
            for i in range(len(words) - 1, -1, -1):
                result.append(words[i])
            return " ".join(result)
        """, [("reverse_words('a b c')", "c b a"), ("reverse_words('one')", "one"), ("reverse_words('')", ""),
              ("reverse_words('x  y')", "y x")]),
    _fn("count_char", "strs", "strings", """
        def count_char(s, ch):
            total = 0
            for c in s:
                if c == ch:
                    total += 1
            return total
        """, [("count_char('banana', 'a')", 3), ("count_char('', 'a')", 0), ("count_char('abc', 'z')", 0),
              ("count_char('aaa', 'a')", 3)]),
    _fn("truncate", "strs", "strings", """
        def truncate(s, width):
            if len(s) <= width:
                return s
            return s[:width - 3] + "..."
        """, [("truncate('hello', 10)", "hello"), ("truncate('hello world', 8)", "hello..."),
              ("truncate('abcdef', 6)", "abcdef"), ("truncate('abcdefg', 6)", "abc...")]),
    _fn("is_anagram", "strs", "strings", """
        def is_anagram(a, b):
            if len(a) != len(b):
                return False
            return sorted(a) == sorted(b)
        """, [("is_anagram('listen', 'silent')", True), ("is_anagram('abc', 'abd')", False),
              ("is_anagram('ab', 'abc')", False), ("is_anagram('', '')", True)]),
    _fn("longest_word", "strs", "strings", """
        def longest_word(s):
            best = ""
            for w in s.split():
                if len(w) > len(best):
                    best = w
            return best
        """, [("longest_word('a bbb cc')", "bbb"), ("longest_word('')", ""), ("longest_word('xy ab')", "xy"),
              ("longest_word('one three five')", "three")]),
    _fn("repeat_string", "strs", "strings", """
        def repeat_string(s, n, sep):
            parts = []
            for _ in range(n):
                parts.append(s)
            return sep.join(parts)
        """, [("repeat_string('ab', 3, '-')", "ab-ab-ab"), ("repeat_string('x', 0, ',')", ""),
              ("repeat_string('x', 1, ',')", "x"), ("repeat_string('hi', 2, ' ')", "hi hi")]),
    _fn("strip_prefix", "strs", "strings", """
        def strip_prefix(s, prefix):
            if s.startswith(prefix):
                return s[len(prefix):]
            return s
        """, [("strip_prefix('foobar', 'foo')", "bar"), ("strip_prefix('foobar', 'bar')", "foobar"),
              ("strip_prefix('abc', '')", "abc"), ("strip_prefix('ab', 'ab')", "")]),
    # --- lists --------------------------------------------------------------------------
    _fn("running_sum", "lists", "lists", """
        def running_sum(xs):
            total = 0
            out = []
            for x in xs:
                total += x
                out.append(total)
            return out
        """, [("running_sum([1, 2, 3])", [1, 3, 6]), ("running_sum([])", []), ("running_sum([5])", [5]),
              ("running_sum([2, -2, 4])", [2, 0, 4])]),
    _fn("max_index", "lists", "lists", """
        def max_index(xs):
            best = 0
            for i in range(1, len(xs)):
                if xs[i] > xs[best]:
                    best = i
            return best
        """, [("max_index([3, 9, 2])", 1), ("max_index([7])", 0), ("max_index([1, 2, 3, 4])", 3),
              ("max_index([5, 5, 1])", 0), ("max_index([4, 1, 8, 8])", 2)]),
    _fn("chunk", "lists", "lists", """
        def chunk(xs, size):
            out = []
            for i in range(0, len(xs), size):
                out.append(xs[i:i + size])
            return out
        """, [("chunk([1, 2, 3, 4, 5], 2)", [[1, 2], [3, 4], [5]]), ("chunk([], 3)", []),
              ("chunk([1, 2, 3], 3)", [[1, 2, 3]]), ("chunk([1, 2, 3], 1)", [[1], [2], [3]])]),
    _fn("dedupe", "lists", "lists", """
        def dedupe(xs):
            seen = set()
            out = []
            for x in xs:
                if x not in seen:
                    seen.add(x)
                    out.append(x)
            return out
        """, [("dedupe([1, 2, 1, 3, 2])", [1, 2, 3]), ("dedupe([])", []), ("dedupe([4, 4, 4])", [4]),
              ("dedupe([3, 1, 2])", [3, 1, 2])]),
    _fn("rotate_left", "lists", "lists", """
        def rotate_left(xs, k):
            if not xs:
                return []
            k = k % len(xs)
            return xs[k:] + xs[:k]
        """, [("rotate_left([1, 2, 3, 4], 1)", [2, 3, 4, 1]), ("rotate_left([], 3)", []),
              ("rotate_left([1, 2, 3], 3)", [1, 2, 3]), ("rotate_left([1, 2, 3], 5)", [3, 1, 2])]),
    _fn("pairwise_diff", "lists", "lists", """
        def pairwise_diff(xs):
            out = []
            for i in range(len(xs) - 1):
                out.append(xs[i + 1] - xs[i])
            return out
        """, [("pairwise_diff([1, 4, 9])", [3, 5]), ("pairwise_diff([5])", []), ("pairwise_diff([])", []),
              ("pairwise_diff([3, 1, 2, 2])", [-2, 1, 0])]),
    _fn("count_greater", "lists", "lists", """
        def count_greater(xs, limit):
            n = 0
            for x in xs:
                if x > limit:
                    n += 1
            return n
        """, [("count_greater([1, 5, 7], 4)", 2), ("count_greater([], 0)", 0), ("count_greater([3, 3, 4], 3)", 1),
              ("count_greater([1, 2], 5)", 0)]),
    _fn("last_index_of", "lists", "lists", """
        def last_index_of(xs, target):
            for i in range(len(xs) - 1, -1, -1):
                if xs[i] == target:
                    return i
            return -1
        """, [("last_index_of([1, 2, 1], 1)", 2), ("last_index_of([1, 2, 3], 4)", -1), ("last_index_of([7], 7)", 0),
              ("last_index_of([5, 6, 7], 5)", 0), ("last_index_of([], 1)", -1)]),
    _fn("merge_sorted", "lists", "lists", """
        def merge_sorted(a, b):
            i = 0
            j = 0
            out = []
            while i < len(a) and j < len(b):
                if a[i] <= b[j]:
                    out.append(a[i])
                    i += 1
                else:
                    out.append(b[j])
                    j += 1
            return out + a[i:] + b[j:]
        """, [("merge_sorted([1, 4], [2, 3])", [1, 2, 3, 4]), ("merge_sorted([], [1])", [1]),
              ("merge_sorted([1, 2], [])", [1, 2]), ("merge_sorted([1, 5, 9], [2, 6])", [1, 2, 5, 6, 9]),
              ("merge_sorted([3], [1, 2])", [1, 2, 3])]),
    _fn("take_while_positive", "lists", "lists", """
        def take_while_positive(xs):
            out = []
            for x in xs:
                if x <= 0:
                    break
                out.append(x)
            return out
        """, [("take_while_positive([3, 1, 0, 4])", [3, 1]), ("take_while_positive([])", []),
              ("take_while_positive([-1, 2])", []), ("take_while_positive([2, 5])", [2, 5])]),
    # --- math ---------------------------------------------------------------------------
    _fn("clamp", "nums", "math", """
        def clamp(x, lo, hi):
            if x < lo:
                return lo
            if x > hi:
                return hi
            return x
        """, [("clamp(5, 0, 3)", 3), ("clamp(-1, 0, 3)", 0), ("clamp(2, 0, 3)", 2), ("clamp(10, -5, 20)", 10),
              ("clamp(-9, -5, 20)", -5)]),
    _fn("factorial", "nums", "math", """
        def factorial(n):
            result = 1
            for k in range(2, n + 1):
                result *= k
            return result
        """, [("factorial(0)", 1), ("factorial(1)", 1), ("factorial(5)", 120), ("factorial(3)", 6)]),
    _fn("gcd", "nums", "math", """
        def gcd(a, b):
            while b != 0:
                a, b = b, a % b
            return a
        """, [("gcd(12, 18)", 6), ("gcd(7, 3)", 1), ("gcd(10, 0)", 10), ("gcd(0, 4)", 4), ("gcd(21, 14)", 7)]),
    _fn("is_prime", "nums", "math", """
        def is_prime(n):
            if n < 2:
                return False
            d = 2
            while d * d <= n:
                if n % d == 0:
                    return False
                d += 1
            return True
        """, [("is_prime(2)", True), ("is_prime(1)", False), ("is_prime(9)", False), ("is_prime(13)", True),
              ("is_prime(25)", False), ("is_prime(0)", False), ("is_prime(3)", True)]),
    _fn("sum_digits", "nums", "math", """
        def sum_digits(n):
            n = abs(n)
            total = 0
            while n > 0:
                total += n % 10
                n //= 10
            return total
        """, [("sum_digits(123)", 6), ("sum_digits(0)", 0), ("sum_digits(-45)", 9), ("sum_digits(9)", 9),
              ("sum_digits(1001)", 2)]),
    _fn("fibonacci", "nums", "math", """
        def fibonacci(n):
            a = 0
            b = 1
            for _ in range(n):
                a, b = b, a + b
            return a
        """, [("fibonacci(0)", 0), ("fibonacci(1)", 1), ("fibonacci(2)", 1), ("fibonacci(7)", 13),
              ("fibonacci(10)", 55)]),
    _fn("power", "nums", "math", """
        def power(base, exp):
            result = 1
            for _ in range(exp):
                result *= base
            return result
        """, [("power(2, 10)", 1024), ("power(5, 0)", 1), ("power(3, 1)", 3), ("power(-2, 3)", -8)]),
    _fn("mean", "nums", "math", """
        def mean(xs):
            if len(xs) == 0:
                return 0.0
            return sum(xs) / len(xs)
        """, [("mean([1, 2, 3, 4])", 2.5), ("mean([])", 0.0), ("mean([5])", 5.0), ("mean([2, 4])", 3.0)]),
    _fn("digits_to_int", "nums", "math", """
        def digits_to_int(digits):
            value = 0
            for d in digits:
                value = value * 10 + d
            return value
        """, [("digits_to_int([1, 2, 3])", 123), ("digits_to_int([])", 0), ("digits_to_int([0, 7])", 7),
              ("digits_to_int([9])", 9)]),
    _fn("sign", "nums", "math", """
        def sign(x):
            if x > 0:
                return 1
            if x < 0:
                return -1
            return 0
        """, [("sign(5)", 1), ("sign(-3)", -1), ("sign(0)", 0), ("sign(0.5)", 1)]),
    # --- parsing ------------------------------------------------------------------------
    _fn("parse_kv", "parsers", "parsing", """
        def parse_kv(s):
            out = {}
            for part in s.split(";"):
                if "=" not in part:
                    continue
                key, value = part.split("=", 1)
                out[key.strip()] = value.strip()
            return out
        """, [("parse_kv('a=1; b=2')", {"a": "1", "b": "2"}), ("parse_kv('')", {}),
              ("parse_kv('x=1=2')", {"x": "1=2"}), ("parse_kv('bad;k = v')", {"k": "v"})]),
    _fn("parse_int_list", "parsers", "parsing", """
        def parse_int_list(s):
            out = []
            for tok in s.split(","):
                tok = tok.strip()
                if tok:
                    out.append(int(tok))
            return out
        """, [("parse_int_list('1, 2,3')", [1, 2, 3]), ("parse_int_list('')", []),
              ("parse_int_list('5,,6')", [5, 6]), ("parse_int_list(' -4 ')", [-4])]),
    _fn("parse_duration", "parsers", "parsing", """
        def parse_duration(s):
            units = {"s": 1, "m": 60, "h": 3600}
            total = 0
            for part in s.split():
                total += int(part[:-1]) * units[part[-1]]
            return total
        """, [("parse_duration('1h 2m 3s')", 3723), ("parse_duration('')", 0), ("parse_duration('45s')", 45),
              ("parse_duration('2m')", 120)]),
    _fn("balanced_brackets", "parsers", "parsing", """
        def balanced_brackets(s):
            pairs = {")": "(", "]": "[", "}": "{"}
            stack = []
            for ch in s:
                if ch in "([{":
                    stack.append(ch)
                elif ch in pairs:
                    if not stack or stack.pop() != pairs[ch]:
                        return False
            return len(stack) == 0
        """, [("balanced_brackets('([]{})')", True), ("balanced_brackets('(]')", False),
              ("balanced_brackets('')", True), ("balanced_brackets('((')", False), ("balanced_brackets(')')", False),
              ("balanced_brackets('a(b)c')", True)]),
    _fn("split_path", "parsers", "parsing", """
        def split_path(path):
            parts = []
            for p in path.split("/"):
                if p == "" or p == ".":
                    continue
                parts.append(p)
            return parts
        """, [("split_path('/a/b/c')", ["a", "b", "c"]), ("split_path('a//b')", ["a", "b"]),
              ("split_path('./x/.')", ["x"]), ("split_path('')", [])]),
    _fn("parse_version", "parsers", "parsing", """
        def parse_version(s):
            parts = s.split(".")
            nums = [int(p) for p in parts]
            while len(nums) < 3:
                nums.append(0)
            return tuple(nums)
        """, [("parse_version('1.2.3')", (1, 2, 3)), ("parse_version('2')", (2, 0, 0)),
              ("parse_version('0.10')", (0, 10, 0))]),
    _fn("count_words", "parsers", "parsing", """
        def count_words(s):
            counts = {}
            for w in s.lower().split():
                counts[w] = counts.get(w, 0) + 1
            return counts
        """, [("count_words('a b A')", {"a": 2, "b": 1}), ("count_words('')", {}),
              ("count_words('x x x')", {"x": 3})]),
    _fn("rle_encode", "parsers", "parsing", """
        def rle_encode(s):
            out = []
            i = 0
            while i < len(s):
                j = i
                while j < len(s) and s[j] == s[i]:
                    j += 1
                out.append(s[i] + str(j - i))
                i = j
            return "".join(out)
        """, [("rle_encode('aaabcc')", "a3b1c2"), ("rle_encode('')", ""), ("rle_encode('x')", "x1"),
              ("rle_encode('abab')", "a1b1a1b1")]),
    # --- data structures ----------------------------------------------------------------
    _fn("binary_search", "ds", "data structures", """
        def binary_search(xs, target):
            lo = 0
            hi = len(xs) - 1
            while lo <= hi:
                mid = (lo + hi) // 2
                if xs[mid] == target:
                    return mid
                if xs[mid] < target:
                    lo = mid + 1
                else:
                    hi = mid - 1
            return -1
        """, [("binary_search([1, 3, 5, 7], 5)", 2), ("binary_search([1, 3, 5, 7], 4)", -1),
              ("binary_search([], 1)", -1), ("binary_search([2], 2)", 0), ("binary_search([1, 3, 5, 7], 1)", 0),
              ("binary_search([1, 3, 5, 7], 7)", 3)]),
    _fn("invert_dict", "ds", "data structures", """
        def invert_dict(d):
            out = {}
            for key, value in d.items():
                out[value] = key
            return out
        """, [("invert_dict({'a': 1, 'b': 2})", {1: "a", 2: "b"}), ("invert_dict({})", {}),
              ("invert_dict({'x': 'y'})", {"y": "x"})]),
    _fn("group_by_len", "ds", "data structures", """
        def group_by_len(words):
            groups = {}
            for w in words:
                groups.setdefault(len(w), []).append(w)
            return groups
        """, [("group_by_len(['a', 'bb', 'c'])", {1: ["a", "c"], 2: ["bb"]}), ("group_by_len([])", {}),
              ("group_by_len(['xyz'])", {3: ["xyz"]})]),
    _fn("flatten", "ds", "data structures", """
        def flatten(nested):
            out = []
            for item in nested:
                if isinstance(item, list):
                    out.extend(flatten(item))
                else:
                    out.append(item)
            return out
        """, [("flatten([1, [2, [3, 4]], 5])", [1, 2, 3, 4, 5]), ("flatten([])", []), ("flatten([[[]]])", []),
              ("flatten([[1], 2])", [1, 2])]),
    _fn("top_k", "ds", "data structures", """
        def top_k(counts, k):
            items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            return [key for key, _ in items[:k]]
        """, [("top_k({'a': 3, 'b': 5, 'c': 1}, 2)", ["b", "a"]), ("top_k({}, 3)", []),
              ("top_k({'x': 1, 'y': 1}, 1)", ["x"]), ("top_k({'a': 1, 'b': 2}, 5)", ["b", "a"])]),
    _fn("Stack", "ds", "data structures", """
        class Stack:
            def __init__(self):
                self.items = []

            def push(self, x):
                self.items.append(x)

            def pop(self):
                if len(self.items) == 0:
                    return None
                return self.items.pop()

            def size(self):
                return len(self.items)
        """, [("(lambda s: (s.push(1), s.push(2), s.pop(), s.size()))(Stack())[2:]", (2, 1)),
              ("Stack().pop()", None), ("Stack().size()", 0),
              ("(lambda s: (s.push('a'), s.pop(), s.pop()))(Stack())[1:]", ("a", None))]),
    _fn("Counter2", "ds", "data structures", """
        class Counter2:
            def __init__(self):
                self.counts = {}

            def add(self, key, n=1):
                self.counts[key] = self.counts.get(key, 0) + n

            def most_common(self):
                best = None
                for key in self.counts:
                    if best is None or self.counts[key] > self.counts[best]:
                        best = key
                return best
        """, [("(lambda c: (c.add('a'), c.add('b', 3), c.add('a'), c.most_common()))(Counter2())[3]", "b"),
              ("Counter2().most_common()", None),
              ("(lambda c: (c.add('x'), c.counts))(Counter2())[1]", {"x": 1}),
              ("(lambda c: (c.add('a', 2), c.add('b', 2), c.most_common()))(Counter2())[2]", "a")]),
    _fn("matrix_transpose", "ds", "data structures", """
        def matrix_transpose(m):
            if not m:
                return []
            rows = len(m)
            cols = len(m[0])
            return [[m[r][c] for r in range(rows)] for c in range(cols)]
        """, [("matrix_transpose([[1, 2], [3, 4]])", [[1, 3], [2, 4]]), ("matrix_transpose([])", []),
              ("matrix_transpose([[1, 2, 3]])", [[1], [2], [3]])]),
    _fn("window_max", "ds", "data structures", """
        def window_max(xs, k):
            out = []
            for i in range(len(xs) - k + 1):
                out.append(max(xs[i:i + k]))
            return out
        """, [("window_max([1, 3, 2, 5, 4], 2)", [3, 3, 5, 5]), ("window_max([1, 2], 3)", []),
              ("window_max([4, 1, 2], 3)", [4]), ("window_max([2, 1], 1)", [2, 1])]),
    _fn("histogram", "ds", "data structures", """
        def histogram(xs, num_bins, lo, hi):
            bins = [0] * num_bins
            width = (hi - lo) / num_bins
            for x in xs:
                if lo <= x < hi:
                    bins[int((x - lo) // width)] += 1
            return bins
        """, [("histogram([0, 1, 2, 3], 2, 0, 4)", [2, 2]), ("histogram([], 3, 0, 3)", [0, 0, 0]),
              ("histogram([4, -1, 0.5], 2, 0, 4)", [1, 0]), ("histogram([3.9, 2], 4, 0, 4)", [0, 0, 1, 1])]),
)


def by_name() -> dict[str, LibraryFunction]:
  return {f.name: f for f in LIBRARY}
