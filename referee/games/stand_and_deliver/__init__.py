"""Stand & Deliver (game id ``stand-and-deliver``): RULES.md section 4, as a package.

The engine, :class:`StandAndDeliver`, is assembled from one module per part of
the rules; this file only names it, so ``from referee.games.stand_and_deliver
import StandAndDeliver`` and the registry keep their one name for it:

* :mod:`.game`: setup, the stage machine of the round and the decisions D1-D7;
* :mod:`.resolution`: Steps 6-8, the coaches, draws, resolution, housekeeping and the ranking;
* :mod:`.view`: ``view``, ``full_view``, ``components`` and ``resample_hidden``;
* :mod:`.encounter`: one step of the encounter algorithm (RULES.md 4.5), a pure function;
* :mod:`.data`: the default component data, the options and their checks, the bounds;
* :mod:`.state`: the declarations of the state the others share.
"""

from __future__ import annotations

from .game import StandAndDeliver

__all__ = ["StandAndDeliver"]
