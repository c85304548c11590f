"""The shared recall protocol (`../shared/eval`), run as its README gives it.

Where the protocol lives, the harness commands for ekko-mem (printed mode, lexical or semantic)
and for the BM25 floor, and the figures read off the harness's table. The protocol's files and
data stay in the shared folder: their licences keep them out of this repository, so they are
called, never copied.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HARNESS = "locomo_recall.py"
ADAPTER = "ekko_adapter.py"
CONVERTER = "memorybank_to_locomo.py"
REPO = Path(__file__).resolve().parents[1]
RETRIEVERS = ("lexical", "semantic", "bm25")
CATEGORIES = ("multi-hop", "temporal", "open-domain", "single-hop")
OVERALL = "overall (1-4)"
# The adapter asks `context` for every question of a conversation in one call; the harness's
# default of 300 s per call is too short for LoCoMo with semantic recall on a busy machine.
CMD_TIMEOUT = "3600"


class ProtocolError(Exception):
    """One line naming the problem and the fix; `code` is the exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Figures:
    """One harness run: recall within the budget (percent, as printed) overall and by
    category, with the number of questions behind each."""

    questions: int
    overall: float
    categories: dict[str, tuple[int, float]] = field(default_factory=dict)


def locate(explicit: str | None, environ, repo: Path = REPO) -> Path:
    """The folder holding the harness: --shared, else $EKKO_SHARED, else ../shared/eval beside
    the clone. Either the eval folder or the shared folder above it may be named."""
    raw = explicit or environ.get("EKKO_SHARED")
    candidates = [Path(raw), Path(raw) / "eval"] if raw else [repo.parent / "shared" / "eval"]
    for folder in candidates:
        if (folder / HARNESS).is_file():
            return folder.resolve()
    raise ProtocolError(
        f"bench.recall: no shared recall protocol ({HARNESS}) at {candidates[0]}; put the "
        "shared folder beside the clone as ../shared, or pass --shared PATH (or set EKKO_SHARED)",
        code=2)


def find_bin(explicit: str | None) -> Path:
    """The ekko-mem to measure: --bin, else the one installed beside this Python."""
    path = Path(explicit) if explicit else Path(sys.executable).parent / "ekko-mem"
    if not path.is_file():
        raise ProtocolError(
            f"bench.recall: no ekko-mem at {path}; install the project into this Python "
            "(pip install -e .) or pass --bin PATH", code=2)
    return path.resolve()


def interpreter(ekko_bin: Path) -> list[str]:
    """The Python an installed ekko-mem script runs under (its #! line), else this one."""
    try:
        with open(ekko_bin, "rb") as f:
            first = f.readline(512)
    except OSError:
        first = b""
    if first.startswith(b"#!"):
        argv = shlex.split(first[2:].decode("utf-8", "replace").strip())
        if argv:
            return argv
    return [sys.executable]


def semantic_installed(ekko_bin: Path) -> bool:
    """Whether the [semantic] extra loads in ekko-mem's own Python, by ekko-mem's own test."""
    check = ("import sys; from ekko_mem.embedding import available; "
             "sys.exit(available() is not None)")
    proc = subprocess.run([*interpreter(ekko_bin), "-c", check], capture_output=True)
    return proc.returncode == 0


def dataset(eval_dir: Path, *parts: str) -> Path:
    return eval_dir.parent / "datasets" / Path(*parts)


def convert_memorybank(eval_dir: Path, lang: str, out: Path) -> Path:
    """MemoryBank in LoCoMo shape, by the protocol's own converter, into `out`."""
    source = dataset(eval_dir, "memorybank", "evidence.json")
    if not source.is_file():
        raise ProtocolError(f"bench.recall: no MemoryBank data at {source.parent}; the shared "
                            "folder must hold datasets/memorybank", code=2)
    with open(out, "wb") as f:
        proc = subprocess.run([sys.executable, CONVERTER, "--lang", lang], cwd=eval_dir,
                              stdout=f, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise ProtocolError(f"bench.recall: {CONVERTER} --lang {lang} failed: {_last(proc.stderr)}")
    return out


@dataclass(frozen=True)
class Run:
    retriever: str
    argv: list[str]
    env: dict[str, str]


def harness_run(retriever: str, data: Path, budget: int, ekko_bin: Path, limit: int = 0) -> Run:
    """The README's command for one retriever. No EKKO_ variable of the caller's reaches the
    run (a stray EKKO_WORKSPACE or EKKO_NOW would change what the adapter's fresh workspaces
    see); the protocol's own are set."""
    argv = [sys.executable, HARNESS, "--data", str(data), "--budgets", str(budget)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("EKKO_")}
    if retriever != "bm25":
        argv += ["--retriever", "cmd", "--cmd-mode", "conversation", "--printed",
                 "--cmd-timeout", CMD_TIMEOUT]
        env.update(EKKO_PRINTED="1", EKKO_BUDGET=str(budget), EKKO_BIN=str(ekko_bin),
                   EKKO_RETRIEVER_CMD=f"{shlex.quote(sys.executable)} {ADAPTER}")
        # semantic recall is on by default where the extra is installed: say which
        env["EKKO_CONFIG_SET"] = f"retrieval.semantic={str(retriever == 'semantic').lower()}"
    if limit:
        argv += ["--limit-convs", str(limit)]
    return Run(retriever, argv, env)


def execute(run: Run, eval_dir: Path, budget: int) -> Figures:
    proc = subprocess.run(run.argv, cwd=eval_dir, env=run.env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ProtocolError(f"bench.recall: the {run.retriever} run of {HARNESS} failed "
                            f"(exit {proc.returncode}): {_last(proc.stderr)}")
    return parse(proc.stdout, budget)


_ROW = re.compile(r"^(?P<name>\S.*?)\s+(?P<n>\d+)(?P<cells>(?:\s+(?:-?\d+(?:\.\d+)?|nan)%)+)\s*$")


def parse(stdout: str, budget: int) -> Figures:
    """The R@<budget>tok column of the harness's table: the `overall (1-4)` row and the
    category rows, named without their number ("1 multi-hop" is "multi-hop")."""
    column = f"R@{budget}tok"
    header: list[str] | None = None
    rows: dict[str, tuple[int, float]] = {}
    for line in stdout.splitlines():
        words = line.split()
        if words[:2] == ["category", "n"]:
            header = words[2:]
            continue
        match = _ROW.match(line)
        if header is None or not match:
            continue
        if column not in header:
            break
        cells = match["cells"].split()
        name = re.sub(r"^\d+\s+", "", match["name"].strip())
        rows[name] = (int(match["n"]), float(cells[header.index(column)].rstrip("%")))
    if OVERALL not in rows:
        raise ProtocolError(f"bench.recall: no '{OVERALL}' row with a {column} column in the "
                            f"output of {HARNESS}; is --shared the protocol this bench expects?")
    questions, overall = rows[OVERALL]
    return Figures(questions, overall, {c: rows[c] for c in CATEGORIES if c in rows})


def measure(eval_dir: Path, data: Path, budget: int, ekko_bin: Path,
            retrievers: tuple[str, ...], limit: int = 0, label: str = "",
            log=sys.stderr) -> dict[str, Figures]:
    """Every retriever on one LoCoMo-shaped file, in this run, at one budget."""
    out = {}
    for retriever in retrievers:
        started = time.monotonic()
        out[retriever] = execute(harness_run(retriever, data, budget, ekko_bin, limit),
                                 eval_dir, budget)
        if log is not None:
            print(f"bench.recall: {label or data.name} {retriever}: {out[retriever].overall:.1f}"
                  f" ({time.monotonic() - started:.0f} s)", file=log, flush=True)
    return out


def _last(stderr) -> str:
    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else (stderr or "")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"
