"""How every page writes a number: one filter, built in to every template (settings'
TEMPLATES `builtins`), so that a count, a quota or a duration reads the same on each.

    {{ units|grouped }}          12,345
    {{ duration_ms|grouped:1 }}  1,234.5

The events' summaries, written in Python, call the same function (phoneintel/formats.py).
"""

from django import template

from phoneintel.formats import grouped

register = template.Library()
register.filter("grouped", grouped)
