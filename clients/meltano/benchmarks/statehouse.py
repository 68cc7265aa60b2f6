"""A Statehouse started from the jar on its embedded default, as the plugin's tests start it, with
one admin token and its engine's ClickHouse HTTP interface open to this process."""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import subprocess
import time
import typing as t
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import urllib3

if t.TYPE_CHECKING:
    from collections.abc import Iterator

STARTED = re.compile(r"Tomcat started on port (\d+)")


class BenchmarkError(Exception):
    """Something the benchmark relies on did not happen: the run is void."""


@dataclass(frozen=True)
class Service:
    """A running Statehouse: its API (with a token that may do anything) and its engine.

    ``engine_password`` is the embedded engine's (``statehouse.clickhouse.embedded.password``);
    its HTTP port is read from the ``clickHouse`` health details.
    """

    port: int
    token: str
    engine_password: str
    pid: int | None = None  # its process, if this machine's: its CPU time is read

    def cpu_seconds(self) -> float | None:
        """CPU time the service's process has used (its engine's included), if known."""
        if self.pid is None:
            return None
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def uri(self) -> str:
        """The plugin's state backend URI."""
        return f"statehouse://127.0.0.1:{self.port}/"

    def document(self, state_id: str) -> t.Any:  # noqa: ANN401 - a JSON document
        """The state document at ``/states/{state_id}``."""
        return self._get(f"/states/{quote(state_id, safe='')}")

    def versions(self, state_id: str) -> list[t.Any]:
        """The versions of the state that Statehouse retains, oldest first."""
        return list(self._get(f"/states/{quote(state_id, safe='')}/versions"))

    def _get(self, path: str) -> t.Any:  # noqa: ANN401 - a JSON document
        answer = urllib3.request(
            "GET",
            self.base_url + path,
            headers={"Authorization": f"Bearer {self.token}"},
            retries=False,
            timeout=60,
        )
        if answer.status != 200:
            raise BenchmarkError(f"GET {path} answered {answer.status}")
        return json.loads(answer.data)

    def engine_url(self) -> str:
        """The embedded engine's ClickHouse HTTP interface (loopback)."""
        answer = urllib3.request(
            "GET",
            f"{self.base_url}/actuator/health/clickHouse",
            headers={"Authorization": f"Bearer {self.token}"},
            retries=False,
            timeout=60,
        )
        details = json.loads(answer.data).get("details", {}) if answer.status == 200 else {}
        if "port" not in details:
            raise BenchmarkError(f"Statehouse's health names no embedded engine port: {details}")
        return f"http://127.0.0.1:{int(details['port'])}"


def environment(token: str, engine_password: str) -> dict[str, str]:
    """Statehouse's settings for one admin token and a known engine password."""
    return {
        "STATEHOUSE_SECURITY_TOKENS_0_NAME": "meltano-benchmark",
        "STATEHOUSE_SECURITY_TOKENS_0_SHA256": hashlib.sha256(token.encode()).hexdigest(),
        "STATEHOUSE_SECURITY_TOKENS_0_SCOPES": "read,write,admin",
        "STATEHOUSE_SECURITY_TOKENS_0_IDS": "*",
        # With a password of our own (rather than a random one) the engine's HTTP interface lets
        # the ClickHouse backend's algorithm in; the port stays 0 (any free one).
        "STATEHOUSE_CLICKHOUSE_EMBEDDED_PASSWORD": engine_password,
    }


@contextmanager
def start(jar: Path, home: Path, cpus: set[int] | None = None) -> Iterator[Service]:
    """Run Statehouse from ``jar`` for the scope, its data and log under ``home``; on ``cpus``
    only, if given."""
    token = "sth_" + secrets.token_urlsafe(32)
    engine_password = secrets.token_urlsafe(32)
    home.mkdir(parents=True, exist_ok=True)
    log = home / "statehouse.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                # As deployed (the Dockerfile's JVM): the optimizing compiler, the default GC.
                "java",
                "-Xmx768m",
                "-jar",
                str(jar.resolve()),
                "--server.port=0",
                "--server.address=127.0.0.1",
                f"--statehouse.clickhouse.embedded.data-directory={home / 'data'}",
            ],
            cwd=home,
            env={**os.environ, **environment(token, engine_password)},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=None if cpus is None else lambda: os.sched_setaffinity(0, cpus),
        )
    try:
        service = Service(_wait_for_port(process, log), token, engine_password, process.pid)
        _wait_until_ready(service)
        yield service
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_for_port(process: subprocess.Popen[bytes], log: Path, timeout: float = 300) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if match := STARTED.search(log.read_text(errors="replace")):
            return int(match.group(1))
        if process.poll() is not None:
            raise BenchmarkError(f"Statehouse exited with {process.returncode}; see {log}")
        time.sleep(0.2)
    raise BenchmarkError(f"Statehouse did not start within {timeout} s; see {log}")


def _wait_until_ready(service: Service, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            url = service.base_url + "/actuator/health/readiness"
            if urllib3.request("GET", url, retries=False, timeout=10).status == 200:
                return
        except urllib3.exceptions.HTTPError:
            pass
        time.sleep(0.2)
    raise BenchmarkError("Statehouse did not become ready")
