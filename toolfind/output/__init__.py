"""Output: every JSON shape and its encoding, and the tables printed for a person."""
