"""A small HTTP client for the read API tests: JSON in, (status, JSON or text) out."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlencode


def call(
    url: str, path: str, key: str | None = None, method: str = "GET", **params: Any
) -> tuple[int, Any, dict[str, str]]:
    """``params`` become the query; a list value repeats its name."""
    query = urlencode(
        [(k, v) for k, vs in params.items() for v in (vs if isinstance(vs, list) else [vs])]
    )
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    request = urllib.request.Request(
        url + path + (f"?{query}" if query else ""), method=method, headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, body, got = response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        status, body, got = error.code, error.read(), dict(error.headers)
    text = body.decode()
    try:
        return status, json.loads(text), got
    except ValueError:
        return status, text, got


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
