"""Templates: parsed once, rendered with a context of names."""

from collections.abc import Mapping

from tmplmini.filters import FILTERS
from tmplmini.lexer import tokenize
from tmplmini.markup import Markup, escape
from tmplmini.parser import For, If, Output, Text, parse
from tmplmini.runtime import UNDEFINED, Loop, is_missing, text_of


def get_item(value, part):
  """One step of a dotted lookup: a mapping's key, a sequence's index, or an attribute."""
  if is_missing(value):
    return UNDEFINED
  if isinstance(value, Mapping):
    return value[part] if part in value else UNDEFINED
  if part.isdigit():
    if isinstance(value, (list, tuple, str)):
      index = int(part)
      return value[index] if index < len(value) else UNDEFINED
    return UNDEFINED
  if part.startswith("_"):
    return UNDEFINED
  return getattr(value, part, UNDEFINED)


class Template:
  """A template's source, parsed. `autoescape` (on by default) HTML-escapes every {{ }} output
  that is not Markup."""

  def __init__(self, source, autoescape=True):
    if not isinstance(source, str):
      raise TypeError(f"a template's source is a str, not {type(source).__name__}")
    self.source = source
    self.autoescape = bool(autoescape)
    self._nodes = parse(tokenize(source))

  def render(self, context=None, **names):
    """The rendered text (a plain str). Names come from `context` (a mapping) and keywords."""
    scope = dict(context or {})
    scope.update(names)
    out = []
    self._render(self._nodes, [scope], out)
    return "".join(out)

  def _lookup(self, scopes, path):
    for scope in reversed(scopes):
      if path[0] in scope:
        value = scope[path[0]]
        break
    else:
      return UNDEFINED
    for part in path[1:]:
      value = get_item(value, part)
    return value

  def _eval(self, expr, scopes):
    value = self._lookup(scopes, expr.path) if expr.path is not None else expr.literal
    for name, args in expr.filters:
      value = FILTERS[name][0](self, value, *args)
    return value

  def _test(self, cond, scopes):
    return bool(self._eval(cond.expr, scopes)) != cond.negate

  def _output(self, value):
    if isinstance(value, Markup):
      return str(value)
    text = text_of(value)
    return str(escape(text)) if self.autoescape else text

  def _render(self, nodes, scopes, out):
    for node in nodes:
      if isinstance(node, Text):
        out.append(node.text)
      elif isinstance(node, Output):
        out.append(self._output(self._eval(node.expr, scopes)))
      elif isinstance(node, For):
        value = self._eval(node.expr, scopes)
        items = [] if is_missing(value) else list(value)
        if not items:
          self._render(node.else_body, scopes, out)
        for index, item in enumerate(items):
          scopes.append({node.name: item, "loop": Loop(index, len(items))})
          self._render(node.body, scopes, out)
          scopes.pop()
      elif isinstance(node, If):
        for cond, body in node.branches:
          if self._test(cond, scopes):
            self._render(body, scopes, out)
            break
        else:
          self._render(node.else_body, scopes, out)


def render(source, context=None, autoescape=True, **names):
  """Template(source, autoescape).render(context, **names)."""
  return Template(source, autoescape=autoescape).render(context, **names)
