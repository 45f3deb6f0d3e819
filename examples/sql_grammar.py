"""A Lark grammar as the output type: the answer is always a syntactically valid SELECT statement."""

from __future__ import annotations

import lark

import guide

SCHEMA = "Table users(id, name, age, city). Table orders(id, user_id, total)."


def main() -> None:
    grammar = guide.Grammar.builtin("sql")  # also: guide.Grammar(lark_text) or guide.Grammar.from_file(path)
    # The grammar lets whitespace follow a complete statement; stopping at the first newline keeps the
    # model from spending tokens on it. Text cut at a stop string is still checked against the grammar.
    to_sql = guide.Generator(guide.load(), grammar, max_new_tokens=60, stop="\n")
    for question in ["List the names of users older than 30.", "How many users live in Paris?"]:
        sql = to_sql(f"{SCHEMA}\nWrite one SQL query. {question}")
        lark.Lark(grammar.text, parser="lalr").parse(sql)  # parses, by construction
        print(f"{question}\n  {sql}")


if __name__ == "__main__":
    main()
