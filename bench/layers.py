"""Where a request's CPU goes, layer by layer, in one process.

`python -m bench.layers [scenario ...]` (with the Makefile's environment; default: `floor`,
`lookup`, `floor-get`, `account`) sets up its own database and Redis DB like `bench.cpu`,
then serves each scenario through Django's WSGI handler in a loop with a clock around each
layer of the request path: every middleware, DRF's steps, our authentication, permissions
and throttle, the key read, the charge, the request log, the access log line, the metrics,
rendering, and the client side of the round trips (psycopg, redis-py). Each layer is
charged its own CPU time (`time.thread_time_ns`), what the layers it calls take left out,
and the clocks' own cost, measured on a function that does nothing, is taken off again.

The clocks are put around the layers here, by replacing functions on their modules and
classes in this process only: the code under measurement is the code that serves. Logging
goes to a file, as a server's does (`bench.cpu` switches it off, which leaves the log line's
formatting out). The totals are close to `bench.cpu`'s for the same scenarios; the rows are
what bench/README.md's profile table shows.
"""

import functools
import gc
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from statistics import median

from harness.app import fresh_app, tool_env

DATABASE_NAME = "phoneintel_layers"
# Its own DB: the tests use 15, bench.run 14, make schemathesis 13, bench.cpu 12,
# bench.instructions 11.
REDIS_DB = 10
REQUESTS = int(os.environ.get("BENCH_LAYERS_REQUESTS", "500"))
ROUNDS = int(os.environ.get("BENCH_LAYERS_ROUNDS", "5"))
DEFAULT_SCENARIOS = ("floor", "lookup", "floor-get", "account")
OTHER = "Django WSGI handler, request object, response close"

_clock = time.thread_time_ns
_stack: list[str] = [OTHER]
_own: dict[str, int] = defaultdict(int)
_calls: dict[str, int] = defaultdict(int)
# Clocked calls made from within each layer: each costs its caller a share of a clock.
_child_calls: dict[str, int] = defaultdict(int)
_last = [0]


def _enter(label: str) -> None:
    now = _clock()
    _own[_stack[-1]] += now - _last[0]
    _child_calls[_stack[-1]] += 1
    _stack.append(label)
    _calls[label] += 1
    _last[0] = now


def _leave() -> None:
    now = _clock()
    _own[_stack.pop()] += now - _last[0]
    _last[0] = now


def timed(function, label: str):
    @functools.wraps(function)
    def clocked(*args, **kwargs):
        _enter(label)
        try:
            return function(*args, **kwargs)
        finally:
            _leave()

    return clocked


def clock_on(owner, name: str, label: str) -> None:
    """Puts a clock on `owner.name` (a module's function, a class's method, an object's
    method), charged to `label`."""
    function = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    if isinstance(function, staticmethod | classmethod):
        return
    setattr(owner, name, timed(function, label))


def install() -> list[str]:
    """The clocks on every layer of the request path; the labels in the table's order."""
    import psycopg
    from django.core import signals
    from django.core.handlers.base import BaseHandler
    from django.db.backends import utils as db_utils
    from django.middleware.security import SecurityMiddleware
    from django.template.response import SimpleTemplateResponse
    from redis.commands.core import Script
    from rest_framework.request import Request
    from rest_framework.views import APIView

    import accounts.authentication as authentication
    import accounts.services.keys as keys
    import lookups.api as lookups_api
    import lookups.services as lookup_services
    import phoneintel.access_log as access_log
    import phoneintel.envelope as envelope
    import phoneintel.metrics as metrics
    from accounts.api import AccountView
    from accounts.permissions import KeyRestrictionsHold
    from accounts.throttling import ApiKeyRateThrottle
    from bench.middleware import SwitchableRequestLogMiddleware
    from bench.urls import Floor, FloorGet
    from catalog.pause_check import ProductOpen
    from phoneintel import middleware

    plan = dict(
        [
            ("access log middleware (own)", [(SwitchableRequestLogMiddleware, "__call__")]),
            ("access log: log line", [(access_log.logger, "info")]),
            ("access log: route and metrics", [(access_log, "route_of")]),
            ("metrics", [(metrics, "observe_request"), (metrics, "observe_api_answer")]),
            ("request log entry", [(access_log.AccessLogMiddleware, "record")]),
            ("request context middleware", [(middleware.RequestContextMiddleware, "__call__")]),
            ("body limit middleware", [(middleware.ApiBodyLimitMiddleware, "__call__")]),
            (
                "security middleware",
                [(SecurityMiddleware, "process_request"), (SecurityMiddleware, "process_response")],
            ),
            ("site middleware (get_host)", [(middleware.SiteMiddleware, "__call__")]),
            (
                "CSP middleware",
                [
                    (middleware.ContentSecurityPolicyMiddleware, "process_request"),
                    (middleware.ContentSecurityPolicyMiddleware, "process_response"),
                ],
            ),
            ("request_started / request_finished", [(signals.request_started, "send")]),
            ("URL resolve", [(BaseHandler, "resolve_request")]),
            ("DRF dispatch, initialize, initial", [(APIView, "dispatch")]),
            ("DRF authentication step", [(APIView, "perform_authentication")]),
            (
                "key: our authentication (glue)",
                [(authentication.ApiKeyAuthentication, "authenticate")],
            ),
            ("key: hash", [(keys, "api_key_hash")]),
            ("key: read (Python)", [(keys, "api_key_read")]),
            ("key: in use (touch, log context)", [(authentication, "_key_in_use")]),
            ("DRF permission step", [(APIView, "check_permissions")]),
            ("restrictions", [(KeyRestrictionsHold, "has_permission")]),
            ("pause", [(ProductOpen, "has_permission")]),
            ("DRF throttle step", [(APIView, "check_throttles")]),
            ("throttle (own)", [(ApiKeyRateThrottle, "allow_request")]),
            ("DRF negotiation", [(APIView, "perform_content_negotiation")]),
            ("DRF request.data (parsing)", [(Request, "_load_data_and_files")]),
            ("DRF exception handling", [(APIView, "handle_exception")]),
            ("DRF finalize_response", [(APIView, "finalize_response")]),
            ("view: floor", [(FloorGet, "get"), (Floor, "post")]),
            ("view: account", [(AccountView, "get")]),
            (
                "view: lookup",
                [(lookups_api.LookupView, "post"), (lookups_api.LookupView, "answer")],
            ),
            ("idempotency check", [(lookups_api, "idempotency_key")]),
            ("lookup service", [(lookups_api, "lookup_one")]),
            ("input check + phone parse", [(lookup_services, "check_input")]),
            ("lookup: read build", [(lookup_services, "product_read")]),
            ("lookup: idle poll", [(lookup_services, "drop_if_closed_while_idle")]),
            ("charge (Python)", [(lookup_services, "charge_units")]),
            ("lookup: results", [(lookup_services, "results")]),
            ("envelope", [(lookup_services, "success_body"), (envelope, "success_body")]),
            (
                "render",
                [
                    (lookup_services, "render_json"),
                    (envelope, "render_json"),
                    (lookups_api, "json_response"),
                    (envelope, "json_response"),
                    (SimpleTemplateResponse, "render"),
                ],
            ),
            (
                "psycopg (execute, fetch, rows)",
                [
                    (db_utils.CursorWrapper, "execute"),
                    (psycopg.Cursor, "fetchone"),
                    (psycopg.Cursor, "fetchall"),
                ],
            ),
            ("redis-py EVALSHA", [(Script, "__call__")]),
        ]
    )
    # request_finished is sent from the response's close(); the same row as request_started.
    plan["request_started / request_finished"].append((signals.request_finished, "send"))
    # Each product's view is a subclass with its own copy of `post` (drf-spectacular's
    # extend_schema_view copies an inherited method before documenting it).
    for view in lookups_api.LookupView.__subclasses__():
        if "post" in view.__dict__:
            plan["view: lookup"].append((view, "post"))
    for label, targets in plan.items():
        for owner, name in targets:
            clock_on(owner, name, label)
    return [OTHER, *plan]


def _calibrate() -> tuple[float, float]:
    """What one clock costs the caller's layer and the called one, in ns."""
    nothing = timed(lambda: None, "calibration")
    for _ in range(1000):
        nothing()
    _own.clear()
    _calls.clear()
    count = 20000
    _stack[:] = ["calibration caller"]
    _last[0] = _clock()
    for _ in range(count):
        nothing()
    _leave()
    caller = _own["calibration caller"] / count
    called = _own["calibration"] / count
    _own.clear()
    _calls.clear()
    _child_calls.clear()
    _stack[:] = [OTHER]
    return caller, called


def main() -> int:
    env = tool_env(DATABASE_NAME, REDIS_DB, DJANGO_SETTINGS_MODULE="bench.settings")
    api_key = fresh_app(env, email="layers@example.test", name="Layers", demo_data=False)
    measure = [sys.executable, "-m", "bench.layers", "--measure", *sys.argv[1:]]
    if sys.argv[1:2] == ["--functions"]:
        measure = [sys.executable, "-m", "bench.layers", *sys.argv[1:]]
    return subprocess.run(measure, env=env | {"BENCH_CPU_KEY": api_key}, check=False).returncode


def measure(names: list[str]) -> int:
    import django

    django.setup()
    import logging

    from django.core.handlers.wsgi import WSGIHandler

    from bench.cpu import call
    from bench.run import SCENARIOS

    # The log lines go to a file, as a server's go to its log, not to the terminal.
    log = tempfile.NamedTemporaryFile("w", prefix="bench-layers-", suffix=".log")  # noqa: SIM115
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(log)
    labels = install()
    labels.append("of which: garbage collection")
    caller_cost, called_cost = _calibrate()
    gc_started = [0]

    def gc_clock(phase, _info):
        if phase == "start":
            gc_started[0] = _clock()
        else:
            _own["of which: garbage collection"] += _clock() - gc_started[0]

    gc.callbacks.append(gc_clock)
    handler = WSGIHandler()
    api_key = os.environ["BENCH_CPU_KEY"]
    lean = {s.name: s for s in SCENARIOS if s.server == "lean"}
    scenarios = [lean[name] for name in names or DEFAULT_SCENARIOS]
    for scenario in scenarios:
        for _ in range(50):  # psycopg prepares the hot statements
            status = call(handler, scenario, api_key)
        if not status.startswith("200"):
            print(f"bench.layers: {scenario.name} answered {status}", file=sys.stderr)
            return 1
    # Per scenario, per round: each layer's own µs per request.
    rounds: dict[str, list[dict[str, float]]] = {s.name: [] for s in scenarios}
    for _ in range(ROUNDS):
        for scenario in scenarios:
            _own.clear()
            _calls.clear()
            _child_calls.clear()
            _stack[:] = [OTHER]
            started = _last[0] = _clock()
            for _ in range(REQUESTS):
                call(handler, scenario, api_key)
            _own[OTHER] += _clock() - _last[0]
            clocks = sum(_calls.values())
            own = {
                label: (
                    _own[label] - _calls[label] * called_cost - _child_calls[label] * caller_cost
                )
                / REQUESTS
                / 1000
                for label in labels
            }
            own["total"] = (
                (_clock() - started - clocks * (caller_cost + called_cost)) / REQUESTS / 1000
            )
            rounds[scenario.name].append(own)
    medians = {
        name: {label: median(r[label] for r in per_round) for label in [*labels, "total"]}
        for name, per_round in rounds.items()
    }
    header = " | ".join(s.name for s in scenarios)
    print(f"| layer (own CPU µs per request, median of {ROUNDS} rounds) | {header} |")
    print("|---|" + "---|" * len(scenarios))
    for label in [*labels, "total"]:
        cells = [medians[s.name][label] for s in scenarios]
        if all(abs(cell) < 0.5 for cell in cells):
            continue
        text = " | ".join("—" if abs(cell) < 0.5 else f"{cell:.0f}" for cell in cells)
        print(f"| {'**total**' if label == 'total' else label} | {text} |")
    return 0


def functions(name: str, count: int = 40) -> int:
    """`--functions SCENARIO`: cProfile's `count` costliest functions by own time, for a
    look below the layers (cProfile's clocks cost more than the layers' do)."""
    import cProfile
    import logging
    import pstats

    import django

    django.setup()
    from django.core.handlers.wsgi import WSGIHandler

    from bench.cpu import call
    from bench.run import SCENARIOS

    logging.disable(logging.CRITICAL)
    handler = WSGIHandler()
    api_key = os.environ["BENCH_CPU_KEY"]
    scenario = next(s for s in SCENARIOS if s.server == "lean" and s.name == name)
    for _ in range(50):
        call(handler, scenario, api_key)
    profile = cProfile.Profile(time.thread_time_ns, 1e-9)  # CPU, not the waits
    profile.enable()
    for _ in range(REQUESTS):
        call(handler, scenario, api_key)
    profile.disable()
    stats = pstats.Stats(profile)
    stats.sort_stats("tottime").print_stats(count)
    # The project's own functions by the time spent in them and what they call.
    stats.sort_stats("cumulative").print_stats(r"/(accounts|catalog|lookups|phoneintel)/", count)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--measure"]:
        sys.exit(measure(sys.argv[2:]))
    if sys.argv[1:2] == ["--functions"] and "BENCH_CPU_KEY" in os.environ:
        sys.exit(functions(sys.argv[2]))
    sys.exit(main())
