"""Canonical JSON values for Iceberg types (see FORMAT.md).

`canon(value, type)` turns whatever a reader hands back (Python objects from Arrow, Java's JSON,
or an already canonical value) into the canonical form; it is idempotent, so expected results
may be re-canonicalised before comparing. `native(value, type)` turns a filter literal into a
plain Python object (datetime, Decimal, UUID, bytes) for the readers' expression builders.
Types are those of metadata.json: a string ("long", "decimal(9,2)", "fixed[4]") or a dict
(struct / list / map).
"""

import datetime as dt
import json
import math
import re
import uuid
from decimal import Context, Decimal, localcontext
from typing import Any

EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)
UTC = dt.timezone.utc


def canon(v: Any, t: Any) -> Any:
    if v is None:
        return None
    if isinstance(t, dict):
        return _canon_nested(v, t)
    if t in ("int", "long"):
        return int(v)
    if t == "boolean":
        return bool(v)
    if t in ("float", "double"):
        return _canon_float(v)
    if t == "string":
        return str(v)
    if t.startswith("decimal"):
        scale = int(re.fullmatch(r"decimal\(\s*\d+\s*,\s*(\d+)\s*\)", t).group(1))
        # decimal(38, S) needs more digits than the default context's 28.
        with localcontext(Context(prec=80)):
            return str(Decimal(str(v)).quantize(Decimal(1).scaleb(-scale)))
    if t == "date":
        return _date(v).isoformat()
    if t == "time":
        return _time_micros_iso(_time_micros(v))
    if t in ("timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"):
        return _ts_iso(_ts_units(v, t), t)
    if t == "uuid":
        return str(_uuid(v))
    if t == "binary" or t.startswith("fixed"):
        return _hex(v)
    raise ValueError(f"unsupported type {t!r}")


def _canon_nested(v: Any, t: dict) -> Any:
    if t["type"] == "struct":
        if not isinstance(v, dict):  # a tuple/list in field order
            v = {f["name"]: x for f, x in zip(t["fields"], v)}
        return {f["name"]: canon(v.get(f["name"]), f["type"]) for f in t["fields"]}
    if t["type"] == "list":
        return [canon(x, t["element"]) for x in v]
    if t["type"] == "map":
        pairs = v.items() if isinstance(v, dict) else v
        out = []
        for p in pairs:
            k, x = (p["key"], p["value"]) if isinstance(p, dict) else p
            out.append([canon(k, t["key"]), canon(x, t["value"])])
        return sorted(out, key=dumps)
    raise ValueError(f"unsupported type {t!r}")


def _canon_float(v: Any) -> Any:
    if isinstance(v, str):
        v = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(v, v)
    f = float(v)
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    if f == 0 and math.copysign(1, f) < 0:
        return "-0.0"
    return f


def _date(v: Any) -> dt.date:
    if isinstance(v, dt.datetime):
        return v.date()
    if isinstance(v, dt.date):
        return v
    if isinstance(v, int):
        return EPOCH_DATE + dt.timedelta(days=v)
    return dt.date.fromisoformat(str(v)[:10])


def _time_micros(v: Any) -> int:
    if isinstance(v, int):
        return v
    if isinstance(v, dt.timedelta):
        return v // dt.timedelta(microseconds=1)
    if isinstance(v, str):
        v = dt.time.fromisoformat(v[:15])
    return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond


def _time_micros_iso(us: int) -> str:
    s, us = divmod(us, 1_000_000)
    return f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}.{us:06d}"


def _ts_units(v: Any, t: str) -> int:
    """Micros (or nanos for *_ns) since the epoch, UTC for tz types."""
    per_sec = 1_000_000_000 if t.endswith("_ns") else 1_000_000
    if isinstance(v, int):
        return v
    frac = 0
    if isinstance(v, str):  # ISO, up to 9 fractional digits, optional Z / offset
        m = re.fullmatch(r"(.{19})(?:\.(\d{1,9}))?(Z|[+-]\d\d(?::?\d\d)?)?", v.strip().replace(" ", "T"))
        if not m:
            raise ValueError(f"bad timestamp {v!r}")
        base, digits, tz = m.groups()
        frac = int((digits or "").ljust(9, "0")) * per_sec // 1_000_000_000
        tz = "+00:00" if tz == "Z" else tz + ":00" if tz and len(tz) == 3 else tz or ""
        v = dt.datetime.fromisoformat(base + tz)
    elif hasattr(v, "to_pydatetime"):  # pandas-like: `value` is nanos since the epoch, UTC
        return v.value if per_sec > 1_000_000 else v.value // 1000
    else:
        frac = v.microsecond * (per_sec // 1_000_000)
        v = v.replace(microsecond=0)
    if v.tzinfo is not None:
        v = v.astimezone(UTC).replace(tzinfo=None)
    return (v - EPOCH) // dt.timedelta(seconds=1) * per_sec + frac


def _ts_iso(units: int, t: str) -> str:
    per_sec = 1_000_000_000 if t.endswith("_ns") else 1_000_000
    secs, frac = divmod(units, per_sec)
    text = (EPOCH + dt.timedelta(seconds=secs)).isoformat(timespec="seconds")
    text += f".{frac:0{len(str(per_sec)) - 1}d}"
    return text + ("+00:00" if t.startswith("timestamptz") else "")


def _uuid(v: Any) -> uuid.UUID:
    if isinstance(v, uuid.UUID):
        return v
    if isinstance(v, (bytes, bytearray, memoryview)):
        return uuid.UUID(bytes=bytes(v))
    return uuid.UUID(str(v))


def _hex(v: Any) -> str:
    if isinstance(v, str):
        return v.lower()
    return bytes(v).hex()


def native(v: Any, t: Any) -> Any:
    """A filter literal as a Python object of the column's type."""
    if v is None or isinstance(t, dict):
        return v
    if t in ("float", "double"):
        c = _canon_float(v)
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf, "-0.0": -0.0}.get(c, c) \
            if isinstance(c, str) else c
    if t.startswith("decimal"):
        return Decimal(canon(v, t))
    if t == "date":
        return _date(v)
    if t == "time":
        return dt.time.fromisoformat(canon(v, t))
    if t.startswith("timestamp"):
        micros = _ts_units(v, t) // (1000 if t.endswith("_ns") else 1)
        naive = EPOCH + dt.timedelta(microseconds=micros)
        return naive.replace(tzinfo=UTC) if t.startswith("timestamptz") else naive
    if t == "uuid":
        return _uuid(v)
    if t == "binary" or t.startswith("fixed"):
        return bytes.fromhex(v) if isinstance(v, str) else bytes(v)
    return canon(v, t)


def unscaled(n: int, scale: int) -> Decimal:
    """The decimal n * 10^-scale, exactly (Decimal.scaleb would round to 28 digits)."""
    return Decimal(n).scaleb(-scale, Context(prec=80))


def dumps(v: Any) -> str:
    """The canonical text of a JSON value: sorted keys, no spaces (used for sorting)."""
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canon_row(row: dict, fields: list[dict]) -> dict:
    return {f["name"]: canon(row.get(f["name"]), f["type"]) for f in fields}


def sort_rows(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=dumps)


def arrow_rows(table: Any) -> list[dict]:
    """Rows of a pyarrow Table, nanosecond timestamps as integer nanos (Python datetimes
    cannot hold them, and without pandas pyarrow refuses to convert them at all)."""
    import pyarrow as pa

    for i, field in enumerate(table.schema):
        if pa.types.is_timestamp(field.type) and field.type.unit == "ns":
            table = table.set_column(i, field.name, table.column(i).cast(pa.int64()))
    return table.to_pylist()


def order_key(v: Any, t: Any) -> Any:
    """A sort key for a canonical value under Iceberg's ordering of the type: numbers and
    temporals by value, strings by UTF-8 bytes (= code points), binary, fixed and uuid by
    unsigned bytes. NaN has no place in it (bounds leave NaN out)."""
    if t in ("int", "long", "boolean"):
        return int(v)
    if t in ("float", "double"):
        return float({"-0.0": -0.0, "Infinity": math.inf, "-Infinity": -math.inf}.get(v, v))
    if t.startswith("decimal"):
        return Decimal(v)
    if t == "date":
        return _date(v).toordinal()
    if t == "time":
        return _time_micros(v)
    if t.startswith("timestamp"):
        return _ts_units(v, t)
    if t == "string":
        return v.encode("utf-8")
    if t == "uuid":
        return _uuid(v).bytes
    return bytes.fromhex(v)  # binary, fixed
