"""A recording HTTP proxy in front of Statehouse that can answer in its stead or hold requests:
to see what the plugin sends (headers, tokens, how many requests), to make Statehouse's 503s
happen, and to keep a request on its way for as long as a test needs."""

from __future__ import annotations

import json
import re
import threading
import typing as t
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import urllib3

if t.TYPE_CHECKING:
    import ssl

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


@dataclass
class Exchange:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    status: int
    response_headers: dict[str, str]
    response_body: bytes

    def json(self) -> t.Any:
        return json.loads(self.response_body) if self.response_body else None


@dataclass
class Fault:
    """Answer the next ``times`` requests matching ``method`` and ``path`` (a regex) with
    ``status``/``problem``; with ``forward`` the request reaches Statehouse first (its answer is
    then lost on the way back, as when a connection drops)."""

    method: str
    path: str
    status: int
    problem: str
    times: int = 1
    forward: bool = False
    retry_after: str | None = "1"


@dataclass
class Hold:
    """Hold every request matching ``method`` and ``path`` (a regex) until ``gate`` is set."""

    method: str
    path: str
    gate: threading.Event = field(default_factory=threading.Event)
    arrived: threading.Event = field(default_factory=threading.Event)


@dataclass
class Proxy:
    upstream: str
    exchanges: list[Exchange] = field(default_factory=list)
    arrivals: list[tuple[str, str]] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    holds: list[Hold] = field(default_factory=list)
    port: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def hold(self, method: str, path: str) -> Hold:
        held = Hold(method, path)
        with self._lock:
            self.holds.append(held)
        return held

    def wait_if_held(self, method: str, path: str) -> None:
        with self._lock:
            holds = [h for h in self.holds if h.method == method and re.fullmatch(h.path, path)]
        for held in holds:
            held.arrived.set()
            held.gate.wait(60)

    def uri(self, prefix: str = "") -> str:
        return f"statehouse://127.0.0.1:{self.port}/{prefix}"

    def take_fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.times > 0 and fault.method == method and re.fullmatch(fault.path, path):
                    fault.times -= 1
                    return fault
        return None

    def record(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)

    def seen(self, method: str | None = None, path: str | None = None) -> list[Exchange]:
        with self._lock:
            return [
                e
                for e in self.exchanges
                if (method is None or e.method == method)
                and (path is None or re.fullmatch(path, e.path))
            ]


def start(upstream: str, tls: ssl.SSLContext | None = None) -> tuple[Proxy, ThreadingHTTPServer]:
    """Serve on a loopback port (over TLS with ``tls``), forwarding to ``upstream``."""
    proxy = Proxy(upstream=upstream)
    pool = urllib3.PoolManager(maxsize=8)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: t.Any) -> None:
            del format, args

        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            with proxy._lock:
                proxy.arrivals.append((self.command, self.path))
            proxy.wait_if_held(self.command, self.path.split("?")[0])
            fault = proxy.take_fault(self.command, self.path.split("?")[0])
            if fault is None or fault.forward:
                upstream = pool.request(
                    self.command,
                    proxy.upstream + self.path,
                    body=body or None,
                    headers=headers,
                    retries=False,
                    redirect=False,
                    timeout=120,
                )
                status, response_headers, data = (
                    upstream.status,
                    dict(upstream.headers),
                    upstream.data,
                )
            if fault is not None:
                problem = {
                    "type": f"urn:statehouse:problem:{fault.problem}",
                    "title": "Service Unavailable",
                    "status": fault.status,
                    "detail": f"injected by the test proxy ({fault.problem})",
                }
                status, data = fault.status, json.dumps(problem).encode()
                response_headers = {"Content-Type": "application/problem+json"}
                if fault.retry_after is not None:
                    response_headers["Retry-After"] = fault.retry_after
            proxy.record(
                Exchange(self.command, self.path, headers, body, status, response_headers, data)
            )
            self.send_response(status)
            for key, value in response_headers.items():
                if key.lower() not in HOP_BY_HOP:
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_PATCH = do_DELETE = _handle  # noqa: N815 - its names

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    proxy.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return proxy, server
