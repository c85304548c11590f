"""Hermetic tests: every test gets its own EKKO_HOME and workspace under tmp_path.

Two ways to run the command, with one result type:

- `cli` calls `ekko_mem.cli.main(argv)` in the test process, as the console script does, with
  its own argv, stdin, stdout, stderr, working folder and environment for the one call, all
  put back afterwards. It is the default: a command costs milliseconds instead of an
  interpreter start-up.
- `cli_proc` spawns the installed `ekko-mem`. Tests use it where the process is what is tested:
  start-up, signals, closed pipes, file descriptors, the umask a fresh process inherits, git
  hooks, several processes at once.
"""
from __future__ import annotations

import faulthandler
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
import weakref
from contextlib import contextmanager
from pathlib import Path

import pytest

BIN = Path(sys.executable).with_name("ekko-mem")
FIXED_NOW = "2026-03-01T12:00:00Z"
# Read by the interpreter as it starts: a call in this process cannot honour them.
STARTUP_ONLY = ("PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH", "PYTHONSTARTUP",
                "PYTHONNOUSERSITE", "PYTHONUSERBASE", "PYTHONIOENCODING", "PYTHONUTF8")
# How the interpreter sets up its standard streams here (UTF-8, not a terminal).
STREAM_ERRORS = {"stdin": "surrogateescape", "stdout": "surrogateescape",
                 "stderr": "backslashreplace"}
HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGALRM)
UNSET = ("EKKO_WORKSPACE", "EKKO_SESSION", "EKKO_NOW", "EKKO_DEBUG", "EKKO_USER", "NO_COLOR",
         "EDITOR", "VISUAL")


def default_sigint() -> None:
    """A child's Ctrl-C as a terminal delivers it: a shell starts background jobs with SIGINT
    ignored, and a child inherits that, so a test that sends SIGINT sets it back first."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _isolate(monkeypatch, home: Path) -> None:
    for var in UNSET:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("EKKO_HOME", str(home))
    monkeypatch.setenv("EKKO_USER", "tester")
    # Where the [semantic] extra is installed, semantic recall is on unless a config says
    # otherwise: the tests stay lexical (fast, and the rankings they pin) unless they set
    # retrieval.semantic themselves or take this variable away.
    monkeypatch.setenv("EKKO_SEMANTIC", "off")


@pytest.fixture
def utc():
    """Local time is UTC in this process (human times and time words read the local zone),
    wherever the tests run; the zone is put back after."""
    saved = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if saved is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = saved
    time.tzset()  # libc reads the zone again only when told


@pytest.fixture(autouse=True)
def hermetic(tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    ws.mkdir()
    _isolate(monkeypatch, tmp_path / "home")
    monkeypatch.chdir(ws)
    return ws


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code = code
        self.out = out
        self.err = err

    def json(self):
        return json.loads(self.out)

    def jsonl(self):
        return [json.loads(line) for line in self.out.splitlines() if line.strip()]

    def __repr__(self) -> str:
        return f"Result(code={self.code}, out={self.out!r}, err={self.err!r})"


class LeftOpen(UserWarning):
    """A command returned with SQLite connections still open: harmless when the process ends
    right after, a leak for a caller that keeps running (the Python API, the MCP server)."""


class _Hung(BaseException):
    """Raised by the alarm; a BaseException, so the command's own `except Exception` lets it by."""


@contextmanager
def deadline(seconds: float, what: str = "the call"):
    """Fail a call that has not returned after `seconds`: a hang guard, never a speed check.

    An alarm interrupts Python code and blocking system calls; a C loop that never lets go of
    the interpreter (a runaway regular expression) is stopped by faulthandler, which prints
    every thread's stack and ends the test process, so the run fails instead of hanging."""
    on_main = threading.current_thread() is threading.main_thread()
    previous, outer = None, (0.0, 0.0)
    if on_main:
        def alarm(signum, frame):
            raise _Hung
        previous = signal.signal(signal.SIGALRM, alarm)
        outer = signal.setitimer(signal.ITIMER_REAL, seconds)
    faulthandler.dump_traceback_later(seconds + 30, exit=True, file=sys.__stderr__)
    try:
        yield
    except _Hung:
        raise subprocess.TimeoutExpired(what, seconds) from None
    finally:
        faulthandler.cancel_dump_traceback_later()
        if on_main:
            left = signal.setitimer(signal.ITIMER_REAL, 0)[0]
            signal.signal(signal.SIGALRM, previous)
            if outer[0]:  # an enclosing deadline keeps what was left of its own
                signal.setitimer(signal.ITIMER_REAL, max(outer[0] - (seconds - left), 0.001))


def opened_at(proc: subprocess.Popen, path: str) -> float | None:
    """Wait until `proc` has `path` open and return when (time.perf_counter()), or None if it
    ended first: a process killed after this was killed in its work, not in its start-up."""
    fds = f"/proc/{proc.pid}/fd"
    while proc.poll() is None:
        try:
            if any(os.readlink(os.path.join(fds, fd)) == path for fd in os.listdir(fds)):
                return time.perf_counter()
        except OSError:  # a descriptor closed while it was read
            pass
        time.sleep(0.001)
    return None


def _text(data: bytes, translate: bool) -> str:
    """Decode as subprocess does in text mode (universal newlines), or as bytes-in callers
    always did (plain decode)."""
    text = data.decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n") if translate else text


def _stream(name: str, data: bytes = b"") -> io.TextIOWrapper:
    """A standard stream the way the interpreter makes one for a pipe: text over a buffer
    over a file descriptor, UTF-8, never a terminal."""
    raw = tempfile.TemporaryFile()  # noqa: SIM115 - closed with the stream after the call
    raw.write(data)
    raw.seek(0)
    return io.TextIOWrapper(raw, encoding="utf-8", errors=STREAM_ERRORS[name], newline="\n")


def _drain(stream: io.TextIOWrapper) -> bytes:
    try:
        stream.flush()
    except ValueError:  # closed by the command
        return b""
    stream.buffer.seek(0)
    data = stream.buffer.read()
    stream.close()
    return data


class _Connection(sqlite3.Connection):
    """sqlite3.Connection itself cannot be weakly referenced; a subclass can."""


class _Connections:
    """The file-backed SQLite connections a command opens, to close any it leaves open (as
    the end of a process would) so that no lock or open transaction outlives the call. Only
    weak references are kept: a connection the command drops still closes when it would.
    Connections that other threads of the test open meanwhile are not the command's."""

    def __init__(self) -> None:
        self.opened: list[weakref.ref] = []
        self.connect = sqlite3.connect
        self.thread = threading.get_ident()

    def tracking(self, database, *args, **kwargs):
        if threading.get_ident() != self.thread:
            return self.connect(database, *args, **kwargs)
        if "factory" not in kwargs and len(args) < 5:  # the fifth positional is the factory
            kwargs["factory"] = _Connection
        conn = self.connect(database, *args, **kwargs)
        if str(database) != ":memory:" and isinstance(conn, _Connection):
            self.opened.append(weakref.ref(conn))
        return conn

    def close_left_open(self) -> int:
        left = 0
        for ref in self.opened:
            conn = ref()
            if conn is None:
                continue
            try:
                conn.total_changes  # noqa: B018 - raises on a closed connection
            except sqlite3.ProgrammingError:
                continue
            conn.close()
            left += 1
        return left


class _ProcessState:
    """What a command could change in the process beyond what a call patches: the
    environment, the umask and signal handlers. Taken before a call, put back after it."""

    def __init__(self) -> None:
        self.environ = dict(os.environ)
        self.umask = os.umask(0o077)
        os.umask(self.umask)
        self.handlers = {sig: signal.getsignal(sig) for sig in HANDLED_SIGNALS}

    def restore(self) -> None:
        if dict(os.environ) != self.environ:
            os.environ.clear()
            os.environ.update(self.environ)
        os.umask(self.umask)
        for sig, handler in self.handlers.items():
            if handler is not None and signal.getsignal(sig) is not handler:
                signal.signal(sig, handler)


class _BuiltOnce:
    """typer.main.get_command(app) builds the whole Click tree from the app's functions, about
    0.1 s that a process spends once; here it is built once per app and handed out again. The
    tree holds no state between calls: Click makes a new context for every invocation."""

    def __init__(self) -> None:
        self.trees: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def patch(self, patch: pytest.MonkeyPatch) -> None:
        import typer.main
        build = typer.main.get_command

        def get_command(typer_instance):
            tree = self.trees.get(typer_instance)
            if tree is None:
                tree = self.trees[typer_instance] = build(typer_instance)
            return tree
        patch.setattr(typer.main, "get_command", get_command)


_typer_trees = _BuiltOnce()


def _exit_code(exc: SystemExit, stderr) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    stderr.write(f"{exc.code}\n")  # sys.exit("message"), as the interpreter reports it
    return 1


def _call_main(argv: list[str], stderr) -> int:
    """The console script's body: main's code, SystemExit's code, or 1 and a traceback."""
    try:
        from ekko_mem import cli as entry_point
        return int(entry_point.main(argv))
    except SystemExit as exc:
        return _exit_code(exc, stderr)
    except Exception:  # an uncaught error ends a process with a traceback and 1
        traceback.print_exc(file=stderr)
        return 1


def run_in_process(args, *, input=None, cwd=None, env=None, timeout=60):
    """ekko_mem.cli.main(args) with the streams, argv, folder and environment of one process."""
    argv = [str(a) for a in args]
    if any("\0" in a for a in argv):
        raise ValueError("embedded null byte")  # what exec() would say
    data = input.encode("utf-8") if isinstance(input, str) else (input or b"")
    streams = {name: _stream(name, data if name == "stdin" else b"") for name in STREAM_ERRORS}
    connections, state = _Connections(), _ProcessState()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(cwd)
            for key, value in (env or {}).items():
                patch.setenv(key, str(value))
            for name, stream in streams.items():
                patch.setattr(sys, name, stream)
            patch.setattr(sys, "argv", [str(BIN), *argv])
            patch.setattr(sqlite3, "connect", connections.tracking)
            _typer_trees.patch(patch)
            with deadline(timeout, f"ekko-mem {' '.join(argv)}"):
                code = _call_main(argv, streams["stderr"])
    finally:
        leaked = connections.close_left_open()
        state.restore()
        streams["stdin"].close()
        out, err = _drain(streams["stdout"]), _drain(streams["stderr"])
    if leaked:
        warnings.warn(f"ekko-mem {argv[:1]} left {leaked} SQLite connection(s) open",
                      LeftOpen, stacklevel=3)
    text = not isinstance(input, bytes)
    return Result(code, _text(out, text), _text(err, text))


def run_process(args, *, input=None, cwd=None, env=None, timeout=60):
    """The installed ekko-mem, as a shell script runs it; stdin is an (empty) pipe."""
    full_env = dict(os.environ)
    full_env.update({key: str(value) for key, value in (env or {}).items()})
    binary = not isinstance(input, str) and input is not None
    proc = subprocess.run([str(BIN), *map(str, args)], input=input if input is not None else "",
                          capture_output=True, text=not binary, cwd=cwd, env=full_env,
                          timeout=timeout)
    out, err = proc.stdout, proc.stderr
    if binary:
        out, err = out.decode(), err.decode()
    return Result(proc.returncode, out, err)


def _never_the_real_home(env) -> None:
    """Every run has EKKO_HOME set (by `hermetic`, or by the test): never the user's ~/.ekko."""
    home = (env or {}).get("EKKO_HOME") or os.environ.get("EKKO_HOME")
    assert home and os.path.realpath(os.path.expanduser(home)) != os.path.realpath(
        os.path.expanduser("~/.ekko")), "EKKO_HOME must point into the test's own folder"


@pytest.fixture
def cli(hermetic):
    """Run ekko-mem in this process: argv, stdin (text or bytes), cwd, extra env, timeout."""
    def run(*args, input=None, cwd=None, env=None, timeout=60):
        _never_the_real_home(env)
        if env and any(key in STARTUP_ONLY for key in env):
            return run_process(args, input=input, cwd=cwd or hermetic, env=env,
                               timeout=timeout)
        return run_in_process(args, input=input, cwd=cwd or hermetic, env=env,
                              timeout=timeout)
    return run


@pytest.fixture
def cli_proc(hermetic):
    """Run the installed ekko-mem in a new process; the same arguments and result as `cli`."""
    def run(*args, input=None, cwd=None, env=None, timeout=60):
        _never_the_real_home(env)
        return run_process(args, input=input, cwd=cwd or hermetic, env=env, timeout=timeout)
    return run


@pytest.fixture(scope="session")
def initialised(tmp_path_factory):
    """The `.ekko/` that `ekko-mem init` makes, made once per test process in a folder of its
    own (with its own EKKO_HOME)."""
    root = tmp_path_factory.mktemp("initialised")
    (root / "ws").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        _isolate(patch, root / "home")
        result = run_in_process(["init"], cwd=root / "ws")
    assert result.code == 0, result
    return root / "ws" / ".ekko"


@pytest.fixture
def ws(hermetic, initialised):
    """An initialised workspace: a copy of what init wrote, modes included (the copies share
    the workspace id, each in its own folder with its own user home)."""
    shutil.copytree(initialised, hermetic / ".ekko")
    return hermetic


@pytest.fixture
def service(ws):
    from ekko_mem import MemoryService
    svc = MemoryService(ws)
    yield svc
    svc.close()


@pytest.fixture
def shown(capsys):
    """Emit a result as the command layer would; (stdout, stderr)."""
    def run(result, **view):
        from ekko_mem import render
        render.emit(result, **view)
        captured = capsys.readouterr()
        return captured.out, captured.err
    return run


@pytest.fixture
def logs(tmp_path, monkeypatch) -> Path:
    """An empty logs.db as `llm` makes one, with llm's folder in the test's (the llm tests)."""
    sqlite_utils = pytest.importorskip("sqlite_utils")
    migrations = pytest.importorskip("llm.migrations")
    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-user"))
    path = tmp_path / "logs.db"
    with sqlite_utils.Database(path) as db:
        migrations.migrate(db)
    return path
