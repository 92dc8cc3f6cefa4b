"""Confidence on every leaderboard (issue 18 §4): intervals, the marks of neighbours whose
order is not significant, and a bot's versions compared, in the terminal, in JSON and on
the web, from fixed ratings written straight into a store (no game is played).

The expected numbers are worked out here from the definitions, with the standard
library's :class:`statistics.NormalDist`, not with the code under test:

- a bot's 95% interval is mu ± 1.96 sigma: (30, 1) gives 28.04 .. 31.96;
- P(skill_i > skill_j) = Phi((mu_i − mu_j) / sqrt(sigma_i² + sigma_j²)), and a row's
  place over the next is significant when that is at least 0.95;
- a version's change is mu_new − mu_old ± 1.96·sqrt(sigma_new² + sigma_old²).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from statistics import NormalDist

import pytest
from starlette.testclient import TestClient

from arena.web.app import create_app
from arena.web.config import parse_config
from leaderboard import board
from leaderboard.confidence import (
    chance,
    interval,
    prob_ahead,
    version_steps,
    with_confidence,
)
from leaderboard.ratings import Environment
from leaderboard.store import Store, StoreReader
from leaderboard.store.rows import RatingRow

from .helpers import Invoke

PHI = NormalDist().cdf
CLOSE = "stop-me"
"""A board of three bots whose ratings overlap: no order is significant."""
APART = "dagens-brott"
"""A board of three bots far apart: every order is significant."""
# (name, version, mu, sigma) per board, best first by mu - 3 sigma.
RATINGS = {
    CLOSE: [("x", 1, 25.3, 3.0), ("y", 1, 25.0, 3.0), ("z", 1, 24.8, 3.0)],
    APART: [("x", 1, 40.0, 1.0), ("y", 1, 30.0, 1.0), ("z", 1, 20.0, 1.0)],
}
# Bot "v"'s versions on CLOSE: 1 and 2 rated close together, 3 far above 2, 4 unrated.
VERSIONS = [(1, 20.0, 2.0), (2, 21.0, 2.0), (3, 30.0, 1.0)]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the fixed ratings above (and bot v's versions on CLOSE)."""
    path = tmp_path_factory.mktemp("confidence") / "arena.db"
    store = Store(path)
    ids = {}
    for name in "xyz":
        ids[name, 1] = store.add_bot(name, f"{name}1", f"/bots/{name}", "file")[0]["id"]
    for version in range(1, 5):
        row, _ = store.add_bot("v", f"v{version}", f"/bots/v{version}", "file")
        ids["v", row["version"]] = row["id"]
    env = Environment()
    for game, rows in RATINGS.items():
        store.ensure_leaderboard(game, env.mu, env.sigma, env.beta, env.tau,
                                 env.draw_probability)
        rated = [RatingRow(ids[n, v], mu, sigma, 10, 3, 20, 0) for n, v, mu, sigma in rows]
        if game == CLOSE:
            rated += [RatingRow(ids["v", v], mu, sigma, 10, 3, 20, 0)
                      for v, mu, sigma in VERSIONS]
        store.save_ratings(game, rated, [], None, 10, False)
    store.close()
    return path


@pytest.fixture(scope="module")
def site(db: Path) -> Iterator[TestClient]:
    """The read-only web site over ``db``."""
    with TestClient(create_app(parse_config({"server": {"database": str(db)}}))) as client:
        yield client


def standings(db: Path, game: str) -> list[dict]:
    store = StoreReader(db)
    try:
        return board.standings(store, game)
    finally:
        store.close()


# ------------------------------------------------------------------ the numbers
def test_interval_and_ahead_on_fixed_ratings() -> None:
    assert interval(30.0, 1.0) == pytest.approx((28.04, 31.96))
    assert interval(25.0, 8.0) == pytest.approx((25 - 15.68, 25 + 15.68))
    # Phi(5 / sqrt 2) and Phi(0.5 / sqrt(1 + 1.44)), from the definition.
    assert prob_ahead(30, 1, 25, 1) == pytest.approx(PHI(5 / math.sqrt(2)), abs=1e-12)
    assert prob_ahead(25, 1, 24.5, 1.2) == pytest.approx(0.62555078, abs=1e-8)
    assert prob_ahead(24.5, 1.2, 25, 1) == pytest.approx(1 - 0.62555078, abs=1e-8)
    assert prob_ahead(25, 3, 25, 4) == 0.5
    assert (prob_ahead(2, 0, 1, 0), prob_ahead(1, 0, 2, 0), prob_ahead(1, 0, 1, 0)) == (
        1.0, 0.0, 0.5)  # exact skills: no division by zero


def test_the_threshold_is_095_on_the_upper_row() -> None:
    """Neighbours exactly at P = 0.95 are significant, just below are not; the last row
    has nothing to be ahead of."""
    gap = NormalDist().inv_cdf(0.95) * math.sqrt(2)  # P(ahead) = 0.95 for sigmas 1 and 1
    rows = with_confidence([{"mu": 10 + gap + 1e-9, "sigma": 1}, {"mu": 10, "sigma": 1},
                            {"mu": 10 - gap + 1e-6, "sigma": 1}])
    assert [r["significant"] for r in rows] == [True, False, None]
    assert rows[0]["ahead_of_next"] == pytest.approx(0.95)
    assert rows[2]["ahead_of_next"] is None
    assert (rows[1]["low"], rows[1]["high"]) == pytest.approx((8.04, 11.96))


def test_chance_never_says_certain() -> None:
    assert [chance(p) for p in (0.999999, 0.995, 0.99, 0.625, 0.004)] == [
        ">99%", ">99%", "99%", "62%", "<1%"]


def test_versions_compared_in_version_order_with_their_interval() -> None:
    rows = [{"version": 3, "mu": 30.0, "sigma": 1.0}, {"version": 1, "mu": 20.0, "sigma": 2.0},
            {"version": 2, "mu": 21.0, "sigma": 2.0}]
    one, two = version_steps(rows)
    half = 1.96 * math.sqrt(8)
    assert (one["old"], one["new"], one["diff"]) == (1, 2, 1.0)
    assert (one["low"], one["high"]) == pytest.approx((1 - half, 1 + half))
    assert one["better"] == pytest.approx(PHI(1 / math.sqrt(8)))
    assert one["significant"] is False  # the interval holds 0
    half = 1.96 * math.sqrt(5)
    assert (two["old"], two["new"], two["diff"]) == (2, 3, 9.0)
    assert (two["low"], two["high"]) == pytest.approx((9 - half, 9 + half))
    assert two["significant"] is True
    assert version_steps(rows[:1]) == [] and version_steps([]) == []


# ------------------------------------------------------------- every view
def test_overlapping_bots_are_all_marked_and_separated_ones_none(db: Path) -> None:
    close = standings(db, CLOSE)
    apart = standings(db, APART)
    assert [r["significant"] for r in close] == [False] * (len(close) - 1) + [None]
    assert [r["significant"] for r in apart] == [True, True, None]
    x, y = close[0], close[1]
    assert x["ahead_of_next"] == pytest.approx(
        PHI((x["mu"] - y["mu"]) / math.hypot(x["sigma"], y["sigma"])))
    assert [v for r in apart for v in (r["low"], r["high"])] == pytest.approx(
        [38.04, 41.96, 28.04, 31.96, 18.04, 21.96])


def test_json_rows_carry_the_interval_and_the_significance(cli: Invoke, db: Path) -> None:
    out = cli("leaderboard", APART, "--json", "--db", str(db))
    assert out.exit_code == 0, out.stderr
    rows = json.loads(out.stdout)["leaderboard"]
    assert [(r["bot"], r["low"], r["high"], r["significant"]) for r in rows] == [
        ("x", pytest.approx(38.04), pytest.approx(41.96), True),
        ("y", pytest.approx(28.04), pytest.approx(31.96), True),
        ("z", pytest.approx(18.04), pytest.approx(21.96), None)]
    assert rows[0]["ahead_of_next"] == pytest.approx(PHI(10 / math.sqrt(2)))
    assert rows[-1]["ahead_of_next"] is None
    out = cli("leaderboard", CLOSE, "--json", "--db", str(db))
    assert [r["significant"] for r in json.loads(out.stdout)["leaderboard"]][:-1] == [
        False] * 5


def test_the_terminal_marks_and_explains(cli: Invoke, db: Path) -> None:
    def lines(game: str) -> list[str]:
        out = cli("leaderboard", game, "--db", str(db))
        assert out.exit_code == 0, out.stderr
        assert "P>next" in out.stdout and "95%: the interval mu ± 1.96 sigma." in out.stdout
        assert "≈: below 95%, so their order is not yet significant." in out.stdout
        return re.findall(r"│ +\d+ │ \w+ .*", out.stdout)

    close, apart = lines(CLOSE), lines(APART)
    assert len(close) == 6 and len(apart) == 3
    assert "38.0..42.0" in apart[0] and ">99%" in apart[0] and ">99%" in apart[1]
    assert "≈" not in "".join(apart)
    assert all("≈" in line for line in close[:-1]) and "≈" not in close[-1]
    assert "≈ 53%" in close[1]  # x over y: Phi(0.3 / sqrt 18) = 0.528


def sure_cells(body: str) -> list[tuple[str, str]]:
    """Each leaderboard row's bot and its P > next cell's significance ("" on the last)."""
    rows = re.findall(r'<tr data-bot="([^"]+)" data-version="\d+">(.*?)</tr>', body)
    out = []
    for bot, cells in rows:
        cell = re.search(r'<td class="num sure"(?: data-ahead="[^"]+" '
                         r'data-significant="(yes|no)")?>', cells)
        assert cell, cells
        out.append((bot, cell[1] or ""))
    return out


def test_the_web_leaderboard_shows_the_marks(site: TestClient, db: Path) -> None:
    close = site.get(f"/leaderboard/{CLOSE}.html").text
    apart = site.get(f"/leaderboard/{APART}.html").text
    assert [s for _, s in sure_cells(close)] == ["no"] * 5 + [""]
    assert sure_cells(apart) == [("x", "yes"), ("y", "yes"), ("z", "")]
    assert close.count('<strong class="unsure" title="not yet significantly ahead of the '
                       'next row">≈</strong><span class="sr-only">not significant:</span>') == 5
    assert 'class="unsure" title' not in apart  # only the legend's mark
    assert 'id="confidence-legend"' in apart and "not yet significant" in apart
    assert 'data-low="38.04" data-high="41.96">38.0 – 42.0</td>' in apart
    assert "<script" not in apart.split("<main", 1)[1]  # marks without JavaScript
    # Every heading cell closes once: a stray "</th>gt;next</th>" showed as text above
    # the table in the browser (found in the docs' screenshots).
    for page in (close, apart, site.get("/").text):
        head = page.split("<thead>", 1)[1].split("</thead>", 1)[0]
        assert head.count("<th") == head.count("</th>") and "gt;" not in head.replace(
            "&gt;", "")
    start = site.get("/").text  # the start page's top fives carry the marks too: the
    # fifth of CLOSE's six rows is still compared with the sixth
    assert (start.count('data-significant="no"'), start.count('data-significant="yes"')) == (
        5, 2)


def test_a_bots_page_compares_its_rated_versions(site: TestClient) -> None:
    body = site.get("/bot/v.html").text
    steps = re.findall(r'<tr data-old="(\d+)" data-new="(\d+)" data-diff="([^"]+)" '
                       r'data-low="([^"]+)" data-high="([^"]+)" data-significant="(yes|no)">'
                       r'(.*?)</tr>', body)
    assert [(int(o), int(n), float(d), s) for o, n, d, _, _, s, _ in steps] == [
        (1, 2, 1.0, "no"), (2, 3, 9.0, "yes")]  # version 4 is unrated: no step
    low, high = float(steps[0][3]), float(steps[0][4])
    assert (low, high) == pytest.approx((1 - 1.96 * math.sqrt(8), 1 + 1.96 * math.sqrt(8)))
    assert "<td class=\"num\">+1.00</td><td class=\"nw\">-4.5 to +6.5</td>" in steps[0][6]
    assert "≈" in steps[0][6] and "≈" not in steps[1][6]
    assert "+9.00" in steps[1][6] and "&gt;99%" in steps[1][6]
    assert "From version to version" in body
    assert "From version to version" not in site.get("/bot/x.html").text  # one version
