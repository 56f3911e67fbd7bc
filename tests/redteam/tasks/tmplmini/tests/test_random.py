import html
import random
import re

import pytest

from tmplmini import Markup, Template

# -- a slow reference renderer ---------------------------------------------------------------

MISSING = object()
CLOSERS = {"{{": "}}", "{%": "%}", "{#": "#}"}
KINDS = {"{{": "var", "{%": "block", "{#": "comment"}


def reference_escape(text):
  return html.escape(text, quote=True).replace("&quot;", "&#34;").replace("&#x27;", "&#39;")


def reference_text(value):
  return "" if value is None or value is MISSING else str(value)


def reference_tokens(source):
  """[kind, body, strip_before, strip_after] with text tokens between all tags, whitespace
  control applied to the neighbouring text afterwards."""
  tokens, i = [], 0
  while True:
    starts = [k for k in (source.find(o, i) for o in CLOSERS) if k >= 0]
    if not starts:
      tokens.append(["text", source[i:], False, False])
      break
    j = min(starts)
    tokens.append(["text", source[i:j], False, False])
    opener = source[j:j + 2]
    k = source.find(CLOSERS[opener], j + 2)
    body = source[j + 2:k]
    before = body.startswith("-")
    body = body[1:] if before else body
    after = body.endswith("-")
    body = body[:-1] if after else body
    tokens.append([KINDS[opener], body.strip(), before, after])
    i = k + 2
  for n, token in enumerate(tokens):
    if token[0] != "text":
      if token[2]:
        tokens[n - 1][1] = tokens[n - 1][1].rstrip()
      if token[3]:
        tokens[n + 1][1] = tokens[n + 1][1].lstrip()
  return [t for t in tokens if t[0] != "comment" and not (t[0] == "text" and not t[1])]


def reference_split(text, separator):
  pieces = re.findall(r"""'[^']*'|"[^"]*"|[^'"%s]+|%s""" % (re.escape(separator), re.escape(separator)), text)
  groups, current = [], ""
  for piece in pieces:
    if piece == separator:
      groups.append(current)
      current = ""
    else:
      current += piece
  return groups + [current]


def reference_literal(text):
  text = text.strip()
  return text[1:-1] if text[:1] in "'\"" else int(text)


def reference_lookup(path, scopes):
  head, *rest = path.split(".")
  for scope in reversed(scopes):
    if head in scope:
      value = scope[head]
      break
  else:
    return MISSING
  for part in rest:
    if value is None or value is MISSING:
      return MISSING
    if isinstance(value, dict):
      value = value.get(part, MISSING)
    elif part.isdigit():
      ok = isinstance(value, (list, tuple, str)) and int(part) < len(value)
      value = value[int(part)] if ok else MISSING
    else:
      value = MISSING if part.startswith("_") else getattr(value, part, MISSING)
  return value


def keep_or_escape(value):
  return str(value) if isinstance(value, Markup) else reference_escape(reference_text(value))


def reference_filter(name, value, args, autoescape):
  text = reference_text(value)
  items = [] if value is None or value is MISSING else list(value) if name in ("join", "first", "last") else None
  if name == "upper":
    return text.upper()
  if name == "lower":
    return text.lower()
  if name == "capitalize":
    return text.capitalize()
  if name == "trim":
    return text.strip()
  if name == "length":
    return 0 if value is None or value is MISSING else len(value)
  if name == "default":
    return (args[0] if args else "") if value is None or value is MISSING else value
  if name == "join":
    separator = args[0] if args else ""
    if autoescape:
      return Markup(keep_or_escape(separator).join(keep_or_escape(item) for item in items))
    return separator.join(reference_text(item) for item in items)
  if name == "replace":
    return text.replace(str(args[0]), str(args[1]))
  if name == "truncate":
    return text if len(text) <= args[0] else text[:args[0]] + (args[1] if len(args) > 1 else "...")
  if name == "first":
    return items[0] if items else MISSING
  if name == "last":
    return items[-1] if items else MISSING
  if name in ("escape", "e"):
    return value if isinstance(value, Markup) else Markup(reference_escape(text))
  if name == "safe":
    return value if isinstance(value, Markup) else Markup(text)
  raise AssertionError(name)


def reference_eval(expr, scopes, autoescape):
  parts = reference_split(expr, "|")
  base = parts[0].strip()
  if base[:1] in "'\"" or re.fullmatch(r"-?[0-9]+", base):
    value = reference_literal(base)
  else:
    value = reference_lookup(base, scopes)
  for part in parts[1:]:
    m = re.fullmatch(r"(\w+)\s*(?:\((.*)\))?", part.strip(), re.S)
    args = [reference_literal(a) for a in reference_split(m.group(2), ",")] if m.group(2) else []
    value = reference_filter(m.group(1), value, args, autoescape)
  return value


def reference_tree(tokens):
  root = {"type": "root", "body": []}
  stack = [root]

  def current():
    node = stack[-1]
    if node["type"] == "if":
      return node["else"] if node["at"] == "else" else node["branches"][node["at"]][1]
    if node["type"] == "for":
      return node["else"] if node["at"] == "else" else node["body"]
    return node["body"]

  for kind, body, _, _ in tokens:
    if kind != "block":
      current().append((kind, body))
      continue
    word = body.split()[0]
    if word == "for":
      name, expr = re.fullmatch(r"for\s+(\w+)\s+in\s+(.+)", body, re.S).groups()
      node = {"type": "for", "name": name, "expr": expr, "body": [], "else": [], "at": "body"}
      current().append(("node", node))
      stack.append(node)
    elif word == "if":
      node = {"type": "if", "branches": [[body[2:].strip(), []]], "else": [], "at": 0}
      current().append(("node", node))
      stack.append(node)
    elif word == "elif":
      stack[-1]["branches"].append([body[4:].strip(), []])
      stack[-1]["at"] = len(stack[-1]["branches"]) - 1
    elif word == "else":
      stack[-1]["at"] = "else"
    else:
      stack.pop()
  return root["body"]


def reference_truth(cond, scopes, autoescape):
  negate = cond.startswith("not ")
  value = reference_eval(cond[4:] if negate else cond, scopes, autoescape)
  return (value is not MISSING and bool(value)) != negate


def reference_run(nodes, scopes, autoescape, out):
  for kind, item in nodes:
    if kind == "text":
      out.append(item)
    elif kind == "var":
      value = reference_eval(item, scopes, autoescape)
      text = str(value) if isinstance(value, Markup) else reference_text(value)
      out.append(reference_escape(text) if autoescape and not isinstance(value, Markup) else text)
    elif item["type"] == "for":
      value = reference_eval(item["expr"], scopes, autoescape)
      seq = [] if value is None or value is MISSING else list(value)
      if not seq:
        reference_run(item["else"], scopes, autoescape, out)
      for i, element in enumerate(seq):
        loop = {"index": i + 1, "index0": i, "first": i == 0, "last": i == len(seq) - 1, "length": len(seq)}
        reference_run(item["body"], scopes + [{item["name"]: element, "loop": loop}], autoescape, out)
    else:
      for cond, body in item["branches"]:
        if reference_truth(cond, scopes, autoescape):
          reference_run(body, scopes, autoescape, out)
          break
      else:
        reference_run(item["else"], scopes, autoescape, out)


def reference_render(source, context, autoescape=True):
  out = []
  reference_run(reference_tree(reference_tokens(source)), [dict(context)], autoescape, out)
  return "".join(out)


# -- seeded templates ------------------------------------------------------------------------

CHARS = ["a", "b", "Z", " ", "<", ">", "&", '"', "'", ",", ";", "|", "\u00e9", "x y", "\n", "-"]
TEXTS = ["", " ", "  ", "\n", "\n  ", "  \n", "\t", " \n\t", "text", "<p>", "a&b", "'", '"', ",", "|", "}", "%", "#"]
SCALARS = ["name", "title", "n", "flag", "nothing", "user.name", "user.age", "user.tags.0", "items.1", "nums.0",
           "missing", "user.nope", "trusted", "user.tags.9"]
SEQUENCES = ["items", "nums", "user.tags", "empty", "name", "missing", "trusted"]
TEXT_FILTERS = ["upper", "lower", "trim", "capitalize", "escape", "e", "safe", 'replace(",", ";")', "replace('a', 'b')",
                'replace("<", ", ")', 'replace(", ", "")', "truncate(3)", 'truncate(4, ", ...")', "truncate(2, '~')",
                'default("n/a, none")', "default('-')", "default"]
SEQUENCE_FILTERS = ['join(", ")', "join('-')", 'join(" | ")', 'join(",")', "join", "first", "last", "length"]


def random_string(rng, most):
  return "".join(rng.choice(CHARS) for _ in range(rng.randint(0, most)))


def random_context(rng):
  return {"name": random_string(rng, 6), "title": random_string(rng, 10), "n": rng.randint(-5, 99),
          "flag": rng.random() < 0.5, "nothing": None, "empty": [],
          "user": {"name": random_string(rng, 5), "age": rng.randint(0, 90),
                   "tags": [random_string(rng, 3) for _ in range(rng.randint(0, 3))]},
          "items": [random_string(rng, 4) for _ in range(rng.randint(0, 4))],
          "nums": [rng.randint(0, 20) for _ in range(rng.randint(0, 3))],
          "trusted": Markup(rng.choice(["<b>", "<i>x</i>", "&amp;", "'q'", '"dq"', "a, b"]))}


def random_expression(rng, names):
  r = rng.random()
  if r < 0.08:
    return rng.choice(['"a, b"', "'<x>'", "7", '"|"'])
  if r < 0.5:
    expr = rng.choice(SCALARS + names)
    filters = [rng.choice(TEXT_FILTERS) for _ in range(rng.randint(0, 2))]
  else:
    expr = rng.choice(SEQUENCES)
    filters = [rng.choice(SEQUENCE_FILTERS)] + [rng.choice(TEXT_FILTERS) for _ in range(rng.randint(0, 1))]
  spaces = rng.choice(["", " "])
  return (spaces + "|" + spaces).join([expr] + filters)


def tag(rng, opener, body):
  left = "-" if rng.random() < 0.3 else ""
  right = "-" if rng.random() < 0.3 else ""
  return "%s%s %s %s%s" % (opener, left, body, right, CLOSERS[opener])


def random_condition(rng, names):
  expr = rng.choice(SCALARS + SEQUENCES + names + (["loop.first", "loop.last"] if names else []))
  return ("not " if rng.random() < 0.3 else "") + expr


def random_nodes(rng, depth, names):
  parts = []
  for _ in range(rng.randint(1, 4)):
    r = rng.random()
    if r < 0.35:
      parts.append(rng.choice(TEXTS))
    elif r < 0.7:
      parts.append(tag(rng, "{{", random_expression(rng, names)))
    elif r < 0.8 and depth:
      var = rng.choice(["x", "item"])
      inner = names + [var, "loop.index", "loop.index0", "loop.length"]
      parts.append(tag(rng, "{%", "for %s in %s" % (var, rng.choice(SEQUENCES))))
      parts.append(random_nodes(rng, depth - 1, inner))
      if rng.random() < 0.3:
        parts.append(tag(rng, "{%", "else"))
        parts.append(random_nodes(rng, depth - 1, names))
      parts.append(tag(rng, "{%", "endfor"))
    elif r < 0.9 and depth:
      parts.append(tag(rng, "{%", "if " + random_condition(rng, names)))
      parts.append(random_nodes(rng, depth - 1, names))
      if rng.random() < 0.3:
        parts.append(tag(rng, "{%", "elif " + random_condition(rng, names)))
        parts.append(random_nodes(rng, depth - 1, names))
      if rng.random() < 0.4:
        parts.append(tag(rng, "{%", "else"))
        parts.append(random_nodes(rng, depth - 1, names))
      parts.append(tag(rng, "{%", "endif"))
    else:
      parts.append(tag(rng, "{#", rng.choice(["note", "a, b", "x|y"])))
  return "".join(parts)


@pytest.mark.parametrize("seed", range(8))
def test_random_templates(seed):
  rng = random.Random(31000 + seed)
  for _ in range(120):
    source = random_nodes(rng, 2, [])
    context = random_context(rng)
    for autoescape in (True, False):
      want = reference_render(source, context, autoescape)
      assert Template(source, autoescape=autoescape).render(context) == want, (source, context, autoescape)


def test_reference_agrees_with_known_examples():
  assert reference_render("{{ xs|join(\", \") }}", {"xs": ["<", "b"]}) == "&lt;, b"
  assert reference_render("{% for x in xs -%}\n {{ x }}\n{%- endfor %}", {"xs": "ab"}) == "ab"
  assert reference_render("{{ m|escape }}", {"m": Markup("<b>")}) == "<b>"
