"""What the web views read from the arena database: rating histories, head-to-head
counts, chart geometry, page paths and the page errors.

No HTML here and no web framework: the templates and the app are in
:mod:`arena.web` (issue 15 §1). Nothing here imports ``referee`` or ``arena``.
"""

from .data import PageError, bad_request, not_found

__all__ = ["PageError", "bad_request", "not_found"]
