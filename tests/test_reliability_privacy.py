"""Privacy and security: file modes, hard delete leaves no bytes behind, the sensitive-data policy
on every write path, no SQL or shell built from user text, symlinked .ekko paths."""
from __future__ import annotations

import ast
import json
import os
import stat
import sqlite3
import sys
from pathlib import Path

import pytest

from ekko_mem.store import fts

PACKAGE = Path(__file__).resolve().parent.parent / "ekko_mem"
SECRET = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def db_files(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith("memory.db")]


def raw_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in db_files(folder))


# -- file modes ----------------------------------------------------------------------------------
def test_modes_even_with_a_permissive_umask(cli_proc, tmp_path):
    # Fresh processes that inherit umask 0, as from a careless shell or service manager.
    ws = tmp_path / "loose"
    ws.mkdir()
    old = os.umask(0)
    try:
        assert cli_proc("init", cwd=ws).code == 0
        assert cli_proc("log", "hello", cwd=ws).code == 0
        assert cli_proc("remember", "--scope", "user", "--type", "preference", "--domain", "生活技能",
                   "--category", "生活技能/做饭/饮食偏好", "--key", "avoid_ingredient",
                   "--value", "香菜", "--title", "不吃香菜", cwd=ws).code == 0
    finally:
        os.umask(old)
    home = Path(os.environ["EKKO_HOME"])
    for folder in (ws / ".ekko", home):
        assert mode(folder) == 0o700, folder
        for path in db_files(folder):
            assert mode(path) == 0o600, path
    assert mode(ws / ".ekko" / "config.toml") == 0o600


def test_loose_modes_are_tightened_by_init(cli, ws):
    os.chmod(ws / ".ekko", 0o755)
    os.chmod(ws / ".ekko" / "memory.db", 0o644)
    assert cli("init").code == 0
    assert mode(ws / ".ekko") == 0o700
    assert mode(ws / ".ekko" / "memory.db") == 0o600


# -- hard delete leaves no trace ---------------------------------------------------------------
def _needles(text: str) -> list[bytes]:
    # The text itself, and the longer FTS tokens it was indexed as.
    tokens = [t for t in fts.index_text(text).split() if len(t.encode()) >= 6]
    return [text.encode()] + [t.encode() for t in tokens]


def test_hard_delete_leaves_no_bytes_in_db_or_wal(cli, ws):
    old = "zebraquartzalpha oldversion 秘密菜谱甲乙丙"
    new = "zebraquartzbravo newversion 秘密菜谱丁戊己"
    first = cli("remember", "--type", "fact", "--title", old, "--content", old, "--tag",
                "zebratagone", "--json").jsonl()[0]["nodeId"]
    second = cli("remember", "--supersedes", first, "--title", new, "--content", new,
                 "--json").jsonl()[0]["nodeId"]
    assert cli("query", "zebraquartzbravo", "--json").json()["relevant"]
    result = cli("forget", second, "--hard", "--yes", "--json")
    assert result.code == 0, result
    assert set(result.json()["deletedIds"]) == {first, second}
    data = raw_bytes(ws / ".ekko")
    for needle in _needles(old) + _needles(new) + [b"zebratagone"]:
        assert needle not in data, needle
    assert cli("query", "zebraquartzbravo", "--json").json()["relevant"] == []


def test_purge_sources_removes_the_source_message_text(cli, ws):
    text = "记住，我们项目的测试命令是 pytest --xyzzyplugh-marker"
    result = cli("remember", text, "--json")
    assert result.code == 0, result
    node_id = result.jsonl()[0]["nodeId"]
    result = cli("forget", node_id, "--hard", "--purge-sources", "--yes")
    assert result.code == 0, result
    data = raw_bytes(ws / ".ekko")
    assert b"xyzzyplugh" not in data
    assert "测试命令".encode() not in data


# -- the sensitive-data policy on every write path ---------------------------------------------
def _no_secret_anywhere(ws, result):
    assert SECRET not in result.err and SECRET not in result.out, result
    conn = sqlite3.connect(ws / ".ekko" / "memory.db")
    try:
        rows = conn.execute("select title || content || coalesce(value_json, '') from"
                            " memory_nodes where scope in ('workspace', 'user')").fetchall()
        events = conn.execute("select coalesce(payload_json, '') || reason from"
                              " memory_audit_events").fetchall()
    finally:
        conn.close()
    assert not any(SECRET in r[0] for r in rows)
    assert not any(SECRET in e[0] for e in events)


def test_remember_flags_with_a_secret_needs_yes_and_never_echoes_it(cli, ws):
    result = cli("remember", "--type", "fact", "--title", "deploy token",
                 "--content", f"the token is {SECRET}")
    assert result.code == 3, result
    _no_secret_anywhere(ws, result)


def test_remember_text_with_a_secret_is_not_stored_as_memory(cli, ws):
    result = cli("remember", f"记住 我的 API key 是 {SECRET}")
    assert result.code == 3, result  # needs confirmation: nothing stored without --yes
    _no_secret_anywhere(ws, result)


def test_refuse_policy_refuses(cli, ws):
    (ws / ".ekko" / "config.toml").write_text('[sensitive]\npolicy = "refuse"\n')
    result = cli("remember", "--type", "fact", "--title", "t", "--content", SECRET, "--yes")
    assert result.code == 4, result
    _no_secret_anywhere(ws, result)


def test_extract_apply_with_a_secret(cli, ws, tmp_path):
    assert cli("log", "hello").code == 0
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps({"summaryPatch": "x", "nodes": [{
        "operation": "create", "reason": "r", "node": {
            "scope": "workspace", "type": "fact", "title": "deploy key",
            "content": f"the api key is {SECRET}", "confidence": 0.9}}]}))
    result = cli("extract", "--apply", str(answer), "--json")
    assert result.code == 3, result
    assert "Traceback" not in result.err
    _no_secret_anywhere(ws, result)


def test_edit_that_adds_a_secret_needs_confirmation(cli, ws, tmp_path):
    node_id = cli("remember", "--type", "fact", "--title", "plain", "--json").jsonl()[0]["nodeId"]
    editor = tmp_path / "editor.py"
    editor.write_text("import json, sys\np = sys.argv[1]\nd = json.load(open(p))\n"
                      f"d['content'] = 'token {SECRET}'\njson.dump(d, open(p, 'w'))\n")
    result = cli("edit", node_id, env={"EDITOR": f"{sys.executable} {editor}"})
    assert result.code == 3, result
    _no_secret_anywhere(ws, result)


# -- no SQL, no shell from user text -----------------------------------------------------------
# Names an f-string may put into SQL: fixed column lists, '?' placeholders, validated table or
# column names, WHERE clauses built only from fixed text and placeholders, numeric weights.
SAFE_SQL_NAMES = {
    "codec.MESSAGE_COLUMNS", "codec.NODE_COLUMNS", "codec.EVENT_COLUMNS", "codec.SUMMARY_COLUMNS",
    "codec.CONTEXT_RUN_COLUMNS", "marks", "_N_COLS", "_M_COLS", "table", "column", "weights", "where",
    "order", "sets", "int", "','.join", "', '.join", "' and '.join", "' or '.join", "join",
    "timeout", "number", "values", "columns", "COLUMNS", "len",
    # reviewed: store/maintenance.py (fixed table names + "_fts_docsize"), store/transfer.py
    # (a WHERE clause of fixed text and placeholders)
    "shadow", "clause",
    # reviewed: store/search.py (bm25 over an allow-listed table name and constant weights)
    "bm25",
    # reviewed: store/recall.py (a fixed json_each windows fragment, integer constants, and
    # `tail`: one of the module's own fixed FROM clauses)
    "_WINDOWS", "WINDOW_NODES", "tail",
    # reviewed: store/recall.py `_beside` (a comparison and a sort direction, one of two
    # fixed pairs)
    "way",
    # reviewed: store/nodes.py (a fixed ORDER BY of column names)
    "RANK_ORDER",
}


def _sql_fstrings():
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("execute", "executemany", "one", "all",
                                           "executescript") and node.args):
                continue
            sql = node.args[0]
            parts = [sql] if isinstance(sql, ast.JoinedStr) else [
                n for n in ast.walk(sql) if isinstance(n, ast.JoinedStr)]
            for part in parts:
                for value in part.values:
                    if isinstance(value, ast.FormattedValue):
                        yield path.relative_to(PACKAGE.parent), node.lineno, \
                            ast.unparse(value.value)


def test_sql_is_parameterised():
    """Every value interpolated into SQL is a fixed column list, a placeholder list, a name
    checked against an allow-list, or a number; user text only ever travels as a parameter."""
    suspicious = []
    for path, line, expr in _sql_fstrings():
        names = {expr, expr.split("(")[0]}
        if names & SAFE_SQL_NAMES or expr.startswith(("','.join", "', '.join", "' and '.join",
                                                      "'?' *", "','.join('?'")) \
                or "'?'" in expr or expr.startswith(("int(", "float(")) \
                or expr.startswith("', '.join('n.'") or expr.startswith("self."):
            continue
        suspicious.append(f"{path}:{line}: {expr}")
    assert suspicious == [], "\n".join(suspicious)


def test_no_shell_is_built_from_text():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        for needle in ("shell=True", "os.system(", "os.popen(", "commands.getoutput"):
            if needle in source:
                offenders.append(f"{path.name}: {needle}")
    assert offenders == []
    llm = (PACKAGE / "extract" / "llm.py").read_text(encoding="utf-8")
    assert "shlex.split" in llm and "subprocess.run(argv" in llm


def test_fts_query_text_never_reaches_fts_as_syntax(service):
    service.remember(fields={"type": "fact", "title": "alpha beta"})
    for text in ['alpha" OR "x', "title:alpha", "NEAR(alpha beta)", "alpha*", "^alpha",
                 "') ; drop table memory_nodes; --"]:
        service.retrieve({"queryText": text})
    assert service.store.nodes.count_nodes() == 1


# -- symlinked .ekko ---------------------------------------------------------------------------
def _linked_workspace(cli, tmp_path, link):
    """(another workspace, a workspace whose `link` points into it)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    assert cli("init", str(outside)).code == 0
    ws = tmp_path / "victim"
    ws.mkdir()
    if link == ".ekko":
        (ws / ".ekko").symlink_to(outside / ".ekko")
    else:
        (ws / ".ekko").mkdir(mode=0o700)
        (ws / ".ekko" / "memory.db").symlink_to(outside / ".ekko" / "memory.db")
    return outside, ws


@pytest.mark.parametrize("link", [".ekko", ".ekko/memory.db"])
def test_symlinked_ekko_paths_do_not_redirect_writes(cli, tmp_path, link):
    outside, ws = _linked_workspace(cli, tmp_path, link)
    result = cli("log", "written through a link", cwd=ws)
    conn = sqlite3.connect(outside / ".ekko" / "memory.db")
    landed = conn.execute("select count(*) from memory_messages").fetchone()[0]
    conn.close()
    assert landed == 0 and result.code == 6, result


@pytest.mark.parametrize("link", [".ekko", ".ekko/memory.db"])
def test_context_does_not_follow_a_symlinked_ekko_either(cli, tmp_path, link):
    outside, ws = _linked_workspace(cli, tmp_path, link)
    assert cli("remember", "--type", "fact", "--title", "secret plan of another project",
               cwd=outside).code == 0
    result = cli("context", "secret plan", "--json", cwd=ws)
    assert result.code == 0 and "secret plan" not in result.json()["text"]
    assert "symbolic link" in result.err
    assert result.json()["diagnostics"]["storeStatus"] == "disabled"  # the only db is refused
    conn = sqlite3.connect(outside / ".ekko" / "memory.db")
    runs = conn.execute("select count(*) from memory_context_runs").fetchone()[0]
    conn.close()
    assert runs == 0  # no run record written through the link
    strict = cli("context", "secret plan", "--strict", cwd=ws)
    assert strict.code == 6 and "symbolic link" in strict.err
    allowed = cli("context", "secret plan", cwd=ws, env={"EKKO_ALLOW_SYMLINKS": "1"})
    assert "secret plan" in allowed.out
