"""Extractors: turn logged messages into proposed memories (rules here; an LLM command beside)."""
