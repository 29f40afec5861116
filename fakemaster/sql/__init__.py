"""The SQL a fake primary answers: the statement table, its answers and the tables they read."""
