"""The benchmark's second pipeline: `meltano run tap-postgres target-postgres`, MeltanoLabs' tap
and target (``postgres_project/``), between two databases of a PostgreSQL cluster this module
starts for the benchmark (the machine's PostgreSQL binaries; ``initdb`` as the ``postgres`` user
when run as root, which PostgreSQL refuses to be).

The source is one table with an incremental replication key; every run loads it whole (each run
starts from no state) into a schema of its own, checked and dropped after the run, so that every
run does the same work. The bookmarks are the target's: it passes a STATE message on after it
has loaded the rows before it, in batches.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import socket
import subprocess
import tempfile
import typing as t
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from benchmarks.statehouse import BenchmarkError

if t.TYPE_CHECKING:
    from collections.abc import Iterator

PROJECT = Path(__file__).resolve().parent / "postgres_project"
# The source's rows are a second apart from here on: row n's replication key is FIRST + n s.
FIRST = datetime(2026, 1, 1, tzinfo=timezone.utc)
USER = "postgres"


@dataclass(frozen=True)
class Cluster:
    """A running PostgreSQL cluster on a loopback port, trusting local connections."""

    bin_dir: Path
    port: int

    def url(self, database: str) -> str:
        """A SQLAlchemy URL of one of its databases (MeltanoLabs' tap wants a password in it;
        the cluster trusts loopback connections and ignores it)."""
        return f"postgresql://{USER}:benchmark@127.0.0.1:{self.port}/{database}"

    def sql(self, database: str, statements: str) -> str:
        """Run SQL with ``psql``; its unaligned output.

        Raises:
            BenchmarkError: psql failed.
        """
        completed = subprocess.run(
            [
                str(self.bin_dir / "psql"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                USER,
                "-d",
                database,
                "-v",
                "ON_ERROR_STOP=1",
                "-qAt",
            ],
            input=statements,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if completed.returncode != 0:
            raise BenchmarkError(
                f"psql failed ({completed.returncode}): {completed.stderr[-2000:]}"
            )
        return completed.stdout.strip()


def bin_dir() -> Path:
    """The newest PostgreSQL's binaries (Debian keeps them off the PATH).

    Raises:
        BenchmarkError: there is no PostgreSQL here.
    """
    found = sorted(
        (Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")),
        key=lambda d: int(d.parent.name) if d.parent.name.isdigit() else 0,
    )
    if found:
        return found[-1]
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).resolve().parent
    raise BenchmarkError("the postgres pipeline needs PostgreSQL's server (Debian: postgresql)")


@contextlib.contextmanager
def start() -> Iterator[Cluster]:
    """A new cluster in a temporary directory, stopped and removed afterwards."""
    binaries = bin_dir()
    as_user = ["runuser", "-u", USER, "--"] if os.geteuid() == 0 else []
    home = Path(tempfile.mkdtemp(prefix="statehouse-bench-pg-"))
    if as_user:
        shutil.chown(home, user=USER)
    data = home / "data"
    port = _free_port()

    def server(program: str, *args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [*as_user, str(binaries / program), "-D", str(data), *args],
            capture_output=True,
            check=False,
            timeout=300,
        )

    try:
        for step in (
            ("initdb", "-U", USER, "--auth=trust"),
            ("pg_ctl", "-l", str(home / "log"), "-w", "-o",
             f"-p {port} -k {home} -c listen_addresses=127.0.0.1", "start"),
        ):  # fmt: skip
            done = server(*step)
            if done.returncode != 0:
                raise BenchmarkError(f"PostgreSQL did not start ({step[0]}): {done.stderr!r}")
        try:
            yield Cluster(binaries, port)
        finally:
            server("pg_ctl", "-m", "fast", "-w", "stop")
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PostgresPipeline:
    """tap-postgres from ``source.public.ledger`` to target-postgres in ``warehouse``."""

    cluster: Cluster
    rows: int
    plugins: tuple[str, str] = ("tap-postgres", "target-postgres")
    project: Path = PROJECT
    stream: str = "public-ledger"
    description: str = "PostgreSQL to PostgreSQL, MeltanoLabs' tap and target"

    def prepare(self) -> None:
        """The source table with its rows, and the warehouse database."""
        self.cluster.sql("postgres", "CREATE DATABASE source;\nCREATE DATABASE warehouse;")
        self.cluster.sql(
            "source",
            f"""
            CREATE TABLE public.ledger (
                id bigint PRIMARY KEY, updated_at timestamptz NOT NULL, account text NOT NULL,
                amount double precision NOT NULL, memo text);
            INSERT INTO public.ledger
            SELECT n, timestamptz '{FIRST.isoformat()}' + n * interval '1 second',
                   'account-' || n % 97, (n % 1000) / 7.0, 'entry ' || n
            FROM generate_series(1, {self.rows}) AS n;
            CREATE INDEX ON public.ledger (updated_at);
            """,  # noqa: S608 - the benchmark's own values
        )

    def env(self, suffix: str) -> dict[str, str]:
        """The run's settings: the connections, and a schema of its own to load into."""
        return {
            "TAP_POSTGRES_SQLALCHEMY_URL": self.cluster.url("source"),
            "TARGET_POSTGRES_SQLALCHEMY_URL": self.cluster.url("warehouse"),
            "TARGET_POSTGRES_DEFAULT_TARGET_SCHEMA": _schema(suffix),
        }

    def loaded(self, suffix: str) -> int:
        """The rows the run loaded; its schema is dropped."""
        schema = _schema(suffix)
        try:
            count = f"SELECT count(*) FROM {schema}.ledger;"  # noqa: S608 - a word, see _schema
            return int(self.cluster.sql("warehouse", count))
        finally:
            self.cluster.sql("warehouse", f"DROP SCHEMA IF EXISTS {schema} CASCADE;")

    def last_bookmark(self, value: object) -> bool:
        """Whether a stored replication key value is the last row's."""
        try:
            stored = datetime.fromisoformat(str(value))
        except ValueError:
            return False
        return stored == FIRST + timedelta(seconds=self.rows)


def _schema(suffix: str) -> str:
    return ("run_" + re.sub(r"\W", "_", suffix)).lower()[:63]
