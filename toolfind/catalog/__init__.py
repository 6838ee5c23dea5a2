"""Catalog I/O: find catalog files, parse them, check their entries, read them into tools."""
