"""In-process tests: the modules called directly, no process spawned."""
