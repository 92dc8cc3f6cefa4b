"""The referee: pure game engines (:mod:`referee.games`), built-in policies
(:mod:`referee.policies`), bot programs and their per-seat supervisors
(:mod:`referee.programs`, :mod:`referee.supervisor`, :mod:`referee.seats`) and the
match runner (:mod:`referee.match`)."""
