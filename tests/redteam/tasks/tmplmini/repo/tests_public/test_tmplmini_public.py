import pytest

from tmplmini import Markup, Template, TemplateSyntaxError, render


def test_variables_and_lookup():
  assert render("Hi {{ user.name }}!", {"user": {"name": "Ada"}}) == "Hi Ada!"
  assert render("{{ items.1 }}", items=["a", "b"]) == "b"
  assert render("[{{ missing }}]") == "[]"


def test_filters():
  assert render("{{ name|upper }}", name="ada") == "ADA"
  assert render("{{ name|default('anonymous') }}") == "anonymous"
  assert render("{{ words|join('-') }}", words=["a", "b", "c"]) == "a-b-c"


def test_loops_and_conditions():
  source = "{% for x in xs %}{{ loop.index }}={{ x }}{% if not loop.last %};{% endif %}{% endfor %}"
  assert render(source, xs=["a", "b"]) == "1=a;2=b"
  assert render("{% for x in xs %}{{ x }}{% else %}none{% endfor %}", xs=[]) == "none"


def test_escaping():
  assert render("{{ x }}", x="<b>") == "&lt;b&gt;"
  assert render("{{ x }}", x=Markup("<b>")) == "<b>"
  assert Template("{{ x }}", autoescape=False).render(x="<b>") == "<b>"


def test_whitespace_control_on_one_line():
  assert render("a  {{- x -}}  b", x="!") == "a!b"


def test_syntax_errors():
  with pytest.raises(TemplateSyntaxError):
    Template("{{ x ")
  with pytest.raises(TemplateSyntaxError):
    Template("{% for x in xs %}")
  with pytest.raises(TemplateSyntaxError):
    Template("{{ x|nosuchfilter }}")
