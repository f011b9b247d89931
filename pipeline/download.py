"""HTTP downloads that a scheduled job can trust: timeouts, retries, a size cap, clear errors.

- Timeouts: connect, read (per chunk) and write from ``timeout``, and a total deadline per
  attempt that this module enforces itself, since httpx's read timeout restarts on every chunk.
- Retries: on connection errors, timeouts, a body cut short, 429 and 5xx, with exponential
  backoff and jitter, honouring ``Retry-After``; never on another 4xx. httpx's own
  ``HTTPTransport(retries=N)`` only retries failed connects, so the loop is here.
- A body larger than ``max_bytes`` is refused while it streams (or at once, from its
  Content-Length), never read whole first.
- A token is sent only to URLs under its scope (the API) and is scrubbed from every message.
- Only ``https://`` URLs, except loopback addresses (for the tests' stand-in server).
"""

from __future__ import annotations

import email.utils
import ipaddress
import json
import random
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from pipeline import __version__
from pipeline.errors import NetworkError

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
FIRST_BYTES = 120  # how much of an unexpected body an error message shows
PROGRESS_FROM_BYTES = 1 << 20


@dataclass(frozen=True)
class HttpSettings:
    """How hard to try. ``retries`` counts attempts after the first."""

    retries: int = 3
    timeout: float = 30.0
    backoff: float = 1.0
    max_bytes: int = 64 << 20
    max_retry_after: float = 600.0
    progress: bool = False
    token: str | None = field(default=None, repr=False)
    token_scope: str | None = None  # the token goes only to URLs under this prefix


@dataclass(frozen=True)
class Fetched:
    """A successful answer: 200 with its body, or 304 (unchanged) with none."""

    url: str
    status: int
    content: bytes
    etag: str | None
    last_modified: str | None

    @property
    def not_modified(self) -> bool:
        return self.status == 304


def check_url(url: str) -> str:
    """Refuse anything but https, except plain http to a loopback address."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return url
    if parts.scheme == "http" and parts.hostname and _is_loopback(parts.hostname):
        return url
    raise NetworkError(url=url, problem="only https:// URLs are fetched (http only on loopback)")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _Retry(Exception):
    """One attempt failed in a way that another attempt may fix."""

    def __init__(self, problem: str, retry_after: float | None = None) -> None:
        super().__init__(problem)
        self.problem, self.retry_after = problem, retry_after


class Downloader:
    """GET with retries; use as a context manager so the connection pool is closed."""

    def __init__(
        self,
        settings: HttpSettings,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.attempts: dict[str, int] = {}
        self._sleep, self._clock = sleep, clock
        timeout = settings.timeout
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout, connect=timeout, read=timeout, write=timeout),
            transport=transport,
            follow_redirects=True,
            headers={"User-Agent": f"energy-index/{__version__}"},
        )

    def __enter__(self) -> Downloader:
        return self

    def __exit__(self, *exc: object) -> None:
        self._client.close()

    def get(
        self,
        url: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        accept: str | None = None,
    ) -> Fetched:
        """The body at ``url``; with ``etag``/``last_modified``, a 304 means unchanged."""
        check_url(url)
        headers = self._headers(url, etag=etag, last_modified=last_modified, accept=accept)
        attempt = 0
        while True:
            attempt += 1
            self.attempts[url] = self.attempts.get(url, 0) + 1
            try:
                return self._attempt(url, headers)
            except NetworkError as failure:  # final on this attempt: say how many were made
                raise NetworkError(url=url, problem=failure.problem, attempts=attempt) from None
            except _Retry as failure:
                if attempt > self.settings.retries:
                    raise self._error(url, failure.problem, attempt) from None
                delay = self._delay(attempt, failure.retry_after)
                if delay is None:
                    raise self._error(
                        url,
                        f"{failure.problem}; the server asks to wait {failure.retry_after:.0f} s, "
                        f"more than the {self.settings.max_retry_after:.0f} s allowed",
                        attempt,
                    ) from None
                self._sleep(delay)

    def get_json(self, url: str, *, expect: type, **options: Any) -> Any:
        """The parsed JSON at ``url``, which must be of type ``expect`` (dict or list)."""
        fetched = self.get(url, **options)
        return parsed_json(fetched, expect=expect, scrub=self._scrub)

    def _headers(
        self, url: str, *, etag: str | None, last_modified: str | None, accept: str | None
    ) -> dict[str, str]:
        headers = {}
        if accept:
            headers["Accept"] = accept
        if etag:
            headers["If-None-Match"] = etag  # verbatim: raw.githubusercontent.com sends W/"…"
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        token, scope = self.settings.token, self.settings.token_scope
        if token and scope and url.startswith(scope.rstrip("/") + "/"):
            headers["Authorization"] = f"Bearer {token}"
        return headers

    def _attempt(self, url: str, headers: dict[str, str]) -> Fetched:
        deadline = self._clock() + self.settings.timeout
        try:
            with self._client.stream("GET", url, headers=headers) as response:
                status = response.status_code
                if status == 304:
                    return self._fetched(url, response, b"")
                if status != 200:
                    self._refuse_status(url, response)
                body = self._body(url, response, deadline)
                return self._fetched(url, response, body)
        except httpx.TimeoutException as error:
            limit = self.settings.timeout
            raise _Retry(f"timed out ({type(error).__name__}, limit {limit} s)") from None
        except httpx.RemoteProtocolError as error:
            raise _Retry(f"the connection broke off: {error}") from None
        except httpx.TransportError as error:
            raise _Retry(f"{type(error).__name__}: {error}") from None

    def _refuse_status(self, url: str, response: httpx.Response) -> None:
        status = response.status_code
        first = self._first_bytes(response)
        headers = response.headers
        if status in (403, 429) and headers.get("x-ratelimit-remaining") == "0":
            raise self._error(url, _rate_limit_message(headers, token=bool(self.settings.token)), 1)
        problem = f"HTTP {status}; body starts {first!r}"
        if status in RETRY_STATUSES:
            raise _Retry(problem, _retry_after(headers.get("retry-after"), self._now()))
        raise self._error(url, problem, 1)

    def _body(self, url: str, response: httpx.Response, deadline: float) -> bytes:
        cap = self.settings.max_bytes
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > cap:
            raise self._error(url, f"the body is {int(declared)} bytes, over the cap of {cap}", 1)
        chunks, received = [], 0
        total = int(declared) if declared and declared.isdigit() else None
        show = self.settings.progress and (total or 0) >= PROGRESS_FROM_BYTES
        for chunk in response.iter_bytes():
            received += len(chunk)
            if received > cap:
                raise self._error(url, f"the body passed the cap of {cap} bytes; refused", 1)
            if self._clock() > deadline:
                raise _Retry(f"the download took longer than {self.settings.timeout} s")
            chunks.append(chunk)
            if show:
                print(
                    f"\r{url}: {received >> 10} of {(total or 0) >> 10} KiB",
                    end="",
                    file=sys.stderr,
                )
        if show:
            print(file=sys.stderr)
        return b"".join(chunks)

    def _first_bytes(self, response: httpx.Response) -> str:
        try:
            data = b""
            for chunk in response.iter_bytes():
                data += chunk
                if len(data) >= FIRST_BYTES:
                    break
        except httpx.HTTPError:
            pass
        return self._scrub(data[:FIRST_BYTES].decode("utf-8", "replace"))

    def _fetched(self, url: str, response: httpx.Response, body: bytes) -> Fetched:
        return Fetched(
            url=url,
            status=response.status_code,
            content=body,
            etag=response.headers.get("etag"),
            last_modified=response.headers.get("last-modified"),
        )

    def _delay(self, attempt: int, retry_after: float | None) -> float | None:
        if retry_after is not None:
            return retry_after if retry_after <= self.settings.max_retry_after else None
        base = self.settings.backoff * 2 ** (attempt - 1)
        return base + random.uniform(0, base)  # jitter: retries from many clients spread out

    def _now(self) -> float:
        return time.time()

    def _scrub(self, text: str) -> str:
        token = self.settings.token
        return text.replace(token, "***") if token else text

    def _error(self, url: str, problem: str, attempts: int) -> NetworkError:
        return NetworkError(url=url, problem=self._scrub(problem), attempts=attempts)


def parsed_json(fetched: Fetched, *, expect: type, scrub: Callable[[str], str] = str) -> Any:
    """Parse a body that must be JSON of one type; otherwise name the URL, status, first bytes."""
    try:
        value = json.loads(fetched.content)
    except (ValueError, UnicodeDecodeError) as error:
        problem = f"HTTP {fetched.status} but the body is not JSON ({error})"
    else:
        if isinstance(value, expect):
            return value
        kinds: dict[type, str] = {dict: "an object", list: "an array"}
        got = kinds.get(type(value), f"a {type(value).__name__}")
        problem = f"HTTP {fetched.status} but the JSON is {got}, expected {kinds[expect]}"
    first = fetched.content[:FIRST_BYTES].decode("utf-8", "replace")
    raise NetworkError(
        url=fetched.url,
        problem=scrub(f"{problem}; {len(fetched.content)} bytes, starting {first!r}"),
    )


def _retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


def _rate_limit_message(headers: Mapping[str, str], *, token: bool) -> str:
    reset = headers.get("x-ratelimit-reset", "")
    when = (
        time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(reset))) if reset.isdigit() else "later"
    )
    advice = "" if token else " (60 requests an hour without GITHUB_TOKEN; set it for more)"
    return f"the GitHub API rate limit is used up{advice}; retry after {when}"
