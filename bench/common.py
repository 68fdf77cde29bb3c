"""What every benchmark here needs: its own fresh database, and manage.py against it."""

import os
import subprocess
import sys
from pathlib import Path

import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parent.parent


def database_url(name: str) -> str:
    """The Makefile's DATABASE_URL, pointed at the benchmark's own database."""
    return os.environ["DATABASE_URL"].rsplit("/", 1)[0] + "/" + name


def reset_database(name: str) -> None:
    maintenance = database_url("postgres")
    identifier = sql.Identifier(name)
    with psycopg.connect(maintenance, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(identifier))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(identifier))


def manage(env: dict[str, str], *args: str) -> str:
    completed = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        sys.stderr.write(completed.stdout + completed.stderr)
        raise SystemExit(f"bench: manage.py {args[0]} failed ({completed.returncode}).")
    return completed.stdout
