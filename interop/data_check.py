"""Holds a file's stats from the manifests against what its data says (readers/data_files_reader).

Exact for record_count, file_size_in_bytes, split_offsets, column_sizes and the counts (on the
fields the data side computes); for bounds, lower <= min and upper >= max under Iceberg's
ordering, with equality where Iceberg never truncates (every type but string and binary), and a
bound on a field without a single non-null, non-NaN value is wrong.
"""

from canon import dumps, order_key
from table_meta import TableMeta

EXACT = ("record_count", "file_size_in_bytes", "split_offsets")
COUNTS = ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts")
TRUNCATABLE = ("string", "binary")


def _bounds(exp: dict, data: dict, meta: TableMeta, lower: bool) -> list[str]:
    bad = []
    for fid, bound in exp.items():
        t = meta.types_by_id.get(int(fid))
        if t is None or isinstance(t, dict):
            continue
        if fid not in data:
            bad.append(f"{'lower' if lower else 'upper'} bound {fid} = {dumps(bound)} but no value in the data")
            continue
        b, v = order_key(bound, t), order_key(data[fid], t)
        ok = (b <= v if lower else b >= v) if t in TRUNCATABLE else b == v
        if not ok:
            bad.append(f"{'lower' if lower else 'upper'} bound {fid} = {dumps(bound)[:80]}, data "
                       f"{'min' if lower else 'max'} {dumps(data[fid])[:80]}")
    return bad


def check_file(exp: dict, data: dict, meta: TableMeta) -> list[str]:
    """Every disagreement between one file's expected stats and its data view."""
    bad = [f"{k} = {dumps(data[k])}, manifest {dumps(exp[k])}" for k in EXACT
           if k in exp and k in data and dumps(exp[k]) != dumps(data[k])]
    for k in COUNTS:
        e, d = exp.get(k) or {}, data.get(k) or {}
        bad += [f"{k}[{fid}] = {d[fid]}, manifest {e[fid]}" for fid in sorted(e.keys() & d.keys(), key=int)
                if e[fid] != d[fid]]
    if "lower_bounds" not in data:  # a file the data side cannot decode (a deletion vector's Puffin)
        return bad
    bad += _bounds(exp.get("lower_bounds") or {}, data.get("lower_bounds") or {}, meta, True)
    bad += _bounds(exp.get("upper_bounds") or {}, data.get("upper_bounds") or {}, meta, False)
    return bad


def compare_files(exp: list, got: list, meta: TableMeta) -> str | None:
    e, g = {x["path"]: x for x in exp}, {x["path"]: x for x in got}
    notes = []
    if e.keys() != g.keys():
        notes.append(f"paths differ: {sorted(e.keys() ^ g.keys())[:3]}")
    for p in sorted(e.keys() & g.keys()):
        notes += [f"{p}: {n}" for n in check_file(e[p], g[p], meta)]
    if not notes:
        return None
    return "; ".join(notes[:4]) + (f" (+{len(notes) - 4} more)" if len(notes) > 4 else "")
