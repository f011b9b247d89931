"""HTTP downloads that a scheduled job can trust: timeouts, retries, a size cap, clear errors.

- Timeouts: connect, read (per chunk) and write from ``timeout``, and a deadline on the whole
  attempt (status line, headers, body, an error body, redirects), since httpx's read timeout
  restarts on every chunk: a server dripping one header line a second never trips it. The
  attempt runs as a coroutine under ``asyncio.timeout``, which cancels it wherever it waits.
- Retries: on connection errors, timeouts, a body cut short, 429 and 5xx, with exponential
  backoff and jitter, honouring ``Retry-After``; never on another 4xx. httpx's own
  ``HTTPTransport(retries=N)`` only retries failed connects, so the loop is here.
- A body larger than ``max_bytes`` is refused while it streams (or at once, from its
  Content-Length), never read whole first.
- A token is sent only to URLs under its scope (the API), on every redirect hop too, and is
  scrubbed from every message (``scrubbed``), in each form a server's answer may echo it.
- Only ``https://`` URLs, except loopback addresses (for the tests' stand-in server); redirects
  are followed here, hop by hop, so that every hop is checked before it is requested.
- Every header kept from an answer (ETag, Last-Modified) is checked; one that is not what it
  says is dropped, and a value quoted in a message is scrubbed and cut short.

Every request of the package goes through ``Downloader``, for the promise that a scheduled job
neither hangs, nor fills its memory, nor prints a credential: tests/test_network.py (a stand-in
server with faults) and tests/test_credentials.py hold it.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import functools
import json
import random
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from energy_index import __version__
from energy_index.errors import NetworkError, UsageError, shown
from energy_index.io.urls import (
    URL_POLICY,
    kept_etag,
    kept_last_modified,
    masked_credentials,
    shown_url,
    url_allowed,
    url_refusal,
    url_secrets,
)
from energy_index.model import NetworkSettings, strict_json

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
FIRST_BYTES = 120  # how much of an unexpected body an error message shows
SCRUBBED_BYTES = FIRST_BYTES + 1024  # read past the cut, so that a token across it is scrubbed
PROGRESS_FROM_BYTES = 1 << 20
MAX_REDIRECTS = 20

# RFC 6750's b64token: what a bearer token may hold. Anything else (a newline pasted with it, a
# control character) would break the header, and httpx would quote the whole value back.
_BEARER_TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


@dataclass(frozen=True)
class Fetched:
    """A successful answer: 200 with its body, or 304 (unchanged) with none."""

    url: str
    status: int
    content: bytes
    etag: str | None
    last_modified: str | None


def failure(
    url: str, problem: str, *, attempts: int = 1, scrub: Callable[[str], str] = str
) -> NetworkError:
    """The NetworkError of ``url``: the URL's credentials never reach its message, nor the
    attributes a caller may log: masked in the URL, scrubbed from the problem (a server's body
    may echo them) with what ``scrub`` scrubs (the token)."""
    problem = scrubbed(scrub(problem), url_secrets(url))
    return NetworkError(url=masked_credentials(url), problem=problem, attempts=attempts)


def scrubbed(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` without any of ``secrets`` in a form a server's answer may echo it (as is,
    JSON-escaped, URL-encoded, in any letter case: percent-encoding's hex digits have two),
    then with every credential of a URL in it masked, whoever's it is (``masked_credentials``).
    Only these: a secret is sent as it is (a bearer token, a query value), never base64-encoded
    (a URL's user and password, which Basic authentication would encode, are refused unsent).

    Example: ``scrubbed("Bearer ABC", ["abc"])`` → ``"Bearer ***"``.
    """
    kept = tuple(sorted({s for s in secrets if s and s.strip()}))
    return masked_credentials(_scrubber(kept).sub("***", text) if kept else text)


@functools.lru_cache(maxsize=8)
def _scrubber(secrets: tuple[str, ...]) -> re.Pattern[str]:
    forms = set()
    for secret in secrets:
        in_json = json.dumps(secret)[1:-1]  # JSON may also write "/" as "\/"
        forms |= {secret, in_json, in_json.replace("/", "\\/")}
        forms |= {quote(secret, safe=""), quote(secret)}  # in a query, in a path
    ordered = sorted(forms, key=len, reverse=True)  # a form inside a longer one goes second
    return re.compile("|".join(map(re.escape, ordered)), re.IGNORECASE)


def bearer_token(value: str | None) -> str | None:
    """The token in ``GITHUB_TOKEN``, stripped of surrounding whitespace; None when empty.

    A token with any other character (a control character, a space inside) is refused without
    being shown: it would not survive as a header, and the error would quote it.

    Example: ``bearer_token("ghp_abc\\n")`` → ``"ghp_abc"``.
    """
    token = (value or "").strip()
    if not token:
        return None
    if not _BEARER_TOKEN.fullmatch(token):
        raise UsageError(
            "GITHUB_TOKEN is not a bearer token: it holds a character other than letters, "
            "digits and -._~+/= (a control character or a space?); its value is not shown"
        )
    return token


class _Retry(Exception):
    """One attempt failed in a way that another attempt may fix."""

    def __init__(self, problem: str, retry_after: float | None = None) -> None:
        super().__init__(problem)
        self.problem, self.retry_after = problem, retry_after


class _Refused(Exception):
    """A redirect to a URL the policy refuses."""


class Downloader:
    """GET with retries; use as a context manager so the connection pool is closed.

    Each attempt is a coroutine run to completion on this downloader's own event loop, so that
    one deadline bounds all of it; callers see a plain blocking ``get``.
    """

    def __init__(
        self,
        settings: NetworkSettings,
        *,
        token: str | None = None,
        token_scope: str | None = None,
        progress: bool = False,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        # The token goes only to URLs under token_scope (the API); it is kept out of settings,
        # which a caller may print.
        self._token, self._token_scope, self._progress = token, token_scope, progress
        self._secrets: set[str] = set()  # the credentials of the URLs asked for
        self._sleep, self._clock = sleep, clock
        started = clock() if settings.started is None else settings.started
        self._ends = started + settings.timeout_total
        self._runner = asyncio.Runner()
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(settings.timeout),  # connect, read, write and pool alike
            transport=transport,
            follow_redirects=False,  # followed in _attempt, where each hop is checked first
            event_hooks={"response": [_refuse_bad_location]},
            headers={"User-Agent": f"energy-index/{__version__}"},
        )

    def __enter__(self) -> Downloader:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._runner.run(self._client.aclose())
        finally:
            self._runner.close()

    def get(
        self,
        url: str,
        *,
        etag: str | None = None,
        last_modified: str | None = None,
        accept: str | None = None,
    ) -> Fetched:
        """The body at ``url``; with ``etag``/``last_modified``, a 304 means unchanged."""
        refusal = url_refusal(url)  # https only, but plain http to a loopback address
        if refusal is not None:
            raise failure(url, refusal)
        self._secrets.update(url_secrets(url))  # a server may echo them in a body
        # The ETag verbatim: raw.githubusercontent.com sends W/"…"
        asked = {"Accept": accept, "If-None-Match": etag, "If-Modified-Since": last_modified}
        headers = {name: value for name, value in asked.items() if value}
        attempt = 0
        while True:
            attempt += 1
            if self._left() <= 0:
                raise self._error(url, self._past_deadline("before this request"), attempt - 1)
            try:
                return self._runner.run(self._deadlined(url, headers))
            except NetworkError as error:  # final on this attempt: say how many were made
                raise self._error(url, error.problem, attempt) from None
            except _Retry as retry:
                if attempt > self.settings.retries:
                    raise self._error(url, retry.problem, attempt) from None
                delay = self._delay(attempt, retry.retry_after)
                left = self._left()
                if delay >= left:
                    wait = (
                        f"the server asks to wait {retry.retry_after:.0f} s"
                        if retry.retry_after is not None
                        else f"the next attempt is due in {delay:.1f} s"
                    )
                    raise self._error(
                        url, f"{retry.problem}; {wait}, {self._past_deadline(left)}", attempt
                    ) from None
                self._sleep(delay)

    def _left(self) -> float:
        return self._ends - self._clock()

    def _past_deadline(self, left: float | str) -> str:
        deadline = self.settings.timeout_total  # the network time budget, not a latency target
        if isinstance(left, str):
            return (
                f"the command's {deadline:g} s for all its downloads (--network-timeout-total) "
                f"passed {left}"
            )
        return (
            f"with {max(left, 0):.0f} s left of the command's {deadline:g} s for all its "
            "downloads (--network-timeout-total)"
        )

    def get_json(self, url: str, *, expect: type, **options: Any) -> Any:
        """The parsed JSON at ``url``, which must be of type ``expect`` (dict or list)."""
        fetched = self.get(url, **options)
        return parsed_json(fetched, expect=expect, scrub=self.scrub)

    def scrub(self, text: str) -> str:
        """``text`` without the token, in any form it may take in a message."""
        return scrubbed(text, (self._token, *sorted(self._secrets)))

    def _in_scope(self, url: str) -> bool:
        scope = self._token_scope
        return bool(scope) and url.startswith((scope or "").rstrip("/") + "/")

    async def _deadlined(self, url: str, headers: dict[str, str]) -> Fetched:
        left = self._left()
        limit = min(self.settings.timeout, left)
        try:
            async with asyncio.timeout(limit):
                return await self._attempt(url, headers)
        except TimeoutError:
            if limit < self.settings.timeout:
                raise self._error(
                    url, f"timed out: {self._past_deadline('during the attempt')}", 1
                ) from None
            raise _Retry(f"timed out: the attempt took longer than {limit} s") from None

    async def _attempt(self, url: str, headers: dict[str, str]) -> Fetched:
        """One attempt, its redirects followed; what went wrong as a NetworkError (final) or a
        _Retry (another attempt may fix it)."""
        try:
            return await self._followed(url, headers)
        except _Refused as refused:
            target = shown_url(str(refused), self.scrub)
            problem = f"redirected to {target}: refused, {url_refusal(str(refused)) or URL_POLICY}"
            raise self._error(url, problem, 1) from None
        except httpx.TimeoutException as error:
            limit = self.settings.timeout
            raise _Retry(f"timed out ({type(error).__name__}, limit {limit} s)") from None
        except httpx.RemoteProtocolError as error:
            raise _Retry(f"the connection broke off: {error}") from None
        except httpx.TransportError as error:
            raise _Retry(f"{type(error).__name__}: {error}") from None
        except httpx.HTTPError as error:  # anything else httpx may raise, named, not retried
            raise self._error(url, f"{type(error).__name__}: {error}", 1) from None

    async def _followed(self, url: str, headers: dict[str, str]) -> Fetched:
        """The answer at the end of ``url``'s redirects, each hop checked before it is asked."""
        token = self._token
        # The token goes with a hop only while every hop so far was under its scope: a redirect
        # that leaves the API loses it and does not win it back by returning.
        carries = bool(token) and self._in_scope(url)
        request = self._client.build_request("GET", url, headers=headers)
        for _hop in range(MAX_REDIRECTS + 1):
            request.headers.pop("Authorization", None)
            carries = carries and self._in_scope(str(request.url))
            if carries:
                request.headers["Authorization"] = f"Bearer {token}"
            response = await self._client.send(request, stream=True)
            try:
                following = response.next_request
                if following is None:
                    return await self._answer(url, response)
            finally:
                await response.aclose()
            if not url_allowed(str(following.url)):
                raise _Refused(str(following.url))
            request = following
        raise self._error(url, f"more than {MAX_REDIRECTS} redirects", 1)

    async def _answer(self, url: str, response: httpx.Response) -> Fetched:
        status = response.status_code
        if status not in (200, 304):
            await self._refuse_status(url, response)
        return Fetched(
            url=url,
            status=status,
            content=b"" if status == 304 else await self._body(url, response),
            etag=kept_etag(response.headers.get("etag")),
            last_modified=kept_last_modified(response.headers.get("last-modified")),
        )

    async def _refuse_status(self, url: str, response: httpx.Response) -> None:
        status = response.status_code
        first = await self._first_bytes(response)
        headers = response.headers
        if status in (403, 429) and headers.get("x-ratelimit-remaining") == "0":
            raise self._error(url, _rate_limit_message(headers, token=bool(self._token)), 1)
        problem = f"HTTP {status}; body starts {first!r}"
        if status in RETRY_STATUSES:
            raise _Retry(problem, _retry_after(headers.get("retry-after"), time.time()))
        raise self._error(url, problem, 1)

    async def _body(self, url: str, response: httpx.Response) -> bytes:
        cap = self.settings.max_bytes
        total = _whole_number(response.headers.get("content-length"))
        if total is not None and total > cap:
            raise self._error(url, f"the body is {total} bytes, over the cap of {cap}", 1)
        try:
            return await self._streamed(url, response, total)
        except httpx.DecodingError as error:  # the server's fault: another try gets the same
            encoding = shown(
                response.headers.get("content-encoding", ""), quote=True, scrub=self.scrub
            )
            raise self._error(
                url, f"the body cannot be decoded (Content-Encoding {encoding[1:-1]}): {error}", 1
            ) from None

    async def _streamed(self, url: str, response: httpx.Response, total: int | None) -> bytes:
        """The body, refused as soon as it passes the cap; its progress on stderr when large."""
        cap = self.settings.max_bytes
        chunks, received = [], 0
        show = self._progress and (total or 0) >= PROGRESS_FROM_BYTES
        async for chunk in response.aiter_bytes():
            received += len(chunk)
            if received > cap:
                raise self._error(url, f"the body passed the cap of {cap} bytes; refused", 1)
            chunks.append(chunk)
            if show:
                print(
                    f"\r{shown_url(url)}: {received >> 10} of {(total or 0) >> 10} KiB",
                    end="",
                    file=sys.stderr,
                )
        if show:
            print(file=sys.stderr)
        return b"".join(chunks)

    async def _first_bytes(self, response: httpx.Response) -> str:
        data = b""
        with contextlib.suppress(httpx.HTTPError):  # a body cut short: what came is shown
            async for chunk in response.aiter_bytes():
                data += chunk
                if len(data) >= SCRUBBED_BYTES:
                    break
        return first_text(data, self.scrub)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return retry_after
        base = self.settings.backoff * float(2 ** (attempt - 1))
        return base + random.uniform(0, base)  # jitter: retries from many clients spread out

    def _error(self, url: str, problem: str, attempts: int) -> NetworkError:
        return failure(url, problem, attempts=attempts, scrub=self.scrub)


async def _refuse_bad_location(response: httpx.Response) -> None:
    """A redirect's Location is checked before httpx makes a request of it: one it cannot make
    (``mailto:``, ``data:``, ``http:x``) would escape as ``httpx.InvalidURL``."""
    if not response.has_redirect_location:
        return
    location = response.headers["location"]
    try:
        target = str(response.url.join(location))
    except httpx.InvalidURL:
        raise _Refused(location) from None
    if not url_allowed(target):
        raise _Refused(target)


def parsed_json(fetched: Fetched, *, expect: type, scrub: Callable[[str], str] = str) -> Any:
    """Parse a body that must be JSON of one type; otherwise name the URL, status, first bytes."""
    try:
        value = strict_json(fetched.content)
    except (ValueError, UnicodeDecodeError) as error:
        problem = f"HTTP {fetched.status} but the body is not JSON ({error})"
    except RecursionError:
        problem = f"HTTP {fetched.status} but the JSON is nested too deeply to read"
    else:
        if isinstance(value, expect):
            return value
        kinds: dict[type, str] = {dict: "an object", list: "an array"}
        got = kinds.get(type(value), f"a {type(value).__name__}")
        problem = f"HTTP {fetched.status} but the JSON is {got}, expected {kinds[expect]}"
    first = first_text(fetched.content, scrub)
    raise failure(
        fetched.url, f"{problem}; {len(fetched.content)} bytes, starting {first!r}", scrub=scrub
    )


def first_text(content: bytes, scrub: Callable[[str], str]) -> str:
    """The first FIRST_BYTES characters of a body, scrubbed before they are cut: a token that
    straddles the cut would otherwise be shown all but its last characters."""
    return scrub(content[:SCRUBBED_BYTES].decode("utf-8", "replace"))[:FIRST_BYTES]


def _retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a Retry-After header (seconds or an HTTP date)."""
    if not value:
        return None
    seconds = _whole_number(value)
    if seconds is not None:
        return float(seconds)
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
        return max(0.0, when.timestamp() - now)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _whole_number(value: str | None) -> int | None:
    """A header's non-negative integer; None for anything else (``isdigit`` alone lets '²' in)."""
    value = (value or "").strip()
    return int(value) if value.isascii() and value.isdigit() else None


def _rate_limit_message(headers: Mapping[str, str], *, token: bool) -> str:
    reset = _whole_number(headers.get("x-ratelimit-reset"))
    try:
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(reset)) if reset else None
    except (OverflowError, OSError, ValueError):  # a reset time past any date the OS knows
        when = None
    advice = "" if token else " (60 requests an hour without GITHUB_TOKEN; set it for more)"
    return f"the GitHub API rate limit is used up{advice}; retry after {when or 'an unknown time'}"
