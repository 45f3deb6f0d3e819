"""A tool call with nested arrays: the model picks a tool and fills its arguments, as a validated object."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

import guide


class Item(BaseModel):
    name: str = Field(max_length=30)
    quantity: int = Field(ge=1, le=99)


class AddToCart(BaseModel):
    tool: Literal["add_to_cart"]
    items: list[Item] = Field(min_length=1, max_length=3)


class SearchProducts(BaseModel):
    tool: Literal["search_products"]
    keywords: list[str] = Field(min_length=1, max_length=3)


class ToolCall(BaseModel):
    call: AddToCart | SearchProducts


def main() -> None:
    call = guide.Generator(guide.load(), ToolCall, max_new_tokens=80)
    request = "Please add 2 apples and 3 bananas to my cart."
    result = call(
        "You can call add_to_cart(items) or search_products(keywords). "
        f"Answer with the tool call as JSON.\nUser: {request}"
    )
    assert isinstance(result, ToolCall)
    print("user:", request)
    print("call:", result.call.model_dump_json())


if __name__ == "__main__":
    main()
