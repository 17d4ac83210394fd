"""A small HTTP client for the API tests: one request helper that answers an HTTP error's
status instead of raising it, and JSON in, (status, JSON or text) out on top of it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from email.message import Message
from typing import Any, Protocol
from urllib.parse import urlencode


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def send(
    url: str,
    data: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    *,
    method: str | None = None,
    timeout: float = 30,
    follow_redirects: bool = True,
) -> tuple[int, bytes, Message]:
    """(status, body, headers) of one request; a 4xx or 5xx is an answer, not an exception.

    Without ``follow_redirects`` a 3xx is answered as it came, with its Location header.
    """
    sent = urllib.request.Request(url, data, dict(headers or {}), method=method)
    try:
        if follow_redirects:
            with urllib.request.urlopen(sent, timeout=timeout) as response:
                return response.status, response.read(), response.headers
        with urllib.request.build_opener(_NoRedirect).open(sent, timeout=timeout) as response:
            return response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        try:
            return error.code, error.read(), error.headers
        finally:
            error.close()  # it holds the connection's socket until closed


def json_or_text(body: bytes) -> Any:
    """The body's JSON, or its text when it is not JSON."""
    text = body.decode()
    try:
        return json.loads(text)
    except ValueError:
        return text


def call(
    url: str, path: str, key: str | None = None, method: str = "GET", **params: Any
) -> tuple[int, Any, dict[str, str]]:
    """``params`` become the query; a list value repeats its name."""
    query = urlencode(
        [(k, v) for k, vs in params.items() for v in (vs if isinstance(vs, list) else [vs])]
    )
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    status, body, got = send(
        url + path + (f"?{query}" if query else ""), headers=headers, method=method
    )
    return status, json_or_text(body), dict(got)


def get(url: str, path: str, key: str | None = None, **params: Any) -> Any:
    """The JSON of a GET that must answer 200."""
    status, body, _ = call(url, path, key, **params)
    assert status == 200, (path, params, status, body)
    return body


def every_page(url: str, path: str, key: str, limit: int, **params: Any) -> list[Any]:
    """Every item of a paged list, following ``next_cursor`` to the end."""
    items: list[Any] = []
    cursor = None
    for _ in range(1000):
        page = get(url, path, key, limit=limit, **params, **({"cursor": cursor} if cursor else {}))
        assert len(page["items"]) <= limit
        items.extend(page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            return items
        assert page["items"], "a page with a cursor after it is never empty"
    raise AssertionError("the pages never ended")


class Keyed(Protocol):
    """A served app: its URL and an API key per role."""

    @property
    def url(self) -> str: ...

    @property
    def keys(self) -> dict[str, str]: ...


def call_as(
    served: Keyed, method: str, path: str, role: str, body: object = None
) -> tuple[int, Any]:
    """(status, JSON or text) of a request with ``role``'s key and ``body`` sent as JSON."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Bearer {served.keys[role]}", "Content-Type": "application/json"}
    status, answer, _ = send(served.url + path, data, headers, method=method)
    return status, json_or_text(answer)
