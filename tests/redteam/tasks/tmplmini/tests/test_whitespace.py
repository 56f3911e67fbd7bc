import pytest

from tmplmini import render

# (source, context, what it renders to)
WHITESPACE = [
    ("a {{- x }} b", {"x": 1}, "a1 b"),
    ("a {{ x -}} b", {"x": 1}, "a 1b"),
    ("a \t {{- x -}} \t b", {"x": 1}, "a1b"),
    ("<ul>\n  {% for x in xs -%}\n  <li>{{ x }}</li>\n  {% endfor -%}\n</ul>", {"xs": [1, 2]},
     "<ul>\n  <li>1</li>\n  <li>2</li>\n  </ul>"),
    ("<ul>\n  {%- for x in xs %}\n  <li>{{ x }}</li>\n  {%- endfor %}\n</ul>", {"xs": [1, 2]},
     "<ul>\n  <li>1</li>\n  <li>2</li>\n</ul>"),
    ("{% for x in xs -%}\n    {{ x }}\n{%- endfor %}", {"xs": "abc"}, "abc"),
    ("{% if flag -%}\n  yes\n{%- else -%}\n  no\n{%- endif %}", {"flag": True}, "yes"),
    ("{% if flag -%}\n  yes\n{%- else -%}\n  no\n{%- endif %}", {"flag": False}, "no"),
    ("x\n{#- comment -#}\ny", {}, "xy"),
    ("x {# comment -#}\n   y", {}, "x y"),
    ("{{ a -}}\n\t {{ b }}", {"a": 1, "b": 2}, "12"),
    ("{{ a -}}   \n", {"a": 1}, "1"),
    ("{{ a }} \n{{- b }}", {"a": 1, "b": 2}, "12"),
    ("{% for x in xs %}\n{{- x -}}\n{% endfor %}", {"xs": [1, 2, 3]}, "123"),
    ("{% for x in xs -%}\n  {{ x }}{% if not loop.last %},{% endif %}\n{% endfor %}", {"xs": [1, 2]}, "1,\n2\n"),
    ("a {{- ' ' -}} b", {}, "a b"),
    ("a{{- '' -}}\n  ", {}, "a"),
    ("{%- if 1 -%}  \t\n  x  \n {%- endif -%}", {}, "x"),
]


@pytest.mark.parametrize("source, context, expected", WHITESPACE, ids=["ws%d" % i for i in range(len(WHITESPACE))])
def test_whitespace_control(source, context, expected):
  assert render(source, context) == expected
