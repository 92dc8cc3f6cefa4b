"""Who is asking, for the Starlette app (issue 15 §2): API tokens, session cookies, CSRF.

- The API takes a token only as ``Authorization: Bearer TOKEN``. A token in the URL
  is refused with 400 and never looked up (URLs are logged, kept in history and sent
  on in ``Referer``); a missing, unknown or disabled token is 401 with
  ``WWW-Authenticate: Bearer``. :func:`json_error` renders these as the API's JSON.
- A signed-in browser holds the cookie ``arena_session`` (``__Host-arena_session``
  behind https: :func:`cookie_name`): a random session id signed
  with the server's key (itsdangerous). Only the id's SHA-256 is in the database, so
  sign-out, a token reset and a disable end a session for good. A forged, tampered,
  expired or ended cookie is simply nobody (:func:`page_author` is None), never an
  error page.
- Every form carries a CSRF token (field ``csrf``): the session's, or, before
  sign-in, the one of a signed ``arena_csrf`` cookie (:func:`csrf_cookie` sets it).
  A form a browser marks as sent from another site (``Sec-Fetch-Site``) is refused.

The app carries ``app.state.config`` (ServerConfig) and ``app.state.db_path``. The
helpers are synchronous (each opens the SQLite file briefly): Starlette runs a plain
``def`` endpoint in its thread pool; an ``async def`` one may use ``run_in_threadpool``.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from itsdangerous import BadSignature, Signer, TimestampSigner
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from arena import accounts
from arena.web.config import ServerConfig
from leaderboard.store import Store, StoreError, StoreReader
from leaderboard.store.rows import Author

SESSION_COOKIE = "arena_session"
CSRF_COOKIE = "arena_csrf"
CSRF_FIELD = "csrf"
"""The hidden field of every form that holds its CSRF token."""
TOKEN_QUERY_NAMES = frozenset({
    "token", "access_token", "accesstoken", "api_key", "apikey", "api-key", "api_token",
    "auth", "auth_token", "authorization", "bearer", "arena_token", "session"})
"""Query parameters refused on sight (issue 15 §2: a token is never accepted in a URL),
whatever their value; any value of a token's shape is refused too."""
_BEARER = "bearer "
_SCHEME = re.compile(r"[A-Za-z][A-Za-z-]{0,19}")
"""What an Authorization scheme (Basic, Token, Digest) looks like, to be quoted back."""
_UNSET: Any = object()


class SecretError(RuntimeError):
    """The session key file cannot be made or read, or others may read it."""


class AuthError(HTTPException):
    """An HTTP refusal of the accounts layer, with the API's error ``code``."""

    def __init__(self, status_code: int, code: str, message: str,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(status_code, message, dict(headers) if headers else None)
        self.code = code


# --------------------------------------------------------------- the key file
def load_secret(path: Path) -> bytes:
    """The key that signs cookies, from ``path``; made on first use (256 random bits,
    mode 0600, written whole before it appears, so two servers starting at once agree).
    SecretError for a key that is not a regular file, is another user's, is readable
    by others, or short."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not path.exists():
            fd, staged = tempfile.mkstemp(prefix=".secret-", dir=path.parent)  # mode 0600
            try:
                os.write(fd, secrets.token_hex(32).encode())
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(staged, path)  # atomic, and never over a key made meanwhile
            except FileExistsError:
                pass
            finally:
                os.unlink(staged)
        key = _read_key(path)
    except OSError as err:
        raise SecretError(f"cannot use the session key {str(path)!r}: "
                          f"{err.strerror or err}") from None
    if len(key) < 32:
        raise SecretError(f"the session key {str(path)!r} is too short ({len(key)} bytes, "
                          f"at least 32): delete it to make a new one")
    return key


def _read_key(path: Path) -> bytes:
    """The key file's bytes, checked on the very file read: opened without following a
    symlink (and without blocking on a FIFO), then fstat. A check by path before the
    read let a symlink swapped in between be read as the key (found by review)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        if err.errno == errno.ELOOP:  # O_NOFOLLOW on a symlink
            raise SecretError(f"the session key {str(path)!r} is not a regular file "
                              f"(a symlink)") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SecretError(f"the session key {str(path)!r} is not a regular file")
        if info.st_uid != os.geteuid():
            # Like ssh's StrictModes: whoever can write the data folder could put a key
            # of their own there (found by review).
            raise SecretError(f"the session key {str(path)!r} is owned by user "
                              f"{info.st_uid}, not by this server's ({os.geteuid()}): "
                              f"chown it, or delete it to make a new one")
        if info.st_mode & 0o077:
            raise SecretError(f"the session key {str(path)!r} may be read by others (mode "
                              f"{stat.S_IMODE(info.st_mode):o}): chmod 600 it, or delete it "
                              f"to make a new one (which ends every session)")
        with os.fdopen(os.dup(fd), "rb") as file:
            return file.read(4096).strip()
    finally:
        os.close(fd)


def _config(request: Request) -> ServerConfig:
    config: ServerConfig = request.app.state.config
    return config


def _key(request: Request) -> bytes:
    """The app's session key, read once per app."""
    state = request.app.state
    key: bytes | None = getattr(state, "arena_session_key", None)
    if key is None:
        key = load_secret(_config(request).secret_path)
        state.arena_session_key = key
    return key


def _session_signer(request: Request) -> TimestampSigner:
    return TimestampSigner(_key(request), salt="arena-session")


def _csrf_signer(request: Request) -> Signer:
    return Signer(_key(request), salt="arena-csrf")


def _db(request: Request) -> Path:
    return Path(request.app.state.db_path)


def _reader(request: Request) -> StoreReader | None:
    """The database read-only, or None while it does not exist (nobody has an account)."""
    try:
        return StoreReader(_db(request))
    except StoreError:
        if not _db(request).is_file():
            return None
        raise


# ------------------------------------------------------------------------ API
def refuse_token_in_url(request: Request) -> None:
    """400 if the URL holds a token: a query parameter named like one (``token``,
    ``api_key``, ...), or anything of a token's shape in a query or the path. It is
    never looked up (it may be in some log already) nor repeated in the message."""
    where = next(("a query parameter's name" if accounts.holds_token(name)
                  else f"query parameter {name[:40]!r}"  # the name, never a token
                  for name, value in request.query_params.multi_items()
                  if name.lower() in TOKEN_QUERY_NAMES or accounts.holds_token(value)
                  or accounts.holds_token(name)), None)
    if where is None and accounts.holds_token(request.url.path):
        where = "its path"
    if where is not None:
        raise AuthError(400, "token-in-url", (
            f"an API token is never accepted in a URL ({where}): send it as the header "
            f"'Authorization: Bearer TOKEN'. A URL may be logged: if that was your "
            f"token, have it reset"))


def api_author(request: Request) -> Author:
    """The author of an API request, by ``Authorization: Bearer TOKEN`` only: 400 for a
    token in the URL, 401 (``WWW-Authenticate: Bearer``) for none, an unknown one or a
    disabled author's."""
    refuse_token_in_url(request)
    header = request.headers.get("authorization", "")
    if not header:
        raise AuthError(401, "token-missing",
                        "this needs your API token, as the header 'Authorization: Bearer "
                        "TOKEN'", {"WWW-Authenticate": 'Bearer realm="arena"'})
    if not header.lower().startswith(_BEARER):
        scheme = header.split(" ", 1)[0]
        # The scheme is quoted only if it is a plain word: a token glued to it
        # ('Bearer:arena_...') had up to 19 of its characters echoed (found by review).
        shown = ("a bare token" if scheme.startswith(accounts.TOKEN_PREFIX)
                 else f"{scheme!r} ..." if _SCHEME.fullmatch(scheme)
                 else "a header that does not begin with a scheme's name")
        raise AuthError(401, "token-missing",
                        f"the Authorization header must be 'Bearer TOKEN', not {shown}",
                        {"WWW-Authenticate": 'Bearer realm="arena"'})
    author = author_of_token(request, header[len(_BEARER):].strip())
    if author is None:
        raise AuthError(401, "token-invalid",
                        "the API token is unknown, was reset, or its author is disabled",
                        {"WWW-Authenticate": 'Bearer realm="arena", error="invalid_token"'})
    return author


def author_of_token(request: Request, token: str) -> Author | None:
    """The enabled author of an API token (as the sign-in form posts it), or None."""
    reader = _reader(request)
    if reader is None:
        return None
    try:
        return accounts.authenticate(reader, token)
    finally:
        reader.close()


async def json_error(request: Request, exc: Exception) -> Response:
    """An HTTPException as the API's error body, ``{"error": {"code", "message"}}``,
    keeping its status and headers (an exception handler for the API's routes)."""
    assert isinstance(exc, HTTPException)
    code = getattr(exc, "code", f"http-{exc.status_code}")
    return JSONResponse({"error": {"code": code, "message": exc.detail}},
                        status_code=exc.status_code, headers=exc.headers)


# -------------------------------------------------------------------- sessions
def _session(request: Request) -> tuple[Author, str] | None:
    """The signed-in author and the session's CSRF token, asked once per request."""
    cached = getattr(request.state, "arena_session", _UNSET)
    if cached is not _UNSET:
        known: tuple[Author, str] | None = cached
        return known
    found: tuple[Author, str] | None = None
    cookie = request.cookies.get(cookie_name(request, SESSION_COOKIE))
    if cookie and len(cookie) < 512:
        try:
            session_id = _session_signer(request).unsign(
                cookie, max_age=int(_config(request).server.session_hours * 3600)).decode()
        except (BadSignature, UnicodeDecodeError):
            session_id = ""  # forged, tampered or too old: nobody, not an error page
        reader = _reader(request) if session_id else None
        if reader is not None:
            try:
                found = accounts.session_of(reader, session_id)
            finally:
                reader.close()
    request.state.arena_session = found
    return found


def _session_id(request: Request) -> str | None:
    cookie = request.cookies.get(cookie_name(request, SESSION_COOKIE))
    if not cookie or len(cookie) >= 512:
        return None
    try:
        return _session_signer(request).unsign(cookie).decode()
    except (BadSignature, UnicodeDecodeError):
        return None


def page_author(request: Request) -> Author | None:
    """The author signed in by the request's session cookie, or None (no cookie, or a
    forged, tampered, expired or ended session, or a disabled author)."""
    found = _session(request)
    return None if found is None else found[0]


def cookie_name(request: Request, name: str) -> str:
    """The name a cookie really has: behind https (``server.https``) ``__Host-NAME``,
    which a browser accepts only from this very host, over https, for the path ``/``
    and with no Domain. A sibling subdomain, or plain http before the https site,
    could otherwise toss in its own signed-in session cookie, and the victim would
    work in the attacker's account (found by review). Plain http cannot use the
    prefix (it needs Secure)."""
    return f"__Host-{name}" if _config(request).server.https else name


def _cookie_args(request: Request) -> dict[str, Any]:
    return {"httponly": True, "samesite": "strict", "path": "/",
            "secure": _config(request).server.https}


def sign_in_response(request: Request, author: Author, response: Response | None = None, *,
                     redirect_to: str = "/") -> Response:
    """``response`` (by default a 303 to ``redirect_to``) with a new session of
    ``author`` in its cookie; the request's old session, if any, ends."""
    hours = _config(request).server.session_hours
    store = Store(_db(request))
    try:
        old = _session_id(request)
        if old:
            accounts.end_session(store, old)
        session_id, _ = accounts.start_session(store, author, hours)
    finally:
        store.close()
    response = response or RedirectResponse(redirect_to, status_code=303)
    response.set_cookie(cookie_name(request, SESSION_COOKIE),
                        _session_signer(request).sign(session_id).decode(),
                        max_age=int(hours * 3600), **_cookie_args(request))
    return response


def sign_out_response(request: Request, response: Response | None = None, *,
                      redirect_to: str = "/") -> Response:
    """``response`` (by default a 303 to ``redirect_to``) with the session ended in the
    database and its cookie cleared."""
    session_id = _session_id(request)
    if session_id and _db(request).is_file():
        store = Store(_db(request), create=False)
        try:
            accounts.end_session(store, session_id)
        finally:
            store.close()
    response = response or RedirectResponse(redirect_to, status_code=303)
    response.delete_cookie(cookie_name(request, SESSION_COOKIE), **_cookie_args(request))
    return response


# ------------------------------------------------------------------------ CSRF
def _visitor_csrf(request: Request) -> str | None:
    """The CSRF token of a visitor's signed ``arena_csrf`` cookie, if it holds one."""
    cookie = request.cookies.get(cookie_name(request, CSRF_COOKIE))
    if not cookie or len(cookie) >= 512:
        return None
    try:
        return _csrf_signer(request).unsign(cookie).decode()
    except (BadSignature, UnicodeDecodeError):
        return None


def csrf_token(request: Request) -> str:
    """The CSRF token for this request's forms: the session's when signed in, else the
    visitor's cookie's, else a new one (which :func:`csrf_cookie` must then set)."""
    found = _session(request)
    if found is not None:
        return found[1]
    token: str | None = _visitor_csrf(request) or getattr(request.state, "arena_new_csrf",
                                                          None)
    if token is None:
        token = request.state.arena_new_csrf = secrets.token_urlsafe(32)
    return token


def csrf_cookie(request: Request, response: Response) -> Response:
    """``response`` with the visitor's CSRF cookie set, if :func:`csrf_token` made one
    for this request (a page with a form for visitors: sign-in, registration)."""
    token: str | None = getattr(request.state, "arena_new_csrf", None)
    if token is not None:
        response.set_cookie(cookie_name(request, CSRF_COOKIE),
                            _csrf_signer(request).sign(token).decode(), **_cookie_args(request))
    return response


def check_csrf(request: Request, form: Mapping[str, Any]) -> None:
    """403 unless the posted ``form`` carries this session's CSRF token (or, before
    sign-in, the visitor cookie's), compared in constant time."""
    check_csrf_value(request, form.get(CSRF_FIELD))


def check_csrf_value(request: Request, given: object) -> None:
    """:func:`check_csrf` for a token read some other way (the first part of a streamed
    multipart upload, checked before the file is read). A form a browser says came
    from another site (``Sec-Fetch-Site: cross-site`` or ``same-site``) is 403 too."""
    # A browser says where a request came from: a form from another site, or from a
    # sibling subdomain, is never ours. The visitor's token alone did not stop it: an
    # attacker able to plant a cookie (a subdomain; plain http before an https site)
    # planted their own visitor cookie and signed the victim in as themselves (login
    # CSRF; found by review). A client without the header (curl, old browsers) is
    # still held to the token.
    if request.headers.get("sec-fetch-site", "").lower() in ("cross-site", "same-site"):
        raise AuthError(403, "csrf", "this form was sent from another site; open the "
                        "page on this site and send the form from there")
    found = _session(request)
    expected = found[1] if found is not None else _visitor_csrf(request)
    if not isinstance(given, str) or expected is None \
            or not accounts.csrf_matches(expected, given):
        raise AuthError(403, "csrf", "the form's CSRF token is missing or wrong: reload "
                        "the page and send the form again")


# ------------------------------------------------------------- registration
def register_author(request: Request, name: str) -> tuple[Author, str]:
    """Open registration from the web form (issue 15 §2): an account for ``name`` and
    its token, limited per client address; 404 while registration is off.
    AuthorNameError, AuthorExists or RegistrationLimited (AccountErrors) otherwise."""
    config = _config(request)
    if not config.server.open_registration:
        raise AuthError(404, "not-found", "registration is not open on this server")
    address = request.client.host if request.client else "unknown"
    store = Store(_db(request))
    try:
        return accounts.register(store, name, address, config.limits.registrations_per_hour)
    finally:
        store.close()
