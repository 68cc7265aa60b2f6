"""A real Statehouse (the built jar, embedded engine, tokens) and a real Meltano project."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
import typing as t
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, urlencode

import proxy as proxies
import pytest
import urllib3

from benchmarks.meltano_run import MELTANO, QUIET_MELTANO
from meltano_state_backend_statehouse import StatehouseStateStoreManager

FIXTURES = Path(__file__).parent / "fixtures"
STARTED = re.compile(r"Tomcat started on port (\d+)")
PRISTINE_DB = "pristine-meltano.db"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--statehouse-jar",
        default=os.environ.get("STATEHOUSE_JAR"),
        help="the Statehouse jar the tests start (./mvnw -DskipTests package builds it)",
    )


def _secret() -> str:
    return "sth_" + secrets.token_urlsafe(32)


@dataclass
class Answer:
    status: int
    headers: t.Mapping[str, str]
    body: t.Any


@dataclass
class Statehouse:
    """A running Statehouse, and HTTP to it for checking what the plugin did."""

    port: int
    admin_token: str
    dev_token: str
    log: Path
    engine_password: str
    http: urllib3.PoolManager = field(default_factory=lambda: urllib3.PoolManager(maxsize=4))

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def uri(self, prefix: str = "") -> str:
        return f"statehouse://127.0.0.1:{self.port}/{quote(prefix, safe='')}"

    def call(
        self,
        method: str,
        path: str,
        *,
        body: t.Any = None,
        headers: t.Mapping[str, str] | None = None,
        query: t.Mapping[str, str | int] | None = None,
        token: str | None = None,
        content_type: str = "application/json",
    ) -> Answer:
        all_headers = {"Authorization": f"Bearer {token or self.admin_token}", **(headers or {})}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            all_headers["Content-Type"] = content_type
        url = self.base_url + path + ("?" + urlencode(query, quote_via=quote) if query else "")
        response = self.http.request(
            method, url, body=data, headers=all_headers, retries=False, timeout=60
        )
        parsed = json.loads(response.data) if response.data else None
        return Answer(response.status, response.headers, parsed)

    def document(self, state_id: str) -> t.Any:
        """The document at /states/{id}, or None."""
        answer = self.call("GET", "/states/" + quote(state_id, safe=""))
        assert answer.status in (200, 404), answer
        return answer.body if answer.status == 200 else None

    def put(self, state_id: str, document: t.Any) -> None:
        answer = self.call("PUT", "/states/" + quote(state_id, safe=""), body=document)
        assert answer.status in (200, 201), answer

    def ids(self, match: str = "*") -> set[str]:
        answer = self.call("GET", "/states", query={"match": match, "limit": 1000})
        assert answer.status == 200, answer
        assert answer.body["nextCursor"] is None
        return {item["id"] for item in answer.body["items"]}

    def versions(self, state_id: str) -> list[dict[str, t.Any]]:
        answer = self.call("GET", "/states/" + quote(state_id, safe="") + "/versions")
        assert answer.status == 200, answer
        return list(answer.body)

    def lock(self, lock_id: str) -> t.Any:
        """The live lease on ``lock_id`` (without its token), or None."""
        answer = self.call("GET", "/locks/" + quote(lock_id, safe=""))
        assert answer.status in (200, 404), answer
        return answer.body if answer.status == 200 else None


@dataclass
class Launch:
    """A Statehouse process on its way up."""

    process: subprocess.Popen[bytes]
    log: Path
    admin_token: str
    dev_token: str
    engine_password: str
    service: Statehouse | None = None

    def ready(self) -> Statehouse:
        if self.service is None:
            port = _wait_for_port(self.process, self.log, timeout=300)
            service = Statehouse(
                port=port,
                admin_token=self.admin_token,
                dev_token=self.dev_token,
                log=self.log,
                engine_password=self.engine_password,
            )
            _wait_until_ready(service, timeout=120)
            self.service = service
        return self.service

    def kill(self) -> None:
        """kill -9: nothing graceful, the engine's data as the kill left it."""
        self.process.kill()
        self.process.wait()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()


def launch(jar: Path, home: Path, *, port: int = 0, like: Launch | None = None) -> Launch:
    """Starts Statehouse from ``jar`` on its embedded engine, its data under ``home``, with two
    tokens: an admin one for every id and a read/write one for ``dev:*`` ids only (those of
    ``like``, to start it again on the same data and port; else new ones)."""
    admin, dev, engine_password = (
        (like.admin_token, like.dev_token, like.engine_password)
        if like
        else (_secret(), _secret(), _secret())
    )
    # A password of our own for the embedded engine (rather than a random one nobody knows), so
    # that the benchmark's smoke test can reach the engine's ClickHouse HTTP interface.
    env = {**os.environ, "STATEHOUSE_CLICKHOUSE_EMBEDDED_PASSWORD": engine_password}
    for index, (name, secret, scopes, ids) in enumerate(
        [
            ("meltano-admin", admin, "read,write,admin", "*"),
            ("meltano-dev", dev, "read,write", "dev:*"),
        ]
    ):
        prefix = f"STATEHOUSE_SECURITY_TOKENS_{index}_"
        env[prefix + "NAME"] = name
        env[prefix + "SHA256"] = hashlib.sha256(secret.encode()).hexdigest()
        env[prefix + "SCOPES"] = scopes
        env[prefix + "IDS"] = ids
    home.mkdir(parents=True, exist_ok=True)
    log = home / f"statehouse-{len(list(home.glob('statehouse-*.log')))}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                "java",
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-Xmx768m",
                "-jar",
                str(jar.resolve()),
                f"--server.port={port}",
                "--server.address=127.0.0.1",
                f"--statehouse.clickhouse.embedded.data-directory={home / 'data'}",
            ],
            cwd=home,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    return Launch(
        process=process,
        log=log,
        admin_token=admin,
        dev_token=dev,
        engine_password=engine_password,
    )


@pytest.fixture(scope="session", autouse=True)
def statehouse_launch(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> t.Iterator[Launch]:
    """Starts Statehouse from the built jar as the session begins (``launch``)."""
    started = launch(statehouse_jar(request), tmp_path_factory.mktemp("statehouse"))
    try:
        yield started
    finally:
        started.stop()


def statehouse_jar(request: pytest.FixtureRequest) -> Path:
    """The jar the tests start (``--statehouse-jar``)."""
    jar = request.config.getoption("--statehouse-jar")
    if not jar or not Path(jar).is_file():
        pytest.fail(f"--statehouse-jar must name the built jar (got {jar!r})")
    return Path(jar)


@pytest.fixture(scope="session")
def statehouse(statehouse_launch: Launch) -> Statehouse:
    """The running Statehouse."""
    return statehouse_launch.ready()


def _wait_for_port(process: subprocess.Popen[bytes], log: Path, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if match := STARTED.search(log.read_text(errors="replace")):
            return int(match.group(1))
        if process.poll() is not None:
            pytest.fail(f"Statehouse exited with {process.returncode}:\n{log.read_text()[-4000:]}")
        time.sleep(0.2)
    pytest.fail(f"Statehouse did not start within {timeout} s:\n{log.read_text()[-4000:]}")


def _wait_until_ready(service: Statehouse, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if service.call("GET", "/actuator/health/readiness").status == 200:
                return
        except urllib3.exceptions.HTTPError:
            pass
        time.sleep(0.2)
    pytest.fail("Statehouse did not become ready")


@dataclass
class Run:
    """A finished Meltano command."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@dataclass
class MeltanoProject:
    """A copy of the fixture project, its plugins installed, pointed at Statehouse."""

    root: Path
    statehouse: Statehouse
    ledger: Path
    env: dict[str, str]

    def environment(self, **overrides: str) -> dict[str, str]:
        return {**self.env, **overrides}

    def start(
        self, *args: str, env: t.Mapping[str, str] | None = None, cwd: Path | None = None
    ) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-c", MELTANO, *args],
            cwd=cwd or self.root,
            env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def run(
        self,
        *args: str,
        env: t.Mapping[str, str] | None = None,
        cwd: Path | None = None,
        input: str | None = None,
        check: bool = True,
        timeout: float = 420,
    ) -> Run:
        completed = subprocess.run(
            [sys.executable, "-c", MELTANO, *args],
            cwd=cwd or self.root,
            env={**self.env, **(env or {})},
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        result = Run(completed.returncode, completed.stdout, completed.stderr)
        if check and completed.returncode != 0:
            pytest.fail(f"meltano {' '.join(args)} exited {completed.returncode}:\n{result.output}")
        return result

    def run_all(self, *calls: t.Sequence[str], **common: t.Any) -> list[Run]:
        """Several independent commands at once (``common``: keywords of ``run`` for all)."""
        with ThreadPoolExecutor(max_workers=len(calls)) as pool:
            futures = [pool.submit(self.run, *args, **common) for args in calls]
            return [future.result() for future in futures]

    def write_rows(self, ids: t.Iterable[int], path: Path | None = None) -> None:
        with (path or self.ledger).open("a", encoding="utf-8") as rows:
            for row_id in ids:
                rows.write(json.dumps({"id": row_id, "value": f"row {row_id}"}) + "\n")

    def runner(self, name: str) -> MeltanoProject:
        """Another runner of the same project: its own directory and system database (as a
        second machine has), the installed plugins shared. Only the state backend is common."""
        other = self.root.parent / name
        if not other.exists():
            shutil.copytree(self.root, other, ignore=shutil.ignore_patterns(".meltano"))
            system = other / ".meltano"
            system.mkdir()
            # A system database as `meltano install` left it (migrated, no jobs), so that
            # commands started at once in a new runner do not race to create it.
            shutil.copy(self.root.parent / PRISTINE_DB, system / "meltano.db")
            for kind in ("extractors", "loaders"):
                (system / kind).symlink_to(self.root / ".meltano" / kind)
        return MeltanoProject(
            root=other,
            statehouse=self.statehouse,
            ledger=self.ledger,
            env=dict(self.env),
        )


@dataclass
class Install:
    """The fixture project copied to a scratch directory, its plugins being installed."""

    base: Path
    root: Path
    process: subprocess.Popen[str]
    log: Path


@pytest.fixture(scope="session", autouse=True)
def meltano_install(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[Install]:
    """Starts `meltano install` of the fixture project as the session begins (it needs no state
    backend), so that it runs while the first tests do."""
    base = tmp_path_factory.mktemp("meltano")
    root = base / "project"
    shutil.copytree(FIXTURES / "project", root)
    log = base / "install.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-c", MELTANO, "install"],
            cwd=root,
            env={**os.environ, **QUIET_MELTANO},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
        )
    yield Install(base=base, root=root, process=process, log=log)
    if process.poll() is None:
        process.kill()
        process.wait()


@pytest.fixture(scope="session")
def meltano_project(meltano_install: Install, statehouse: Statehouse) -> MeltanoProject:
    """The fixture project with its plugins installed, pointed at Statehouse."""
    if meltano_install.process.wait(timeout=600) != 0:
        pytest.fail(f"meltano install failed:\n{meltano_install.log.read_text()[-6000:]}")
    base = meltano_install.base
    shutil.copy(meltano_install.root / ".meltano" / "meltano.db", base / PRISTINE_DB)
    ledger = base / "ledger.jsonl"
    ledger.touch()
    env = {
        **os.environ,
        **QUIET_MELTANO,
        "MELTANO_STATE_BACKEND_URI": statehouse.uri(),
        "MELTANO_STATE_BACKEND_STATEHOUSE_TOKEN": statehouse.admin_token,
        "TAP_LEDGER_PATH": str(ledger),
        "TARGET_LEDGER_PATH": str(base / "loaded"),
    }
    return MeltanoProject(root=meltano_install.root, statehouse=statehouse, ledger=ledger, env=env)


def kill_group(process: subprocess.Popen[str]) -> None:
    """kill -9 the command and everything it started (its extractor and loader), if still there."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def loaded(project: MeltanoProject, directory: Path) -> list[int]:
    """The ids the loader wrote to ``directory``."""
    path = directory / "rows.jsonl"
    if not path.exists():
        return []
    return [json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Tests that run Meltano go last: the plugins' installation runs while the others do.
    items.sort(key=lambda item: "meltano_project" in getattr(item, "fixturenames", ()))


@pytest.fixture
def proxy(statehouse: Statehouse) -> t.Iterator[proxies.Proxy]:
    """A recording, fault-injecting proxy in front of Statehouse."""
    recorder, server = proxies.start(statehouse.base_url)
    yield recorder
    server.shutdown()
    server.server_close()


@pytest.fixture
def prefix(request: pytest.FixtureRequest) -> str:
    """An id prefix of the test's own, so that tests never see each other's states."""
    return f"{request.node.name[:40]}-{secrets.token_hex(3)}/"


@pytest.fixture
def backend(statehouse: Statehouse, prefix: str) -> t.Callable[..., StatehouseStateStoreManager]:
    """Backends as Meltano makes them (the URI and the settings as keyword arguments)."""

    def make(uri: str | None = None, **settings: t.Any) -> StatehouseStateStoreManager:
        settings.setdefault("token", statehouse.admin_token)
        settings.setdefault("lock_timeout_seconds", 10)
        settings.setdefault("lock_retry_seconds", 1)
        return StatehouseStateStoreManager(uri=uri or statehouse.uri(prefix), **settings)

    return make
