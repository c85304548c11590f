"""Errors as values: every failure a user can see has one stable exit code."""
from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    ERROR = 1
    USAGE = 2
    NEEDS_CONFIRMATION = 3
    REJECTED = 4
    NOT_FOUND = 5
    STORE_UNAVAILABLE = 6
    INTERRUPTED = 130


def _masked(text: str) -> str:
    """Errors quote what was given; a credential in it is never echoed back."""
    if not text:
        return text
    from .policy.sensitive import mask_secrets
    return mask_secrets(text)


class EkkoError(Exception):
    """A failure with a plain message and a hint naming the next thing to try."""

    code = ExitCode.ERROR
    slug = "error"

    def __init__(self, message: str, hint: str = "", *, data: dict | None = None) -> None:
        message, hint = _masked(message), _masked(hint)
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.data = data or {}

    def line(self) -> str:
        text = f"ekko-mem: {self.message}"
        return f"{text}; {self.hint}" if self.hint else text


class UsageError(EkkoError):
    code = ExitCode.USAGE
    slug = "usage"


class NeedsConfirmation(EkkoError):
    code = ExitCode.NEEDS_CONFIRMATION
    slug = "needs_confirmation"


class Rejected(EkkoError):
    code = ExitCode.REJECTED
    slug = "rejected"


class NotFound(EkkoError):
    code = ExitCode.NOT_FOUND
    slug = "not_found"


class StoreUnavailable(EkkoError):
    code = ExitCode.STORE_UNAVAILABLE
    slug = "store_unavailable"


class Answer(dict):
    """A design answer: a JSON object. The design's APIs answer a refusal rather than raise it;
    the answer then keeps the typed error in `error`, so a caller that must fail raises exactly
    what was refused, not an error rebuilt from its exit code."""

    def __init__(self, fields: dict, error: EkkoError | None = None) -> None:
        super().__init__(fields)
        self.error = error


def refusal(error: EkkoError, fields: dict) -> Answer:
    """`fields` with the refusal's reason, hint, code and data, carrying `error`."""
    return Answer({**fields, "reason": error.message, "hint": error.hint,
                   "requiresConfirmation": isinstance(error, NeedsConfirmation),
                   "code": int(error.code), **error.data}, error)
