"""Is NEW better than BASE? The statistics of ``arena compare`` (issue 18 §2, §3).

A comparison plays duplicate groups (one deal, the seats rotated so that NEW and BASE
each sit in every position) and scores each game from NEW's side, 1, ½ or 0;
:mod:`.stats` accumulates the group scores and estimates the Elo difference, its 95%
interval and the likelihood of superiority, and :mod:`.sprt` runs fishtest's
generalized sequential probability ratio test on them and formats the live line. Both
are pure: no I/O, nothing but the standard library.
"""
