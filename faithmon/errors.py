"""faithmon's exceptions.

FaithmonError
├── ConfigError        a setting has a value faithmon cannot use
│   ├── DatabaseUrlError   the database URL names a database faithmon cannot open
│   └── ScrubKeyMismatch   the scrub key is not the one the store's pseudonyms were made with
├── DecodeError        an OTLP body that cannot be decoded (the receiver answers 400)
├── RecordGone         a record was deleted while a worker was judging it
├── SaturatedError     the ingest queue is full (the receiver answers 503)
│   └── TooLargeToAdmit    one request could never fit, however long it waits (413)
└── StoreUnavailable   the database cannot be reached (the receiver answers 503)
"""


class FaithmonError(Exception):
    """Base of every error faithmon raises on purpose."""


class ConfigError(FaithmonError):
    """A setting has a value faithmon cannot use."""


class DatabaseUrlError(ConfigError):
    """The database URL names a database faithmon cannot open (a missing folder or file,
    a driver not installed, a server that refuses); the CLI names the setting it came from."""

    def __init__(self, url: str, reason: str, hint: str) -> None:
        super().__init__(f"{url}: {reason}; {hint}")
        self.url = url
        self.reason = reason
        self.hint = hint


class ScrubKeyMismatch(ConfigError):
    """The scrub key's fingerprint is not the one the store recorded: records pseudonymised
    with it would give the values already stored other pseudonyms."""


class DecodeError(FaithmonError):
    """An OTLP request body that cannot be decoded."""


class RecordGone(FaithmonError):
    """A record was deleted (by hand, or by retention) while a worker was judging it."""

    def __init__(self, record_id: int) -> None:
        super().__init__(f"record {record_id} no longer exists")
        self.record_id = record_id


class SaturatedError(FaithmonError):
    """The ingest pipeline is full; the client should retry later."""


class TooLargeToAdmit(SaturatedError):
    """One request opens more traces than the assembler may ever hold at once: a retry
    would be refused forever, so the client is told to send smaller batches."""


class StoreUnavailable(FaithmonError):
    """The database cannot be reached; the client should retry later."""
