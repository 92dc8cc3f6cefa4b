"""Example bot programs. Each uses only :mod:`protocol` (and :mod:`referee.games`
when it simulates). The in-process built-in policies live in :mod:`referee.policies`.
"""
