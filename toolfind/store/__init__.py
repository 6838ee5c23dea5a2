"""The index and its storage: building it, its on-disk file, and the cache of built indexes."""
