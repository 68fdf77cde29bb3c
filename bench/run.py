"""Throughput and latency of API endpoints against floors that do the same unavoidable work.

Run with `make bench`; bench/README.md says what is measured and how to add a scenario.
Sets up its own PostgreSQL database and Redis DB, starts gunicorn, drives it with wrk
and always stops gunicorn again.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from statistics import median

import psycopg

from harness.app import ROOT, AppError, Server, fresh_app, start_gunicorn, stop, tool_env
from harness.wire import WireCounter

RESULTS = ROOT / "bench" / "results" / "latest.json"
# The servers' logs (JSON, one line per API request, as in production), one file each.
SERVER_LOGS = ROOT / "bench" / "results"

DATABASE_NAME = "phoneintel_bench"
REDIS_DB = 14
# Servers by name: the project's settings, and the same with /v1/ through the site's
# middleware too (what the lean API middleware saves).
SERVERS = {"lean": "bench.settings", "all-mw": "bench.settings_site_middleware"}
WORKERS = 2
# Each worker listens on a socket of its own (SO_REUSEPORT), so the kernel spreads wrk's
# connections over the workers by their addresses. On one shared socket the worker that
# wakes first accepts a burst of them, often all: a worker is one core of Python, and with
# all 8 connections on one, a round measured half the server (lookup: 580 req/s with 8/0
# against 950 with 4/4, seen with `ss -tnp`), which made the rates bimodal from round to
# round. With 16 connections both workers keep both threads busy in any likely split.
# (gunicorn.conf.py keeps the shared socket: a worker's own socket resets the connections
# still waiting in it when the worker is recycled.)
SERVER_ARGS = ("--reuse-port",)
WRK_THREADS = 1
WRK_CONNECTIONS = 16
WARMUP_SECONDS = 2
SECONDS = int(os.environ.get("BENCH_SECONDS", "5"))
# Each round gives every scenario SECONDS in slices of SLICE_SECONDS, the scenarios taking
# turns slice by slice: this machine's speed drifts by 15% and more within seconds, and a
# target and its floor each measured for 5 s on end saw different machines (account /
# floor-get ranged 79%-118% over the rounds of one run). A second apart they see the same.
SLICE_SECONDS = int(os.environ.get("BENCH_SLICE_SECONDS", "1"))
SLICES = max(1, SECONDS // SLICE_SECONDS)
# The report takes the median over rounds, so one noisy stretch does not decide a figure.
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "6"))


@dataclass(frozen=True)
class Target:
    """A scenario against its floor (bench/urls.py), in one run: its throughput at least
    `throughput` of the floor's, and its server CPU per request (workers, PostgreSQL and
    Redis) at most `cpu` times the floor's."""

    floor: str
    throughput: float
    cpu: float

    def bar(self, name: str, throughput: float, cpu: float) -> str:
        """One line per target: each ratio against its bar, and whether it is met."""
        return (
            f"{name}/{self.floor}: server CPU {cpu:.2f}x (target <= {self.cpu:.2f}x)"
            f" {_met(cpu <= self.cpu)}; throughput {throughput:.2f}"
            f" (target >= {self.throughput:.2f}) {_met(throughput >= self.throughput)}"
        )


def _met(met: bool) -> str:
    return "MET" if met else "NOT MET"


TARGETS = {
    "lookup": Target("floor", throughput=0.75, cpu=1.25),
    "account": Target("floor-get", throughput=0.75, cpu=1.25),
}
# What the in-process tools (bench/cpu.py, bench/instructions.py) compare each scenario
# with: a target with its floor, a bulk call with a single lookup.
REFERENCES = {name: target.floor for name, target in TARGETS.items()} | {
    "bulk50": "lookup",
    "lookup-unlogged": "lookup",
}


def against_reference(name: str, figures: dict[str, float]) -> str:
    """`name`'s figure as a multiple of its reference's (`1.18x floor-get`), or ''."""
    reference = REFERENCES.get(name)
    if reference not in figures:
        return ""
    return f"{figures[name] / figures[reference]:.2f}x {reference}"


# Requests per scenario whose round trips are counted, after warm-ups enough for psycopg to
# have prepared the hot statements (it prepares one after `prepare_threshold` runs, which
# costs one extra round trip once per connection).
COUNTED_REQUESTS = 5
WARMUP_REQUESTS = 10

# Replaced by the key issued for the run.
AUTH = {"Authorization": "Bearer {api_key}"}


@dataclass(frozen=True)
class Scenario:
    name: str
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    # Sent as JSON (with Content-Type: application/json) when not None.
    body: object = None
    # A fresh Idempotency-Key on every request, so nothing is a replay.
    unique_idempotency_key: bool = False
    # Which of SERVERS answers it.
    server: str = "lean"

    def resolved_headers(self, api_key: str) -> dict[str, str]:
        headers = {name: value.format(api_key=api_key) for name, value in self.headers.items()}
        if self.body is not None:
            headers.setdefault("Content-Type", "application/json")
        if self.unique_idempotency_key:
            headers["Idempotency-Key"] = f"bench-verify-{uuid.uuid4()}"
        return headers

    @cached_property  # once: the in-process tools count each request's work, not the client's
    def encoded_body(self) -> bytes | None:
        return None if self.body is None else json.dumps(self.body).encode()


# `bare` is the baseline every other scenario is compared with; keep it first.
BULK_INPUTS = [{"phone": f"+4479123456{i:02d}"} for i in range(50)]

SCENARIOS = [
    Scenario("bare", "GET", "/bench/bare"),
    # Each target next to its floor (bench/urls.py: the wire's unavoidable work on DRF, with
    # no code of ours), so the two run close in time: this machine's speed drifts.
    Scenario("floor", "POST", "/v1/bench/floor"),
    Scenario("lookup", "POST", "/v1/data/phone-lookups", AUTH, {"phone": "+14155550123"}),
    # The same lookup without its log line and metrics (bench/middleware.py).
    Scenario(
        "lookup-quiet",
        "POST",
        "/v1/data/phone-lookups",
        {**AUTH, "X-Bench-Quiet": "1"},
        {"phone": "+14155550123"},
    ),
    # The same lookup without its developer request log entry (accounts/request_log_writer.py), its
    # log line and metrics kept: what the request log costs (bench/middleware.py).
    Scenario(
        "lookup-unlogged",
        "POST",
        "/v1/data/phone-lookups",
        {**AUTH, "X-Bench-Unlogged": "1"},
        {"phone": "+14155550123"},
    ),
    Scenario(
        "bulk50",
        "POST",
        "/v1/data/bulk-lookups",
        AUTH,
        {"product": "phone-lookup", "inputs": BULK_INPUTS},
        unique_idempotency_key=True,
    ),
    Scenario("floor-get", "GET", "/v1/bench/floor-get"),
    Scenario("account", "GET", "/v1/data/account", headers=AUTH),
    Scenario("account-all-mw", "GET", "/v1/data/account", headers=AUTH, server="all-mw"),
]
# `BENCH_SCENARIOS=floor-get,account` runs only those (and `bare`, the baseline).
if os.environ.get("BENCH_SCENARIOS"):
    _chosen = {"bare", *os.environ["BENCH_SCENARIOS"].split(",")}
    SCENARIOS = [scenario for scenario in SCENARIOS if scenario.name in _chosen]


@dataclass(frozen=True)
class Result:
    name: str
    method: str
    path: str
    requests_per_second: float
    p50_ms: float
    p99_ms: float
    requests: int
    non_2xx: int
    socket_errors: int
    # CPU milliseconds per request: the server's workers, PostgreSQL's and Redis's processes.
    cpu_ms: dict[str, float] = field(default_factory=dict)


class BenchError(Exception):
    pass


def main() -> int:
    # SIGTERM (from make or a CI runner) unwinds like Ctrl-C, so the finally below runs.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    env = bench_env()
    wrk = ensure_wrk()
    servers: dict[str, Server] = {}
    try:
        api_key = fresh_app(env, email="bench@example.test", name="Bench", demo_data=False)
        round_trips = count_round_trips(env, api_key)
        for name, settings_module in SERVERS.items():
            if not any(scenario.server == name for scenario in SCENARIOS):
                continue
            servers[name] = start_gunicorn(
                env | {"DJANGO_SETTINGS_MODULE": settings_module},
                workers=WORKERS,
                log=SERVER_LOGS / f"gunicorn-{name}.log",
                args=SERVER_ARGS,
            )
        for scenario in SCENARIOS:
            verify(servers[scenario.server].url, scenario, api_key)
        rounds = run_rounds(wrk, servers, api_key, env)
    except (BenchError, AppError) as error:
        print(f"bench: {error}", file=sys.stderr)
        return 1
    finally:
        for server in servers.values():
            stop(server)

    report(rounds, round_trips, threads=gunicorn_threads(env))
    failed = sorted({r.name for results in rounds for r in results if r.non_2xx or r.socket_errors})
    if failed:
        print(f"bench: errors during the run in {', '.join(failed)}; see above.", file=sys.stderr)
        return 1
    return 0


# --- Setup -----------------------------------------------------------------


def bench_env() -> dict[str, str]:
    """The Makefile's env with the bench's own database and Redis DB."""
    return tool_env(
        DATABASE_NAME,
        REDIS_DB,
        DJANGO_SETTINGS_MODULE=SERVERS["lean"],
        # No worker recycling mid-run: a fresh worker starts cold (no prepared statements)
        # and takes its CPU time with it, which would blur both the rates and the CPU figures.
        GUNICORN_MAX_REQUESTS="0",
        # Nor new PostgreSQL connections: each would be a new server process, cold.
        CONN_MAX_AGE="3600",
    )


def gunicorn_threads(env: dict[str, str]) -> int:
    """The threads per worker that gunicorn.conf.py gives the bench's servers (its default,
    or GUNICORN_THREADS), read from the file as gunicorn reads it, in a process of its own."""
    read = "import runpy; print(runpy.run_path('gunicorn.conf.py')['threads'])"
    # A directory given, so that reading the file creates none for the metrics.
    env = env | {"PROMETHEUS_MULTIPROC_DIR": tempfile.gettempdir()}
    output = subprocess.run(
        [sys.executable, "-c", read], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout
    return int(output)


def ensure_wrk() -> str:
    wrk = shutil.which("wrk")
    if wrk:
        return wrk
    print("wrk is not installed; installing it with apt-get.", flush=True)
    install = ["apt-get", "install", "-y", "-q", "wrk"]
    apt_env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    if subprocess.run(install, env=apt_env, check=False).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=apt_env, check=True)
        subprocess.run(install, env=apt_env, check=True)
    wrk = shutil.which("wrk")
    if not wrk:
        raise SystemExit("bench: wrk is still not on PATH after apt-get install.")
    return wrk


# --- Round trips -----------------------------------------------------------


def count_round_trips(env: dict[str, str], api_key: str) -> dict[str, tuple[float, float]]:
    """(PostgreSQL round trips, Redis commands) per request of each scenario, read off the
    wire through counting proxies (harness/wire.py), on one worker with warm connections."""
    postgres_url, redis_url = env["DATABASE_URL"], env["REDIS_URL"]
    postgres = WireCounter(_port(postgres_url, 5432), "postgresql")
    redis_ = WireCounter(_port(redis_url, 6379), "redis")
    counted = {}
    server = None
    try:
        server = start_gunicorn(
            env
            | {
                "DATABASE_URL": _with_port(postgres_url, postgres.port),
                "REDIS_URL": _with_port(redis_url, redis_.port),
                # One thread, one PostgreSQL connection: the warm-up prepares its statements.
                "GUNICORN_THREADS": "1",
                # The request log's writer thread waits, so the counts are the requests'
                # own: its batches go after the answers, on a connection of its own.
                "REQUEST_LOG_FLUSH_SECONDS": "3600",
            },
            workers=1,
            log=SERVER_LOGS / "gunicorn-counted.log",
        )
        for scenario in SCENARIOS:
            if scenario.server != "lean":
                continue
            for _ in range(WARMUP_REQUESTS):
                verify(server.url, scenario, api_key)
            postgres.reset()
            redis_.reset()
            for _ in range(COUNTED_REQUESTS):
                verify(server.url, scenario, api_key)
            counted[scenario.name] = (
                postgres.count / COUNTED_REQUESTS,
                redis_.count / COUNTED_REQUESTS,
            )
    finally:
        if server is not None:
            stop(server)
        postgres.close()
        redis_.close()
    return counted


def _port(url: str, default: int) -> int:
    return urllib.parse.urlsplit(url).port or default


def _with_port(url: str, port: int) -> str:
    parts = urllib.parse.urlsplit(url)
    host = parts.netloc.rsplit("@", 1)
    address = f"127.0.0.1:{port}"
    netloc = f"{host[0]}@{address}" if len(host) == 2 else address
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


# --- Measuring -------------------------------------------------------------


def run_rounds(
    wrk: str, servers: dict[str, Server], api_key: str, env: dict[str, str]
) -> list[list[Result]]:
    """Each round's result per scenario, in SCENARIOS' order: SLICES slices of SLICE_SECONDS
    each, the scenarios taking turns (every other turn backwards, so that no scenario always
    runs right after the same one), after one warm-up of each scenario for the whole run."""
    with tempfile.TemporaryDirectory(prefix="bench-") as scripts:

        def run(scenario: Scenario, seconds: int) -> Result:
            server = servers[scenario.server]
            return measure(wrk, server, scenario, api_key, Path(scripts), env, seconds)

        # Once: each thread then keeps its PostgreSQL connection and prepared statements.
        print(f"Warm-up: {WARMUP_SECONDS} s per scenario", flush=True)
        for scenario in SCENARIOS:
            run(scenario, WARMUP_SECONDS)
        rounds = []
        for number in range(1, ROUNDS + 1):
            print(
                f"Round {number} of {ROUNDS}: {SLICES} x {SLICE_SECONDS} s per scenario, in turns",
                flush=True,
            )
            turns = []
            for turn in range(SLICES):
                order = SCENARIOS if turn % 2 == 0 else SCENARIOS[::-1]
                slices = {scenario.name: run(scenario, SLICE_SECONDS) for scenario in order}
                turns.append([slices[scenario.name] for scenario in SCENARIOS])
            rounds.append([combined(slices) for slices in zip(*turns, strict=True)])
    return rounds


def verify(base_url: str, scenario: Scenario, api_key: str) -> None:
    """One request that must answer 200, so nothing measures an error page."""
    request = urllib.request.Request(
        base_url + scenario.path,
        data=scenario.encoded_body,
        headers=scenario.resolved_headers(api_key),
        method=scenario.method,
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            status, body = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, body = error.code, error.read()
    if status != 200:
        raise BenchError(
            f"{scenario.name}: {scenario.method} {scenario.path} answered {status}, not 200:\n"
            + body.decode(errors="replace")
        )


def lua_string(value: str) -> str:
    """A Lua string literal; anything but printable ASCII becomes a decimal escape."""
    out = []
    for byte in value.encode():
        char = chr(byte)
        if char in '"\\' or not 32 <= byte < 127:
            out.append(f"\\{byte:03d}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def wrk_script(scenario: Scenario, api_key: str, run_id: str) -> str:
    lines = [f"wrk.method = {lua_string(scenario.method)}"]
    for name, value in scenario.resolved_headers(api_key).items():
        lines.append(f"wrk.headers[{lua_string(name)}] = {lua_string(value)}")
    body = scenario.encoded_body
    if body is not None:
        lines.append(f"wrk.body = {lua_string(body.decode())}")
    if scenario.unique_idempotency_key:
        # The run's id, the wrk thread's number and a counter make every key new. (Not
        # math.random: wrk seeds it the same way in every run, so keys would repeat
        # across runs and measure replays.)
        lines += [
            "local threads = 0",
            "setup = function(thread)",
            "  threads = threads + 1",
            '  thread:set("thread_number", threads)',
            "end",
            "local counter = 0",
            "request = function()",
            "  counter = counter + 1",
            f'  wrk.headers["Idempotency-Key"] = "bench-" .. {lua_string(run_id)}'
            ' .. "-" .. thread_number .. "-" .. counter',
            "  return wrk.format()",
            "end",
        ]
    return "\n".join(lines) + "\n"


def run_wrk(wrk: str, url: str, script: Path, seconds: int) -> str:
    command = [
        wrk,
        f"-t{WRK_THREADS}",
        f"-c{WRK_CONNECTIONS}",
        f"-d{seconds}s",
        "--latency",
        *("-s", str(script)),
        url,
    ]
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise BenchError(f"wrk failed ({completed.returncode}):\n{completed.stderr}")
    return completed.stdout


def measure(
    wrk: str,
    server: Server,
    scenario: Scenario,
    api_key: str,
    scripts: Path,
    env: dict[str, str],
    seconds: int,
) -> Result:
    """One wrk run of `seconds`, with the CPU its requests cost the server and the stores."""
    process = server.process
    url = server.url + scenario.path
    answers_before = stored_answers(env) if scenario.unique_idempotency_key else 0
    script = scripts / f"{scenario.name}-{uuid.uuid4().hex}.lua"
    script.write_text(wrk_script(scenario, api_key, run_id=script.stem))
    cpu_before = cpu_seconds(process.pid)
    output = run_wrk(wrk, url, script, seconds)
    cpu_used = {name: cpu_seconds(process.pid)[name] - used for name, used in cpu_before.items()}
    try:
        result = parse_wrk(scenario, output)
    except (AttributeError, ValueError):
        raise BenchError(f"could not parse wrk's output:\n{output}") from None
    per_request = {name: used * 1000 / max(1, result.requests) for name, used in cpu_used.items()}
    if scenario.unique_idempotency_key:
        # Every request must have run for real: a replay is cheap and would flatter it.
        stored = stored_answers(env) - answers_before
        if stored < result.requests:
            raise BenchError(
                f"{scenario.name}: {result.requests} requests but only {stored} new stored"
                " answers, so some were replays of an earlier Idempotency-Key."
            )
    return replace(result, cpu_ms=per_request)


def combined(slices: tuple[Result, ...]) -> Result:
    """A round's slices of one scenario as one result: their requests and errors added, req/s
    over their time together, CPU per request over all their requests, and the median of
    their p50s and of their p99s (wrk reports percentiles, not the latencies behind them)."""
    requests = sum(run.requests for run in slices)
    cpu_ms = {
        name: round(sum(run.cpu_ms[name] * run.requests for run in slices) / max(1, requests), 3)
        for name in CPU_PARTS
    }
    return replace(
        slices[0],
        requests_per_second=sum(run.requests_per_second for run in slices) / len(slices),
        p50_ms=median(run.p50_ms for run in slices),
        p99_ms=median(run.p99_ms for run in slices),
        requests=requests,
        non_2xx=sum(run.non_2xx for run in slices),
        socket_errors=sum(run.socket_errors for run in slices),
        cpu_ms=cpu_ms,
    )


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
CPU_PARTS = ("app", "postgresql", "redis")


def cpu_seconds(server_pid: int) -> dict[str, float]:
    """CPU time so far (user + system) of the server's workers, PostgreSQL and Redis."""
    used = dict.fromkeys(CPU_PARTS, 0.0)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # gone since the listing
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        parent, ticks = int(fields[1]), int(fields[11]) + int(fields[12])
        if parent == server_pid:
            used["app"] += ticks / _CLOCK_TICKS
        elif name.startswith("postgres"):
            used["postgresql"] += ticks / _CLOCK_TICKS
        elif name.startswith(("redis-server", "valkey-server")):
            used["redis"] += ticks / _CLOCK_TICKS
    return used


def stored_answers(env: dict[str, str]) -> int:
    """Idempotency records in the bench database (lookups.IdempotentRequest)."""
    with psycopg.connect(env["DATABASE_URL"]) as connection:
        return connection.execute("SELECT count(*) FROM lookups_idempotentrequest").fetchone()[0]


_TIME_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}


def _ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)([a-z]+)", text).groups()
    return float(number) * _TIME_UNITS_MS[unit]


def parse_wrk(scenario: Scenario, output: str) -> Result:
    def find(pattern: str) -> str:
        return re.search(pattern, output, re.MULTILINE).group(1)

    socket_errors = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    return Result(
        name=scenario.name,
        method=scenario.method,
        path=scenario.path,
        requests_per_second=float(find(r"^Requests/sec:\s+([\d.]+)")),
        p50_ms=_ms(find(r"^\s+50%\s+(\S+)")),
        p99_ms=_ms(find(r"^\s+99%\s+(\S+)")),
        requests=int(find(r"^\s+(\d+) requests in")),
        non_2xx=int(non_2xx.group(1)) if non_2xx else 0,
        socket_errors=sum(map(int, socket_errors.groups())) if socket_errors else 0,
    )


# --- Report ----------------------------------------------------------------


def report(
    rounds: list[list[Result]], round_trips: dict[str, tuple[float, float]], *, threads: int
) -> None:
    """Per scenario, the median over rounds; ratios are taken within each round, then the
    median, so one noisy stretch does not decide a figure. `threads`: per gunicorn worker."""
    rows = []
    print()
    print(
        f"{'scenario':<15} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'vs bare':>8}"
        f" {'(rounds)':>10} {'PG rt':>6} {'Redis':>6}  {'CPU ms: app/pg/redis':>20}  errors"
    )
    for index, scenario in enumerate(SCENARIOS):
        runs = [results[index] for results in rounds]
        ratios = [
            run.requests_per_second / results[0].requests_per_second
            for run, results in zip(runs, rounds, strict=True)
        ]
        postgres, redis_commands = round_trips.get(scenario.name, (None, None))
        row = {
            "scenario": scenario.name,
            "method": scenario.method,
            "path": scenario.path,
            "requestsPerSecond": median([run.requests_per_second for run in runs]),
            "p50Ms": median([run.p50_ms for run in runs]),
            "p99Ms": median([run.p99_ms for run in runs]),
            "ratioVsBare": round(median(ratios), 4),
            "ratioRange": [round(min(ratios), 4), round(max(ratios), 4)],
            "postgresRoundTrips": postgres,
            "redisCommands": redis_commands,
            "rounds": [asdict(run) for run in runs],
        }
        errors = sum(run.non_2xx + run.socket_errors for run in runs)
        spread = f"{min(ratios):.0%}-{max(ratios):.0%}"
        wire = f"{_trips(postgres):>6} {_trips(redis_commands):>6}"
        cpu = {name: median([run.cpu_ms.get(name, 0.0) for run in runs]) for name in CPU_PARTS}
        row["cpuMsPerRequest"] = cpu
        cpu_text = "/".join(f"{cpu[name]:.2f}" for name in CPU_PARTS)
        print(
            f"{row['scenario']:<15} {row['requestsPerSecond']:>9.1f} {row['p50Ms']:>8.2f} "
            f"{row['p99Ms']:>8.2f} {row['ratioVsBare']:>7.0%} {spread:>10} {wire}"
            f"  {cpu_text:>20}  {errors or '-'}"
        )
        rows.append(row)

    by_name = {row["scenario"]: row for row in rows}
    print(
        f"\nMedians of {len(rounds)} round(s) of {SECONDS} s per scenario, in slices of"
        f" {SLICE_SECONDS} s taken in turns; gunicorn {WORKERS} workers x {threads} threads."
    )
    checks = {}
    bars = []
    for name, target in TARGETS.items():
        floor = target.floor
        if not {name, floor} <= by_name.keys():
            continue
        per_round = _per_round(by_name, name, floor)
        # Server CPU per request (workers, PostgreSQL and Redis together) over the floor's,
        # round by round. On a shared machine it moves less from run to run than req/s does.
        by_cpu = median(
            [
                sum(run["cpu_ms"].values()) / sum(base["cpu_ms"].values())
                for run, base in zip(by_name[name]["rounds"], by_name[floor]["rounds"], strict=True)
            ]
        )
        checks[f"{name}/{floor}"] = {
            "perRound": per_round,
            "median": median(per_round),
            "cpuRatioMedian": by_cpu,
            "throughputMet": median(per_round) >= target.throughput,
            "cpuMet": by_cpu <= target.cpu,
        }
        rounds_text = ", ".join(f"{ratio:.0%}" for ratio in per_round)
        print(f"{name}/{floor} throughput by round: {rounds_text}")
        bars.append(target.bar(name, median(per_round), by_cpu))
    if "account" in by_name and "account-all-mw" in by_name:
        gain = _per_round(by_name, "account", "account-all-mw")
        print(f"account, lean /v1/ middleware vs all of it: {median(gain):.2f}x")
    if "lookup" in by_name and "lookup-quiet" in by_name:
        # Taken within each round, then the median, like the ratios above.
        ratio = median(_per_round(by_name, "lookup", "lookup-quiet"))
        print(
            f"lookup with metrics and JSON log line: {by_name['lookup']['requestsPerSecond']:.1f}"
            f" req/s; without: {by_name['lookup-quiet']['requestsPerSecond']:.1f} req/s"
            f" (on/off {ratio:.0%})"
        )
    if "lookup" in by_name and "lookup-unlogged" in by_name:
        # The request log's entry: recorded in memory by the request, written by each worker's
        # writer thread in batches, so its cost is the worker's CPU and PostgreSQL's.
        ratio = median(_per_round(by_name, "lookup", "lookup-unlogged"))
        by_cpu = median(
            [
                sum(off["cpu_ms"].values()) / sum(on["cpu_ms"].values())
                for on, off in zip(
                    by_name["lookup"]["rounds"], by_name["lookup-unlogged"]["rounds"], strict=True
                )
            ]
        )
        checks["lookup/lookup-unlogged"] = {
            "perRound": _per_round(by_name, "lookup", "lookup-unlogged"),
            "median": ratio,
            "byCpuMedian": by_cpu,
        }
        print(
            f"lookup with the request log: {by_name['lookup']['requestsPerSecond']:.1f} req/s;"
            f" without: {by_name['lookup-unlogged']['requestsPerSecond']:.1f} req/s"
            f" (on/off {ratio:.0%}; by CPU per request: {by_cpu:.0%})"
        )
    if "lookup" in by_name and "bulk50" in by_name:
        pairs = [
            (by_name["lookup"]["rounds"][i], by_name["bulk50"]["rounds"][i])
            for i in range(len(rounds))
        ]
        p50 = median([bulk["p50_ms"] / single["p50_ms"] for single, bulk in pairs])
        p99 = median([bulk["p99_ms"] / single["p99_ms"] for single, bulk in pairs])
        print(
            f"bulk50/lookup latency: p50 {p50:.1f}x, p99 {p99:.1f}x (target <= 2x);"
            f" per item {50 / p50:.0f}x cheaper than single lookups"
        )
    if bars:
        print("\nTargets (medians of the rounds):")
        for bar in bars:
            print(f"  {bar}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "generatedAt": datetime.now(UTC).isoformat(timespec="seconds"),
                "config": {
                    "rounds": len(rounds),
                    "seconds": SECONDS,
                    "sliceSeconds": SLICE_SECONDS,
                    "warmupSeconds": WARMUP_SECONDS,
                    "wrkThreads": WRK_THREADS,
                    "wrkConnections": WRK_CONNECTIONS,
                    "gunicornWorkers": WORKERS,
                    "gunicornThreads": threads,
                    "cpus": os.cpu_count(),
                },
                "scenarios": rows,
                "targets": {name: asdict(target) for name, target in TARGETS.items()},
                "checks": checks,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"Results written to {RESULTS.relative_to(ROOT)}")


def _per_round(by_name: dict, name: str, reference: str) -> list[float]:
    """`name`'s req/s over `reference`'s, round by round (they ran close in time)."""
    return [
        run["requests_per_second"] / base["requests_per_second"]
        for run, base in zip(by_name[name]["rounds"], by_name[reference]["rounds"], strict=True)
    ]


def _trips(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
