"""Throughput and latency of API endpoints against a bare Django JSON view.

Run with `make bench`; bench/README.md says what is measured and how to add a scenario.
Sets up its own PostgreSQL database and Redis DB, starts gunicorn, drives it with wrk
and always stops gunicorn again.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from statistics import median

import psycopg
import redis

from bench.common import ROOT, database_url, manage, reset_database

RESULTS = ROOT / "bench" / "results" / "latest.json"
SERVER_LOG = ROOT / "bench" / "results" / "gunicorn.log"

DATABASE_NAME = "phoneintel_bench"
REDIS_DB = 14
SETTINGS_MODULE = "bench.settings"
READY_PATH = "/bench/bare"
WORKERS = 2
WRK_THREADS = 1
WRK_CONNECTIONS = 8
WARMUP_SECONDS = 2
SECONDS = int(os.environ.get("BENCH_SECONDS", "10"))
# Every round runs every scenario once; the report takes the median over rounds, so one
# noisy stretch on a shared machine does not decide a figure.
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
TARGETS = {"account": 0.60, "lookup": 0.50}
# The floor of each target's scenario (bench/urls.py).
FLOORS = {"account": "drf+pg+redis", "lookup": "drf+3pg+redis"}

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

    def resolved_headers(self, api_key: str) -> dict[str, str]:
        headers = {name: value.format(api_key=api_key) for name, value in self.headers.items()}
        if self.body is not None:
            headers.setdefault("Content-Type", "application/json")
        if self.unique_idempotency_key:
            headers["Idempotency-Key"] = f"bench-verify-{uuid.uuid4()}"
        return headers

    def encoded_body(self) -> bytes | None:
        return None if self.body is None else json.dumps(self.body).encode()


# `bare` is the baseline every other scenario is compared with; keep it first.
BULK_INPUTS = [{"phone": f"+4479123456{i:02d}"} for i in range(50)]

SCENARIOS = [
    Scenario("bare", "GET", "/bench/bare"),
    # Floors (bench/urls.py): what the stack costs before any work of ours.
    Scenario("bare+redis", "GET", "/bench/bare-redis"),
    Scenario("bare+pg", "GET", "/bench/bare-pg"),
    Scenario("drf", "GET", "/bench/drf"),
    Scenario("drf+pg+redis", "GET", "/bench/drf-pg-redis"),
    Scenario("drf+3pg+redis", "GET", "/bench/drf-3pg-redis"),
    Scenario("account", "GET", "/v1/data/account", headers=AUTH),
    Scenario("lookup", "POST", "/v1/data/phone-lookups", AUTH, {"phone": "+14155550123"}),
    # The same lookup without its log line and metrics (bench/middleware.py).
    Scenario(
        "lookup-quiet",
        "POST",
        "/v1/data/phone-lookups",
        {**AUTH, "X-Bench-Quiet": "1"},
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
]


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


class BenchError(Exception):
    pass


def main() -> int:
    # SIGTERM (from make or a CI runner) unwinds like Ctrl-C, so the finally below runs.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    env = bench_env()
    wrk = ensure_wrk()
    reset_database(DATABASE_NAME)
    redis.Redis.from_url(env["REDIS_URL"]).flushdb()
    manage(env, "migrate", "--noinput", "-v0")
    api_key = issue_key(env)

    server = None
    try:
        server, base_url = start_gunicorn(env)
        for scenario in SCENARIOS:
            verify(base_url, scenario, api_key)
        with tempfile.TemporaryDirectory(prefix="bench-") as scripts:
            rounds = []
            for number in range(1, ROUNDS + 1):
                print(f"Round {number} of {ROUNDS}", flush=True)
                rounds.append(
                    [
                        measure(wrk, base_url, scenario, api_key, Path(scripts), env)
                        for scenario in SCENARIOS
                    ]
                )
    except BenchError as error:
        print(f"bench: {error}", file=sys.stderr)
        return 1
    finally:
        if server is not None:
            stop(server)

    report(rounds)
    failed = sorted({r.name for results in rounds for r in results if r.non_2xx or r.socket_errors})
    if failed:
        print(f"bench: errors during the run in {', '.join(failed)}; see above.", file=sys.stderr)
        return 1
    return 0


# --- Setup -----------------------------------------------------------------


def bench_env() -> dict[str, str]:
    """The Makefile's env with the bench's own database and Redis DB."""
    base_redis = os.environ["REDIS_URL"].rsplit("/", 1)[0]
    return {
        **os.environ,
        "DATABASE_URL": database_url(DATABASE_NAME),
        "REDIS_URL": f"{base_redis}/{REDIS_DB}",
        "DJANGO_SETTINGS_MODULE": SETTINGS_MODULE,
        "PYTHONUNBUFFERED": "1",
    }


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


def issue_key(env: dict[str, str]) -> str:
    output = manage(
        env,
        *("apikey", "create", "--email", "bench@example.test", "--name", "Bench"),
        *("--rate-limit", "1000000/m", "--quota", "100000000", "--json"),
    )
    return json.loads(output.strip().splitlines()[-1])["key"]


# --- Server ----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_gunicorn(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        *("--config", str(ROOT / "gunicorn.conf.py")),
        *("--bind", f"127.0.0.1:{port}"),
        *("--workers", str(WORKERS)),
        *("--log-level", "warning"),
        "phoneintel.wsgi",
    ]
    # One JSON line per API request: to a file, as in production, not to this terminal.
    SERVER_LOG.parent.mkdir(parents=True, exist_ok=True)
    with SERVER_LOG.open("wb") as log:
        # Its own session, so it can be stopped as a group and Ctrl-C reaches only us.
        server = subprocess.Popen(command, cwd=ROOT, env=env, stderr=log, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(server, base_url + READY_PATH)
    except BaseException:
        stop(server)
        raise
    return server, base_url


def wait_ready(server: subprocess.Popen, url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise BenchError(f"gunicorn exited at start ({server.returncode}); see {SERVER_LOG}.")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except urllib.error.HTTPError:
            return  # Up, if unwell: verify() shows what it answers.
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.1)
    raise BenchError(f"gunicorn did not answer within {timeout:.0f} s.")


def stop(server: subprocess.Popen) -> None:
    try:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=15)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


# --- Measuring -------------------------------------------------------------


def verify(base_url: str, scenario: Scenario, api_key: str) -> None:
    """One request that must answer 200, so nothing measures an error page."""
    request = urllib.request.Request(
        base_url + scenario.path,
        data=scenario.encoded_body(),
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
    body = scenario.encoded_body()
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
    wrk: str, base_url: str, scenario: Scenario, api_key: str, scripts: Path, env: dict[str, str]
) -> Result:
    url = base_url + scenario.path
    print(f"  {scenario.name}: warm-up {WARMUP_SECONDS} s, then {SECONDS} s ...", flush=True)
    answers_before = stored_answers(env)
    outputs = []
    for seconds in (WARMUP_SECONDS, SECONDS):
        script = scripts / f"{scenario.name}-{uuid.uuid4().hex}.lua"
        script.write_text(wrk_script(scenario, api_key, run_id=script.stem))
        outputs.append(run_wrk(wrk, url, script, seconds))
    try:
        warmup, result = (parse_wrk(scenario, output) for output in outputs)
    except (AttributeError, ValueError):
        raise BenchError(f"could not parse wrk's output:\n{outputs}") from None
    if scenario.unique_idempotency_key:
        # Every request must have run for real: a replay is cheap and would flatter it.
        sent = warmup.requests + result.requests
        stored = stored_answers(env) - answers_before
        if stored < sent:
            raise BenchError(
                f"{scenario.name}: {sent} requests but only {stored} new stored answers,"
                " so some were replays of an earlier Idempotency-Key."
            )
    return result


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


def report(rounds: list[list[Result]]) -> None:
    """Per scenario, the median over rounds; ratios to `bare` are taken within each round."""
    rows = []
    print()
    print(
        f"{'scenario':<13} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'vs bare':>8}"
        f" {'(rounds)':>13}  errors"
    )
    for index, scenario in enumerate(SCENARIOS):
        runs = [results[index] for results in rounds]
        ratios = [
            run.requests_per_second / results[0].requests_per_second
            for run, results in zip(runs, rounds, strict=True)
        ]
        row = {
            "scenario": scenario.name,
            "method": scenario.method,
            "path": scenario.path,
            "requestsPerSecond": median([run.requests_per_second for run in runs]),
            "p50Ms": median([run.p50_ms for run in runs]),
            "p99Ms": median([run.p99_ms for run in runs]),
            "ratioVsBare": round(median(ratios), 4),
            "ratioRange": [round(min(ratios), 4), round(max(ratios), 4)],
            "rounds": [asdict(run) for run in runs],
        }
        errors = sum(run.non_2xx + run.socket_errors for run in runs)
        spread = f"{min(ratios):.0%}-{max(ratios):.0%}"
        print(
            f"{row['scenario']:<13} {row['requestsPerSecond']:>9.1f} {row['p50Ms']:>8.2f} "
            f"{row['p99Ms']:>8.2f} {row['ratioVsBare']:>7.0%} {spread:>13}  {errors or '-'}"
        )
        rows.append(row)

    by_name = {row["scenario"]: row for row in rows}
    print(f"\nMedians of {len(rounds)} round(s) of {SECONDS} s per scenario.")
    for name, target in TARGETS.items():
        if name in by_name:
            line = f"{name}/bare throughput ratio: {by_name[name]['ratioVsBare']:.0%}"
            line += f" (target >= {target:.0%})"
            floor = by_name.get(FLOORS[name])
            if floor:
                line += f"; its floor {floor['scenario']}: {floor['ratioVsBare']:.0%}"
            print(line)
    if "lookup" in by_name and "lookup-quiet" in by_name:
        # Taken within each round, then the median, like the ratios above.
        pairs = [
            (by_name["lookup"]["rounds"][i], by_name["lookup-quiet"]["rounds"][i])
            for i in range(len(rounds))
        ]
        ratio = median(
            [on["requests_per_second"] / off["requests_per_second"] for on, off in pairs]
        )
        print(
            f"lookup with metrics and JSON log line: {by_name['lookup']['requestsPerSecond']:.1f}"
            f" req/s; without: {by_name['lookup-quiet']['requestsPerSecond']:.1f} req/s"
            f" (on/off {ratio:.0%})"
        )
    if "lookup" in by_name and "bulk50" in by_name:
        # Like the throughput ratios: taken within each round, then the median.
        pairs = [
            (by_name["lookup"]["rounds"][i], by_name["bulk50"]["rounds"][i])
            for i in range(len(rounds))
        ]
        p50 = median([bulk["p50_ms"] / single["p50_ms"] for single, bulk in pairs])
        p99 = median([bulk["p99_ms"] / single["p99_ms"] for single, bulk in pairs])
        print(
            f"bulk50/lookup latency: p50 {p50:.1f}x, p99 {p99:.1f}x (target <= 3x);"
            f" per item {50 / p50:.0f}x cheaper than single lookups"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {
                "generatedAt": datetime.now(UTC).isoformat(timespec="seconds"),
                "config": {
                    "rounds": len(rounds),
                    "seconds": SECONDS,
                    "warmupSeconds": WARMUP_SECONDS,
                    "wrkThreads": WRK_THREADS,
                    "wrkConnections": WRK_CONNECTIONS,
                    "gunicornWorkers": WORKERS,
                    "cpus": os.cpu_count(),
                },
                "scenarios": rows,
                "targets": TARGETS,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"Results written to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
