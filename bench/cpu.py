"""CPU milliseconds per request of each scenario, in one process, with no HTTP server.

`python -m bench.cpu [scenario ...]` (with the Makefile's environment) sets up its own
database and Redis DB, then calls Django's WSGI handler in a loop for each of `bench.run`'s
scenarios on the lean server, in turn, for several rounds, and prints each scenario's least
CPU time per request over the rounds and its ratio to the scenario's floor. PostgreSQL and
Redis are real; only the HTTP server and the load generator are left out, so the figures
move far less from run to run than `make bench`'s req/s on a shared machine, and show what
a change to our own code saves. The wire is the same as under gunicorn; the process's CPU
includes the client side of each round trip, not PostgreSQL's or Redis's.
"""

import os
import subprocess
import sys
import time
from statistics import median

from harness.app import fresh_app, tool_env
from harness.wsgi import serve

DATABASE_NAME = "phoneintel_cpu"
# Its own DB: the tests use 15, bench.run 14, make schemathesis 13, and each tool flushes its own.
REDIS_DB = 12
REQUESTS = int(os.environ.get("BENCH_CPU_REQUESTS", "1000"))
ROUNDS = int(os.environ.get("BENCH_CPU_ROUNDS", "5"))
# The bulk call does 50 lookups: fewer of them take as long.
BULK_SHARE = 10


def main() -> int:
    env = tool_env(DATABASE_NAME, REDIS_DB, DJANGO_SETTINGS_MODULE="bench.settings")
    api_key = fresh_app(env, email="cpu@example.test", name="CPU", demo_data=False)
    measure = [sys.executable, "-m", "bench.cpu", "--measure", *sys.argv[1:]]
    return subprocess.run(measure, env=env | {"BENCH_CPU_KEY": api_key}, check=False).returncode


def measure(names: list[str]) -> int:
    import django

    django.setup()
    import logging

    from django.core.handlers.wsgi import WSGIHandler

    from bench.run import SCENARIOS, TARGETS, against_reference

    logging.disable(logging.CRITICAL)  # the request log would be most of the output
    handler = WSGIHandler()
    api_key = os.environ["BENCH_CPU_KEY"]
    scenarios = [s for s in SCENARIOS if s.server == "lean" and (not names or s.name in names)]
    for scenario in scenarios:  # warm up: psycopg prepares the hot statements
        for _ in range(50):
            status = call(handler, scenario, api_key)
        if not status.startswith("200"):
            print(f"bench.cpu: {scenario.name} answered {status}", file=sys.stderr)
            return 1
    rounds: dict[str, list[float]] = {s.name: [] for s in scenarios}
    for _ in range(ROUNDS):
        for scenario in scenarios:  # in turn, so a slow stretch of the machine hits all
            count = REQUESTS // BULK_SHARE if scenario.unique_idempotency_key else REQUESTS
            started = time.process_time()
            for _ in range(count):
                call(handler, scenario, api_key)
            rounds[scenario.name].append((time.process_time() - started) / count * 1000)
    least = {name: min(times) for name, times in rounds.items()}
    print(f"{'scenario':16} {'CPU ms':>7} {'median':>7}  against")
    for name, times in rounds.items():
        print(
            f"{name:16} {least[name]:7.3f} {median(times):7.3f}  {against_reference(name, least)}"
        )
    for name, target in TARGETS.items():
        if name in least and target.floor in least:
            # Our process only: PostgreSQL's and Redis's CPU, in make bench's figure, are not here.
            ratio = least[name] / least[target.floor]
            print(
                f"{name}/{target.floor} by CPU in one process: {ratio:.2f}x"
                f" (make bench's server CPU target: <= {target.cpu:.2f}x)"
            )
    return 0


def call(handler, scenario, api_key: str) -> str:
    return serve(
        handler,
        scenario.method,
        scenario.path,
        scenario.resolved_headers(api_key),
        scenario.encoded_body or b"",
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--measure"]:
        sys.exit(measure(sys.argv[2:]))
    sys.exit(main())
