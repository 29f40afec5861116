"""fakemaster: a fake MariaDB primary for testing replica clients and CDC pipelines."""

__version__ = "0.1.0"
