"""Keeping Time settings: one file, configured from the environment (django-environ).

Every value comes from an environment variable (or a `.env` file beside manage.py, which
`make demo` writes for the demo). The table in README.md lists them. With DEBUG off the
defaults are the secure ones; each can be turned off by its own variable for a deployment
behind a proxy that does the same job.
"""

import os
import re
from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
# A .env file is read when present; variables already in the environment win over it.
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DEBUG = env.bool("DEBUG", default=False)

SECRET_KEY = env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY: the environment variable SECRET_KEY must be set when DEBUG is off "
            "(use a random string of at least 50 characters)."
        )
    SECRET_KEY = "django-insecure-keeping-time-development-only-key-not-for-production-use"

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    # Failed sign-ins counted per username and per address, and the lockouts shown in the
    # admin (issue 31; its own migrations make its tables).
    "axes",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "calendars",
    "money",
    "timekeeping",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "timekeeping.web.strict.RefuseNul",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Test mode's switch, kept in the session and in each console page's address (issue 27).
    "timekeeping.console.test_mode.KeepTestMode",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Turns a sign-in refused for too many failures into the "paused" page (last, as axes asks).
    "axes.middleware.AxesMiddleware",
]

# The sign-in guard first: it refuses a locked-out username or address before any password is
# checked, then Django's own backend checks the password (timekeeping/web/signin.py).
AUTHENTICATION_BACKENDS = [
    "timekeeping.web.signin.Guard",
    "django.contrib.auth.backends.ModelBackend",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "timekeeping.web.pages.frame",
                "timekeeping.console.test_mode.banner",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
# More databases for the tables of timed moves, registered by URL: "venue=postgres://…,…".
for _alias, _, _url in (item.partition("=") for item in env.list("EXTRA_DATABASES", default=[])):
    if not _alias or not _url:
        raise ImproperlyConfigured("EXTRA_DATABASES: write alias=URL pairs, comma-separated")
    DATABASES[_alias] = env.db_url_config(_url)
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=0)
# PostgreSQL's JIT compiler, off unless asked for (DATABASE_JIT=true).
DATABASE_JIT = env.bool("DATABASE_JIT", default=False)
# A firing's reads by primary key, prepared on PostgreSQL: planned once a connection, not each
# time (config/postgresql/base.py). Off for a pooler that cannot keep prepared statements.
PREPARED_STATEMENTS = env.bool("PREPARED_STATEMENTS", default=True)
for _database in DATABASES.values():
    if _database["ENGINE"] == "django.db.backends.postgresql":
        # Django's, less the pattern index beside each id's (config/postgresql/base.py).
        _database["ENGINE"] = "config.postgresql"
    if _database["ENGINE"] == "django.db.backends.sqlite3":
        # The demo's web server and its tick share one SQLite file: wait for a lock
        # instead of failing at once.
        # BEGIN IMMEDIATE takes the write lock when a transaction starts, so a tick's
        # select-then-update never meets a lock upgrade failure.
        _database.setdefault("OPTIONS", {}).update(timeout=20, transaction_mode="IMMEDIATE")
    elif _database["ENGINE"] == "config.postgresql" and not DATABASE_JIT:
        # The tick's plans are small and run every minute; PostgreSQL's JIT compiles them when
        # a table's statistics describe years of history, and the compiling costs more than
        # the query (docs/scale.md). A URL that sets jit itself keeps its own value.
        _options = _database.setdefault("OPTIONS", {})
        if "jit" not in _options.get("options", ""):
            _options["options"] = f"{_options.get('options', '')} -c jit=off".strip()
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# With several databases, the one that keeps schedule state must be named (SPEC J6).
SCHEDULES_STORE = env.str("SCHEDULES_STORE", default=None)
# Sends schedule state and runs to SCHEDULES_STORE when it is set (SPEC J6).
DATABASE_ROUTERS = ["config.routers.ScheduleStoreRouter"]

EMAIL_CONFIG = env.email_url("EMAIL_URL", default="consolemail://")
vars().update(EMAIL_CONFIG)
if "EMAIL_URL" not in os.environ:
    # No mail set up (development, the demo): one line per email on the terminal; the
    # console's Sent emails page shows each in full (timekeeping/mail.py).
    EMAIL_BACKEND = "timekeeping.timers.mail.OneLineBackend"
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="keeping-time@localhost")

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
# All instants are UTC in storage and in code (DESIGN decision 1); local time exists only
# inside calendar arithmetic.
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
# Where people reach the site: the start of every link in an email the product sends.
SITE_URL = env.str("SITE_URL", default="http://127.0.0.1:8000").rstrip("/")
# Hosts (names or addresses) a webhook may reach although they are private or local.
WEBHOOK_ALLOW_HOSTS = env.list("WEBHOOK_ALLOW_HOSTS", default=[])
# Whether a webhook may use plain http:// (off: https:// only; on for a receiver in development).
WEBHOOK_ALLOW_HTTP = env.bool("WEBHOOK_ALLOW_HTTP", default=False)

# What an operator watches (docs/operating.md): /metrics answers only with this bearer token
# (none set: 404); the tick counts as stopped once its last pass is older than this.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
TICK_STALE_SECONDS = env.int("TICK_STALE_SECONDS", default=300)
# How many webhooks the outbox sweep posts at once (each waits on its receiver, 15 s at most).
WEBHOOK_WORKERS = env.int("WEBHOOK_WORKERS", default=16)
# Months of records kept on PostgreSQL, this month counting as one (timekeeping.tick.partitions);
# 0 keeps every month.
RECORDS_KEEP_MONTHS = env.int("RECORDS_KEEP_MONTHS", default=0)
if not 0 <= RECORDS_KEEP_MONTHS <= 1200:
    raise ImproperlyConfigured("RECORDS_KEEP_MONTHS: a whole number of months from 0 (keep "
                               f"every month) to 1200, not {RECORDS_KEEP_MONTHS}")

# Throttling and lockout (docs/security.md#throttling-and-lockout). How many proxies in front
# append to X-Forwarded-For: 0 reads the address from the connection, and a client's own
# X-Forwarded-For is never believed beyond that many hops.
NUM_PROXIES = env.int("NUM_PROXIES", default=0)
if not 0 <= NUM_PROXIES <= 10:
    raise ImproperlyConfigured(f"NUM_PROXIES: a whole number from 0 to 10, not {NUM_PROXIES}")
# Sign-in: after AXES_FAILURE_LIMIT failures for one username, or from one address, signing in
# there pauses for AXES_COOLOFF_MINUTES; the same for a username that exists and one that
# does not, so the pause tells nobody which accounts exist.
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
if AXES_FAILURE_LIMIT < 1:
    raise ImproperlyConfigured(f"AXES_FAILURE_LIMIT: at least 1, not {AXES_FAILURE_LIMIT}")
_cooloff_minutes = env.int("AXES_COOLOFF_MINUTES", default=15)
if not 1 <= _cooloff_minutes <= 7 * 24 * 60:
    raise ImproperlyConfigured("AXES_COOLOFF_MINUTES: minutes from 1 to 10080 (a week), not "
                               f"{_cooloff_minutes}")
AXES_COOLOFF_TIME = timedelta(minutes=_cooloff_minutes)
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
# Tries made while paused are refused without being counted, so the pause ends when it said
# and an attacker's flood adds no rows.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_CLIENT_IP_CALLABLE = "timekeeping.web.throttle.address_of"
AXES_LOCKOUT_CALLABLE = "timekeeping.web.signin.paused"
# No row per successful sign-in: the failures are what the lockout needs.
AXES_DISABLE_ACCESS_LOG = True
# Requests per address, key or person: "N/s", "N/min", "N/hour" or "N/day". The API's are DRF
# throttles (timekeeping/api/throttles.py); link pages and the password reset count the same
# way (timekeeping/web/throttle.py), in the cache below.
_RATE_VARIABLES = {"key": ("API_RATE_PER_KEY", "1200/min"),
                   "user": ("API_RATE_PER_PERSON", "1200/min"),
                   "anon": ("API_RATE_PER_ADDRESS", "120/min"),
                   "link": ("LINK_RATE_PER_ADDRESS", "30/min"),
                   "reset": ("RESET_RATE_PER_ADDRESS", "5/min")}
THROTTLE_RATES = {scope: env.str(name, default=default)
                  for scope, (name, default) in _RATE_VARIABLES.items()}
for _scope, (_name, _) in _RATE_VARIABLES.items():
    if not re.fullmatch(r"[1-9][0-9]{0,6}/(s|sec|m|min|h|hour|d|day)", THROTTLE_RATES[_scope]):
        raise ImproperlyConfigured(f"{_name}: write requests per period, e.g. 120/min (s, min, "
                                   f"hour or day), not {THROTTLE_RATES[_scope]!r}")
# Where the counts are kept: each process's memory unless set (with several workers each counts
# on its own), e.g. dbcache://keeping_time_cache after `manage.py createcachetable`.
CACHES = {"default": env.cache_url("CACHE_URL", default="locmemcache://")}

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

# Programs call the API with a brand's API key; people with their browser session. No
# password is accepted by the API itself (docs/security.md).
REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "timekeeping.api.access.ApiKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["timekeeping.web.strict.StrictJSONParser"],
    # Per key, per signed-in person, per address for the rest: 429 with Retry-After.
    "DEFAULT_THROTTLE_CLASSES": ["timekeeping.api.throttles.PerCaller"],
    "NUM_PROXIES": NUM_PROXIES,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Keeping Time API",
    "DESCRIPTION": "Timers, clocks, test clocks and the records they leave.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # OpenAPI 3.1, for its `webhooks`: the event catalogue's payloads, one per event type, added
    # after drf-spectacular's own enum hook (timekeeping/api/event_schema.py).
    "OAS_VERSION": "3.1.0",
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums",
                             "timekeeping.api.event_schema.webhooks",
                             # Every operation may answer 429 (timekeeping/api/throttles.py).
                             "timekeeping.api.throttles.documented"],
    # Operations are named and grouped after what follows /api/ (subjects_list, tag subjects),
    # not after /api/ itself, which every operation shares.
    "SCHEMA_PATH_PREFIX": "/api/",
    # Swagger UI (/api/docs/) and Redoc (/api/redoc/) from drf-spectacular-sidecar's static
    # files, never a CDN; no spec validator on swagger.io either.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "ENUM_NAME_OVERRIDES": {"JobStateEnum": "timekeeping.models.service.Job.State",
                            "TimerStateEnum": "timekeeping.models.timer.Timer.State",
                            "TestClockStatusEnum": "timekeeping.models.brand.TestClock.Status",
                            "PlanEnum": "timekeeping.specs.tiers.PLANS",
                            "DeliveryStateEnum": "timekeeping.models.outbox.Delivery.State",
                            "EventTypeEnum": "timekeeping.api.events.EVENT_TYPES"},
}

# Secure defaults whenever DEBUG is off. Each can be turned off on its own, for a
# deployment behind a proxy that redirects to HTTPS or sets HSTS itself.
if not DEBUG:
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    # A load balancer asks for health over plain HTTP on the private side.
    SECURE_REDIRECT_EXEMPT = [r"^health/"]
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
    if env.bool("SECURE_PROXY_SSL_HEADER", default=False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# `text` (the default) or `json`: one JSON object a line, for the logs and for what
# `manage.py tick` and `tick --loop` print (docs/operating.md).
LOG_FORMAT = env.str("LOG_FORMAT", default="text")
if LOG_FORMAT not in ("text", "json"):
    raise ImproperlyConfigured(f"LOG_FORMAT: {LOG_FORMAT!r} is not 'text' or 'json'")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "config.logs.JsonFormatter"}},
    "handlers": {"console": {"class": "logging.StreamHandler",
                             **({"formatter": "json"} if LOG_FORMAT == "json" else {})}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="WARNING")},
}
