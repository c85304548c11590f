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
    UNPRINTED = 7  # done (a write kept), but the answer could not be written to stdout
    INTERRUPTED = 130


class Step:
    """The next thing to run, in the design's words: a command (None: the same request again)
    with parameters, by their design names (confirm, hard, purgeSources, ...). The command line
    spells a step with its flags; an agent or a library caller reads `str(step)`."""

    __slots__ = ("params", "command", "target")

    def __init__(self, *params: str, command: str | None = None, target: str = "") -> None:
        self.params, self.command, self.target = params, command, target

    def __str__(self) -> str:
        given = " and ".join(self.params)
        if self.command is None:
            return f"ask again with {given}" if given else "ask again"
        what = " ".join(filter(None, [self.command, self.target]))
        return f"run {what} with {given}" if given else f"run {what}"


class EkkoError(Exception):
    """A failure with a plain message and a hint naming the next thing to try.

    `step`, when given, is that next thing as data; `hint` then says why or what else.
    A message quotes what was given as it was given: where it is printed (the command line's
    error line, an MCP reply, a view) a credential in it is masked."""

    code = ExitCode.ERROR
    slug = "error"

    def __init__(self, message: str, hint: str = "", *, data: dict | None = None,
                 step: Step | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.step = step
        self.reason_for_step = hint
        self.hint = _join(str(step), hint) if step is not None else hint
        self.data = data or {}

    def line(self, spell=None) -> str:
        """The one error line; `spell` turns a step into the caller's own words (flags)."""
        hint = self.hint
        if self.step is not None and spell is not None:
            hint = _join(spell(self.step), self.reason_for_step)
        text = f"ekko-mem: {self.message}"
        return f"{text}; {hint}" if hint else text


def _join(step: str, reason: str) -> str:
    return f"{step} {reason}" if reason else step


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


class Unprinted(EkkoError):
    """The command did its work, and a write it made is kept, but stdout would not take the
    answer (a full disk, a closed descriptor): the line says what was written, so a script
    does not run the write again to find out."""

    code = ExitCode.UNPRINTED
    slug = "unprinted"

    def __init__(self, done: str, why: str) -> None:
        super().__init__("; ".join(filter(None, [done, f"could not print: {why}"])))


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
