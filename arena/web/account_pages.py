"""Sign-in, sign-out and open registration on the web (issue 15 §2), as HTML forms.

- ``/signin/``: a form taking the API token (field ``token``). A right one starts a
  session (:func:`arena.web.auth.sign_in_response`) and goes to ``/me/``; a wrong one
  is the form again with one sentence and status 401, the same whichever author, if
  any, the token once belonged to.
- ``/signout/``: GET shows a button; only its POST (with the CSRF token) ends the
  session, in the database, so the cookie is worth nothing after.
- ``/register/`` (only with ``server.open_registration``; a 404 otherwise): an author
  name in, the new token out, shown once on the answer page, which signs in too.

Every POST carries the CSRF token (field ``csrf``): before sign-in, the one of the
visitor's signed cookie, which the GET of the form sets.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from arena import accounts

from .auth import (
    author_of_token,
    refuse_token_in_url,
    register_author,
    sign_in_response,
    sign_out_response,
)
from .forms import NOT_A_PAGE, Refused, checked_form, config_of, html_errors, page, signed_in

WRONG_TOKEN = ("This token signs nobody in: it may be mistyped or cut short, or it was "
               "reset, or its account is disabled. Paste the whole token "
               "(it begins with arena_).")
"""The one answer to any wrong token: it must not tell whether an author exists."""


@html_errors
async def sign_in_form(request: Request) -> Response:
    """``GET /signin/``: the form (a token put in the address is refused, never used)."""
    refuse_token_in_url(request)
    author = await signed_in(request)
    return page(request, "account/signin.html", author=author, error=None,
                registration=config_of(request).server.open_registration)


@html_errors
async def sign_in(request: Request) -> Response:
    """``POST /signin/``: check the CSRF token, then the API token; a session on success."""
    refuse_token_in_url(request)
    form, _ = await checked_form(request)
    token = form.get("token", "").strip()
    author = await run_in_threadpool(author_of_token, request, token) if token else None
    if author is None:
        return page(request, "account/signin.html", status=401, author=None,
                    error=WRONG_TOKEN if token else "Paste your API token first.",
                    registration=config_of(request).server.open_registration)
    response: Response = await run_in_threadpool(sign_in_response, request, author,
                                                 redirect_to="/me/")
    return response


@html_errors
async def sign_out_form(request: Request) -> Response:
    """``GET /signout/``: a button (a GET never signs out: a link elsewhere could)."""
    return page(request, "account/signout.html", author=await signed_in(request))


@html_errors
async def sign_out(request: Request) -> Response:
    """``POST /signout/``: the session ends in the database and its cookie is cleared."""
    await checked_form(request)
    response: Response = await run_in_threadpool(sign_out_response, request,
                                                 redirect_to="/")
    return response


def _registration_open(request: Request) -> None:
    if not config_of(request).server.open_registration:
        raise Refused(404, NOT_A_PAGE)


@html_errors
async def register_form(request: Request) -> Response:
    """``GET /register/``: the form, while registration is open."""
    _registration_open(request)
    return page(request, "account/register.html", author=await signed_in(request),
                error=None, name="")


@html_errors
async def register(request: Request) -> Response:
    """``POST /register/``: an account and its token, shown once, and a session."""
    _registration_open(request)
    form, _ = await checked_form(request)
    name = form.get("name", "").strip()
    try:
        author, token = await run_in_threadpool(register_author, request, name)
    except accounts.AccountError as err:
        status = {accounts.AuthorExists: 409, accounts.RegistrationLimited: 429}.get(
            type(err), 400)
        return page(request, "account/register.html", status=status, author=None,
                    error=str(err), name=name)
    shown = page(request, "account/registered.html", author=author, name=author.name,
                 token=token)
    response: Response = await run_in_threadpool(sign_in_response, request, author, shown)
    return response


async def _to(request: Request) -> Response:
    return RedirectResponse(request.url.path + "/", status_code=308)


def routes() -> list[BaseRoute]:
    """The account pages' routes (before the public site's catch-all)."""
    return [
        Route("/signin/", sign_in_form, methods=["GET"]),
        Route("/signin/", sign_in, methods=["POST"]),
        Route("/signout/", sign_out_form, methods=["GET"]),
        Route("/signout/", sign_out, methods=["POST"]),
        Route("/register/", register_form, methods=["GET"]),
        Route("/register/", register, methods=["POST"]),
        *(Route(path, _to, methods=["GET"]) for path in ("/signin", "/signout",
                                                          "/register")),
    ]
