"""How every page writes a number: one filter, built in to every template (settings'
TEMPLATES `builtins`), so that a count, a quota or a duration reads the same on each.

    {{ units|grouped }}          12,345
    {{ duration_ms|grouped:1 }}  1,234.5
"""

from django import template

register = template.Library()


@register.filter
def grouped(value, decimals=0):
    """Thousands grouped by commas, `decimals` places after the point; anything that is not
    a number is shown as it is (an empty cell stays empty)."""
    places = int(decimals)
    try:
        number = float(value) if places else int(value)
    except (TypeError, ValueError):
        return value
    return f"{number:,.{places}f}"
