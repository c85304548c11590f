"""Turning results into text: human tables, JSON for scripts, plain text for LLM pipes."""
