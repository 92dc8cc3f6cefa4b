"""The competition server (issue 15): the public site plus accounts, uploads and the API,
with the submission pipeline running beside it (``arena serve --submissions``).

The app's lifespan checks the session key (a key file others may read stops the
server at start, not at the first sign-in), sweeps half uploads a killed server left,
and starts the :class:`~arena.submissions.pipeline.Pipeline`, which first re-runs the
jobs a kill interrupted (§3); shutting down stops it after its current step.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.routing import BaseRoute

from arena.submissions.accept import sweep_incoming
from arena.submissions.pipeline import Pipeline

from . import account_pages, admin_pages, api, author_pages
from .app import create_app
from .auth import load_secret
from .config import ServerConfig
from .forms import AccountNav

log = logging.getLogger(__name__)


def competition_routes() -> list[BaseRoute]:
    """Every route the competition server adds to the public site."""
    return [*api.routes(), *account_pages.routes(), *author_pages.routes(),
            *admin_pages.routes()]


def competition_app(config: ServerConfig, *, pipeline: bool = True) -> Starlette:
    """The web app with accounts and submissions on (``config.server.submissions``);
    ``pipeline=False`` leaves received jobs for another process (tests, a second
    server on one database: one pipeline per database)."""
    app = create_app(config, extra_routes=competition_routes())
    app.add_middleware(AccountNav)
    for error, handler in api.EXCEPTION_HANDLERS.items():
        app.add_exception_handler(error, handler)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        load_secret(config.secret_path)
        for path in sweep_incoming(config):
            log.info("removed a half upload a stopped server left: %s", path)
        runner = Pipeline(config) if pipeline else None
        if runner is not None:
            runner.start()
        app.state.pipeline = runner
        try:
            yield
        finally:
            if runner is not None:
                runner.stop()
    app.router.lifespan_context = lifespan
    app.state.pipeline = None
    return app


def build_app(config: ServerConfig) -> Starlette:
    """The app ``arena serve`` runs for ``config``: public and read-only, or with
    submissions."""
    return competition_app(config) if config.server.submissions else create_app(config)
