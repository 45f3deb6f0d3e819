"""Information extraction: a pydantic model in, a validated pydantic object out.

Run with ``make demo`` (or ``python examples/extract_person.py``). The first run converts the
embedded default model (SmolLM2-135M-Instruct) once; later runs start in seconds.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

import guide


class Person(BaseModel):
    name: str = Field(max_length=40)
    age: int = Field(ge=0, le=130)
    occupation: str = Field(max_length=40)


TEXT = "Ada Lovelace, age 36, was a mathematician."


def main() -> None:
    model = guide.load()
    extract = guide.Generator(model, Person, max_new_tokens=60)
    person = extract(f"Extract the person described in this text as JSON.\nText: {TEXT}")
    assert isinstance(person, Person)  # a validated object, never a string that merely looks like one
    print("text:   ", TEXT)
    print("output: ", extract.last.text)
    print("object: ", repr(person))


if __name__ == "__main__":
    main()
