"""egress: which sink URLs and addresses are refused; sockets go where they were checked."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from faithmon.alerts.egress import (
    RefusedAddress,
    RefusedDestination,
    check_url,
    open_checked,
    resolve,
)


@pytest.mark.parametrize(
    "url",
    [
        "http://2852039166/",  # 169.254.169.254 as one decimal number
        "http://0xa9.0xfe.0xa9.0xfe/",
        "http://169.254.43518/",
        "http://[::ffff:169.254.169.254]/",
        "http://[64:ff9b::a9fe:a9fe]/",  # NAT64 of 169.254.169.254
        "http://[fe80::1%25eth0]:9093/",
        "http://METADATA.google.internal./",
        "HTTPS://169.254.1.1/",
    ],
)
def test_disguised_link_local_and_metadata_urls_are_refused(url: str) -> None:
    """Other spellings of a link-local or metadata destination are refused without DNS."""
    with pytest.raises(RefusedAddress):
        check_url(url)
    check_url(url, allow_link_local=True)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9093",
        "http://[::1]:9093",
        "http://10.1.2.3",
        "http://172.16.0.1",
        "http://192.168.0.1",
        "http://100.64.0.1",  # carrier-grade NAT, but not Alibaba's metadata address
        "http://alertmanager:9093",
        "https://hooks.slack.com/services/T/B/X",
    ],
)
def test_internal_and_public_urls_pass(url: str) -> None:
    """Loopback, private, cluster and public destinations are not refused."""
    check_url(url)


def test_refusals_never_quote_the_path() -> None:
    """A webhook URL's path is a secret: refusals name the host at most."""
    for url in ("ftp://h/secret", "http://169.254.169.254/secret", "http://h/se cret"):
        with pytest.raises(RefusedDestination) as caught:
            check_url(url)
        assert "secret" not in str(caught.value)


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, list[str]]]:
    """Names mapped to the addresses the resolver gives, with a log of lookups."""
    table: dict[str, list[str]] = {"lookups": []}
    real = socket.getaddrinfo

    def getaddrinfo(host: str, port: object, *args: object, **kwargs: object) -> list[object]:
        table["lookups"].append(host)
        found: list[object] = []
        for address in table.get(host, [host]):
            found.extend(real(address, port, *args, **kwargs))  # type: ignore[arg-type]
        return found

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield table


def test_any_refused_address_refuses_the_name(answers: dict[str, list[str]]) -> None:
    """A name with one loopback and one metadata address is refused as a whole."""
    answers["alerts.example"] = ["127.0.0.1", "169.254.169.254"]
    with pytest.raises(RefusedAddress, match=r"resolves to 169\.254\.169\.254"):
        resolve("alerts.example", 80)
    assert len(resolve("alerts.example", 80, allow_link_local=True)) == 2


def test_the_socket_connects_to_the_address_checked(answers: dict[str, list[str]]) -> None:
    """One lookup per connection, and the socket goes to the address that lookup gave."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        answers["alerts.example"] = ["127.0.0.1"]

        with open_checked(("alerts.example", port), timeout=5) as sock:
            assert sock.getpeername() == ("127.0.0.1", port)

    assert answers["lookups"] == ["alerts.example"]
