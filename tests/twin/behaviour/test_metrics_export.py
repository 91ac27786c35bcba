"""The cAdvisor export: its CSV text is what csv.writer writes, and a sample is the same however it is reached."""

from __future__ import annotations

import csv
import io

import pytest

from aoi.twin import build_twin
from aoi.twin.behaviour import metrics

HOTEL = "test-hotel-reservation"


@pytest.fixture(scope="module")
def twin():
    twin = build_twin(["hotel-reservation"])
    with twin.lock:
        twin.advance(120)
    return twin


def test_csv_text_is_what_csv_writer_writes(twin):
    now = twin.clock.now()
    series = metrics.collect(twin, HOTEL, now - 300, now)
    assert len(series.rows) == 24
    for rows in series.rows.values():
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["timestamp", "cmdb_id", "kpi_name", "value"])
        writer.writerows(sorted(rows))
        assert metrics.csv_text(rows) == out.getvalue()


def test_cpu_counter_integrates_the_samples_the_export_takes(twin):
    pod = next(p for p in twin.list("pods", HOTEL) if p["metadata"]["name"].startswith("frontend-"))
    name, usage = pod["spec"]["containers"][0]["name"], twin.usage
    counter = metrics.CpuCounter(usage, pod, name, 0.0)
    sampled = [counter.usage_at(t) for t in (15.0, 30.0)]
    assert sampled == [usage.container(pod, name, 15.0), usage.container(pod, name, 30.0)]
    assert counter.until(45.0) == sum(usage.container(pod, name, t)[0] * 15.0 for t in (0.0, 15.0, 30.0))
