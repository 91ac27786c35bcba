"""The file reader: rows and columns read exactly as csv.DictReader reads them, and a summary that aggregates like
`aggregate`."""

from __future__ import annotations

import csv

import pytest

from aoi.agents import filereader

ODD = {
    "plain": "a,b\n1,2\n3,4\n",
    "ragged": "a,b,c\n1,2\n1,2,3,4,5\n\n7,8,9\n",  # short, long and blank rows
    "duplicate columns": "a,b,a\n1,2,3\n4\n",
    "quoted": 'name,note\n"x, y","line one\nline two"\n',
    "blank header": "\n1,2\n",
    "header only": "a,b\n",
    "empty": "",
}


@pytest.mark.parametrize("text", ODD.values(), ids=ODD.keys())
def test_rows_and_columns_are_what_dict_reader_makes(tmp_path, text):
    path = tmp_path / "t.csv"
    path.write_text(text)
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        header, expected = list(reader.fieldnames or []), list(reader)
    assert filereader._rows(path)[0] == header
    rows = filereader._rows(path)[1]
    assert filereader._records(header, rows) == expected
    for name in [*header, "missing"]:
        assert filereader._column(header, rows, name) == [r.get(name) for r in expected]


def test_a_metric_summary_is_its_aggregation_by_pod(tmp_path):
    path = tmp_path / "kpi_cpu.csv"
    path.write_text("timestamp,cmdb_id,value\n1,api-1,0.5\n2,api-1,0.7\n1,db-1,x\n2,db-1,2.5\n")
    summary = filereader.read(str(path))
    assert summary == filereader.read(str(path), "aggregate", by="cmdb_id", column="value")
    assert summary.splitlines()[0] == "kpi_cpu.csv: 4 rows in 2 groups by cmdb_id"
    assert "mean_value" in summary.splitlines()[1] and "2.5" in summary
