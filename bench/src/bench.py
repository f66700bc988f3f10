"""Times pyarrow's partitioned write_dataset and PyIceberg's append on the same events.

Called by iceberg-bench: python bench.py <events.parquet> <work dir> <repeats>.
Prints one JSON object per run on stdout.
"""

import json
import os
import resource
import shutil
import sys
import time

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.transforms import DayTransform

src, work, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
events = pq.read_table(src)


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def du(path):
    total, files = 0, 0
    for root, _, names in os.walk(path):
        for n in names:
            total += os.path.getsize(os.path.join(root, n))
            files += n.endswith(".parquet")
    return total, files


def pyarrow_write(d):
    t = events.append_column("ts_day", pc.cast(events["ts"], pa.date32()))
    ds.write_dataset(
        t,
        d,
        format="parquet",
        partitioning=["ts_day"],
        partitioning_flavor="hive",
        file_options=ds.ParquetFileFormat().make_write_options(compression="zstd"),
        existing_data_behavior="overwrite_or_ignore",
    )


def pyiceberg_setup(d):
    os.makedirs(d, exist_ok=True)
    catalog = SqlCatalog("bench", uri=f"sqlite:///{d}/catalog.db", warehouse=f"file://{d}")
    catalog.create_namespace("bench")
    tbl = catalog.create_table("bench.events", schema=events.schema)
    with tbl.update_spec() as u:
        u.add_field("ts", DayTransform(), "ts_day")
    return catalog.load_table("bench.events")


for rep in range(repeats):
    for name in ("pyarrow write_dataset", "pyiceberg append"):
        d = os.path.join(work, f"py-rep{rep}-{name.split()[0]}")
        shutil.rmtree(d, ignore_errors=True)
        tbl = pyiceberg_setup(d) if name.startswith("pyiceberg") else None
        c0, t0 = cpu(), time.perf_counter()
        if tbl is None:
            pyarrow_write(d)
        else:
            tbl.append(events)
        wall = time.perf_counter() - t0
        c1 = cpu()
        size, files = du(d)
        print(
            json.dumps(
                {
                    "name": name,
                    "rep": rep,
                    "wall": wall,
                    "cpu": (c1 - c0) / wall,
                    "bytes": size,
                    "files": files,
                    "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                }
            ),
            flush=True,
        )
        shutil.rmtree(d, ignore_errors=True)
