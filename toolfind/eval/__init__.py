"""Ranking quality: labelled queries, evaluation and field-weight tuning."""
