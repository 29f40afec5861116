"""Harnesses for real peer software (a real MariaDB server, ...) used by tests."""
