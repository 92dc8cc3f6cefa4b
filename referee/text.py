"""A bot's text shown to a person: nothing in it may act on the terminal that shows it.

A bot's stderr, a build's output and a bot's names reach the organiser's terminal and
logs. Control characters there are escape sequences (clear the screen, set the
clipboard through OSC 52, rename the window) and invisible ones (bidi overrides,
zero-width spaces, line separators) make a text read other than it is. Every such
character but a newline or a tab is shown escaped (found by review of issue 13).
"""

from __future__ import annotations

import unicodedata

HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode categories of control and invisible characters."""


def hidden(char: str) -> bool:
    """Whether ``char`` is a control or invisible character (a newline and a tab are too)."""
    return unicodedata.category(char) in HIDDEN


def printable(text: str) -> str:
    """``text`` with every control or invisible character but a newline or a tab escaped
    the way Python writes it (``\\x1b``, ``\\u202e``); all else unchanged."""
    return "".join(c if c in "\n\t" or not hidden(c)
                   else c.encode("unicode_escape").decode("ascii") for c in text)


def one_line(text: str) -> str:
    """:func:`printable` ``text`` with its newlines and tabs escaped too: for a text shown
    within a line of its own (a worker's name in a report), which it must not break."""
    return printable(text).replace("\n", "\\n").replace("\t", "\\t")
