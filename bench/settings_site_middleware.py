"""The bench's settings with every request through the site's middleware, as before /v1/
skipped it: the `account-all-mw` scenario measures what skipping saves."""

from bench.settings import *  # noqa: F403
from bench.settings import MIDDLEWARE as _MIDDLEWARE
from bench.settings import SITE_MIDDLEWARE as _SITE_MIDDLEWARE

_AT = _MIDDLEWARE.index("phoneintel.middleware.SiteMiddleware")
MIDDLEWARE = [*_MIDDLEWARE[:_AT], *_SITE_MIDDLEWARE, *_MIDDLEWARE[_AT + 1 :]]
