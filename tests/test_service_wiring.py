"""MemoryService as a library caller builds it: the environment it is given is the one its
settings read, a context loads none of what an explanation needs, and a line of JSON whose
number cannot be read is refused like any other bad line. (How the use cases are wired is
checked on the source, in test_architecture.py.)"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ekko_mem import MemoryService
from ekko_mem.env import Env
from ekko_mem.errors import Rejected


@pytest.mark.parametrize(("given", "read"), [("on", True), ("off", False)])
def test_the_environment_given_is_the_one_settings_read(ws, monkeypatch, given, read):
    monkeypatch.setenv("EKKO_SEMANTIC", "off" if read else "on")  # this process says the other
    with MemoryService(ws, env=Env({**os.environ, "EKKO_SEMANTIC": given})) as svc:
        assert svc.config.get("retrieval.semantic") is read
        assert svc.stores.semantic_on() is read


def test_a_bad_value_in_the_environment_given_is_refused(ws):
    with MemoryService(ws, env=Env({**os.environ, "EKKO_SEMANTIC": "maybe"})) as svc, \
            pytest.raises(Rejected, match="EKKO_SEMANTIC"):
        svc.config.get("retrieval.semantic")


def test_a_context_loads_none_of_the_explanations_code(cli, ws):
    assert cli("remember", "记住，我喜欢乌龙茶").code == 0
    probe = ("import sys\nfrom ekko_mem.cli import main\n"
             "sys.argv = ['ekko-mem', 'context', 'tea?']\n"
             "main()\n"
             "print(sorted(m for m in sys.modules if m.startswith('ekko_mem.service.')))\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ws, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = done.stdout.strip().splitlines()[-1]
    for module in ("explanations", "inspection", "audit_log", "queries"):
        assert f"ekko_mem.service.{module}'" not in loaded, loaded
    assert "ekko_mem.service.context'" in loaded
    shown = cli("explain", "--last", "--json").json()
    assert shown["queryText"] == "tea?" and "乌龙茶" in shown["items"][0]["title"]


def test_a_number_too_long_to_read_is_a_bad_line(cli, ws):
    line = '{"content": "hi", "metadata": {"n": ' + "1" * 5000 + "}}\n"
    done = cli("log", "--jsonl", "-", input=line)
    assert (done.code, done.out) == (4, "")
    assert done.err == ("ekko-mem: line 1 is not valid JSON (a number too long to read);"
                        " fix that line; nothing was written\n")
