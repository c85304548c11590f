"""Hermetic tests: every test gets its own EKKO_HOME and workspace under tmp_path."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).with_name("ekko-mem")
FIXED_NOW = "2026-03-01T12:00:00Z"


@pytest.fixture(autouse=True)
def hermetic(tmp_path, monkeypatch):
    home = tmp_path / "home"
    ws = tmp_path / "ws"
    ws.mkdir()
    for var in ("EKKO_WORKSPACE", "EKKO_SESSION", "EKKO_NOW", "EKKO_DEBUG", "EKKO_USER",
                "NO_COLOR", "EDITOR", "VISUAL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("EKKO_HOME", str(home))
    monkeypatch.setenv("EKKO_USER", "tester")
    monkeypatch.chdir(ws)
    return ws


class Result:
    def __init__(self, proc: subprocess.CompletedProcess) -> None:
        self.code = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr

    def json(self):
        return json.loads(self.out)

    def jsonl(self):
        return [json.loads(line) for line in self.out.splitlines() if line.strip()]

    def __repr__(self) -> str:
        return f"Result(code={self.code}, out={self.out!r}, err={self.err!r})"


@pytest.fixture
def cli(hermetic):
    """Run the installed ekko-mem as a shell script would: argv, stdin, exit code, streams."""
    def run(*args, input=None, cwd=None, env=None, timeout=60):
        full_env = dict(os.environ)
        full_env.update(env or {})
        proc = subprocess.run([str(BIN), *map(str, args)], input=input, capture_output=True,
                              text=isinstance(input, str) or input is None, cwd=cwd or hermetic,
                              env=full_env, timeout=timeout)
        if isinstance(proc.stdout, bytes):
            proc.stdout = proc.stdout.decode()
            proc.stderr = proc.stderr.decode()
        return Result(proc)
    return run


@pytest.fixture
def ws(cli, hermetic):
    """An initialised workspace."""
    result = cli("init")
    assert result.code == 0, result
    return hermetic


@pytest.fixture
def service(ws):
    from ekko_mem import MemoryService
    svc = MemoryService(ws)
    yield svc
    svc.close()
