# The C extension's one function (see _facts_accel.c and served_facts._pass_untelling_in_python).
def pass_untelling(
    data: bytes | bytearray | memoryview,
    pos: int,
    largest: int,
    foreign_from: int | None,
    telling: bytes,
    table_map: int,
    table_maps: dict[bytes, tuple[str | None, str, str]] | None,
    row_metadata: str | None,
    body_start: int,
    crc_len: int,
    layout: tuple[int, int, int, int],
    /,
) -> tuple[int, int]: ...
