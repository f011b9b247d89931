"""What may be fetched, and what of a server's answer is kept: pure checks of URLs and headers,
apart from the HTTP client (io/http.py), so that the readers of a snapshot's manifest check its
URLs and ETags without importing httpx (an offline build does not need it).
"""

from __future__ import annotations

import email.utils
import ipaddress
import re
from collections.abc import Callable
from urllib.parse import urlsplit

from energy_index.errors import masked_url, shown

URL_POLICY = "only https:// URLs are fetched (http only on loopback)"
_ETAG = re.compile(r'(W/)?"[\x21\x23-\x7e]*"')
_MAX_HEADER_KEPT = 200


CREDENTIALS_REFUSED = (
    "a user or password in a URL is refused: it would be sent to every host a redirect names "
    "and written wherever the URL is (for the GitHub API, set GITHUB_TOKEN)"
)
BASE_QUERY_REFUSED = "a base URL may hold no query (?…) nor fragment (#…): paths follow it"


def url_allowed(url: str) -> bool:
    """Whether ``url`` may be fetched: https, or plain http to a loopback address, and without
    a user or password in it.

    Example: ``url_allowed("http://127.0.0.1:8080/x")`` → True; ``"http://example.com"`` → False.
    """
    return url_refusal(url) is None


def url_refusal(url: str, *, base: bool = False) -> str | None:
    """Why ``url`` may not be fetched (a reason that never quotes it); None when it may. A
    ``base`` (the API's or the raw files' root: paths are appended to it, and snapshot.json and
    the index record the URLs made of it) may hold no query nor fragment either.

    Example: ``url_refusal("https://u:p@example.com/")`` →
    ``"a user or password in a URL is refused: …"``.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return URL_POLICY
    if "@" in parts.netloc:
        return CREDENTIALS_REFUSED
    if not (
        (parts.scheme == "https" and host)
        or (parts.scheme == "http" and bool(host) and _is_loopback(host or ""))
    ):
        return URL_POLICY
    if base and ("?" in url or "#" in url):
        return BASE_QUERY_REFUSED
    return None


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def shown_url(url: str, scrub: Callable[[str], str] = str) -> str:
    """A URL from a user or a server, fit for a message: its credentials masked, scrubbed,
    shown like a path (:func:`errors.shown`).

    Example: ``shown_url("http://example.com/\\n")`` → ``"'http://example.com/\\\\n'"``.
    """
    return shown(masked_url(url), path=True, scrub=scrub)


def kept_etag(value: str | None) -> str | None:
    """An ETag worth sending back: a quoted entity tag (weak or strong) of sane length."""
    if value and len(value) <= _MAX_HEADER_KEPT and _ETAG.fullmatch(value):
        return value
    return None


def kept_last_modified(value: str | None) -> str | None:
    """A Last-Modified worth sending back: an HTTP date."""
    if not value or len(value) > _MAX_HEADER_KEPT or not value.isprintable():
        return None
    try:
        email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return value
