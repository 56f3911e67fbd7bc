import pytest

from tmplmini import Markup, Template, TemplateSyntaxError, render


class User:
  def __init__(self, name, friends=()):
    self.name = name
    self.friends = list(friends)
    self._secret = "hidden"


CONTEXT = {
    "name": "Ada",
    "user": {"name": "Grace", "langs": ["COBOL", "FLOW-MATIC"], "address": {"city": "Arlington"}},
    "obj": User("Linus", ["Ken", "Dennis"]),
    "items": ["apple", "pear", "fig"],
    "empty": [],
    "n": 3,
    "zero": 0,
    "nothing": None,
    "flag": True,
}

# (source, what it renders to with CONTEXT)
RENDER = [
    ("plain text", "plain text"),
    ("Hello {{ name }}!", "Hello Ada!"),
    ("{{ user.name }} in {{ user.address.city }}", "Grace in Arlington"),
    ("{{ user.langs.1 }}/{{ user.langs.0 }}", "FLOW-MATIC/COBOL"),
    ("{{ obj.name }} knows {{ obj.friends.1 }}", "Linus knows Dennis"),
    ("[{{ obj._secret }}][{{ missing }}][{{ user.missing.deeper }}][{{ items.9 }}]", "[][][][]"),
    ("{{ nothing }}|{{ zero }}|{{ n }}|{{ flag }}", "|0|3|True"),
    ("{{ 'literal' }} {{ \"double\" }} {{ 42 }}", "literal double 42"),
    ("{# a comment #}x{# another {{ not a tag }} #}y", "xy"),
    ("{% for x in items %}{{ x }},{% endfor %}", "apple,pear,fig,"),
    ("{% for x in items %}{{ loop.index }}{{ loop.index0 }}{{ loop.length }} {% endfor %}", "103 213 323 "),
    ("{% for x in items %}{% if loop.first %}[{% endif %}{{ x }}{% if loop.last %}]{% else %}+{% endif %}{% endfor %}",
     "[apple+pear+fig]"),
    ("{% for x in empty %}{{ x }}{% else %}nothing here{% endfor %}", "nothing here"),
    ("{% for x in missing %}{{ x }}{% else %}none{% endfor %}", "none"),
    ("{% for c in name %}{{ c }}.{% endfor %}", "A.d.a."),
    ("{% for x in items %}{% for y in user.langs %}{{ loop.index }}{% endfor %}{{ loop.index }};{% endfor %}",
     "121;122;123;"),
    ("{% for x in items %}{% endfor %}[{{ x }}][{{ loop.index }}]", "[][]"),
    ("{% for name in items %}{{ name }} {% endfor %}{{ name }}", "apple pear fig Ada"),
    ("{% if flag %}yes{% else %}no{% endif %}", "yes"),
    ("{% if nothing %}yes{% elif zero %}zero{% elif n %}n{% else %}no{% endif %}", "n"),
    ("{% if not empty %}empty{% endif %}{% if not items %}never{% endif %}", "empty"),
    ("{% if missing %}a{% elif user.missing %}b{% else %}c{% endif %}", "c"),
    ("{% if items|length %}{{ items|length }} items{% endif %}", "3 items"),
]


@pytest.mark.parametrize("source, expected", RENDER, ids=["render%d" % i for i in range(len(RENDER))])
def test_render(source, expected):
  assert render(source, CONTEXT) == expected
  assert Template(source).render(**CONTEXT) == expected


def test_result_is_plain_str():
  got = render("{{ x }}", x=Markup("<b>"))
  assert got == "<b>" and type(got) is str


def test_keywords_override_context():
  assert Template("{{ a }}{{ b }}").render({"a": 1, "b": 2}, b=3) == "13"


BAD = [
    "{{ x ",
    "text {% if x %}",
    "{% for x in xs %}{% endif %}",
    "{% if x %}{% endfor %}",
    "{% endif %}",
    "{% else %}",
    "{% for x xs %}{% endfor %}",
    "{% while x %}",
    "{{ x|nosuch }}",
    "{{ x|upper(1) }}",
    "{{ x|replace('a') }}",
    "{{ x|truncate }}",
    "{{ }}",
    "{{ 'unterminated }}",
    "{# never closed",
    "{% if x %}{% else %}{% else %}{% endif %}",
]


@pytest.mark.parametrize("source", BAD, ids=["bad%d" % i for i in range(len(BAD))])
def test_syntax_errors(source):
  with pytest.raises(TemplateSyntaxError):
    Template(source)
