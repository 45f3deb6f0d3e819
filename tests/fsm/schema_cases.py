"""The JSONSchemaBench sample shared by the row-shortcut tests: (id, schema, first valid instance as
compact JSON text) for every schema of tests/data/jsonschemabench with a valid instance."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Iterator

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "jsonschemabench"


def schema_instances() -> Iterator[tuple[str, dict, str]]:
    for path in sorted(DATA.glob("*.jsonl")):
        with path.open() as fh:
            for line in fh:
                d = json.loads(line)
                valid = [t["data"] for t in d["tests"] if t["valid"]]
                if valid:
                    yield (
                        d["id"],
                        d["schema"],
                        json.dumps(valid[0], separators=(",", ":"), ensure_ascii=False),
                    )
