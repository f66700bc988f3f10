"""Compares readers' canonical results with an expected result (FORMAT.md).

    python compare.py --spec SPEC.json [SPEC2.json …] --expected EXP.json [EXP2.json …] \
                      RESULTS_DIR/*.json [--known known_disagreements.json] \
                      [--markdown OUT.md] [--report OUT.json] [--doc INTEROP.md [--doc-mode check]]

Per reader x table x feature (scan, filters, history, stats) the verdict is pass, fail, error
(the reader raised) or n.a. (the reader does not expose it, or expected has none). A fail or
error listed in --known becomes `known`. Prints the markdown summary (one reader x feature
table per group of tables) with notes. Exits 1 on any fail or error that is not known, and on
any known entry that did not disagree (it passes now, or names a table that is gone), so the
list cannot outlive what it explains; with --doc-mode check also when the matrix between the
markers of --doc is not the current one (--doc-mode update rewrites it); 0 otherwise.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data_check  # noqa: E402
import table_meta  # noqa: E402
from canon import canon_row, dumps, sort_rows  # noqa: E402
from stats import canon_file, canon_snapshot  # noqa: E402

FEATURES = ("scan", "filters", "history", "stats")
SOURCE = {"scan": "scan", "filters": "filters", "history": "snapshots", "stats": "files"}
BAD = ("fail", "error")
BEGIN, END = "<!-- matrix: begin (cargo xtask interop writes this) -->", "<!-- matrix: end -->"


def _is_error(v: Any) -> bool:
    return isinstance(v, dict) and set(v) == {"error"}


def _diff_rows(exp: list, got: list) -> str | None:
    e, g = [dumps(r) for r in sort_rows(exp)], [dumps(r) for r in sort_rows(got)]
    if e == g:
        return None
    missing = [r for r in e if r not in g][:2]
    extra = [r for r in g if r not in e][:2]
    note = f"{len(g)} rows, expected {len(e)}"
    if missing:
        note += f"; missing {' '.join(missing)}"
    if extra:
        note += f"; unexpected {' '.join(extra)}"
    return note


def _diff_keyed(exp: list, got: list, key: str) -> tuple[str | None, set[str]]:
    """Compares records by key on the fields both sides have; returns (note, fields compared)."""
    e, g = {str(x[key]): x for x in exp}, {str(x[key]): x for x in got}
    notes, compared = [], set()
    if e.keys() != g.keys():
        notes.append(f"{key}s differ: missing {sorted(e.keys() - g.keys())[:3]}, "
                     f"unexpected {sorted(g.keys() - e.keys())[:3]}")
    for k in sorted(e.keys() & g.keys()):
        for field in sorted(e[k].keys() & g[k].keys()):
            compared.add(field)
            ev, gv = e[k][field], g[k][field]
            if dumps(ev) == dumps(gv):
                continue
            if isinstance(ev, dict) and isinstance(gv, dict):  # show only the differing entries
                keys = sorted(set(ev) | set(gv), key=str)
                ev, gv = ({x: d.get(x) for x in keys if dumps(ev.get(x)) != dumps(gv.get(x))} for d in (ev, gv))
            notes.append(f"{k}: {field} = {dumps(gv)[:200]}, expected {dumps(ev)[:200]}")
    if not notes:
        return None, compared
    return "; ".join(notes[:3]) + (f" (+{len(notes) - 3} more)" if len(notes) > 3 else ""), compared


def _normalise(table: dict, meta: table_meta.TableMeta) -> dict:
    """Re-canonicalises expected values (canon is idempotent), so either form may be written."""
    out = dict(table)
    if isinstance(table.get("scan"), list):
        out["scan"] = [canon_row(r, meta.fields) for r in table["scan"]]
    out["filters"] = {k: [canon_row(r, meta.fields) for r in v] if isinstance(v, list) else v
                      for k, v in table.get("filters", {}).items()}
    if isinstance(table.get("files"), list):
        out["files"] = [canon_file(f, meta) for f in table["files"]]
    if isinstance(table.get("snapshots"), list):
        out["snapshots"] = [canon_snapshot(s) for s in table["snapshots"]]
    return out


def compare_feature(feature: str, exp: dict, got: dict, meta: table_meta.TableMeta,
                    bounds_from_data: bool = False) -> tuple[str, str]:
    src = SOURCE[feature]
    if src not in exp or exp[src] is None or (feature == "filters" and not exp[src]):
        return "n.a.", "nothing expected"
    if src not in got:
        return "n.a.", "not exposed by reader"
    e, g = exp[src], got[src]
    if _is_error(g):
        return "error", g["error"]
    if feature == "scan":
        note = _diff_rows(e, g)
        return ("fail", note) if note else ("pass", "")
    if feature == "filters":
        bad = []
        for name, rows in e.items():
            r = g.get(name)
            if r is None:
                bad.append(f"{name}: not run")
            elif _is_error(r):
                bad.append(f"{name}: error {r['error']}")
            elif note := _diff_rows(rows, r):
                bad.append(f"{name}: {note[:300]}")
        return ("fail", "; ".join(bad)) if bad else ("pass", f"{len(e)} filters")
    if feature == "stats" and bounds_from_data:
        note = data_check.compare_files(e, g, meta)
        return ("fail", note) if note else ("pass", "")
    key = "snapshot_id" if feature == "history" else "path"
    note, compared = _diff_keyed(e, g, key)
    missing = sorted({k for x in e for k, v in x.items() if v is not None} - compared - {key})
    partial = f"not exposed: {', '.join(missing)}" if missing else ""
    return ("fail", note + (f" [{partial}]" if partial else "")) if note else ("pass", partial)


def compare(tables: list[dict], expected: dict, results: list[dict]) -> list[dict]:
    metas = {t["name"]: table_meta.load(t["metadata"]) for t in tables}
    verdicts = []
    for res in results:
        for t in tables:
            name = t["name"]
            exp = _normalise(expected.get(name, {}), metas[name])
            got = res.get("tables", {}).get(name)
            for feature in FEATURES:
                if "error" in res:
                    verdict = ("error", res["error"][:300])
                elif got is None:
                    verdict = ("n.a.", "table not read")
                elif _is_error(got):
                    verdict = ("error", got["error"])
                else:
                    verdict = compare_feature(feature, exp, got, metas[name], res.get("bounds_from_data", False))
                verdicts.append({"reader": res["reader"], "table": name, "group": t.get("group", "tables"),
                                 "feature": feature, "verdict": verdict[0], "note": verdict[1]})
    return verdicts


def _as_list(entry: dict, key: str) -> list[str]:
    v = entry.get(key + "s", entry.get(key))
    return [v] if isinstance(v, str) else list(v or [])


def apply_known(verdicts: list[dict], known: list[dict]) -> list[str]:
    """Marks the listed disagreements `known`; returns the entries that did not disagree."""
    index = {(v["reader"], v["table"], v["feature"]): v for v in verdicts}
    ran = {v["reader"] for v in verdicts}
    stale = []
    for entry in known:
        reader = entry["reader"]
        if reader not in ran:
            continue  # a reader this run did not use: nothing to say
        for table in _as_list(entry, "table"):
            for feature in _as_list(entry, "feature"):
                v = index.get((reader, table, feature))
                if v is None:
                    stale.append(f"{reader} / {table} / {feature}: no such table in this run")
                elif v["verdict"] in BAD:
                    v["was"], v["verdict"] = v["verdict"], "known"
                    v["note"] = f"{entry['reason']} -- {v['note']}"
                elif v["verdict"] != "known":
                    stale.append(f"{reader} / {table} / {feature}: listed as a known disagreement, "
                                 f"but the verdict is {v['verdict']} now")
    return stale


def _cell(vs: list[dict]) -> str:
    applicable = [v for v in vs if v["verdict"] != "n.a."]
    if not applicable:
        return "n.a."
    bad = [v for v in applicable if v["verdict"] in BAD]
    known = [v for v in applicable if v["verdict"] == "known"]
    passed = len(applicable) - len(bad) - len(known)
    text = f"pass {passed}/{len(applicable)}" if (bad or known) else f"pass ({len(applicable)} tables)"
    if known:
        text += f", known {len(known)}"
    if bad:
        text = f"**{bad[0]['verdict'].upper()} {len(bad)}**, " + text
    return text


def markdown(verdicts: list[dict], stale: list[str], notes: bool = True) -> str:
    lines = []
    details = []
    for group in dict.fromkeys(v["group"] for v in verdicts):
        gv = [v for v in verdicts if v["group"] == group]
        readers = list(dict.fromkeys(v["reader"] for v in gv))
        ntables = len({v["table"] for v in gv})
        lines += [f"### {group} ({ntables} tables)", "",
                  "| reader | " + " | ".join(FEATURES) + " |", "|---" * (len(FEATURES) + 1) + "|"]
        for r in readers:
            cells = []
            for f in FEATURES:
                vs = [v for v in gv if v["reader"] == r and v["feature"] == f]
                cells.append(_cell(vs))
                details += [f"- {r} / {v['table']} / {f}: **{v['verdict']}**"
                            + (f" (was {v['was']})" if "was" in v else "") + f" {v['note'][:600]}"
                            for v in vs if v["verdict"] in BAD + ("known",)]
                hidden = sorted({k for v in vs if v["note"].startswith("not exposed: ")
                                 for k in v["note"].removeprefix("not exposed: ").split(", ")})
                if hidden:
                    details.append(f"- {r} / {group} / {f}: not exposed: {', '.join(hidden)}")
            lines.append(f"| {r} | " + " | ".join(cells) + " |")
        lines.append("")
    if not notes:
        return "\n".join(lines).rstrip("\n") + "\n"
    if stale:
        lines += ["Stale entries of the known-disagreement list (each one fails the check):", ""]
        lines += [f"- {s}" for s in stale] + [""]
    if details:
        lines += ["Notes:", ""] + details
    return "\n".join(lines) + "\n"


def _doc(path: Path, matrix: str, mode: str) -> bool:
    """Puts the matrix between the markers of `path` (update), or says whether it is there
    already (check). True when the document is current (afterwards)."""
    text = path.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{BEGIN}\n{matrix}{END}{tail}"
    if new == text:
        return True
    if mode == "update":
        path.write_text(new)
        return True
    print(f"compare.py: the matrix in {path} is not the current one: run cargo xtask interop", file=sys.stderr)
    return False


def _load_all(paths: list[Path], key: str) -> Any:
    docs = [json.loads(p.read_text()) for p in paths]
    if key == "tables" and all(isinstance(d["tables"], list) for d in docs):
        return [t for d in docs for t in d["tables"]]
    return {k: v for d in docs for k, v in d["tables"].items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", type=Path, action="append", required=True, help="repeatable")
    ap.add_argument("--expected", type=Path, action="append", required=True, help="repeatable")
    ap.add_argument("results", type=Path, nargs="+")
    ap.add_argument("--known", type=Path, help="known disagreements (interop/known_disagreements.json)")
    ap.add_argument("--markdown", type=Path)
    ap.add_argument("--report", type=Path)
    ap.add_argument("--doc", type=Path, help=f"a document with the matrix between {BEGIN} and {END}")
    ap.add_argument("--doc-mode", choices=("update", "check"), default="update",
                    help="update: rewrite the doc's matrix; check: fail (exit 1) when it is not the current one")
    args = ap.parse_args()
    tables = _load_all(args.spec, "tables")
    expected = _load_all(args.expected, "expected")
    skip = {p.resolve() for p in args.expected}
    results = [json.loads(p.read_text()) for p in args.results if p.resolve() not in skip]
    verdicts = compare(tables, expected, results)
    known = json.loads(args.known.read_text())["disagreements"] if args.known else []
    stale = apply_known(verdicts, known)
    md = markdown(verdicts, stale)
    print(md)
    if args.markdown:
        args.markdown.write_text(md)
    if args.report:
        args.report.write_text(json.dumps(verdicts, indent=1, ensure_ascii=False) + "\n")
    doc_stale = args.doc is not None and not _doc(args.doc, markdown(verdicts, [], notes=False), args.doc_mode)
    bad = [v for v in verdicts if v["verdict"] in BAD]
    count = {k: sum(v["verdict"] == k for v in verdicts) for k in ("pass", "known", "n.a.")}
    print(f"interop: {count['known']} known disagreements, {count['n.a.']} not applicable, "
          f"{len(stale)} stale known entries", file=sys.stderr)
    # The closing line CI reads: a verdict per reader x table x feature; failed = not known + stale.
    print(f"interop: {count['pass']} passed, {len(bad) + len(stale)} failed", file=sys.stderr)
    sys.exit(1 if bad or stale or doc_stale else 0)


if __name__ == "__main__":
    main()
