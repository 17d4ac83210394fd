"""Credentials: vendor key formats, JWTs, HTTP auth headers, URL and connection-string passwords."""

from __future__ import annotations

import base64
import binascii
import re

from .detectors_common import Found, lowered
from .detectors_gates import letter_runs

# One pass for all token shapes: each alternative is a known key or token format.
_SECRET_TOKENS = re.compile(
    r"\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"  # OpenAI, Anthropic
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"  # Stripe
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}\b"  # AWS
    r"|AIza[0-9A-Za-z_-]{35}"  # Google API
    r"|(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}\b"  # GitHub
    r"|github_pat_[A-Za-z0-9_]{22,}"
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
    r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
    r"|hf_[A-Za-z0-9]{30,}\b"  # Hugging Face
    r"|SK[0-9a-fA-F]{32}\b"  # Twilio
    r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"  # SendGrid
    r"|eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,})"  # JWT
)
_BEARER = re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{16,})")
_BASIC = re.compile(r"(?i)\bbasic\s+([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])")
# The user and password of scheme://user:password@host (a password may hold "@").
_URL_CREDENTIALS = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://([^\s/:@]*:[^\s/?#]+)@")
# Password=...; in ADO.NET and ODBC strings, password=... in JDBC URLs and queries.
_ASSIGNED = re.compile(
    r"(?i)\b(?:password|passwd|pwd|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)"
    r"\s*=\s*(\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|[^;&\s'\"]{1,200})"
)

# Substrings a text must hold for each pattern to be worth running.
_TOKEN_HINTS = (
    "sk-",
    "_live_",
    "_test_",
    "AKIA",
    "ASIA",
    "AIza",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xox",
    "hf_",
    "SK",
    "SG.",
    "eyJ",
)
# What the hints or the other patterns need, tested first by the cheapest checks:
# "_" stands in for the hints that hold one, a dash for those that end in one.
_DASH_HINT = re.compile(r"-(?:(?<=sk-)|(?<=glpat-)|(?<=xox[abposr]-))")
_AWS_OR_GOOGLE = re.compile(r"A[KSI]")
_TWILIO_OR_SENDGRID = re.compile(r"S[KG]")
# Standing in for the letter runs of a text that is not ASCII: no test on them then.
_HEADER_WORDS = frozenset((b"bearer", b"basic"))
_ASSIGNED_HINTS = ("wd", "WD", "ssw", "SSW", "ey", "EY", "oken", "OKEN", "ecret", "ECRET")


def _basic_credentials(token: str) -> bool:
    """The token decodes to ``user:password``, as an HTTP Basic credential does."""
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
        return ":" in decoded.decode()
    except (binascii.Error, UnicodeDecodeError):
        return False


def _may_hold_token(text: str) -> bool:
    """Whether a hint may be in ``text``: one-character tests first (``in`` with one
    character is a memchr, with more a scan at about 1 µs a kilobyte)."""
    if "_" in text or ("J" in text and "eyJ" in text):
        return True
    if "-" in text and _DASH_HINT.search(text):
        return True
    return bool(_AWS_OR_GOOGLE.search(text) or _TWILIO_OR_SENDGRID.search(text))


def secrets(text: str) -> list[Found]:
    found: list[Found] = []
    if _may_hold_token(text) and any(hint in text for hint in _TOKEN_HINTS):
        found += [
            Found(m.start(), m.end(), "SECRET", m.group(0)) for m in _SECRET_TOKENS.finditer(text)
        ]
    if "=" in text and any(hint in text for hint in _ASSIGNED_HINTS):
        for m in _ASSIGNED.finditer(text):
            value = m.group(1).strip("\"'")
            if value:
                found.append(Found(m.start(1), m.end(1), "SECRET", value))
    # ``\bbearer\s+`` and ``\bbasic\s+`` match only where the word is a whole letter run.
    words = letter_runs(lowered(text)) or _HEADER_WORDS
    if b"bearer" in words and ("earer" in text or "EARER" in text):
        found += [Found(m.start(1), m.end(1), "SECRET", m.group(1)) for m in _BEARER.finditer(text)]
    if ":" in text and "://" in text:
        found += [
            Found(m.start(1), m.end(1), "SECRET", m.group(1))
            for m in _URL_CREDENTIALS.finditer(text)
        ]
    if b"basic" in words and ("asic" in text or "ASIC" in text):
        found += [
            Found(m.start(1), m.end(1), "SECRET", m.group(1))
            for m in _BASIC.finditer(text)
            if _basic_credentials(m.group(1))
        ]
    return found
