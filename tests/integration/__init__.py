"""Differential tests of the binlog codec against what a real MariaDB 10.11 wrote and returns."""
