"""Instructions per request of each scenario, counted by valgrind's callgrind.

`python -m bench.instructions [scenario ...]` (with the Makefile's environment; `make
instructions`) sets up its own database and Redis DB, then runs each of `bench.run`'s
scenarios on the lean server in a process under `valgrind --tool=callgrind`, which calls
Django's WSGI handler in a loop as `bench.cpu` does, twice: once with a few requests and
once with more. The difference between the two totals, divided by the difference in
requests, is what one request costs, with the process's start, Django's setup and the
warm-up cancelled out. PostgreSQL and Redis are real, and only this process is counted:
neither the servers' own work nor the kernel's.

An instruction count moves little from run to run for the same code, inputs and machine,
whatever else the machine is doing (seen here: 0.2% to 1.5% between runs of the same
scenario, from a new database and memory layout each time), while req/s and CPU time move
with the machine by far more. So
this is the figure to compare two versions of our code by, and `lookup`/`floor` and
`account`/`floor-get` by it are the bench's targets without the noise (what they leave
out, the servers' CPU and the kernel's, `make bench` prints).
"""

import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from harness.app import ROOT, fresh_app, tool_env

DATABASE_NAME = "phoneintel_instructions"
# Its own DB: the tests use 15, bench.run 14, make schemathesis 13, bench.cpu 12.
REDIS_DB = 11
# Requests in the short and the long run; a bulk call (50 lookups) runs a tenth as many.
SHORT = int(os.environ.get("BENCH_INSTRUCTIONS_SHORT", "50"))
LONG = int(os.environ.get("BENCH_INSTRUCTIONS_LONG", "550"))
BULK_SHARE = 10
WARM_UP = 60  # psycopg prepares the hot statements after 5 runs of each (a bulk call: 6)
DEFAULT_SCENARIOS = ("floor", "lookup", "floor-get", "account", "bulk50")


def main(names: list[str]) -> int:
    if shutil.which("valgrind") is None:
        print("bench.instructions: valgrind is needed (apt-get install valgrind)", file=sys.stderr)
        return 1
    from bench.run import SCENARIOS, TARGETS, against_reference

    lean = {s.name: s for s in SCENARIOS if s.server == "lean"}
    unknown = [name for name in names if name not in lean]
    if unknown:
        print(f"bench.instructions: no scenario {', '.join(unknown)}", file=sys.stderr)
        return 1
    env = tool_env(DATABASE_NAME, REDIS_DB, DJANGO_SETTINGS_MODULE="bench.settings")
    api_key = fresh_app(
        env, email="instructions@example.test", name="Instructions", demo_data=False
    )
    # The same string hashes in every process, so that dicts and sets do the same work each run.
    env = env | {"BENCH_INSTRUCTIONS_KEY": api_key, "PYTHONHASHSEED": "0"}
    scenarios = [lean[name] for name in names or DEFAULT_SCENARIOS]
    # One scenario per core: a count does not depend on what else runs.
    with tempfile.TemporaryDirectory() as out, ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        counts = dict(
            zip(
                [s.name for s in scenarios],
                pool.map(lambda s: per_request(s, env, Path(out)), scenarios),
                strict=True,
            )
        )
    print(f"{'scenario':16} {'instructions':>13}  against")
    for name, count in counts.items():
        print(f"{name:16} {count:13,.0f}  {against_reference(name, counts)}")
    for name, target in TARGETS.items():
        if name in counts and target.floor in counts:
            ratio = counts[name] / counts[target.floor]
            print(
                f"{name}/{target.floor} by instructions: {ratio:.2f}x"
                f" (make bench's server CPU target: <= {target.cpu:.2f}x)"
            )
    return 0


def per_request(scenario, env: dict[str, str], out: Path) -> float:
    """Instructions one request of `scenario` costs (see the module docstring)."""
    short, long = (SHORT, LONG)
    if scenario.unique_idempotency_key:
        short, long = max(1, short // BULK_SHARE), max(2, long // BULK_SHARE)
    totals = [callgrind_total(scenario.name, requests, env, out) for requests in (short, long)]
    return (totals[1] - totals[0]) / (long - short)


def callgrind_total(name: str, requests: int, env: dict[str, str], out: Path) -> int:
    """The instructions of a process that serves `requests` of scenario `name`."""
    path = out / f"{name}.{requests}.callgrind"
    command = [
        *("valgrind", "--tool=callgrind", f"--callgrind-out-file={path}"),
        *(sys.executable, "-m", "bench.instructions", "--serve", name, str(requests)),
    ]
    completed = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if completed.returncode != 0:
        raise RuntimeError(f"bench.instructions: {name} failed:\n{completed.stderr[-2000:]}")
    for line in path.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise RuntimeError(f"bench.instructions: no total in {path}")


def serve(name: str, requests: int) -> int:
    """Run under valgrind: warm up, then `requests` requests of scenario `name`."""
    import django

    django.setup()
    import logging

    from django.core.handlers.wsgi import WSGIHandler

    from bench.cpu import call
    from bench.run import SCENARIOS

    logging.disable(logging.CRITICAL)  # as in bench.cpu
    lean = {s.name: s for s in SCENARIOS if s.server == "lean"}
    scenario = lean[name]
    handler, api_key = WSGIHandler(), os.environ["BENCH_INSTRUCTIONS_KEY"]
    # Every scenario finds the key with this month's usage, as a key in use has it, whatever
    # ran before: the account's answer lists the units by product.
    call(handler, lean["lookup"], api_key)
    for _ in range(WARM_UP // BULK_SHARE if scenario.unique_idempotency_key else WARM_UP):
        status = call(handler, scenario, api_key)
    if not status.startswith("200"):
        print(f"{name} answered {status}", file=sys.stderr)
        return 1
    for _ in range(requests):
        call(handler, scenario, api_key)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        sys.exit(serve(sys.argv[2], int(sys.argv[3])))
    sys.exit(main(sys.argv[1:]))
