"""The pytest plugin of fakemaster and what it builds on."""

__all__: list[str] = []
