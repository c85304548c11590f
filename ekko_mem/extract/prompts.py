"""Prompts for an LLM extractor or summariser: previous summary, new messages, JSON Schema."""
from __future__ import annotations

import json

SUMMARY_TASK = """You maintain a chain of conversation summaries for a memory system.
Write the NEXT summary from the previous summary and the new messages only.
Keep lists short (at most 8 items each), in the language of the conversation.
Answer with one JSON object that matches the JSON Schema below, and nothing else."""

EXTRACTION_TASK = """You extract long-term memory from new conversation messages.
For each durable preference, fact, decision, task, constraint or correction the USER stated,
add one item to "nodes". Rules:
- scope "user" only for lasting personal preferences the user stated explicitly
  (记住 / 以后都 / remember / from now on); otherwise "session".
- project facts, decisions and constraints: scope "workspace".
- temporary states (今天 / today): scope "session" with "expiresAt".
- never store secrets, passwords, keys, card or phone numbers; ignore questions, small talk,
  hypotheticals and other people's preferences.
- use "sourceMessageIds" with the ids of the messages you used.
- a correction of an earlier memory: operation "supersede".
Answer with one JSON object that matches the JSON Schema below, and nothing else."""


def _messages_block(messages: list[dict]) -> str:
    from ..policy.sensitive import mask_secrets  # a prompt goes to a model: no credentials
    return "\n".join(json.dumps({"id": m["id"], "role": m["role"],
                                 "content": mask_secrets(m["content"]),
                                 "createdAt": m["createdAt"]}, ensure_ascii=False)
                     for m in messages)


def summary_prompt(previous: dict | None, messages: list[dict], schema: dict) -> str:
    prior = json.dumps({k: v for k, v in (previous or {}).items() if k not in (
        "id", "sessionId", "parentSummaryId", "needsRegeneration")}, ensure_ascii=False,
        indent=1) if previous else "(none: this is the first summary)"
    return (f"{SUMMARY_TASK}\n\n## Previous summary\n{prior}\n\n## New messages (JSON lines)\n"
            f"{_messages_block(messages)}\n\n## JSON Schema of your answer\n"
            f"{json.dumps(schema, ensure_ascii=False)}\n")


def extraction_prompt(previous: dict | None, messages: list[dict], schema: dict) -> str:
    prior = previous["summary"] if previous else "(none)"
    return (f"{EXTRACTION_TASK}\n\n## Summary so far\n{prior}\n\n## New messages (JSON lines)\n"
            f"{_messages_block(messages)}\n\n## JSON Schema of your answer\n"
            f"{json.dumps(schema, ensure_ascii=False)}\n")
