"""Running any LLM command-line tool as extractor or summariser.

The command is split into argv and run without a shell (no shell is ever built from text);
the prompt goes to its stdin and its stdout is parsed as JSON, tolerating code fences and
prose around the object.
"""
from __future__ import annotations

import json
import shlex
import subprocess


class LLMFailure(Exception):
    """The command could not give a usable answer; the message says why."""


def run_command(command: str, prompt: str, *, timeout: float) -> str:
    from ..policy.sensitive import mask_secrets
    prompt = mask_secrets(prompt)  # the one way text reaches a model command
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise LLMFailure(f"cannot parse the command {command!r}: {exc}") from None
    if not argv:
        raise LLMFailure("the LLM command is empty")
    try:
        proc = subprocess.run(argv, input=prompt, capture_output=True, text=True,
                              timeout=timeout, errors="replace")
    except FileNotFoundError:
        raise LLMFailure(f"command not found: {argv[0]}") from None
    except PermissionError:
        raise LLMFailure(f"command not executable: {argv[0]}") from None
    except subprocess.TimeoutExpired:
        raise LLMFailure(f"{argv[0]} gave no answer within {timeout:g}s") from None
    if proc.returncode != 0:
        tail = " ".join(proc.stderr.strip().splitlines()[-2:])[:300]
        raise LLMFailure(f"{argv[0]} exited with {proc.returncode}" + (f": {tail}" if tail
                                                                        else ""))
    return proc.stdout


def parse_json_answer(text: str) -> dict:
    """The JSON object in an LLM's answer: bare, inside ``` fences, or amid prose."""
    body = text.strip()
    if "```" in body:
        parts = body.split("```")
        fenced = [p for p in parts[1::2]]
        for block in fenced:
            block = block.strip()
            if block.lower().startswith("json"):
                block = block[4:].strip()
            if block.startswith("{"):
                body = block
                break
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        raise LLMFailure("the answer holds no JSON object: " + _preview(text))
    try:
        value = json.loads(body[start:end + 1])
    except ValueError as exc:
        raise LLMFailure(f"the answer is not valid JSON ({exc}): " + _preview(text)) from None
    if not isinstance(value, dict):
        raise LLMFailure("the answer is JSON but not an object")
    return value


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat[:80] + ("…" if len(flat) > 80 else ""))
