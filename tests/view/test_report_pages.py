"""`aoi report` links every problem and trajectory to static pages of the trajectory view written beside it, and
`--compare` lists the flipped problems; the pages open from disk (file://, no server) in headless Chromium."""

from __future__ import annotations

import json
import re

from tests.view.conftest import MITIGATION

from aoi.evaluate.report import write_report


def rows(runs, name: str) -> list[dict]:
    return [json.loads(line) for line in (runs / name / "results.jsonl").read_text().splitlines()]


def test_the_report_links_each_problem_and_trajectory_to_its_page(runs, tmp_path):
    _, html_path = write_report(runs / "expert", [runs / "replay-no"], out=tmp_path / "report")
    page = html_path.read_text()
    links = dict(re.findall(r'<a href="(view/[^"]+)">([^<]+)</a>', page))
    for row in rows(runs, "expert"):
        assert links[f"view/t-{row['trajectory_id']}.html"] == row["trajectory_id"]
        assert links[f"view/p-{row['problem_id']}.html"] == row["problem_id"]
    assert all((tmp_path / href).is_file() for href in links)
    assert (tmp_path / "view" / f"t-{rows(runs, 'replay-no')[0]['trajectory_id']}.html").is_file()  # compared runs'
    assert "http" not in (tmp_path / "view" / "episode.js").read_text()  # nothing fetched from elsewhere


def test_compare_shows_the_flipped_problems(runs, tmp_path):
    md_path, html_path = write_report(runs / "expert", [runs / "replay-no"], out=tmp_path / "report")
    flipped = html_path.read_text().split("<h2>Flipped problems</h2>")[1]
    assert flipped.count("<tr><td>") == 1  # one problem flipped: the replay model's "No" on revoke_auth
    assert ('<td><a href="view/p-revoke_auth_mongodb-detection-1.html">revoke_auth_mongodb-detection-1</a></td>'
            "<td>detection</td><td>replay-no</td><td>1/1</td><td>0/1</td><td>broken</td><td>broken</td>") in flipped
    assert ("| revoke_auth_mongodb-detection-1 | detection | replay-no | 1/1 | 0/1 | broken | broken |"
            in md_path.read_text())


def test_a_report_without_compare_has_no_flipped_section(runs, tmp_path):
    _, html_path = write_report(runs / "expert", out=tmp_path / "report")
    assert "Flipped problems" not in html_path.read_text()


def test_the_static_pages_open_from_disk(browser, runs, tmp_path, shots):
    write_report(runs / "expert", [runs / "replay-no"], out=tmp_path / "report")
    row = next(r for r in rows(runs, "expert") if r["problem_id"] == MITIGATION)
    steps = len(json.loads(re.search(r'<script id="aoi-data" type="application/json">(.*?)</script>',
                                     (tmp_path / "view" / f"t-{row['trajectory_id']}.html").read_text(),
                                     re.S).group(1).replace("<\\/", "</"))["episode"]["steps"])
    browser.open((tmp_path / "report.html").as_uri(), "document.querySelector('h1') !== null")
    browser.click(f"a[href='view/t-{row['trajectory_id']}.html']")
    browser.wait(f"document.querySelectorAll('section.step').length == {steps}")
    assert browser.js("document.querySelector('.verdict').innerText").startswith("AIOpsLab: yes")
    assert browser.js("document.querySelectorAll('details.obs').length") > 0
    browser.screenshot(shots / "static-trajectory.png")
    browser.open((tmp_path / "view" / "p-revoke_auth_mongodb-detection-1.html").as_uri(),
                 "document.querySelectorAll('.side .episode').length == 2")
    columns = browser.js("[...document.querySelectorAll('.side .column')].map(c => c.innerText)")
    assert columns[0].startswith("expert") and "AIOpsLab: yes" in columns[0]
    assert columns[1].startswith("replay-no") and "AIOpsLab: no" in columns[1]
    browser.click(".side .column:nth-child(2) a")  # its attempt's own page
    browser.wait("document.querySelectorAll('.episode').length == 1 && location.href.includes('/t-')")
    browser.screenshot(shots / "static-problem.png")
