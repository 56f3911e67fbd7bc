import pytest

from tmplmini import Markup, Template, escape, render

# (source, context, rendered with autoescape)
ESCAPED = [
    ("{{ x }}", {"x": "<b>&</b>"}, "&lt;b&gt;&amp;&lt;/b&gt;"),
    ("{{ x }}", {"x": 'say "hi"'}, "say &#34;hi&#34;"),
    ("{{ x }}", {"x": "it's"}, "it&#39;s"),
    ("<a title=\"{{ t }}\">{{ t }}</a>", {"t": "\"quoted\" & 'single'"},
     "<a title=\"&#34;quoted&#34; &amp; &#39;single&#39;\">&#34;quoted&#34; &amp; &#39;single&#39;</a>"),
    ("{{ x }}", {"x": Markup("<i>trusted</i>")}, "<i>trusted</i>"),
    ("{{ x|safe }}", {"x": "<i>\"raw\"</i>"}, "<i>\"raw\"</i>"),
    ("{{ x|escape }}", {"x": "<'>"}, "&lt;&#39;&gt;"),
    ("{{ x|e }}", {"x": "a&b"}, "a&amp;b"),
    ("{{ x|escape }}", {"x": Markup("<b>ok</b>")}, "<b>ok</b>"),
    ("{{ x|safe|escape }}", {"x": "<b>\"ok\"</b>"}, "<b>\"ok\"</b>"),
    ("{{ x|escape|escape }}", {"x": "<&>"}, "&lt;&amp;&gt;"),
    ("{{ x|e|e|e }}", {"x": "\"'"}, "&#34;&#39;"),
    ("{{ x|upper }}", {"x": "<b>"}, "&lt;B&gt;"),
    ("{{ x|safe|upper }}", {"x": "<b>"}, "&lt;B&gt;"),
    ("{{ x|escape|upper }}", {"x": "<b>"}, "&amp;LT;B&amp;GT;"),
    ("{{ x|replace('<', '[') }}", {"x": "<b>"}, "[b&gt;"),
    ("{{ xs|join(' & ') }}", {"xs": ["<a>", "'b'"]}, "&lt;a&gt; &amp; &#39;b&#39;"),
    ("{{ xs|join }}", {"xs": ["\"", "<"]}, "&#34;&lt;"),
    ("{{ n }}", {"n": 42}, "42"),
    ("{{ missing|default('<none>') }}", {}, "&lt;none&gt;"),
    ("{% for x in xs %}{{ x }}{% endfor %}", {"xs": ["<", Markup("<"), "'"]}, "&lt;<&#39;"),
    ("{{ 'a<b' }}", {}, "a&lt;b"),
]


@pytest.mark.parametrize("source, context, expected", ESCAPED, ids=["esc%d" % i for i in range(len(ESCAPED))])
def test_autoescape(source, context, expected):
  assert render(source, context) == expected


# (source, context, rendered without autoescape)
RAW = [
    ("{{ x }}", {"x": "<b>&'\"</b>"}, "<b>&'\"</b>"),
    ("{{ x|escape }}", {"x": "<b>&'\"</b>"}, "&lt;b&gt;&amp;&#39;&#34;&lt;/b&gt;"),
    ("{{ x|escape|escape }}", {"x": "'"}, "&#39;"),
    ("{{ x|safe|escape }}", {"x": "'"}, "'"),
    ("{{ xs|join(' & ') }}", {"xs": ["<a>", "b"]}, "<a> & b"),
    ("{{ x|upper }}", {"x": "it's"}, "IT'S"),
]


@pytest.mark.parametrize("source, context, expected", RAW, ids=["raw%d" % i for i in range(len(RAW))])
def test_no_autoescape(source, context, expected):
  assert Template(source, autoescape=False).render(context) == expected
  assert render(source, context, autoescape=False) == expected


def test_escape_function():
  assert escape("<'\"&>") == "&lt;&#39;&#34;&amp;&gt;"
  assert isinstance(escape("x"), Markup)
  assert escape(Markup("<b>")) == "<b>"
  assert escape(escape("&")) == "&amp;"
  assert escape(7) == "7"
