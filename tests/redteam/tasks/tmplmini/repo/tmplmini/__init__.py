"""A small text template engine: {{ variables }} with dotted lookup and filters, {% for %} and
{% if %} blocks, {# comments #}, HTML autoescaping and whitespace control."""

from tmplmini.filters import FILTERS
from tmplmini.markup import Markup, escape
from tmplmini.parser import TemplateSyntaxError
from tmplmini.template import Template, render

__all__ = ["FILTERS", "Markup", "Template", "TemplateSyntaxError", "escape", "render"]
