"""The statements' answers, one job a module."""

__all__: list[str] = []
