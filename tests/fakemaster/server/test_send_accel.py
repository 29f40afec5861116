"""The C write loop's own contract (fakemaster/server/_send_accel.c); SocketWriter's tests run
with it and with the loop in Python (test_sender.py)."""

from __future__ import annotations

import pytest

from tests.fakemaster.server.test_sender import _needs_the_extension, small_socket_pair


def test_the_loop_returns_after_a_wait_without_room() -> None:
    """No room for timeout_ms: the loop returns what it wrote, and the writer looks at its stop
    flag before it calls again; arguments out of range are errors, not reads past a buffer."""
    _needs_the_extension()
    from fakemaster.server._send_accel import send_views

    left, right = small_socket_pair()
    data = b"x" * (1 << 20)
    written = send_views(left.fileno(), [b"ab", data], 0, 1, 20)
    assert 0 < written < len(data)
    assert right.recv(1) == b"b"  # the first buffer from byte `skip`
    with pytest.raises(ValueError, match="skip past the first buffer"):
        send_views(left.fileno(), [b"ab"], 0, 3, 20)
    with pytest.raises(ValueError, match="out of range"):
        send_views(left.fileno(), [b"ab"], 2, 0, 20)
    with pytest.raises(TypeError):
        send_views(left.fileno(), [b"ab", 5], 0, 0, 20)
    assert send_views(left.fileno(), [b"ab"], 1, 0, 20) == 0
    left.close()
    right.close()
