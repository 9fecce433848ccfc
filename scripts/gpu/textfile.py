"""The one way the scripts under scripts/gpu open the text files a result folder keeps, plain or
gzipped: FILE, or FILE.gz where only that exists (the folders gzip their CSVs and JSON reports), or a
path that names the .gz itself."""
import csv
import gzip
import os
import sys


def open_text(path):
    """path opened as text (newline="" for the csv module), or path.gz where only that exists, or path
    itself gunzipped where it ends in .gz; None where neither exists"""
    if os.path.exists(path):
        return gzip.open(path, "rt", newline="") if path.endswith(".gz") else open(path, newline="")
    if os.path.exists(path + ".gz"):
        return gzip.open(path + ".gz", "rt", newline="")
    return None


def csv_rows(path, prog):
    """the CSV's rows as dicts, its '#' provenance lines skipped; exits with "PROG: PATH[.gz]: no such
    file" where neither exists"""
    f = open_text(path)
    if f is None:
        sys.exit(f"{prog}: {path}[.gz]: no such file")
    with f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))
