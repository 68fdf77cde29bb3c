"""Settings, all from the environment (see .env.example).

Every process runs on PostgreSQL and Redis, as production does. `make run` starts a
PostgreSQL and a Valkey of its own for whichever URL is unset (scripts/run.py) and, while it
runs, writes their URLs to .dev-services/env, which a second shell's `manage.py` reads here.
With DEBUG off, DATABASE_URL and REDIS_URL are required; with DEBUG on and neither set
anywhere, they are the machine's own services at their usual addresses, so that commands
needing no database (`makemigrations --check`) run on a fresh clone. Production sets both,
plus SECRET_KEY and API_KEY_SECRET.
"""

import ipaddress
from pathlib import Path

import environ
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DEBUG", default=False)
if DEBUG:
    environ.Env.read_env(BASE_DIR / ".dev-services" / "env", overwrite=False)

if DEBUG:
    _dev_secret = "dev-only-not-secret-" + "x" * 40
    SECRET_KEY = env.str("SECRET_KEY", default=_dev_secret)
    API_KEY_SECRET = env.str("API_KEY_SECRET", default=_dev_secret)
    EXPOSURE_HASH_SECRET = env.str("EXPOSURE_HASH_SECRET", default=_dev_secret)
else:
    # No fallback: a production process must never run on a known secret.
    SECRET_KEY = env.str("SECRET_KEY")
    API_KEY_SECRET = env.str("API_KEY_SECRET")
    # Exposure data is stored as HMAC-SHA-256 of the number under this secret.
    EXPOSURE_HASH_SECRET = env.str("EXPOSURE_HASH_SECRET")
# Webhook signing secrets are stored encrypted under a key derived from this one
# (webhooks/crypto.py). Unset, it is SECRET_KEY: then changing SECRET_KEY makes every stored
# webhook secret unreadable, and each endpoint's secret must be rotated.
WEBHOOK_SECRET_ENCRYPTION_KEY = env.str("WEBHOOK_SECRET_ENCRYPTION_KEY", default=SECRET_KEY)

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    # Django's admin behind the second factor (phoneintel/admin_site.py).
    "phoneintel.apps.StaffAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    # Redoc for /docs/api/ from our own static files, never a CDN.
    "drf_spectacular_sidecar",
    "django_ratelimit",
    # The second factor: TOTP devices and single-use recovery codes
    # (accounts/services/second_factor.py).
    "django_otp",
    "accounts.second_factor_apps.AuthenticatorAppsConfig",  # django_otp.plugins.otp_totp
    "accounts.second_factor_apps.RecoveryCodesConfig",  # django_otp.plugins.otp_static
    "accounts",
    "catalog",
    "lookups",
    "events",
    "webhooks",
    # The events table's append-only triggers (events/models.py), installed by migrations.
    "pgtrigger",
]

MIDDLEWARE = [
    "phoneintel.access_log.AccessLogMiddleware",
    # Outermost, so every response (errors from inner layers too) gets the id.
    "phoneintel.middleware.RequestContextMiddleware",
    # Before anything can read the body.
    "phoneintel.middleware.ApiBodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # SITE_MIDDLEWARE below, for every request outside /v1/.
    "phoneintel.middleware.SiteMiddleware",
    "phoneintel.middleware.ContentSecurityPolicyMiddleware",
]
# The website's middleware: /v1/ never uses a session, a cookie or a static file.
SITE_MIDDLEWARE = [
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # `request.user.is_verified()`: whether this session passed the second factor.
    "django_otp.middleware.OTPMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
# Django's checks look for the admin's, CSRF's and clickjacking middleware in MIDDLEWARE
# only; they are in SITE_MIDDLEWARE, which every page request runs (every page's
# `X-Frame-Options: DENY` is tested in accounts/tests/test_portal_keys.py).
SILENCED_SYSTEM_CHECKS = [
    "admin.E408",
    "admin.E409",
    "admin.E410",
    "security.W002",
    "security.W003",
]

ROOT_URLCONF = "phoneintel.urls"
WSGI_APPLICATION = "phoneintel.wsgi.application"
AUTH_USER_MODEL = "accounts.User"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            # `grouped`: how every page writes a number (phoneintel/templatetags/numbers.py).
            "builtins": ["phoneintel.templatetags.numbers"],
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


# In development only, with no URL set anywhere: PostgreSQL and Redis on this machine.
_LOCAL_SERVICES = {
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/phoneintel",
    "REDIS_URL": "redis://127.0.0.1:6379/0",
}


def _required_url(name: str) -> str:
    value = env.str(name, default="")
    if not value and DEBUG:
        return _LOCAL_SERVICES[name]
    if not value:
        raise ImproperlyConfigured(
            f"{name} is not set. `make run` starts its own PostgreSQL and Redis and writes "
            "their URLs to .dev-services/env for other shells; elsewhere see .env.example."
        )
    return value


DATABASES = {"default": env.db_url_config(_required_url("DATABASE_URL"))}
if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
    raise ImproperlyConfigured("DATABASE_URL must be a PostgreSQL URL: postgres://…")
# Persistent connections: opening one per request would cost more than the lookup.
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
# No per-request `SELECT 1`: it would cost every request a round trip. A connection
# that died while idle is replaced by `phoneintel.db.first_read` when the request's
# first statement finds it dead; one that dies mid-request answers 503 and is dropped.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = False
_pg_options = DATABASES["default"].setdefault("OPTIONS", {})
# The hot-path statements (phoneintel/db.py) are prepared once per connection after
# this many runs. Set DATABASE_PREPARED_STATEMENTS=false behind a pooler that cannot
# keep prepared statements (PgBouncer in transaction mode before 1.21).
_pg_options["prepare_threshold"] = (
    5 if env.bool("DATABASE_PREPARED_STATEMENTS", default=True) else None
)
# Bounded waits: a hung or unreachable PostgreSQL costs a request a 503 within
# seconds instead of a worker held until gunicorn's timeout. psycopg enforces at
# least 2 s to connect. Web processes default to a 5 s statement timeout
# (phoneintel/wsgi.py); commands (migrate, imports) have none unless it is set. Behind
# a pooler that refuses the `options` startup parameter, set 0 and set it there.
_pg_options["connect_timeout"] = env.int("DATABASE_CONNECT_TIMEOUT", default=3)
_statement_timeout_ms = env.int("DATABASE_STATEMENT_TIMEOUT_MS", default=0)
if _statement_timeout_ms:
    _pg_options["options"] = f"-c statement_timeout={_statement_timeout_ms}"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = _required_url("REDIS_URL")
# The API's rate counters (accounts/throttling.py) are Redis keys of their own, beside the cache's.
RATE_KEY_PREFIX = env.str("CACHE_KEY_PREFIX", default="phoneintel")
CACHES = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": env.str("CACHE_KEY_PREFIX", default="phoneintel"),
        # Bounded waits, as for PostgreSQL: a hung Redis fails the request within a
        # second. redis-py's pool notices a connection the server closed before
        # handing it out, and so does the rate check's own connection per thread
        # (accounts/throttling.py): a restarted Redis costs no failed request.
        "OPTIONS": {
            "SOCKET_CONNECT_TIMEOUT": env.float("REDIS_CONNECT_TIMEOUT", default=1.0),
            "SOCKET_TIMEOUT": env.float("REDIS_SOCKET_TIMEOUT", default=1.0),
        },
    }
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]

# Under DEBUG (`make run`) every email is kept for the page /dev/mail/ instead of being sent
# (phoneintel/dev_mail.py); otherwise it goes out through SMTP (EMAIL_HOST and the rest).
EMAIL_BACKEND = env.str(
    "EMAIL_BACKEND",
    default="phoneintel.dev_mail.DevMailBackend"
    if DEBUG
    else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_HOST = env.str("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
EMAIL_USE_SSL = env.bool("EMAIL_USE_SSL", default=False)
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="phoneintel <noreply@localhost>")
# Only read by the file backend (EMAIL_BACKEND=django.core.mail.backends.filebased.EmailBackend).
EMAIL_FILE_PATH = env.str("EMAIL_FILE_PATH", default=str(BASE_DIR / "test-output" / "emails"))
# The start of every link in every email (`accounts.emails.site_link`), whether a request or
# a beat job sends it. The default is `make run`'s own address.
SITE_URL = env.str("SITE_URL", default=f"http://127.0.0.1:{env.int('PORT', default=8000)}")

# --- Developer portal ----------------------------------------------------
LOGIN_URL = "portal:sign_in"
LOGIN_REDIRECT_URL = "portal:dashboard"
LOGOUT_REDIRECT_URL = "catalog:home"
SIGNUP_LINK_MAX_AGE_DAYS = 7
# Sign-in attempts, counted per account (whether it exists or not) and per client address.
SIGN_IN_RATE_PER_ACCOUNT = env.str("SIGN_IN_RATE_PER_ACCOUNT", default="5/5m")
SIGN_IN_RATE_PER_ADDRESS = env.str("SIGN_IN_RATE_PER_ADDRESS", default="20/5m")
# The second factor (django-otp): the name authenticator apps show beside the account.
OTP_TOTP_ISSUER = "phoneintel"
# Staff may delete a lost device in the admin (its owner then sets one up again), but never
# read a TOTP secret or a recovery code there.
OTP_ADMIN_HIDE_SENSITIVE_DATA = True
# How long the password step of a sign-in waits for its code.
SIGN_IN_CODE_WAIT_SECONDS = 5 * 60
# Sensitive portal actions (accounts/reauth.py) ask for the password or a code again once the
# last sign-in or confirmation is older than this.
RECENT_AUTHENTICATION_SECONDS = 15 * 60

# Production safety: on unless DEBUG. Behind a TLS-terminating proxy, set
# SECURE_PROXY_SSL_HEADER via env so Django knows the request was HTTPS.
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
SESSION_COOKIE_HTTPONLY = True
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# No inline script or style anywhere: every script and stylesheet is a file under /static/.
CONTENT_SECURITY_POLICY = {
    # /docs/api/ carries its own meta policy for Redoc (inline styles, blob: workers); a header
    # policy would be intersected with it and break the page. The API sends a fixed policy of
    # its own (phoneintel/middleware.py).
    "EXCLUDE_URL_PREFIXES": ["/docs/api/"],
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}
# Load balancers and Prometheus talk to the processes directly, often over plain HTTP inside
# the network: a redirect would only fail their checks and scrapes.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
if env.bool("BEHIND_TLS_PROXY", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Our own proxies (CIDRs): only a request from one of them has its X-Forwarded-For read,
# and the right-most address in it outside these is the client's (phoneintel/client_address.py).
# Empty: the TCP peer is the client, whatever the header says.
TRUSTED_PROXIES = env.list("TRUSTED_PROXIES", default=[])
for _cidr in TRUSTED_PROXIES:
    try:
        ipaddress.ip_network(_cidr, strict=False)
    except ValueError:
        raise ImproperlyConfigured(f"TRUSTED_PROXIES: {_cidr!r} is not a CIDR.") from None

# --- API -----------------------------------------------------------------
API_VERSION = "2026-08-11.beta1"
API_MAX_BODY_BYTES = 32 * 1024
API_KEY_LIFETIME_DAYS = 90
API_DEFAULT_MONTHLY_QUOTA = 1000
# Live units a developer may spend per month across all their keys (staff set it per developer).
API_DEFAULT_MONTHLY_ALLOWANCE = 10_000
# A test key's monthly quota: sandbox calls, never counted in live usage or the allowance.
API_DEFAULT_TEST_MONTHLY_QUOTA = 10_000
API_DEFAULT_RATE_LIMIT = "600/m"
# What a paused product tells callers to wait before retrying.
PAUSED_RETRY_AFTER_SECONDS = 300
# What a store outage (PostgreSQL or Redis unreachable or timing out) tells them.
STORE_RETRY_AFTER_SECONDS = 5
# Failed authentications per client address before it is refused outright.
API_AUTH_FAILURE_RATE = env.str("API_AUTH_FAILURE_RATE", default="30/m")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["accounts.authentication.ApiKeyAuthentication"],
    # In DRF's order: the key (one read), then these, then the key's rate (one Redis
    # command). Every endpoint with a key asks all of them.
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        # The key's products and networks: 403 before a pause, the rate or a charge.
        "accounts.permissions.KeyRestrictionsHold",
        "catalog.pause_check.ProductOpen",
    ],
    "DEFAULT_THROTTLE_CLASSES": ["accounts.throttling.ApiKeyRateThrottle"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "phoneintel.renderers.JsonOnlyNegotiation",
    "DEFAULT_PARSER_CLASSES": ["phoneintel.parsers.JsonParser"],
    "DEFAULT_RENDERER_CLASSES": ["phoneintel.renderers.JsonRenderer"],
    "EXCEPTION_HANDLER": "phoneintel.exception_handler.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    "UNAUTHENTICATED_TOKEN": None,
}

SPECTACULAR_SETTINGS = {
    "OAS_VERSION": "3.1.0",
    "TITLE": "phoneintel API",
    "VERSION": API_VERSION,
    "DESCRIPTION": (BASE_DIR / "phoneintel" / "api_description.md").read_text(),
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": r"/v1/",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "ErrorCodeEnum": "phoneintel.errors.API_ERROR_CODES",
        "RiskReasonEnum": "lookups.risk.REASON_CHOICES",
        "ProductEnum": "catalog.products.PHONE_PRODUCTS",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        # Before complete_contract, which closes the `Event` alternatives with the others.
        "events.openapi.event_schemas",
        "phoneintel.openapi.complete_contract",
        "lookups.openapi.sandbox_section",
        "webhooks.openapi.webhooks_section",
    ],
    "SERVERS": [{"url": "/", "description": "this deployment"}],
    # Spectral's `spectral:oas` ruleset (`make check`) wants a contact and every operation's
    # tag declared here, in the order the reference shows them.
    "CONTACT": {"name": "phoneintel developer support", "url": f"{SITE_URL}/portal/"},
    "TAGS": [
        {"name": "Lookups", "description": "One product on one number, or on up to 50 in bulk."},
        {"name": "Account", "description": "Your key, its quota, its usage and its rate limit."},
        {"name": "Events", "description": "What happened to your account, newest first."},
        {
            "name": "Webhooks",
            "description": "The events we POST to your endpoints, signed (Standard Webhooks).",
        },
        {"name": "Catalog", "description": "Every product with its price and availability."},
        {"name": "Sandbox", "description": "The test numbers a test key answers."},
        {"name": "Contract", "description": "This OpenAPI document."},
    ],
}

# The developer's request log (accounts/request_log_writer.py): every API request with a valid key,
# kept in memory by the process and written after the answer, in batches, by a thread of
# its own every REQUEST_LOG_FLUSH_SECONDS (0: only when `request_log_flush()` is called).
REQUEST_LOG_ENABLED = env.bool("REQUEST_LOG_ENABLED", default=True)
REQUEST_LOG_WRITER = "accounts.request_log_writer.writer"
REQUEST_LOG_FLUSH_SECONDS = env.float("REQUEST_LOG_FLUSH_SECONDS", default=1.0)
# A flush starts early once this many wait.
REQUEST_LOG_BATCH_SIZE = env.int("REQUEST_LOG_BATCH_SIZE", default=500)
# Entries a process keeps while PostgreSQL is slow or away; beyond it new ones are dropped.
REQUEST_LOG_BUFFER_SIZE = env.int("REQUEST_LOG_BUFFER_SIZE", default=10_000)

RATELIMIT_USE_CACHE = "default"
RATELIMIT_VIEW = "phoneintel.views.ratelimited"
# The site's limits per address (key="ip") count the same client address as the API's.
RATELIMIT_IP_META_KEY = "phoneintel.client_address.client_address"

# --- Browser checkers ----------------------------------------------------
# Their own protection layer (lookups/browser/protection.py); developer keys play no part.
CHECKER_TOKEN_MAX_AGE = env.int("CHECKER_TOKEN_MAX_AGE", default=600)  # seconds
CHECKER_SESSION_MAX_AGE = 12 * 3600
CHECKER_SESSION_RATES = env.tuple("CHECKER_SESSION_RATES", default=("10/m", "100/d"))
CHECKER_ADDRESS_RATES = env.tuple("CHECKER_ADDRESS_RATES", default=("30/m", "300/d"))
# Hashcash difficulty in leading zero bits: ~16k SHA-256 per check, well under a second.
CHECKER_POW_BITS = env.int("CHECKER_POW_BITS", default=14)
CHECKER_MAX_BODY_BYTES = 4096

# --- Celery --------------------------------------------------------------
# Tasks always go through the broker to a worker; `make run` runs one, and beat.
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TIMEZONE = "UTC"
# How long a task taken by a worker that then died (acks_late: unacknowledged) waits in Redis
# before another worker gets it. Celery's default; webhooks/delivery.py never queues a
# countdown longer than this (a longer one would be handed out again every timeout).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=3600)
}
# Workers log through LOGGING below (JSON unless LOG_FORMAT=plain), not Celery's own format.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BEAT_SCHEDULE = {
    "purge-idempotency-records": {
        "task": "lookups.tasks.purge_idempotency_records",
        "schedule": 3600,
    },
    "purge-signup-links": {"task": "accounts.tasks.purge_signup_links", "schedule": 3600},
    "purge-request-log": {"task": "accounts.tasks.purge_request_log", "schedule": 3600},
    "record-expired-keys": {"task": "accounts.tasks.record_expired_keys", "schedule": 3600},
    "purge-events": {"task": "events.tasks.purge_events", "schedule": crontab(hour=3, minute=0)},
    # Deliveries whose queued task went missing (webhooks/delivery.py).
    "queue-due-webhook-deliveries": {
        "task": "webhooks.tasks.queue_due_deliveries",
        "schedule": 60,
    },
    "purge-webhook-deliveries": {
        "task": "webhooks.tasks.purge_deliveries",
        "schedule": crontab(hour=3, minute=30),
    },
    "send-key-expiry-notices": {
        "task": "accounts.tasks.send_key_expiry_notices",
        "schedule": crontab(hour=8, minute=0),
    },
}

# --- Events ---------------------------------------------------------------
# Called with each event once its transaction commits (`events.services.event_emit`), so
# that `events` imports none of the apps that react to events.
EVENT_SUBSCRIBERS = ["webhooks.subscriber.event_recorded"]
# An event whose data does not fit its declaration (events/types.py) raises where this is
# on (DEBUG, tests), and is logged and recorded elsewhere: a bug in an event must not stop
# the action it records.
EVENT_DATA_STRICT = env.bool("EVENT_DATA_STRICT", default=DEBUG)

# --- Webhooks ------------------------------------------------------------
# Seconds between a failed delivery attempt and the next: one retry per entry, then the
# delivery has failed. The default spreads 8 attempts over about 27 hours.
WEBHOOK_RETRY_SCHEDULE = [
    int(delay)
    for delay in env.list(
        "WEBHOOK_RETRY_SCHEDULE", default=[5, 300, 1800, 7200, 18000, 36000, 36000]
    )
]
# One attempt, from resolving the host to the answer's status line, takes at most this
# many seconds in all; longer is a failed attempt (`timeout`).
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", default=10.0)
# Networks (CIDRs) a webhook may reach although they are private, loopback or otherwise
# special, and where plain http is allowed (webhooks/ssrf.py). Default: none; with DEBUG on
# (`make run`), this machine's loopback, so that a receiver on it works out of the box.
WEBHOOK_ALLOWED_NETWORKS = env.list(
    "WEBHOOK_ALLOWED_NETWORKS", default=["127.0.0.0/8", "::1/128"] if DEBUG else []
)
try:
    for _network in WEBHOOK_ALLOWED_NETWORKS:
        ipaddress.ip_network(_network)
except ValueError as bad:
    raise ImproperlyConfigured(f"WEBHOOK_ALLOWED_NETWORKS: {bad}") from None

# Per account (every member, every browser): "send test event" clicks and endpoints added
# (attempts, refused URLs included). Each test event is a row no one may delete and up to a
# retry schedule of requests; each attempt to add resolves a host the developer chose.
WEBHOOK_TEST_EVENT_RATE = env.str("WEBHOOK_TEST_EVENT_RATE", default="20/h")
WEBHOOK_CREATE_RATE = env.str("WEBHOOK_CREATE_RATE", default="10/h")

# --- Operations ----------------------------------------------------------
# /metrics answers only `Authorization: Bearer <METRICS_TOKEN>`; unset, it is always 404.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")

# One JSON object per line for log pipelines; `plain` for a person at a terminal.
LOG_FORMAT = env.str("LOG_FORMAT", default="json")
if LOG_FORMAT not in ("json", "plain"):
    raise ImproperlyConfigured(f"LOG_FORMAT is json or plain, not {LOG_FORMAT!r}.")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        # gunicorn.conf.py gives gunicorn's own lines the same fields.
        "json": {"()": "phoneintel.logformat.json_formatter"},
    },
    "filters": {"not_simulated": {"()": "phoneintel.logformat.NotSimulatedFilter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        # Every line once, through the root's handler: Django's default config gives the
        # `django` logger a console handler of its own under DEBUG, which wrote each line
        # twice.
        "django": {"handlers": [], "level": "INFO"},
        # django.request logs the path only; never bodies or headers. A sandbox test
        # number's 500 or 503 is an answer, not a failure: no ERROR line.
        "django.request": {"level": "ERROR", "filters": ["not_simulated"]},
        # Celery's per-task INFO lines quote the task's arguments and result: an email's
        # body, with its sign-up or reset link. Failures are still logged.
        "celery.app.trace": {"level": "WARNING"},
        # httpx's INFO line names each webhook's URL, which may carry the receiver's own
        # token; the delivery log records each attempt instead.
        "httpx": {"level": "WARNING"},
    },
}
