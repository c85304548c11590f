"""Size limits: oversized writes are refused with exit 4, one line naming the size, the limit
and the setting, and nothing is written; the limits are settings."""
from __future__ import annotations

import json


def test_defaults_refuse_oversized_messages_titles_contents_and_lines(cli, ws):
    cases = [
        (["log", "-"], "m" * 100_001,
         "the message is 100,001 characters, over the limit of 100,000", "'message'"),
        (["remember", "-"], "c" * 20_001,
         "the text to remember is 20,001 characters, over the limit of 20,000", "'content'"),
        (["remember", "--title", "t" * 1_001], None,
         "the title is 1,001 characters, over the limit of 1,000", "'title'"),
        (["remember", "--title", "ok", "--content", "c" * 20_001], None,
         "the content is 20,001 characters, over the limit of 20,000", "'content'"),
        (["log", "--jsonl", "-"], json.dumps({"content": "x" * (1 << 20)}),
         "line 1 is 1,048,591 bytes, over the limit of 1,048,576", "'line'"),
    ]
    for argv, stdin, message, setting in cases:
        out = cli(*argv, input=stdin)
        assert out.code == 4, (argv[:2], out)
        instead = ("remember the part worth keeping, keep the whole text in the message log"
                   " with 'ekko-mem log'" if "to remember" in message else "shorten it")
        assert out.err == (f"ekko-mem: {message}; {instead}, or raise {setting} under"
                           " [limits] in config.toml; nothing was written\n")
    assert cli("history", "--json").out == ""
    assert [n for n in cli("query", "--json").json()["exact"] if n["scope"] != "global"] == []


def test_limits_are_settings(cli, ws):
    config = ws / ".ekko" / "config.toml"
    config.write_text("[limits]\nmessage = 10\ntitle = 5\n")
    assert cli("log", "0123456789").code == 0
    assert cli("log", "0123456789!").code == 4
    assert cli("remember", "--title", "abcdef").code == 4
    assert cli("remember", "--title", "abcde").code == 0
    values = {s["key"]: s["value"] for s in cli("config", "--json").json()}
    assert values["limits.message"] == 10 and values["limits.content"] == 20_000
    config.write_text("[limits]\nmessage = 0\n")
    out = cli("log", "x")
    assert out.code == 4 and "'limits.message' must be 1 or more, not 0" in out.err


def test_tags_and_metadata_count_too(cli, ws):
    out = cli("remember", "--title", "tagged", "--tag", "t" * 20_001)
    assert out.code == 4 and "the tags, entities and value together is 20,0" in out.err
    out = cli("log", "--meta", "blob=" + "x" * 100_000, "small text")
    assert out.code == 4 and "the message's metadata is 100,0" in out.err
    assert cli("history", "--json").out == ""
