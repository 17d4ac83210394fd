"""The one error of the gate's input: a cases file, rules or baseline it cannot use.

The CLI shows its message as one line and exits 2 (a usage error): what the person
typed or pointed at is wrong, and no judge call was made.
"""

from __future__ import annotations

from ..errors import FaithmonError


class GateInputError(FaithmonError):
    """Cases, rules or a baseline the gate cannot use; the message says where and why."""
