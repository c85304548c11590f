"""Pure decisions, no I/O: vocabularies, scope rules, schema, conflicts, privacy, budgets."""
