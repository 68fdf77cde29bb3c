"""gunicorn's settings for phoneintel: gunicorn reads this file from the working directory.

    gunicorn --bind 0.0.0.0:8000

Every number can be changed through the environment (`.env.example` lists them):
GUNICORN_WORKERS, GUNICORN_THREADS, GUNICORN_KEEPALIVE, GUNICORN_TIMEOUT,
GUNICORN_GRACEFUL_TIMEOUT, GUNICORN_MAX_REQUESTS, GUNICORN_MAX_REQUESTS_JITTER,
FORWARDED_ALLOW_IPS, GUNICORN_ACCESS_LOG, GUNICORN_CONTROL_SOCKET, LOG_FORMAT,
PROMETHEUS_MULTIPROC_DIR.
Command-line options win over this file (the test suite and the bench pass --bind and
--workers).
"""

import os
import shutil
import tempfile
from pathlib import Path

import environ
from gunicorn import glogging

# The same .env as the settings read (variables already set win), so one file configures both.
environ.Env.read_env(Path(__file__).resolve().parent / ".env", overwrite=False)


def _int(name: str, default: int) -> int:
    return int(os.environ.get(name) or default)


def _cpus() -> int:
    # The CPUs this process may run on: a container's limit, not the host's count.
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


wsgi_app = "phoneintel.wsgi:application"

# A process per CPU keeps every core busy with Python; threads overlap the waits on
# PostgreSQL and Redis (most of a lookup's time) without a process each. Each thread
# holds its own PostgreSQL connection and takes Redis connections from a shared pool:
# workers x threads of each at most. Threads per worker stay fixed, so the threads (and
# connections) grow with the CPU count, not its square.
# Two are enough to keep a worker's core busy while one thread waits on a store: more only
# take the GIL from each other (bench/README.md has the figures). A database further away
# than the same machine makes the waits longer: raise GUNICORN_THREADS there.
worker_class = "gthread"
workers = _int("GUNICORN_WORKERS", max(2, _cpus()))
threads = _int("GUNICORN_THREADS", 2)

# Longer than the idle timeouts in front of us (AWS ALB and nginx's upstream keepalive
# both default to 60 s), so the load balancer or pooled client always closes an idle
# connection first and never sends a request on one gunicorn has just closed.
keepalive = _int("GUNICORN_KEEPALIVE", 75)
timeout = _int("GUNICORN_TIMEOUT", 30)
# A stopping worker finishes the requests it has; a deploy waits at most this long.
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 30)
# Recycling bounds what a slow leak can cost; the jitter keeps workers from restarting
# together. Each recycled worker leaves its counters in PROMETHEUS_MULTIPROC_DIR (they
# must keep counting), so a high number keeps that directory small.
max_requests = _int("GUNICORN_MAX_REQUESTS", 10_000)
max_requests_jitter = _int("GUNICORN_MAX_REQUESTS_JITTER", 1_000)

# X-Forwarded-Proto (and friends) decide the request's scheme only when they come from
# these addresses: a client that reaches gunicorn directly cannot claim HTTPS.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
# gunicorn would otherwise let those proxies set SCRIPT_NAME and PATH_INFO; we use neither.
forwarder_headers = ""

# The application writes one JSON line per API request (phoneintel/access_log.py), so
# gunicorn's access log is off unless asked for. Its format has no query string (`%(q)s`,
# `%(r)s`) and no header (`%(a)s`, `%(f)s`, `%({...}i)s`): either could carry a key or a
# phone number.
accesslog = os.environ.get("GUNICORN_ACCESS_LOG") or None
access_log_format = '%(h)s "%(m)s %(U)s" %(s)s %(B)s %(M)sms'

# gunicorn.ctl in $HOME by default: two servers on one machine would take it from each
# other, and nothing here uses it.
control_socket_disable = not os.environ.get("GUNICORN_CONTROL_SOCKET")
if not control_socket_disable:
    control_socket = os.environ["GUNICORN_CONTROL_SOCKET"]


class JsonLogger(glogging.Logger):
    """gunicorn's own lines in the application's format (LOG_FORMAT, json unless plain)."""

    def setup(self, cfg):
        super().setup(cfg)
        if os.environ.get("LOG_FORMAT", "json") != "json":
            return
        from phoneintel.logformat import json_formatter

        formatter = json_formatter()  # as settings.LOGGING's "json"
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                handler.setFormatter(formatter)


logger_class = JsonLogger

# Prometheus multiprocess mode: each worker writes its counters to files in this
# directory and /metrics adds them up. It must be set before any worker imports
# prometheus_client, so here, in the master, before the workers are forked.
if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    # mkdtemp: a name no other user of the machine can guess and prepare.
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="phoneintel-metrics-")
    # Still known after a reload (SIGHUP runs this file anew): the directory is ours to remove.
    os.environ["PHONEINTEL_METRICS_DIR_IS_TEMPORARY"] = "1"


def on_starting(server):
    # Counters from an earlier run of the server would be added to this run's.
    directory = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink()


def post_worker_init(worker):
    """Hides the loaded application from the garbage collector's full passes.

    A full pass visits every object the collector tracks, and the worker's threads all wait
    while it runs. Nearly all of those objects are Django, the URLconf and the modules its
    views import, loaded once and kept as long as the worker, so freezing them shortens
    every full pass (bench/README.md has the figures). Frozen objects are still freed when
    nothing refers to them; only a reference cycle among them would stay until the worker
    is recycled.
    """
    import gc
    from importlib import import_module

    from django.conf import settings

    import_module(settings.ROOT_URLCONF)  # and every view's module, as the first request would
    gc.collect()  # what loading left over, before it is frozen for good
    gc.freeze()


def worker_exit(server, worker):
    """Writes what the worker's request log still holds (accounts/request_log_writer.py): a stopped
    or recycled worker loses no entry. atexit would too, later, once the interpreter is
    already shutting down."""
    from phoneintel.access_log import request_log_flush

    request_log_flush()


def child_exit(server, worker):
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server):
    if os.environ.get("PHONEINTEL_METRICS_DIR_IS_TEMPORARY"):
        shutil.rmtree(os.environ["PROMETHEUS_MULTIPROC_DIR"], ignore_errors=True)


API_PREFIX = "/v1/"


def pre_request(worker, req):
    """Closes the connection after an API request whose body may be answered unread.

    The API answers 413 before reading a body over its limit
    (phoneintel.middleware.ApiBodyLimitMiddleware). On a kept-alive connection the
    unread rest would stand where the next request should start: gunicorn drains up to
    64 KiB of it, then drops the connection it has just announced as kept alive, and a
    pooled client's next request on it fails. The application cannot ask for the close
    itself, since gunicorn ignores a Connection header from the application (it is
    hop-by-hop), so it is decided here from the headers: a declared length over the
    limit, or a chunked body, whose length nobody knows before reading it. The answer
    then says `Connection: close` and the client opens a fresh connection.
    """
    if not req.path.startswith(API_PREFIX):
        return
    from phoneintel.middleware import api_body_limit

    for name, value in req.headers:
        chunked = name == "TRANSFER-ENCODING" and "chunked" in value.lower()
        declared = name == "CONTENT-LENGTH" and value.strip().isdigit()
        if chunked or (declared and int(value) > api_body_limit(req.path)):
            req.force_close()
