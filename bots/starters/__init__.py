"""Starter bots: one per game, about 20 lines each, to copy and grow (issue 13 B7)."""
