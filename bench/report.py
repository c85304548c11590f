"""Tables for people and the growth factors and target checks, from the JSON result."""
from __future__ import annotations

TARGETS_NOTE = ("targets: FTS p50 < 20 ms at 1M; context p50 at 1M <= 2x 10k; log --jsonl"
                " > 20,000 msg/s; log <= 2x and context <= 3x bare python3 per process")


def add_growth(result: dict) -> None:
    """p50 at the largest size over p50 at 10k (or the smallest size), per in-process path."""
    sizes = result["sizes"]
    names = list(sizes)
    base = "10k" if "10k" in sizes else (names[0] if names else None)
    top = names[-1] if names else None
    if not base or base == top or "latencyMs" not in sizes[top]:
        return
    result["growth"] = {"from": base, "to": top, "p50Ratio": {
        path: round(row["p50"] / max(sizes[base]["latencyMs"][path]["p50"], 1e-6), 2)
        for path, row in sizes[top]["latencyMs"].items()}}


def _table(title: str, columns: list[str], rows: list[list]) -> None:
    widths = [max(len(str(c)), *(len(str(r[i])) for r in rows)) for i, c in enumerate(columns)]
    print(f"\n{title}")
    print("  ".join(str(c).rjust(w) if i else str(c).ljust(w)
                    for i, (c, w) in enumerate(zip(columns, widths))))
    for row in rows:
        print("  ".join(str(v).rjust(w) if i else str(v).ljust(w)
                        for i, (v, w) in enumerate(zip(row, widths))))


def print_tables(result: dict) -> None:
    m = result["machine"]
    print(f"machine: {m['cpu']}, {m['cores']} cores, {m['memGb']} GB, {m['os']},"
          f" Python {m['python']}, SQLite {m['sqlite']}; ekko-mem from {result['install']}")
    sizes = result["sizes"]
    names = list(sizes)
    _table("build (through the real write paths)", ["", *names], [
        ["log --jsonl msg/s (overall)", *(sizes[n]["build"]["messages"]["perSecondOverall"]
                                          for n in names)],
        ["log --jsonl peak RSS MB", *(sizes[n]["build"]["messages"]["peakRssMbMax"]
                                      for n in names)],
        ["nodes/s (prepare+insert)", *(sizes[n]["build"]["nodes"]["perSecond"] for n in names)],
        ["propose_update p50 ms", *(sizes[n]["build"]["proposeUpdate"]["p50Ms"]
                                    for n in names)],
    ])
    keys = ["fileBytes", "bytesPerNode", "bytesPerNodeWithoutAudit", "auditBytesPerNode",
            "ftsBytesPerNode", "bytesPerMessage", "ftsBytesPerMessage"]
    _table("footprint", ["", *names], [[k, *(sizes[n]["footprint"][k] for n in names)]
                                       for k in keys])
    if all("latencyMs" in sizes[n] for n in names):
        growth = result.get("growth", {}).get("p50Ratio", {})
        paths = list(sizes[names[0]]["latencyMs"])
        span = result.get("growth", {})
        _table("in-process latency ms, p50 / p95",
               ["path", *names, f"growth {span.get('from', '')}->{span.get('to', '')}"],
               [[p, *(f"{sizes[n]['latencyMs'][p]['p50']} / {sizes[n]['latencyMs'][p]['p95']}"
                      for n in names), growth.get(p, "")] for p in paths])
    if all("processes" in sizes[n] for n in names):
        rows = []
        for cmd in sizes[names[0]]["processes"]["results"]:
            cells = []
            for n in names:
                r = sizes[n]["processes"]["results"][cmd]
                cells.append(f"{r['p50']:.0f}/{r['p95']:.0f} x{r['xBarePython']}"
                             f" {r['peakRssMb']}MB")
            rows.append([cmd, *cells])
        _table("per process: p50/p95 ms, x bare python3, peak RSS", ["command", *names], rows)
    print(f"\n{TARGETS_NOTE}")
