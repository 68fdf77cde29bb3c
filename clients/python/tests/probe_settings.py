"""A gunicorn of the project that also serves the test probes: `/v1/probe/fail` is a 500."""

from phoneintel.settings import *  # noqa: F403

ROOT_URLCONF = "phoneintel.tests.urls"
