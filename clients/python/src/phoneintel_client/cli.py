"""The `phoneintel` command: lookup, account, products and bulk files.

Exit status: 0 done, 1 the API refused or could not be reached, 2 a usage problem or a
bad file, 130 stopped by Ctrl-C (a bulk run continues with `--resume`).
"""

from __future__ import annotations

import argparse
import csv
import json
import signal
import sys
import time
import uuid
from pathlib import Path
from typing import Any, NoReturn

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from phoneintel_client._core import ENV_API_KEY, ENV_BASE_URL
from phoneintel_client.bulkfile import (
    BadFile,
    RunState,
    output_columns,
    output_is_complete,
    output_row,
    read_numbers,
)
from phoneintel_client.client import Client
from phoneintel_client.errors import APIConnectionError, APIError, ErrorCode
from phoneintel_client.models import PRODUCTS, Account, Response, flatten

EXIT_API, EXIT_USAGE, EXIT_INTERRUPTED = 1, 2, 130


class UsageProblem(Exception):
    pass


def main() -> int:
    """The console script: `run()` with Ctrl-C and SIGTERM stopping it cleanly."""
    # Even when a parent started us with SIGINT ignored (a background job).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    return run(sys.argv[1:])


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        return args.command(args, out, err)
    except UsageProblem as problem:
        err.print(f"phoneintel: {problem}", markup=False)
        return EXIT_USAGE
    except APIError as error:
        _print_api_error(err, error)
        return EXIT_API
    except APIConnectionError as error:
        err.print(f"phoneintel: no answer from {args.base_url or 'the API'}: {error}", markup=False)
        return EXIT_API
    except KeyboardInterrupt:
        err.print("phoneintel: stopped.")
        return EXIT_INTERRUPTED


def _interrupt(signum: int, frame: object) -> NoReturn:
    raise KeyboardInterrupt


def parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--base-url", help=f"the API's address (default: ${ENV_BASE_URL}, else localhost:8000)"
    )
    common.add_argument("--timeout", type=float, default=10.0, help="seconds per request")
    common.add_argument("--max-retries", type=int, default=3)
    common.add_argument(
        "--max-retry-wait", type=float, default=30.0, help="longest wait before a retry (s)"
    )
    top = argparse.ArgumentParser(
        prog="phoneintel",
        description=f"The phoneintel API from the command line; the key is in ${ENV_API_KEY}.",
    )
    commands = top.add_subparsers(required=True, metavar="COMMAND")

    lookup = commands.add_parser("lookup", parents=[common], help="look one number up")
    lookup.add_argument("phone")
    lookup.add_argument("--product", choices=PRODUCTS, default="phone-lookup")
    lookup.add_argument("--country", help="ISO alpha-2 region for a number in national form")
    lookup.add_argument("--json", action="store_true", help="print the API's JSON answer")
    lookup.set_defaults(command=run_lookup)

    account = commands.add_parser("account", parents=[common], help="usage against quota")
    account.add_argument("--json", action="store_true")
    account.set_defaults(command=run_account)

    products = commands.add_parser("products", parents=[common], help="the product catalog")
    products.add_argument("--json", action="store_true")
    products.set_defaults(command=run_products)

    bulk = commands.add_parser(
        "bulk",
        parents=[common],
        help="look up every number of a CSV file",
        description="Reads a CSV file with a phone column (and an optional country column),"
        " sends calls of 50 and writes one row per input to --out, in input order.",
    )
    bulk.add_argument("file", type=Path)
    bulk.add_argument("--product", choices=PRODUCTS, required=True)
    bulk.add_argument("--out", type=Path, required=True, help="the results CSV file")
    bulk.add_argument(
        "--resume", action="store_true", help="continue a stopped run; no row is charged twice"
    )
    bulk.add_argument("--run-id", help="names the run's Idempotency-Keys (default: random)")
    bulk.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar (default: when the terminal shows it)",
    )
    bulk.set_defaults(command=run_bulk)
    return top


def _client(args: argparse.Namespace, *, key_needed: bool = True) -> Client:
    client = Client(
        base_url=args.base_url,
        timeout=args.timeout,
        max_retries=args.max_retries,
        max_retry_wait=args.max_retry_wait,
    )
    if key_needed and not client._settings.api_key:
        client.close()
        raise UsageProblem(f"set {ENV_API_KEY} to your API key (pi_beta_…)")
    return client


def run_lookup(args: argparse.Namespace, out: Console, err: Console) -> int:
    with _client(args) as client:
        answer = client.lookup(args.product, args.phone, country=args.country)
    if args.json:
        print(json.dumps(answer.raw, indent=2, ensure_ascii=False))
        return 0
    rows = flatten(answer.data)
    width = max(len(name) for name in rows)
    for name, value in rows.items():
        shown = ", ".join(value) if isinstance(value, list) else _shown(value)
        out.print(f"{name:<{width}}  {shown}", markup=False)
    out.print(_meta_line(answer), markup=False)
    return 0


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _meta_line(answer: Response[Any]) -> str:
    units = answer.meta.units_charged
    parts = [f"{units} unit{'' if units == 1 else 's'} charged"]
    if answer.replayed:
        parts[0] += " (a replayed answer: not charged again)"
    usage = answer.meta.usage
    if usage is not None:
        parts.append(f"{usage.units_remaining} of {usage.units_quota} left in {usage.period}")
    parts.append(f"request {answer.meta.request_id}")
    return " · ".join(parts)


def run_account(args: argparse.Namespace, out: Console, err: Console) -> int:
    with _client(args) as client:
        answer = client.account()
    if args.json:
        print(json.dumps(answer.raw, indent=2, ensure_ascii=False))
        return 0
    for line in account_lines(answer.data):
        out.print(line, markup=False)
    return 0


def account_lines(account: Account) -> list[str]:
    usage, quota = account.usage, account.quota.monthly_units
    share = usage.units_used / quota if quota else 1.0
    filled = min(20, round(share * 20))
    key = account.key
    lines = [
        f"Account     {account.account.name} ({account.account.id})",
        f"Key         {key.prefix}… ({key.name}), expires {key.expires_at:%Y-%m-%d}",
        f"Usage       {usage.units_used} of {quota} units in {usage.period}"
        f" [{'#' * filled}{'.' * (20 - filled)}] {share:.0%}",
        f"Remaining   {usage.units_remaining} units until {usage.resets_at:%Y-%m-%d %H:%M} UTC",
    ]
    if usage.by_product:
        shares = ", ".join(f"{product} {units}" for product, units in usage.by_product.items())
        lines.append(f"By product  {shares}")
    limit = account.rate_limit
    lines.append(f"Rate limit  {limit.limit} requests per {limit.window_seconds} s")
    return lines


def run_products(args: argparse.Namespace, out: Console, err: Console) -> int:
    with _client(args, key_needed=False) as client:
        answer = client.products()
    if args.json:
        print(json.dumps(answer.raw, indent=2, ensure_ascii=False))
        return 0
    for product in answer.data.products:
        cost = "-" if product.unit_cost is None else f"{product.unit_cost} unit"
        endpoint = f"{product.endpoint.method} {product.endpoint.path}" if product.endpoint else ""
        out.print(
            f"{product.product:<22} {product.availability:<8} {cost:<7} {endpoint}", markup=False
        )
    return 0


class RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("-/s" if speed is None else f"{speed:,.0f}/s")


def _progress(enabled: bool, err: Console) -> Progress:
    return Progress(
        BarColumn(bar_width=20),
        MofNCompleteColumn(),
        TextColumn("numbers · {task.fields[units]} units charged ·"),
        RateColumn(),
        TextColumn("·"),
        TimeRemainingColumn(),
        TextColumn("left"),
        console=err,
        disable=not enabled,
    )


def run_bulk(args: argparse.Namespace, out: Console, err: Console) -> int:
    try:
        rows, digest = read_numbers(args.file)
    except BadFile as problem:
        raise UsageProblem(problem) from None
    state_path = RunState.path_for(args.out)
    if args.resume and not state_path.exists() and output_is_complete(args.out, rows, args.product):
        # A script that always passes --resume runs again after a finished run: success,
        # with nothing sent, nothing charged and the output left as it is.
        err.print(
            f"{len(rows)} rows -> {args.out}: the run finished already; nothing sent,"
            " nothing charged",
            markup=False,
        )
        return 0
    state = _start_or_resume(args, state_path, digest)
    columns = output_columns(args.product)
    started = time.monotonic()
    before = state.rows_done
    with (
        _client(args) as client,
        args.out.open("r+" if args.resume else "w", newline="", encoding="utf-8") as sink,
    ):
        sink.truncate(state.out_bytes)
        sink.seek(state.out_bytes)
        writer = csv.DictWriter(sink, fieldnames=columns, restval="")
        if state.out_bytes == 0:
            writer.writeheader()
            sink.flush()
            state.out_bytes = sink.tell()
            state.save(state_path)
        todo = rows[state.rows_done :]
        run = client.bulk(
            args.product, [row.as_input() for row in todo], run_id=state.run_id, start=before
        )
        show = err.is_terminal if args.progress is None else args.progress
        try:
            with _progress(show, err) as progress:
                task = progress.add_task(
                    args.product, total=len(rows), completed=before, units=state.units_charged
                )
                for chunk in run.chunks():
                    for item in chunk.items:
                        writer.writerow(output_row(rows[item.index], item))
                    sink.flush()
                    state.rows_done += len(chunk.items)
                    state.units_charged += chunk.units_charged
                    state.calls += 1
                    state.replayed_calls += chunk.response.replayed
                    state.out_bytes = sink.tell()
                    state.save(state_path)
                    progress.update(task, advance=len(chunk.items), units=state.units_charged)
        except (KeyboardInterrupt, APIError, APIConnectionError) as stop:
            _print_stopped(err, args, state, len(rows), stop)
            return EXIT_INTERRUPTED if isinstance(stop, KeyboardInterrupt) else EXIT_API
    state_path.unlink()
    seconds = time.monotonic() - started
    err.print(
        f"{len(rows)} rows -> {args.out}: {state.units_charged} units charged in"
        f" {state.calls} calls ({state.replayed_calls} replayed);"
        f" {state.rows_done - before} rows in {seconds:.1f} s",
        markup=False,
    )
    return 0


def _start_or_resume(args: argparse.Namespace, state_path: Path, digest: str) -> RunState:
    if args.resume:
        if not state_path.exists():
            raise UsageProblem(f"nothing to resume: no {state_path}")
        state = RunState.load(state_path)
        if state.product != args.product:
            raise UsageProblem(f"the stopped run was for --product {state.product}")
        if state.input_sha256 != digest:
            raise UsageProblem(f"{args.file} changed since the run stopped; it cannot resume")
        if args.run_id and args.run_id != state.run_id:
            raise UsageProblem(f"the stopped run's id is {state.run_id}")
        written = args.out.stat().st_size if args.out.exists() else -1
        if written < state.out_bytes:
            raise UsageProblem(f"{args.out} is shorter than the stopped run left it")
        return state
    if state_path.exists():
        raise UsageProblem(
            f"{args.out} belongs to a stopped run: add --resume to continue it,"
            f" or delete {state_path} to start again (rows sent again are charged again)"
        )
    return RunState(
        run_id=args.run_id or uuid.uuid4().hex, product=args.product, input_sha256=digest
    )


def _print_stopped(
    err: Console, args: argparse.Namespace, state: RunState, total: int, stop: BaseException
) -> None:
    if isinstance(stop, APIError):
        _print_api_error(err, stop)
    elif isinstance(stop, APIConnectionError):
        err.print(f"phoneintel: {stop}", markup=False)
    command = f"phoneintel bulk {args.file} --product {args.product} --out {args.out} --resume"
    err.print(
        f"Stopped after {state.rows_done} of {total} rows ({state.units_charged} units"
        f" charged); they are in {args.out}. Continue with:\n  {command}",
        markup=False,
    )


def _print_api_error(err: Console, error: APIError) -> None:
    err.print(f"phoneintel: {error}", markup=False)
    for detail in error.details:
        err.print(f"  {detail.field}: {detail.message} ({detail.code})", markup=False)
    if error.retry_after is not None and error.code != ErrorCode.QUOTA_EXCEEDED:
        err.print(f"  retry after {error.retry_after:.0f} s", markup=False)


if __name__ == "__main__":
    sys.exit(main())
