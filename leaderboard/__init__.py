"""TrueSkill ratings, the SQLite store and the leaderboard views.

Filled in by the tournaments issue (#7); see docs/architecture.md for the layers.
"""
