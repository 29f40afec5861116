"""The statements' answers, one job a module."""
