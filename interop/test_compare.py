"""Unit checks of the verdict machinery: the known-disagreement list, the data check of bounds,
the filter evaluator and Iceberg ordering (python -m unittest interop/test_compare.py; stdlib
only)."""

import sys
import unittest
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import data_check  # noqa: E402
from canon import order_key, unscaled  # noqa: E402
from compare import apply_known  # noqa: E402
from filters import evaluate  # noqa: E402
from table_meta import TableMeta  # noqa: E402


def verdict(reader, table, feature, v):
    return {"reader": reader, "table": table, "feature": feature, "verdict": v, "note": "n"}


def meta(fields):
    types = {f["id"]: f["type"] for f in fields}
    return TableMeta("/m.json", "/t", 2, fields, types, {0: []})


class KnownList(unittest.TestCase):
    def test_listed_disagreement_becomes_known(self):
        vs = [verdict("java", "t", "scan", "error"), verdict("java", "t", "stats", "pass")]
        stale = apply_known(vs, [{"reader": "java", "table": "t", "feature": "scan", "reason": "why"}])
        self.assertEqual(stale, [])
        self.assertEqual((vs[0]["verdict"], vs[0]["was"]), ("known", "error"))
        self.assertTrue(vs[0]["note"].startswith("why"))

    def test_entry_that_passes_now_is_stale(self):
        vs = [verdict("java", "t", "scan", "pass")]
        stale = apply_known(vs, [{"reader": "java", "table": "t", "feature": "scan", "reason": "r"}])
        self.assertEqual(len(stale), 1)
        self.assertIn("pass", stale[0])

    def test_entry_for_a_missing_table_is_stale_but_other_readers_are_ignored(self):
        vs = [verdict("java", "t", "scan", "fail")]
        known = [{"reader": "java", "tables": ["t", "gone"], "features": ["scan"], "reason": "r"},
                 {"reader": "duckdb", "table": "t", "feature": "scan", "reason": "not run"}]
        stale = apply_known(vs, known)
        self.assertEqual(stale, ["java / gone / scan: no such table in this run"])
        self.assertEqual(vs[0]["verdict"], "known")


class DataCheck(unittest.TestCase):
    M = meta([{"id": 1, "name": "id", "type": "long", "required": True},
              {"id": 2, "name": "s", "type": "string", "required": False}])
    DATA = {"path": "f", "record_count": 3, "null_value_counts": {"1": 0, "2": 1},
            "lower_bounds": {"1": 1, "2": "abcdef"}, "upper_bounds": {"1": 9, "2": "abd"}}

    def test_truncated_string_bounds_pass(self):
        exp = {"path": "f", "record_count": 3, "null_value_counts": {"1": 0, "2": 1},
               "lower_bounds": {"1": 1, "2": "abc"}, "upper_bounds": {"1": 9, "2": "abe"}}
        self.assertEqual(data_check.check_file(exp, self.DATA, self.M), [])

    def test_bounds_that_do_not_bound_the_data_fail(self):
        exp = {"path": "f", "record_count": 4, "null_value_counts": {"1": 0, "2": 0},
               "lower_bounds": {"1": 2, "2": "abd"}, "upper_bounds": {"1": 9, "2": "abc"}}
        bad = data_check.check_file(exp, self.DATA, self.M)
        self.assertEqual(len(bad), 5, bad)  # record_count, a null count, lower 1 (not exact), both string bounds

    def test_a_bound_without_data_fails(self):
        exp = {"path": "f", "lower_bounds": {"2": "a"}}
        data = {"path": "f", "lower_bounds": {}}
        self.assertEqual(len(data_check.check_file(exp, data, self.M)), 1)

    def test_a_deletion_vector_is_held_to_its_size_only(self):
        # a Puffin file: the data side has its size and no bounds (the DV's file_path bounds)
        exp = {"path": "f.puffin", "file_size_in_bytes": 10, "lower_bounds": {"2147483546": "data/x"}}
        self.assertEqual(data_check.check_file(exp, {"path": "f.puffin", "file_size_in_bytes": 10}, self.M), [])
        self.assertEqual(len(data_check.check_file(exp, {"path": "f.puffin", "file_size_in_bytes": 9}, self.M)), 1)


class Evaluate(unittest.TestCase):
    M = meta([{"id": 1, "name": "id", "type": "long", "required": False},
              {"id": 2, "name": "d", "type": "double", "required": False},
              {"id": 3, "name": "ts", "type": "timestamp", "required": False}])

    def test_iceberg_row_semantics(self):
        row = {"id": None, "d": "NaN", "ts": "2024-01-02T00:00:00.000000"}
        self.assertFalse(evaluate({"op": "<", "col": "id", "value": 3}, row, self.M))
        self.assertTrue(evaluate({"op": "!=", "col": "id", "value": 3}, row, self.M))
        self.assertTrue(evaluate({"op": "not_in", "col": "id", "values": [3]}, row, self.M))
        self.assertTrue(evaluate({"op": "is_nan", "col": "d"}, row, self.M))
        self.assertFalse(evaluate({"op": ">", "col": "d", "value": 1.0}, row, self.M))
        self.assertTrue(evaluate({"op": ">=", "col": "ts", "value": 1704153600000000}, row, self.M))
        self.assertTrue(evaluate({"op": "or", "args": [{"op": "is_null", "col": "id"},
                                                       {"op": "=", "col": "id", "value": 1}]}, row, self.M))


class Ordering(unittest.TestCase):
    def test_strings_by_code_point_binary_unsigned(self):
        self.assertLess(order_key("\uffff", "string"), order_key("\U0001f642", "string"))
        self.assertLess(order_key("7f", "binary"), order_key("80", "binary"))

    def test_unscaled_is_exact_beyond_28_digits(self):
        n = 10**38 - 1
        self.assertEqual(unscaled(n, 10), Decimal("9999999999999999999999999999.9999999999"))


if __name__ == "__main__":
    unittest.main()
