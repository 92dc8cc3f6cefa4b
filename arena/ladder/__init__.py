"""The continuous ladder (issue 16): the arena plays itself, matches paired one at a time.

A ladder is a tournament (format ``ladder``) whose schedule grows a match at a time
(:mod:`.service`, the runner); what its matchmaking (:mod:`.matchmaking`) reads is
derived from the stored results (:mod:`.roster`), and :mod:`.snapshot` is its state
as the CLI and the web show it. See docs/ladder.md.
"""
