"""A minimal Starlette app over the accounts' web helpers, shared by the accounts' web
tests and their attacks (a test module never imports another: tests/test_layout.py)."""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from arena import accounts
from arena.web import auth
from arena.web.config import parse_config


def make_app(tmp_path: Path, **server: object) -> Starlette:
    """A minimal app with the helpers on a real database: an API route, a page, forms."""
    config = parse_config({"server": {"database": str(tmp_path / "arena.db"),
                                      "data_dir": str(tmp_path / "data"), **server}})

    def me(request: Request) -> Response:
        author = auth.api_author(request)
        return JSONResponse({"name": author.name})

    def page(request: Request) -> Response:
        author = auth.page_author(request)
        text = f"{author.name if author else 'nobody'} {auth.csrf_token(request)}"
        return auth.csrf_cookie(request, PlainTextResponse(text))

    async def sign_in(request: Request) -> Response:
        form = await request.form()
        auth.check_csrf(request, form)
        author = auth.author_of_token(request, str(form.get("token", "")))
        if author is None:
            return PlainTextResponse("no such token", status_code=401)
        return auth.sign_in_response(request, author, redirect_to="/page")

    async def sign_out(request: Request) -> Response:
        auth.check_csrf(request, await request.form())
        return auth.sign_out_response(request)

    async def act(request: Request) -> Response:
        auth.check_csrf(request, await request.form())
        author = auth.page_author(request)
        return PlainTextResponse(f"done by {author.name if author else 'a visitor'}")

    async def register(request: Request) -> Response:
        form = await request.form()
        auth.check_csrf(request, form)
        try:
            _, token = auth.register_author(request, str(form.get("name", "")))
        except accounts.RegistrationLimited as err:
            return PlainTextResponse(str(err), status_code=429)
        return PlainTextResponse(token)

    app = Starlette(routes=[
        Route("/api/me", me), Route("/api/bots/{name}", me), Route("/page", page),
        Route("/signin", sign_in, methods=["POST"]), Route("/signout", sign_out, methods=["POST"]),
        Route("/act", act, methods=["POST"]), Route("/register", register, methods=["POST"]),
    ], exception_handlers={HTTPException: auth.json_error})
    app.state.config = config
    app.state.db_path = config.db_path
    return app


def visit(client: TestClient) -> tuple[str, str]:
    """GET /page: who it says is signed in, and the CSRF token of its forms."""
    got = client.get("/page")
    assert got.status_code == 200, got.text
    who, token = got.text.split(" ")
    return who, token


def sign_in(client: TestClient, token: str) -> Response:
    _, csrf = visit(client)
    got = client.post("/signin", data={"token": token, "csrf": csrf})
    assert got.status_code == 303, got.text
    return got
