"""Fails with one line if the test PostgreSQL or Redis cannot be reached."""

import os
import sys

import psycopg
import redis


def main() -> int:
    database_url = os.environ["DATABASE_URL"]
    redis_url = os.environ["REDIS_URL"]
    try:
        # The server's maintenance database: the test database does not exist yet.
        with psycopg.connect(
            database_url.rsplit("/", 1)[0] + "/postgres", connect_timeout=3
        ) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        print(f"PostgreSQL is not reachable at {database_url}: {first}", file=sys.stderr)
        return 1
    try:
        redis.Redis.from_url(redis_url, socket_connect_timeout=3).ping()
    except redis.RedisError as error:
        print(f"Redis is not reachable at {redis_url}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
