"""The pure core: text analysis, the BM25F formulas, impact tiers and search. No I/O."""
