"""TrueSkill ratings (:mod:`.ratings`), ratings as a pure fold of an ordered stream of
results (:mod:`.stream`), the SQLite store, the one data layer (:mod:`.store`),
leaderboards kept over the store (:mod:`.board`) and their views (terminal:
:mod:`.views`; HTML: :mod:`.web`). This package imports nothing else of Arena's; see
docs/architecture.md and docs/tournaments.md.
"""
