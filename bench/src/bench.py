"""One run of a Python writer of the write matrix (called by iceberg-bench).

python bench.py <pyarrow|pyiceberg> <unpartitioned|day|bucket> <events.arrow> <out dir>

The input is read before timing. Every writer compresses with zstd at level 3 (Java's level
and ours; pyarrow and PyIceberg default to 1). Partition values pyarrow cannot compute itself
(the day, the Iceberg bucket) are added as a column before timing. Prints one JSON line:
{"wall_s", "cpu_s", "rss_before_bytes", "peak_rss_bytes", "bytes", "files", "rows"}.
"""

import json
import os
import resource
import sys
import time

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

writer, layout, src, out = sys.argv[1:5]
events = ipc.open_file(src).read_all()
LEVEL = 3


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    return 0


def du(path):
    total, files = 0, 0
    for root, _, names in os.walk(path):
        for n in names:
            total += os.path.getsize(os.path.join(root, n))
            files += n.endswith(".parquet")
    return total, files


def with_partition_column():
    """The events with the partition value as a column, for pyarrow (not timed)."""
    if layout == "day":
        return events.append_column("ts_day", pc.cast(events["ts"], pa.date32())), ["ts_day"]
    if layout == "bucket":
        from pyiceberg.transforms import BucketTransform
        from pyiceberg.types import LongType

        bucket = BucketTransform(1000).pyarrow_transform(LongType())(events["user_id"])
        return events.append_column("user_id_bucket", bucket), ["user_id_bucket"]
    return events, []


def pyarrow_run():
    table, partitioning = with_partition_column()

    def write():
        if not partitioning:
            pq.write_table(
                table, os.path.join(out, "part-0.parquet"), compression="zstd", compression_level=LEVEL
            )
            return
        ds.write_dataset(
            table,
            out,
            format="parquet",
            partitioning=partitioning,
            partitioning_flavor="hive",
            file_options=ds.ParquetFileFormat().make_write_options(
                compression="zstd", compression_level=LEVEL
            ),
            existing_data_behavior="overwrite_or_ignore",
            max_partitions=2048,
        )

    return write


def pyiceberg_run():
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.transforms import BucketTransform, DayTransform

    catalog = SqlCatalog("bench", uri=f"sqlite:///{out}/catalog.db", warehouse=f"file://{out}")
    catalog.create_namespace("bench")
    tbl = catalog.create_table(
        "bench.events",
        schema=events.schema,
        properties={"write.parquet.compression-codec": "zstd", "write.parquet.compression-level": str(LEVEL)},
    )
    with tbl.update_spec() as u:
        if layout == "day":
            u.add_field("ts", DayTransform(), "ts_day")
        elif layout == "bucket":
            u.add_field("user_id", BucketTransform(1000), "user_id_bucket")
    tbl = catalog.load_table("bench.events")
    return lambda: tbl.append(events)


os.makedirs(out, exist_ok=True)
run = pyarrow_run() if writer == "pyarrow" else pyiceberg_run()
rss_before = status("VmRSS:")
try:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
except OSError:
    pass
c0, t0 = cpu(), time.perf_counter()
run()
wall = time.perf_counter() - t0
c1 = cpu()
size, files = du(out)
print(
    json.dumps(
        {
            "wall_s": wall,
            "cpu_s": c1 - c0,
            "rss_before_bytes": rss_before,
            "peak_rss_bytes": status("VmHWM:"),
            "bytes": size,
            "files": files,
            "rows": events.num_rows,
        }
    ),
    flush=True,
)
