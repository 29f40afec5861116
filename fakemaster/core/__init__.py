"""The sans-IO core of the fake primary: pure code over bytes.

No module here touches a socket, a thread, a process or the event loop (tests/test_layering.py)."""

__all__: list[str] = []
