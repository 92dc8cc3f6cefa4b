"""TrueSkill ratings (:mod:`.ratings`), the SQLite store (:mod:`.store`), leaderboards
applied in canonical order (:mod:`.board`) and their views (terminal: :mod:`.views`;
HTML: :mod:`.web`). This package imports nothing else of Arena's; see
docs/architecture.md and docs/tournaments.md.
"""
