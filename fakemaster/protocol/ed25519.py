"""MariaDB's ``client_ed25519`` authentication: the client signs the server's 32-byte scramble
with an Ed25519 key derived from the password.

MariaDB (plugin/auth_ed25519, ``crypto_sign``) uses the password where RFC 8032 uses the
32-byte secret seed: ``h = SHA-512(password)``, the scalar is ``h[:32]`` clamped, the nonce
``SHA-512(h[32:] + message)``. With a 32-byte password this is RFC 8032's Ed25519 exactly
(tests/fakemaster/protocol/test_ed25519.py checks it against the ``cryptography`` package and
the login against a real MariaDB 10.11). Pure Python: one signature per login, a few
milliseconds.
"""

from __future__ import annotations

import hashlib

__all__ = ["ED25519_PLUGIN", "ed25519_public_key", "ed25519_response"]

ED25519_PLUGIN = "client_ed25519"

_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493
_D = -121665 * pow(121666, _P - 2, _P) % _P
_BASE_Y = 4 * pow(5, _P - 2, _P) % _P

Point = tuple[int, int, int, int]  # extended coordinates (X, Y, Z, T), x = X/Z, y = Y/Z


def _recover_x(y: int, sign: int) -> int:
    xx = (y * y - 1) * pow(_D * y * y + 1, _P - 2, _P)
    x = pow(xx, (_P + 3) // 8, _P)
    if (x * x - xx) % _P:
        x = x * pow(2, (_P - 1) // 4, _P) % _P
    if x & 1 != sign:
        x = _P - x
    return x


_BASE_X = _recover_x(_BASE_Y, 0)
_BASE: Point = (_BASE_X, _BASE_Y, 1, _BASE_X * _BASE_Y % _P)


def _add(a: Point, b: Point) -> Point:
    x1, y1, z1, t1 = a
    x2, y2, z2, t2 = b
    pa = (y1 - x1) * (y2 - x2) % _P
    pb = (y1 + x1) * (y2 + x2) % _P
    pc = t1 * 2 * _D * t2 % _P
    pd = z1 * 2 * z2 % _P
    e, f, g, h = pb - pa, pd - pc, pd + pc, pb + pa
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _multiply(scalar: int, point: Point) -> Point:
    result: Point = (0, 1, 1, 0)
    while scalar:
        if scalar & 1:
            result = _add(result, point)
        point = _add(point, point)
        scalar >>= 1
    return result


def _encode(point: Point) -> bytes:
    x, y, z, _ = point
    inverse = pow(z, _P - 2, _P)
    x, y = x * inverse % _P, y * inverse % _P
    return (y | (x & 1) << 255).to_bytes(32, "little")


def _sha512_int(*parts: bytes) -> int:
    return int.from_bytes(hashlib.sha512(b"".join(parts)).digest(), "little")


def _secret(password: bytes) -> tuple[int, bytes]:
    digest = hashlib.sha512(password).digest()
    scalar = int.from_bytes(digest[:32], "little")
    scalar &= (1 << 254) - 8
    scalar |= 1 << 254
    return scalar, digest[32:]


def ed25519_public_key(password: str | bytes) -> bytes:
    """The 32-byte public key of ``password`` (what ``PASSWORD()`` of an ed25519 account
    stores, base64-encoded without padding)."""
    secret = password.encode() if isinstance(password, str) else password
    scalar, _ = _secret(secret)
    return _encode(_multiply(scalar, _BASE))


def ed25519_response(password: str | bytes, scramble: bytes) -> bytes:
    """The 64-byte signature of ``scramble`` a client sends for ``client_ed25519``."""
    secret = password.encode() if isinstance(password, str) else password
    scalar, prefix = _secret(secret)
    public = _encode(_multiply(scalar, _BASE))
    nonce = _sha512_int(prefix, scramble) % _L
    commitment = _encode(_multiply(nonce, _BASE))
    challenge = _sha512_int(commitment, public, scramble) % _L
    return commitment + ((nonce + challenge * scalar) % _L).to_bytes(32, "little")
