"""A stand-in for GitHub on 127.0.0.1: the two API endpoints and raw files, with faults on request.

It serves a snapshot directory (the vendored one by default) as the branch ``master`` of
``ml-energy/leaderboard``:

- ``GET /api/repos/<repo>/commits/<ref>``                     the commit a ref resolves to
- ``GET /api/repos/<repo>/commits?sha=&path=&per_page=1``     the last commit to change a file
- ``GET /api/repos/<repo>/commits?sha=&until=&per_page=1``    the head of master at a time
- ``GET /raw/<repo>/<commit>/<path>``                         the file, with an ETag (``W/"…"``)

``fail(route, *faults)`` queues faults for the next requests on a route (``head``, ``history``,
``raw``); ``publish({path: bytes or None})`` makes a new commit (``None`` deletes a file).
``hits`` counts requests per route.
"""

from __future__ import annotations

import hashlib
import json
import socket
import struct
import sys
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

REPOSITORY = "ml-energy/leaderboard"


@dataclass
class Fault:
    kind: str  # delay | status | reset | truncate | html | big | ratelimit | list | body | drip
    status: int = 200
    seconds: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    size: int = 0
    body: bytes = b""


class StandIn:
    def __init__(self, snapshot: Path) -> None:
        manifest = json.loads((snapshot / "snapshot.json").read_text())
        self.repository = manifest.get("repository", REPOSITORY)  # whose files it serves
        self.head = manifest["commit"]
        self.head_date = manifest["commit_date"]
        self.commits = [(self.head, self.head_date)]  # master's history, oldest first
        self.contents: dict[tuple[str, str], bytes] = {}
        self.changed_by: dict[tuple[str, str], tuple[str, str]] = {}
        self.paths = sorted(manifest["files"])
        for path, record in manifest["files"].items():
            self.contents[(self.head, path)] = (snapshot / path).read_bytes()
            self.changed_by[(self.head, path)] = (record["last_commit"], record["last_commit_date"])
        self.faults: dict[str, deque[Fault]] = {"head": deque(), "history": deque(), "raw": deque()}
        self.hits: Counter[str] = Counter()
        self.authorization: dict[str, list[str | None]] = {"api": [], "raw": []}
        self.conditional: list[str | None] = []
        self.slow_sent: list[int] = []  # per dripped or trickled answer: how much went out
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        # shutdown() waits for the serving loop to poll: 0.5 s by default, once per test.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    # -- control ----------------------------------------------------------------------------
    @property
    def base(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def api_base(self) -> str:
        return f"{self.base}/api"

    @property
    def raw_base(self) -> str:
        return f"{self.base}/raw"

    def start(self) -> StandIn:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def slow_answers(self, count: int, *, wait: float = 10.0) -> list[int]:
        """What each of the first ``count`` dripped or trickled answers sent before the client
        hung up, once their handlers finished (each ends at its next write after the hang-up)."""
        end = time.monotonic() + wait
        while len(self.slow_sent) < count and time.monotonic() < end:
            time.sleep(0.02)
        return self.slow_sent[:count]

    def fail(self, route: str, *faults: Fault) -> None:
        with self._lock:
            self.faults[route].extend(faults)

    def publish(
        self, changes: dict[str, bytes | None], *, date: str = "2026-11-29T10:00:00Z"
    ) -> str:
        """A new commit on master that changes, adds or deletes (``None``) some files."""
        with self._lock:
            parent = self.head
            commit = hashlib.sha1(
                parent.encode() + repr(sorted(changes.items())).encode()
            ).hexdigest()
            for path in sorted({*self.paths, *changes}):
                key = (commit, path)
                if path in changes:
                    content = changes[path]
                    if content is None:
                        continue  # deleted: no history, no raw file at this commit
                    self.contents[key] = content
                    self.changed_by[key] = (commit, date)
                elif (parent, path) in self.contents:
                    self.contents[key] = self.contents[(parent, path)]
                    self.changed_by[key] = self.changed_by[(parent, path)]
            self.paths = sorted(path for c, path in self.contents if c == commit)
            self.head, self.head_date = commit, date
            self.commits.append((commit, date))
            return commit

    # -- serving ----------------------------------------------------------------------------
    def _next_fault(self, route: str) -> Fault | None:
        with self._lock:
            self.hits[route] += 1
            queue = self.faults[route]
            return queue.popleft() if queue else None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                prefix = f"/api/repos/{standin.repository}/commits"
                if parts.path.startswith(f"{prefix}/"):
                    standin.authorization["api"].append(self.headers.get("Authorization"))
                    self._answer("head", lambda: self._head(parts.path[len(prefix) + 1 :]))
                elif parts.path == prefix:
                    standin.authorization["api"].append(self.headers.get("Authorization"))
                    self._answer("history", lambda: self._history(parse_qs(parts.query)))
                elif parts.path.startswith(f"/raw/{standin.repository}/"):
                    standin.authorization["raw"].append(self.headers.get("Authorization"))
                    rest = parts.path[len(f"/raw/{standin.repository}/") :]
                    commit, _, path = rest.partition("/")
                    self._answer("raw", lambda: self._raw(commit, path))
                else:
                    self._send(404, b'{"message": "Not Found"}')

            def _head(self, ref: str) -> tuple[int, bytes, dict[str, str]]:
                if ref == "master":
                    return 200, _commit_json(standin.head, standin.head_date), {}
                dates = dict(standin.commits)
                if ref not in dates:
                    return 404, b'{"message": "No commit found for SHA: ' + ref.encode() + b'"}', {}
                return 200, _commit_json(ref, dates[ref]), {}

            def _history(self, query: dict[str, list[str]]) -> tuple[int, bytes, dict[str, str]]:
                if "until" in query and "path" not in query:  # master as it was at a time
                    until = datetime.fromisoformat(query["until"][0])
                    made = [
                        (sha, date)
                        for sha, date in standin.commits
                        if datetime.fromisoformat(date) <= until
                    ]
                    return 200, b"[" + b",".join(_commit_json(*c) for c in made[-1:]) + b"]", {}
                key = (query.get("sha", [""])[0], query.get("path", [""])[0])
                if key not in standin.changed_by:
                    return 200, b"[]", {}
                last, date = standin.changed_by[key]
                return 200, b"[" + _commit_json(last, date) + b"]", {}

            def _raw(self, commit: str, path: str) -> tuple[int, bytes, dict[str, str]]:
                content = standin.contents.get((commit, path))
                if content is None:
                    return 404, b"404: Not Found", {}
                etag = f'W/"{hashlib.sha256(content).hexdigest()[:32]}"'
                standin.conditional.append(self.headers.get("If-None-Match"))
                if self.headers.get("If-None-Match") == etag:
                    return 304, b"", {"ETag": etag}
                return 200, content, {"ETag": etag, "Content-Type": "text/plain; charset=utf-8"}

            def _answer(self, route: str, normal: Any) -> None:
                fault = standin._next_fault(route)
                if fault is None:
                    status, body, headers = normal()
                    self._send(status, body, headers)
                elif fault.kind == "delay":
                    time.sleep(fault.seconds)
                    status, body, headers = normal()
                    self._send(status, body, headers)
                elif fault.kind == "status":
                    self._send(fault.status, b'{"message": "injected"}', fault.headers)
                elif fault.kind == "ratelimit":
                    headers = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "1900000000"}
                    headers.update(fault.headers)
                    self._send(403, b'{"message": "API rate limit exceeded"}', headers)
                elif fault.kind == "body":  # any status, headers and body, verbatim
                    self._send(fault.status, fault.body, fault.headers)
                elif fault.kind == "drip":  # the normal answer, one header line every `seconds`
                    status, body, headers = normal()
                    self._send_dripped(status, body, headers, fault)
                elif fault.kind == "trickle":  # `status` and a body of `size` bytes, slowly
                    self._send_trickled(fault)
                elif fault.kind == "html":
                    page = b"<!DOCTYPE html><html><body>Please sign in</body></html>"
                    self._send(200, page, {"Content-Type": "text/html"})
                elif fault.kind == "list":
                    self._send(200, b"[1, 2, 3]")
                elif fault.kind == "truncate":
                    _, body, _ = normal()
                    self._send_partial(body, reset=False)
                elif fault.kind == "reset":
                    _, body, _ = normal()
                    self._send_partial(body, reset=True)
                elif fault.kind == "big":
                    self._send_unsized(b"x" * fault.size)

            def _send(
                self, status: int, body: bytes, headers: dict[str, str] | None = None
            ) -> None:
                self.send_response(status)
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                if status != 304:
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if status != 304:
                    self.wfile.write(body)

            def _send_partial(self, body: bytes, *, reset: bool) -> None:
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 3])
                self.wfile.flush()
                if reset:  # an RST, not a clean close: SO_LINGER with a zero timeout
                    self.connection.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                    )
                self.close_connection = True

            def _send_dripped(
                self, status: int, body: bytes, headers: dict[str, str], fault: Fault
            ) -> None:
                lines = [f"HTTP/1.1 {status} OK"]
                lines += [f"X-Drip-{n}: {'.' * 10}" for n in range(fault.size)]
                lines += [f"{name}: {value}" for name, value in headers.items()]
                lines += [f"Content-Length: {len(body)}"]
                sent = 0
                try:
                    for line in lines:
                        self.wfile.write(f"{line}\r\n".encode())
                        self.wfile.flush()
                        sent += 1
                        time.sleep(fault.seconds)
                    self.wfile.write(b"\r\n" + body)
                except OSError:
                    pass  # the client gave up waiting: that is the point
                standin.slow_sent.append(sent)
                self.close_connection = True

            def _send_trickled(self, fault: Fault) -> None:
                self.send_response(fault.status)
                self.send_header("Content-Length", str(fault.size))
                self.end_headers()
                sent = 0
                try:
                    for _ in range(fault.size):
                        self.wfile.write(b"x")
                        self.wfile.flush()
                        sent += 1
                        time.sleep(fault.seconds)
                except OSError:
                    pass
                standin.slow_sent.append(sent)
                self.close_connection = True

            def _send_unsized(self, body: bytes) -> None:
                self.send_response(200)
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    for start in range(0, len(body), 65536):
                        self.wfile.write(body[start : start + 65536])
                except OSError:
                    pass  # the client hung up once it had seen enough: that is the point
                self.close_connection = True

        return Handler


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hung up on a slow answer is what the faults are for; anything else is
        # reported as usual.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _commit_json(sha: str, date: str) -> bytes:
    return json.dumps({"sha": sha, "commit": {"committer": {"date": date}}}).encode()
