# The C extension's one function (see _framing_accel.c).
def frame_small(
    data: bytes | bytearray | memoryview,
    index: int,
    seq: int,
    skip: int,
    skip_annotate: int,
    large: int,
    layout: tuple[int, int, int],
    /,
) -> tuple[bytes, int, int, int, int]: ...
