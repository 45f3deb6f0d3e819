"""Regex output types: an ISO date and a US phone number, each guaranteed to match its pattern."""

from __future__ import annotations

import re

import guide

DATE = r"(19|20)\d{2}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
PHONE = r"\(\d{3}\) \d{3}-\d{4}"


def main() -> None:
    model = guide.load()
    date = guide.Generator(model, guide.Regex(DATE))
    phone = guide.Generator(model, guide.Regex(PHONE))

    d = date("The meeting is on March 3rd, 2024. Write that date in YYYY-MM-DD format.")
    p = phone("Contact: John Smith, phone 555 123 4567. Write John's phone number as (XXX) XXX-XXXX.")
    assert re.fullmatch(DATE, d) and re.fullmatch(PHONE, p)
    print("date: ", d)
    print("phone:", p)


if __name__ == "__main__":
    main()
