"""The referee: pure game engines (:mod:`referee.games`), built-in policies
(:mod:`referee.policies`) and the in-process match runner (:mod:`referee.local`)."""
