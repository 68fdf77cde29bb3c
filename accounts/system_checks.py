"""System checks: the rate format a key may be saved with is the one the throttle counts.

`accounts.rates` holds the format; these say at startup when something stops using it: a
validator or check constraint on `ApiKey.rate_limit` with a pattern of its own, or a rate
setting the throttle cannot parse.
"""

from django.conf import settings
from django.core.checks import Error, register
from django.core.validators import RegexValidator
from django.db.models import CheckConstraint

RATE_FORMAT = "accounts.E001"
RATE_SETTING = "accounts.E002"


@register()
def rate_limit_format_is_shared(app_configs=None, **kwargs) -> list:
    from accounts.models import ApiKey
    from accounts.rates import RATE_RE

    field = ApiKey._meta.get_field("rate_limit")
    patterns = {
        f"validator {validator.regex.pattern!r}": validator.regex.pattern
        for validator in field.validators
        if isinstance(validator, RegexValidator)
    }
    for constraint in ApiKey._meta.constraints:
        if isinstance(constraint, CheckConstraint):
            for child in constraint.condition.children:
                lookup, value = child if isinstance(child, tuple) else ("", None)
                if lookup.startswith("rate_limit"):
                    patterns[f"check constraint {constraint.name!r}"] = (
                        value if lookup == "rate_limit__regex" else None
                    )
    errors = [
        Error(
            f"ApiKey.rate_limit's {where} is not accounts.rates.RATE_RE, the format the"
            " throttle parses: a rate one accepts, the other may refuse.",
            hint="Use accounts.rates.RATE_RE (and migrate the constraint).",
            obj=field,
            id=RATE_FORMAT,
        )
        for where, pattern in patterns.items()
        if pattern != RATE_RE
    ]
    if not any(where.startswith("validator") for where in patterns):
        errors.append(
            Error(
                "ApiKey.rate_limit has no validator with accounts.rates.RATE_RE.",
                obj=field,
                id=RATE_FORMAT,
            )
        )
    return errors + _rate_settings_errors()


def _rate_settings_errors() -> list:
    from accounts.rates import RATE_HELP, parse_rate

    errors = []
    for name in ("API_DEFAULT_RATE_LIMIT", "API_AUTH_FAILURE_RATE"):
        try:
            parse_rate(getattr(settings, name))
        except ValueError:
            errors.append(
                Error(
                    f"settings.{name} is {getattr(settings, name)!r}, not a rate ({RATE_HELP}).",
                    id=RATE_SETTING,
                )
            )
    return errors
