import pytest

from tmplmini import Template, render

CONTEXT = {
    "name": "  Ada Lovelace  ",
    "title": "the analytical engine",
    "csv": "a,b,,c",
    "words": ["alpha", "beta", "gamma"],
    "nums": [3, 1, 4],
    "empty": [],
    "nothing": None,
}

# (source, what it renders to with CONTEXT, autoescape off)
FILTERED = [
    ("{{ name|trim }}", "Ada Lovelace"),
    ("{{ name|trim|upper }}", "ADA LOVELACE"),
    ("{{ name|lower|trim }}", "ada lovelace"),
    ("{{ title|capitalize }}", "The analytical engine"),
    ("{{ words|length }}/{{ empty|length }}/{{ missing|length }}/{{ title|length }}", "3/0/0/21"),
    ("{{ words|first }}-{{ words|last }}-{{ nums|first }}", "alpha-gamma-3"),
    ("[{{ empty|first }}]", "[]"),
    ("{{ words|join }}", "alphabetagamma"),
    ("{{ words|join('-') }}", "alpha-beta-gamma"),
    ("{{ words|join(\", \") }}", "alpha, beta, gamma"),
    ("{{ nums|join(\",\") }}", "3,1,4"),
    ("{{ words|join(\" , \")|upper }}", "ALPHA , BETA , GAMMA"),
    ("{{ csv|replace(\",\", \";\") }}", "a;b;;c"),
    ("{{ csv|replace(\",,\", \", \") }}", "a,b, c"),
    ("{{ title|replace('a', 'A') }}", "the AnAlyticAl engine"),
    ("{{ title|replace(\"engine\", \"engine, mill and store\") }}", "the analytical engine, mill and store"),
    ("{{ title|truncate(12) }}", "the analytic..."),
    ("{{ title|truncate(7, '~') }}", "the ana~"),
    ("{{ title|truncate(7, \", etc.\") }}", "the ana, etc."),
    ("{{ title|truncate(40) }}", "the analytical engine"),
    ("{{ missing|default('n/a') }}", "n/a"),
    ("{{ nothing|default(\"none, really\") }}", "none, really"),
    ("{{ missing|default(\"a|b\") }}", "a|b"),
    ("{{ title|default('unused') }}", "the analytical engine"),
    ("{{ missing|default(5) }}", "5"),
    ("{{ missing|default }}", ""),
    ("{{ words|join(\", \")|truncate(10, \", ...\") }}", "alpha, bet, ..."),
    ("{{ 'x,y'|replace(\",\", \"\") }}", "xy"),
    ("{% for w in words|join(\", \")|upper|replace(\", \", \",\")|replace(\",\", \" \") %}{{ w }}{% endfor %}",
     "ALPHA BETA GAMMA"),
    ("{{ words | join( \", \" ) }}", "alpha, beta, gamma"),
]


@pytest.mark.parametrize("source, expected", FILTERED, ids=["filter%d" % i for i in range(len(FILTERED))])
def test_filters(source, expected):
  assert render(source, CONTEXT, autoescape=False) == expected


def test_filter_arguments_with_autoescape():
  assert render("{{ words|join(\", \") }}", CONTEXT) == "alpha, beta, gamma"
  assert render("{{ words|join(\" <, \") }}", CONTEXT) == "alpha &lt;, beta &lt;, gamma"
  assert render("{{ nothing|default(\"it's, \") }}", CONTEXT) == "it&#39;s, "


def test_filters_run_at_render_time():
  template = Template("{{ xs|join(\", \") }}", autoescape=False)
  assert template.render(xs=[1, 2]) == "1, 2"
  assert template.render(xs="ab") == "a, b"
