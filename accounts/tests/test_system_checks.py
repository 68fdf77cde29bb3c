"""One rate format for a key's rate limit: what the model, the database and the apikey
command accept is what the throttle parses; a system check reports any drift."""

import pytest
from django.core.checks import run_checks
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import IntegrityError, transaction

from accounts.models import ApiKey
from accounts.rates import parse_rate
from accounts.system_checks import RATE_FORMAT, RATE_SETTING

pytestmark = pytest.mark.django_db

RATES = {
    "600/m": (600, 60),
    "1/s": (1, 1),
    "9999999/h": (9999999, 3600),
    "10/d": None,  # days: no
    "5/5m": None,  # multipliers: no
    "0/m": None,
    "010/m": None,
    "10000000/h": None,
    "600/M": None,
    "600/m ": None,
    "600/m\n": None,
    "600": None,
    "lots": None,
}


def errors() -> list[str]:
    return [message.id for message in run_checks() if message.id.startswith("accounts.")]


@pytest.mark.parametrize(("rate", "parsed"), list(RATES.items()))
def test_the_model_the_database_and_the_throttle_accept_the_same_rates(make_key, rate, parsed):
    key, _ = make_key()
    key.rate_limit = rate
    try:
        key.full_clean()
        model = True
    except ValidationError:
        model = False
    try:
        with transaction.atomic():
            ApiKey.objects.filter(pk=key.pk).update(rate_limit=rate)
        database = True
    except IntegrityError:
        database = False
    try:
        throttle = parse_rate(rate)
    except ValueError:
        throttle = None
    assert (throttle, database) == (parsed, parsed is not None)
    # A stored rate is stripped of surrounding whitespace by the admin's form first.
    assert model == (parsed is not None) or rate != rate.strip()


def test_the_shared_format_passes_the_check():
    assert errors() == []


def test_a_validator_with_a_format_of_its_own_is_an_error(monkeypatch):
    field = ApiKey._meta.get_field("rate_limit")
    # A model that would accept `10/d`, which the throttle cannot count.
    monkeypatch.setattr(field, "validators", [RegexValidator(r"^[1-9][0-9]*/(s|m|h|d)$")])
    assert errors() == [RATE_FORMAT]


def test_a_constraint_with_a_format_of_its_own_is_an_error(monkeypatch):
    [constraint] = [c for c in ApiKey._meta.constraints if c.name == "api_key_rate_limit_format"]
    monkeypatch.setattr(constraint.condition, "children", [("rate_limit__regex", r"^\d+/\w$")])
    assert errors() == [RATE_FORMAT]


@pytest.mark.parametrize("name", ["API_DEFAULT_RATE_LIMIT", "API_AUTH_FAILURE_RATE"])
def test_a_rate_setting_the_throttle_cannot_parse_is_an_error(settings, name):
    setattr(settings, name, "30/5m")
    assert errors() == [RATE_SETTING]
