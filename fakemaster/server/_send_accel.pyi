# The C extension's one function (see _send_accel.c).
def send_views(
    fd: int,
    buffers: list[bytes | bytearray | memoryview],
    first: int,
    skip: int,
    timeout_ms: int,
    /,
) -> int: ...
