"""The Ray Data integration, in Ray's local mode on 2 CPUs.

3,000 generated documents (standard-library paragraphs, with a corpus attack planted in one
document of 50 at a known row): ``scan_parquet`` reads them with Ray, scans in Arrow batches
and writes the findings as Parquet; every planted document has an error, no benign document
has one, and the findings equal the single-process batch API's. Controls: the same checks
fail on a result with a planted document's findings dropped, and on one with a finding altered.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.scale import corpus_gen, require

pa = require("pyarrow")
pq = require("pyarrow.parquet")
ray = require("ray")
columnar = require("envelock.columnar")
integration = require("envelock.integrations.ray")

N = 3000
#: Ray's own deprecation notices (raised inside ray.* while it configures itself) are not ours.
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning:ray"), pytest.mark.filterwarnings("ignore::FutureWarning:ray")]


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=256 * 1024 * 1024, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, dict[str, str]]:
    rows, planted = corpus_gen().generate(N, every=50)
    table = pa.Table.from_pylist(rows)
    src = tmp_path_factory.mktemp("corpus")
    for k in range(4):  # several files, so Ray reads blocks in parallel
        pq.write_table(table.slice(k * N // 4, N // 4), src / f"part-{k}.parquet")
    return src, table, planted


def _key(d: dict[str, Any]) -> tuple[Any, ...]:
    return (d["id"], d["offset"], d["rule"], d["end_offset"], d["message"])


def check(result: list[dict[str, Any]], expected: list[dict[str, Any]], planted: dict[str, str], ids: list[str]) -> list[str]:
    """Every problem with an engine result: a planted document without an error, a benign one with
    an error, or any difference from the single-process result (order aside)."""
    errors = {d["id"] for d in result if d["severity"] == "error"}
    out = [f"planted {i} ({planted[i]}) not found" for i in sorted(planted) if i not in errors]
    out += [f"benign {i} has an error" for i in sorted(errors - set(planted))]
    out += [f"not a document id: {i}" for i in sorted({d["id"] for d in result} - set(ids))]
    if sorted(result, key=_key) != sorted(expected, key=_key):
        out.append("engine findings differ from the batch API's")
    return out


def test_ray_local_mode_finds_every_planted_row_and_equals_the_batch_api(local_ray: Any, generated: Any, tmp_path: Path) -> None:
    src, table, planted = generated
    assert len(planted) == N // 50
    integration.scan_parquet(str(src), str(tmp_path / "findings"), "text", id_column="doc_id", origin_column="origin", concurrency=2, num_blocks=4, batch_size=500)
    result = pq.read_table(tmp_path / "findings").to_pylist()
    expected = columnar.scan_table(table, "text", id_column="doc_id", origin_column="origin", workers=1).drop_columns(["row"]).to_pylist()
    ids = table.column("doc_id").to_pylist()
    assert check(result, expected, planted, ids) == []
    assert {d["origin"] for d in result} <= set(table.column("origin").to_pylist())
    # controls: the same check catches a dropped planted row and an altered finding
    victim = sorted(planted)[3]
    dropped = [d for d in result if d["id"] != victim]
    assert any(victim in p for p in check(dropped, expected, planted, ids))
    altered = [dict(result[0], offset=result[0]["offset"] + 1), *result[1:]]
    assert check(altered, expected, planted, ids) == ["engine findings differ from the batch API's"]


def test_ray_bad_row_fails_the_job_naming_the_document(local_ray: Any) -> None:
    ds = ray.data.from_arrow(pa.table({"doc_id": ["a", "b"], "text": pa.array(["x", None], pa.string())}))
    with pytest.raises(Exception, match=r"column 'text'.*null text.*'b'"):
        integration.scan_dataset(ds, "text", id_column="doc_id").materialize()


def test_ray_requires_an_id_column(local_ray: Any) -> None:
    ds = ray.data.from_arrow(pa.table({"text": ["x"]}))
    with pytest.raises(TypeError, match="id_column"):
        integration.scan_dataset(ds, "text", id_column=None)
