"""Credentials in a URL never reach a message, a log or an output (issue 26, item 1).

A user and password in a URL are refused before any request (they would be sent to every host a
redirect names, and a base URL is written into snapshot.json and the index); a query value named
like a credential (``?access_token=…``) is sent, but masked wherever the URL is shown, and
scrubbed from what a server sends back, in every form the GITHUB_TOKEN scrub knows (as is,
URL-encoded, JSON-escaped, any case). Tested against a real HTTP server on 127.0.0.1 that echoes
what it was sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote

import pytest

from energy_index.errors import NetworkError
from energy_index.io.http import failure, scrubbed
from energy_index.io.urls import masked_credentials, url_secrets
from tests.conftest import FAST, GOLDEN, PUBLISHED, cli, invoke

SECRET = "s3cr3tPASSw0rd"


def _forms(secret: str) -> list[str]:
    """Every way a server or a library may write a secret it was sent back (it is sent as it
    is: a user and password, which Basic authentication would send base64-encoded, never are)."""
    return [secret, secret.lower(), secret.upper(), quote(secret, safe="")]


class _Echo(BaseHTTPRequestHandler):
    """Answers 404 with everything it was sent: the path and query, as is and URL-encoded, the
    Authorization header, and the query's values."""

    def answer(self) -> tuple[int, dict[str, object]]:
        query = self.path.partition("?")[2]
        return 404, {
            "path": self.path,
            "encoded": quote(self.path, safe=""),
            "authorization": self.headers.get("Authorization"),
            "values": [p.partition("=")[2] for p in query.split("&")],
        }

    def do_GET(self) -> None:
        self.server.requests.append(self.path)  # type: ignore[attr-defined]
        status, echoed = self.answer()
        body = json.dumps(echoed).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.requests = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    yield server
    server.shutdown()
    thread.join()
    server.server_close()


@pytest.fixture
def echo() -> Iterator[ThreadingHTTPServer]:
    yield from _serving(_Echo)


def _base(server: ThreadingHTTPServer, userinfo: str = "") -> str:
    host, port = server.server_address[:2]
    return f"http://{userinfo}{host}:{port}"


def _assert_hidden(output: str, secret: str = SECRET) -> None:
    for form in _forms(secret):
        assert form not in output, (form, output)


@pytest.mark.parametrize("flag", ["--api-base", "--raw-base"])
def test_a_user_and_password_in_a_base_url_are_refused_unshown_before_any_request(
    echo, tmp_path, flag
):
    base = f"{_base(echo, f'u:{SECRET}@')}/api"
    result = invoke("fetch", "--to", tmp_path / "s", flag, base, *FAST)
    assert result.exit_code == 2, result.output
    assert f"{flag}: http://***@127.0.0.1:" in result.output
    assert "a user or password in a URL is refused" in result.output
    _assert_hidden(result.output)
    assert echo.requests == [] and list(tmp_path.iterdir()) == []


def test_a_user_alone_a_token_in_its_place_is_refused_unshown(echo, tmp_path):
    result = invoke("fetch", "--to", tmp_path / "s", "--api-base", _base(echo, f"{SECRET}@"), *FAST)
    assert result.exit_code == 2, result.output
    _assert_hidden(result.output)
    assert echo.requests == []


@pytest.mark.parametrize("tail", [f"?access_token={SECRET}", f"#{SECRET}"])
def test_a_base_url_with_a_query_or_fragment_is_refused(echo, tmp_path, tail):
    """Paths are appended to a base, and snapshot.json and the index record the URLs made of it:
    a query there would be both broken and written into the outputs."""
    result = invoke("fetch", "--to", tmp_path / "s", "--raw-base", _base(echo) + tail, *FAST)
    assert result.exit_code == 2, result.output
    assert "a base URL may hold no query" in result.output
    assert echo.requests == []
    if tail.startswith("?"):
        _assert_hidden(result.output)


def test_a_token_in_the_published_url_is_masked_and_scrubbed_from_the_echoing_body(echo):
    url = f"{_base(echo)}/index.json?page=2&access_token={SECRET}&X-Amz-Signature={SECRET}2"
    result = invoke("audit", "--published", url, "--retries", "0", "--quiet")
    assert result.exit_code == 3, result.output
    assert len(echo.requests) == 1 and SECRET in echo.requests[0]  # it was sent
    assert "/index.json?page=2&access_token=***&X-Amz-Signature=***: HTTP 404" in result.output
    _assert_hidden(result.output)
    _assert_hidden(result.output, f"{SECRET}2")


def test_the_python_api_sees_the_same_masked_error(echo):
    from energy_index.api import audit
    from energy_index.model import NetworkSettings

    url = f"{_base(echo)}/index.json?token={SECRET}"
    with pytest.raises(NetworkError) as caught:
        audit(published=url, network=NetworkSettings(retries=0, quiet=True))
    error = caught.value
    for text in (str(error), error.url, error.problem, repr(error.args)):
        _assert_hidden(text)
    assert error.url.endswith("/index.json?token=***")


def test_a_redirect_to_a_url_with_a_password_is_refused_unshown():
    import httpx

    from energy_index.io.http import Downloader
    from energy_index.model import NetworkSettings

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"Location": f"https://u:{SECRET}@evil.example/x"})

    with (
        Downloader(NetworkSettings(retries=0), transport=httpx.MockTransport(answer)) as client,
        pytest.raises(NetworkError) as caught,
    ):
        client.get("https://example.org/index.json")
    assert "redirected to https://***@evil.example/x: refused, a user or password" in str(
        caught.value
    )
    _assert_hidden(str(caught.value))


def test_an_audit_of_a_url_with_a_token_does_not_write_it_into_the_result(standin):
    standin.contents[(standin.head, "published/index.json")] = PUBLISHED.read_bytes()
    url = f"{standin.raw_base}/ml-energy/leaderboard/{standin.head}/published/index.json"
    published = f"{url}?access_token={SECRET}"
    result = cli(standin, "audit", "--published", published, "--from", GOLDEN, *FAST)
    assert result.exit_code == 0, result.output
    assert f"{url}?access_token=*** compared with a rebuild" in result.output
    _assert_hidden(result.output)


# -- the scrub itself ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://u:p@h/x?access_token=s&page=2", "https://***@h/x?access_token=***&page=2"),
        ("see http://tok@h/x, then", "see http://***@h/x, then"),
        ("GET /x?api_key=abc: 404", "GET /x?api_key=***: 404"),
        ("%3Fpage%3D1%26private_token%3Dabc%26a%3D1", "%3Fpage%3D1%26private_token%3D***%26a%3D1"),
        ("Authorization: Basic dTpTRUNSRVQ=", "Authorization: Basic ***"),
        ("authorization: bearer ghp_abcdefgh", "authorization: bearer ***"),
        # GitHub's own query and ordinary prose are left alone
        ("commits?sha=master&path=a.json&per_page=1", "commits?sha=master&path=a.json&per_page=1"),
        ("a basic idea: key points", "a basic idea: key points"),
    ],
)
def test_credentials_are_masked_in_any_text(text, expected):
    assert masked_credentials(text) == expected


def test_the_secrets_of_a_url_are_the_query_values_named_like_credentials():
    assert url_secrets(f"https://h/x?sig={quote('a/b+c=d', safe='')}&page=12345") == (
        "a%2Fb%2Bc%3Dd",
        "a/b+c=d",
    )
    assert url_secrets("https://h/x?key=abc") == ()  # too short to look for in free text
    # a user and password are refused before any request: no answer can echo them
    assert url_secrets(f"https://u:{SECRET}@h/") == ()
    secret = f"{SECRET}/"  # URL-encoded with %2F, JSON-escaped with \/
    in_json = secret.replace("/", "\\/")
    body = f'echo {secret.lower()} {quote(secret, safe="")} "{in_json}"'
    assert scrubbed(body, url_secrets(f"https://h/?token={secret}")) == 'echo *** *** "***"'


def test_a_network_error_masks_its_url_and_scrubs_its_problem():
    error = failure(f"http://u:p@h/x?token={SECRET}", problem=f"body {quote(SECRET)} {SECRET}")
    assert str(error) == "http://***@h/x?token=***: body *** ***"
    assert masked_credentials(error.url) == error.url


class _OwnURL(_Echo):
    """Answers 200 with a JSON object that quotes the path and query it was asked for, as a
    published copy (or a proxy's error page) may: not an index, and not one's source either."""

    def answer(self) -> tuple[int, dict[str, object]]:
        return 200, {"kind": f"echo {self.path}", "source": f"echo {self.path}"}


@pytest.fixture
def own_url() -> Iterator[ThreadingHTTPServer]:
    yield from _serving(_OwnURL)


@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_a_published_copy_quoting_its_own_url_does_not_print_the_urls_token(own_url, json_flag):
    """Whatever raised it, an error the command line prints passes the scrub: here a document's
    own words quote the token of the URL it came from."""
    url = f"{_base(own_url)}/index.json?access_token={SECRET}"
    result = invoke("audit", "--published", url, "--retries", "0", "--quiet", *json_flag)
    assert result.exit_code == 1, result.output
    assert "access_token=***" in result.output
    _assert_hidden(result.output)


@pytest.mark.parametrize(
    ("command", "flag", "value"),
    [
        ("build", "--from", f"https://github.com/ml-energy/leaderboard?access_token={SECRET}"),
        ("plan", "--from", f"https://x.org/?api_key={SECRET}"),
        ("fetch", "--repository", f"https://github.com/a/b?secret={SECRET}"),
    ],
)
def test_a_token_in_a_url_the_command_refuses_is_masked(command, flag, value, tmp_path):
    extra = ["--tokens-per-second", "10"] if command == "plan" else []
    out = ["--to", tmp_path / "s"] if command == "fetch" else []
    result = invoke(command, flag, value, *extra, *out, *FAST)
    assert result.exit_code != 0, result.output
    assert "***" in result.output
    _assert_hidden(result.output)


def test_the_github_token_is_scrubbed_from_the_url_of_a_network_error(echo, tmp_path, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    base = f"{_base(echo)}/missing/{SECRET}"
    result = invoke("fetch", "--to", tmp_path / "s", "--api-base", base, "--retries", "0", *FAST)
    assert result.exit_code == 3, result.output
    assert "/missing/***/" in result.output
    _assert_hidden(result.output)
