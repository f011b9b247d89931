"""What may be fetched, and what of a server's answer is kept: pure checks of URLs and headers,
apart from the HTTP client (io/http.py), so that the readers of a snapshot's manifest check its
URLs and ETags without importing httpx (an offline build does not need it). And how a URL is
shown: its credentials masked wherever it is printed (tests/test_credentials.py).
"""

from __future__ import annotations

import email.utils
import ipaddress
import re
from collections.abc import Callable
from urllib.parse import parse_qsl, unquote, urlsplit

from energy_index.errors import shown

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
    if not host or not (parts.scheme == "https" or (parts.scheme == "http" and _is_loopback(host))):
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
    return shown(masked_credentials(url), path=True, scrub=scrub)


# A query parameter whose name says its value is a credential: access_token, api_key, secret,
# password, X-Amz-Signature, X-Amz-Credential, auth, session… (a false alarm only masks a value
# in a message; GitHub's own parameters, sha, path, per_page, until, are none of these).
_CREDENTIAL_NAME = re.compile(r"token|key|secret|passw|pwd|sig|auth|credential|session", re.I)
# name=value in a query, also URL-encoded once (%3D, %26) as a body may echo it
_QUERY_PAIR = re.compile(
    r"(?:(?<=%3[fF])|(?<=%26)|(?<![\w.~%-]))((?:(?!%3[dDfF]|%26)[\w.~%-])+)(=|%3[dD])"
    r"((?:(?!%26|[:,.)]\s|[:,.)]$)[^&#;\s'\"<>])*)"  # a sentence's ':' or ',' after it is not its
)
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*:(?://|%2F%2F))([^/?#\s'\"<>]*@)")
# an Authorization header's value echoed back (Basic base64(user:password), Bearer token)
_AUTHORIZATION = re.compile(r"(?i)\b(basic|bearer)(\s+)[A-Za-z0-9+/_.~-]{6,}=*")
MIN_SECRET_CHARACTERS = 4  # a shorter secret is masked where it is a URL's, not searched for


def masked_credentials(text: str) -> str:
    """``text`` (a URL, or a message that may quote one) with every credential a URL or an
    echoed header may put in it replaced by ``***``: a URL's user and password, the value of a
    query parameter named like a credential, and the value after ``Basic`` or ``Bearer``.

    Example: ``masked_credentials("https://u:p@h/x?access_token=s&page=2")`` →
    ``"https://***@h/x?access_token=***&page=2"``.
    """
    text = _USERINFO.sub(r"\1***@", text)
    text = _AUTHORIZATION.sub(r"\1\2***", text)
    return _QUERY_PAIR.sub(_masked_pair, text)


def _masked_pair(match: re.Match[str]) -> str:
    name, equals, value = match.groups()
    if not value or not _CREDENTIAL_NAME.search(unquote(name)):
        return match.group(0)
    return f"{name}{equals}***"


def url_secrets(url: str) -> tuple[str, ...]:
    """The credentials a URL sends, to scrub from what a server sends back: each query value
    named like a credential, as written and decoded; those shorter than MIN_SECRET_CHARACTERS
    are left out (they would match innocent text). A user or password is never sent (a URL
    with one is refused before any request, a redirect to one too), so no answer can echo it.

    Example: ``url_secrets("https://h/x?token=SECRET")`` → ``('SECRET',)``.
    """
    try:
        query = urlsplit(url).query
        pairs = parse_qsl(query) + [pair.partition("=")[::2] for pair in re.split("[&;]", query)]
    except ValueError:
        return ()
    found = {
        v
        for name, value in pairs
        if _CREDENTIAL_NAME.search(unquote(name))
        for v in (value, unquote(value))
    }
    return tuple(sorted(s for s in found if len(s) >= MIN_SECRET_CHARACTERS))


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
