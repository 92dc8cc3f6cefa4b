"""The named reads about accounts (issue 15 §2): authors, sessions and bot owners.

A database from before schema 5 has no such tables: its reads answer as if no author
existed (a reader never migrates), so the public pages of an old file keep working.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from .base import Connection
from .rows import Author, SessionRow

AUTHOR_COLUMNS = "a.id, a.name, a.admin, a.created_at, a.disabled_at"


def fold_bot_name(name: str) -> str:
    """The form under which a bot name is owned (issue 15 §2): its NFKC case fold, so
    'Émile', 'ÉMILE' and 'émile', 'Straße' and 'STRASSE', or a fullwidth 'ａｄａ' and
    'ada', are one name to own. SQLite's ``COLLATE NOCASE`` folds only ASCII."""
    return unicodedata.normalize(
        "NFKC", unicodedata.normalize("NFKC", name).casefold()).casefold()


def author_of(row: dict[str, Any]) -> Author:
    """An ``authors`` row (the columns of AUTHOR_COLUMNS) as an :class:`Author`."""
    return Author(row["id"], row["name"], bool(row["admin"]), row["created_at"],
                  row["disabled_at"])


class AccountReads(Connection):
    """Reads of ``authors``, ``sessions`` and ``bot_owners``."""

    def _accounts(self) -> bool:
        """Whether the file has the account tables (schema 5 and later); asked once, as
        the schema does not change while the file is open (the writer migrates first)."""
        cached = self.__dict__.get("_has_accounts")
        if cached is None:
            cached = self.__dict__["_has_accounts"] = "authors" in self._tables()
        return bool(cached)

    def _author_where(self, where: str, params: tuple[Any, ...]) -> Author | None:
        if not self._accounts():
            return None
        row = self._one(f"SELECT {AUTHOR_COLUMNS} FROM authors a WHERE {where}", params)
        return None if row is None else author_of(row)

    def authors(self) -> list[Author]:
        """Every author, oldest account first."""
        if not self._accounts():
            return []
        return [author_of(r) for r in self._rows(
            f"SELECT {AUTHOR_COLUMNS} FROM authors a ORDER BY a.id")]

    def author(self, name: str) -> Author | None:
        """The author named ``name`` exactly, or None."""
        return self._author_where("a.name = ?", (name,))

    def author_by_id(self, author_id: int) -> Author | None:
        """The author of this id, or None."""
        return self._author_where("a.id = ?", (author_id,))

    def author_like(self, name: str) -> Author | None:
        """An author whose name equals ``name`` but for case (author names are ASCII, so
        SQLite's NOCASE folds them all), or None."""
        return self._author_where("a.name = ? COLLATE NOCASE", (name,))

    def author_by_token_hash(self, token_hash: str) -> Author | None:
        """The author whose token has this SHA-256 (hex), disabled or not, or None."""
        return self._author_where("a.token_hash = ?", (token_hash,))

    def author_token_set_at(self, author_id: int) -> str | None:
        """When this author's current token was made, or None for no such author."""
        if not self._accounts():
            return None
        return self._scalar("SELECT token_set_at FROM authors WHERE id = ?", (author_id,))

    def registrations_since(self, address: str, since: str) -> int:
        """Accounts made on the registration form from ``address`` after ``since``."""
        if not self._accounts():
            return 0
        return int(self._scalar(
            "SELECT COUNT(*) AS n FROM authors WHERE registered_from = ? AND created_at > ?",
            (address, since)))

    def session(self, id_hash: str) -> SessionRow | None:
        """The session whose id has this SHA-256 (hex), expired or not, or None."""
        if not self._accounts():
            return None
        row = self._one("SELECT author_id, csrf, created_at, expires_at FROM sessions "
                        "WHERE id_hash = ?", (id_hash,))
        return None if row is None else SessionRow(**row)

    def live_sessions(self, author_id: int, at: str) -> int:
        """How many sessions of this author are open and unexpired at ``at``."""
        if not self._accounts():
            return 0
        return int(self._scalar("SELECT COUNT(*) AS n FROM sessions WHERE author_id = ? "
                                "AND expires_at > ?", (author_id, at)))

    def bot_owner(self, name: str) -> Author | None:
        """The author who owns bot name ``name``, or any name of the same fold
        (:func:`fold_bot_name`: in another case or compatibility form), or None."""
        if not self._accounts():
            return None
        row = self._one(f"SELECT {AUTHOR_COLUMNS} FROM bot_owners o "
                        f"JOIN authors a ON a.id = o.author_id WHERE o.folded = ?",
                        (fold_bot_name(name),))
        return None if row is None else author_of(row)

    def registered_bot_like(self, name: str) -> str | None:
        """A bot name in ``bots`` (the organiser's, or a version already added) of the
        same fold as ``name``, or None."""
        folded = fold_bot_name(name)
        return next((r["name"] for r in self._rows("SELECT DISTINCT name FROM bots")
                     if fold_bot_name(r["name"]) == folded), None)

    def owned_bots(self, author_id: int) -> list[str]:
        """The bot names this author owns, sorted."""
        if not self._accounts():
            return []
        return [r["name"] for r in self._rows(
            "SELECT name FROM bot_owners WHERE author_id = ? ORDER BY name", (author_id,))]

    def bot_owners(self) -> dict[str, str]:
        """Every owned bot name with its author's name (for the public pages, §4)."""
        if not self._accounts():
            return {}
        return {r["bot"]: r["author"] for r in self._rows(
            "SELECT o.name AS bot, a.name AS author FROM bot_owners o "
            "JOIN authors a ON a.id = o.author_id ORDER BY o.name")}
