"""Unit checks of the canonical forms (python -m unittest interop/test_canon.py; stdlib only)."""

import datetime as dt
import sys
import unittest
import uuid
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from canon import canon, native  # noqa: E402
from stats import decode_bound  # noqa: E402

UTC = dt.timezone.utc
CASES = [  # (type, reader value, canonical)
    ("long", 5, 5),
    ("float", 1.100000023841858, 1.100000023841858),
    ("double", float("nan"), "NaN"),
    ("double", -0.0, "-0.0"),
    ("double", "-Infinity", "-Infinity"),
    ("decimal(10,2)", Decimal("1.5"), "1.50"),
    ("decimal(10,2)", "-7.25", "-7.25"),
    ("date", 0, "1970-01-01"),
    ("date", dt.date(1969, 12, 31), "1969-12-31"),
    ("time", dt.time(12, 0, 0, 123456), "12:00:00.123456"),
    ("time", "12:00", "12:00:00.000000"),
    ("time", 1, "00:00:00.000001"),
    ("timestamp", dt.datetime(2024, 2, 29, 1, 2, 3, 4), "2024-02-29T01:02:03.000004"),
    ("timestamp", -1, "1969-12-31T23:59:59.999999"),
    ("timestamp", "2024-02-29 01:02:03.000004000", "2024-02-29T01:02:03.000004"),
    ("timestamptz", dt.datetime(2024, 1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1))),
     "2024-01-01T00:00:00.000000+00:00"),
    ("timestamptz", "2024-01-01 00:00:00.5+00", "2024-01-01T00:00:00.500000+00:00"),
    ("timestamptz", "2024-01-01T00:00:00Z", "2024-01-01T00:00:00.000000+00:00"),
    ("timestamp_ns", "2024-01-01T00:00:00.123456789", "2024-01-01T00:00:00.123456789"),
    ("timestamp_ns", 1, "1970-01-01T00:00:00.000000001"),
    ("uuid", uuid.UUID(int=1).bytes, "00000000-0000-0000-0000-000000000001"),
    ("binary", b"\x00\xff", "00ff"),
    ("fixed[2]", "00FF", "00ff"),
    ({"type": "map", "key": "string", "value": "long"}, {"b": 2, "a": None}, [["a", None], ["b", 2]]),
    ({"type": "map", "key": "string", "value": "long"}, [("b", 2)], [["b", 2]]),
    ({"type": "struct", "fields": [{"name": "x", "type": "int"}]}, None, None),
    ({"type": "list", "element": "double"}, [1.0, float("nan")], [1.0, "NaN"]),
]


class CanonTest(unittest.TestCase):
    def test_cases_and_idempotence(self):
        for typ, value, expected in CASES:
            with self.subTest(typ=typ, value=value):
                self.assertEqual(canon(value, typ), expected)
                self.assertEqual(canon(expected, typ), expected)

    def test_native(self):
        self.assertEqual(native("2024-01-01T00:00:00.000000+00:00", "timestamptz"), dt.datetime(2024, 1, 1, tzinfo=UTC))
        self.assertEqual(native(0, "timestamp"), dt.datetime(1970, 1, 1))
        self.assertEqual(native("0.5", "decimal(4,2)"), Decimal("0.50"))

    def test_bounds(self):
        self.assertEqual(canon(decode_bound(b"\xed\x03\x00\x00", "int"), "int"), 1005)
        self.assertEqual(canon(decode_bound(b"\x03\xed", "decimal(10,2)"), "decimal(10,2)"), "10.05")
        self.assertEqual(canon(decode_bound(b"\xff\xff\xff\xff", "date"), "date"), "1969-12-31")
        self.assertEqual(canon(decode_bound(b"\xcd\xcc\x8c\x3f", "float"), "float"), 1.100000023841858)
        self.assertEqual(canon(decode_bound(b"\x07\x00\x00\x00", "long"), "long"), 7)  # promoted int


if __name__ == "__main__":
    unittest.main()
