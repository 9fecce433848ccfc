"""Reading a run file (``truewatt-run.sqlite``, docs/runfile.md) into pandas DataFrames.

The file is plain SQLite; this module reads it with Python's ``sqlite3``
(read-only) and pandas. Times are the file's integer nanoseconds on the
run's timeline (``*_ns``), with ``*_s`` columns in seconds beside them.

>>> import truewatt
>>> run = truewatt.read_run("truewatt-run.sqlite")                  # doctest: +SKIP
>>> run.activities.groupby("name").duration_s.sum().nlargest(5)     # doctest: +SKIP
>>> p = run.reading("power_buffer_w")                               # doctest: +SKIP
>>> p.plot(x="t_s", y="value")                                      # doctest: +SKIP
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Union

from ._lib import EPARSE, ENOTFOUND, EUNSUPPORTED, Error

if TYPE_CHECKING:  # pandas is optional: imported when a run file is read
    import pandas

__all__ = ["Run", "read_run", "SCHEMA_VERSION"]

SCHEMA_VERSION = 2  # the schema docs/runfile.md describes

# each frame: its query on the file's tables and views, and its ns columns
_FRAMES = {
    "devices": ("SELECT * FROM devices ORDER BY idx", ()),
    "readings": ("SELECT * FROM readings ORDER BY id", ()),
    "samples": (
        "SELECT reading, device, t_ns, value, value_t_ns FROM samples_named ORDER BY t_ns",
        ("t_ns", "value_t_ns"),
    ),
    "activities": ("SELECT * FROM activities_named ORDER BY start_ns", ("start_ns", "end_ns")),
    "nvtx": ("SELECT * FROM nvtx_named ORDER BY start_ns", ("start_ns", "end_ns")),
    "reports": ("SELECT id, created_utc, truewatt_version, options, json FROM reports ORDER BY id", ()),
}


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as e:
        raise ImportError(
            "truewatt.read_run needs pandas, which is not installed: pip install pandas "
            "(or read the file with sqlite3: docs/runfile.md)"
        ) from e
    return pandas


@dataclass
class Run:
    """A run file's tables as DataFrames.

    ``meta`` is a dict (key -> value); ``devices``, ``readings``, ``samples``
    (each update of each reading, with its name), ``activities`` (kernels,
    copies, memsets, names resolved, with ``start_s``, ``end_s`` and
    ``duration_s``), ``nvtx`` (the NVTX ranges, likewise) and ``reports``
    are DataFrames.
    """

    path: str
    meta: Dict[str, Any]
    devices: "pandas.DataFrame"
    readings: "pandas.DataFrame"
    samples: "pandas.DataFrame"
    activities: "pandas.DataFrame"
    nvtx: "pandas.DataFrame"
    reports: "pandas.DataFrame"

    def reading(self, name: str) -> "pandas.DataFrame":
        """One reading's updates (``t_s``, ``value``, its own time ``value_t_s``)."""
        if name not in set(self.readings["name"]):
            raise KeyError(f"{self.path}: no reading {name!r}; it has {', '.join(self.readings['name'])}")
        s = self.samples[self.samples["reading"] == name]
        return s[["t_s", "value", "value_t_s"]].reset_index(drop=True)


def _add_seconds(df: "pandas.DataFrame", ns_cols: tuple) -> "pandas.DataFrame":
    for c in ns_cols:
        df[c[:-3] + "_s"] = df[c] / 1e9
    if "start_ns" in df and "end_ns" in df:
        df["duration_s"] = (df["end_ns"] - df["start_ns"]) / 1e9
    return df


def read_run(path: Union[str, "os.PathLike[str]"]) -> Run:
    """Reads the run file at ``path`` (read-only; a run still being recorded is
    read as of its last commit). Raises :class:`truewatt.Error` when the file
    is not a run file or has another schema version, ImportError without pandas.
    """
    pd = _pandas()
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise Error(ENOTFOUND, "not found", f"{path}: no such file", "read_run")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        try:
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as e:
            raise Error(EPARSE, "malformed input", f"{path}: not a truewatt run file ({e})", "read_run") from e
        version = meta.get("schema_version")
        if str(version) != str(SCHEMA_VERSION):
            raise Error(
                EUNSUPPORTED,
                "not supported",
                f"{path}: run file schema_version {version}, this truewatt reads {SCHEMA_VERSION}",
                "read_run",
            )
        frames = {k: _add_seconds(pd.read_sql_query(q, db), ns) for k, (q, ns) in _FRAMES.items()}
    finally:
        db.close()
    return Run(path=path, meta=meta, **frames)
