"""The JSONSchemaBench sample shared by the row-shortcut tests: (id, schema, first valid instance as
compact JSON text) for every schema of tests/data/jsonschemabench with a valid instance."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Iterator

import fsm
from fsm.index import FINISHED, RowIndex
from fsm.testing import states_along

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


def visited_row_states(cases, vocab, tokenizer) -> Iterator[tuple[str, object, list[int]]]:
    """(name, row index, distinct unfinished states a walk of the instance visits) for every case
    whose schema compiles to a row index (unsupported or over budget: nothing to check)."""
    for name, schema, text in cases:
        try:
            index = fsm.compile(fsm.JsonSchema(schema), vocab, cache=False)
        except fsm.SpecError:
            continue
        if isinstance(index, RowIndex):
            states = states_along(index, text, tokenizer)
            yield name, index, list(dict.fromkeys(s for s in states if s != FINISHED))
