"""Batch extraction: JSONL in, JSONL out, every row a validated object (or an explicit error).

The same thing from the shell: ``guide json --model examples/batch_jsonl.py:Person --input
examples/data/people.jsonl``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import BaseModel, Field

import guide

DATA = Path(__file__).parent / "data" / "people.jsonl"


class Person(BaseModel):
    name: str = Field(max_length=40)
    age: int = Field(ge=0, le=130)


def main(path: Path = DATA) -> None:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    extract = guide.Generator(guide.load(), Person, max_new_tokens=40)
    prompts = [f"Extract the person's name and age as JSON.\nText: {r['prompt']}" for r in rows]
    people = extract.batch(prompts, errors="return")  # a failed row holds its exception, the rest go on
    for row, person in zip(rows, people, strict=True):
        out = {"id": row["id"]}
        if isinstance(person, Person):
            out["person"] = person.model_dump()
        else:
            out["error"] = str(person)
        sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DATA)
