"""Canonical JSON text: equal values are equal text, so exact valueJson lookups can compare."""
from __future__ import annotations

import json

_PROBE = {"b": [1, 2.5, None, True, "é\n\u2028"], "a": {"z": "", "y": -0.0}}


def _slow(value) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _encoder():
    """json.dumps builds a new encoder at every call that passes options, which was most of
    the cost of a write's half-dozen small lists. The C encoder is
    made once; a Python whose json module lacks it, or whose encoder does not answer the
    probe exactly as json.dumps does, keeps json.dumps."""
    try:
        from json.encoder import c_make_encoder, encode_basestring
        if c_make_encoder is None:
            return _slow

        def default(value):
            raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
        # No circular-reference markers: the values are parsed JSON or plain records, and a
        # cycle still ends in RecursionError, as deep nesting does.
        made = c_make_encoder(None, default, encode_basestring, None, ":", ",", True, False,
                              True)

        def fast(value) -> str:
            return "".join(made(value, 0))
        if fast(_PROBE) != _slow(_PROBE) or fast("x") != '"x"':
            return _slow
        return fast
    except Exception:  # noqa: BLE001 - any surprise in a private API means the public one
        return _slow


_dump = None


def canonical_json(value) -> str:
    global _dump
    if _dump is None:
        _dump = _encoder()
    return _dump(value)
