"""Values as the text MariaDB's text protocol returns for them (``SELECT`` with
``time_zone = '+00:00'``), the canonical cells of the oracle's exports.

Number formatting follows the server (``strings/dtoa.c`` ``my_gcvt``/``my_fcvt``):

* DOUBLE: the shortest digits that read back as the same double (dtoa mode 4, with a width of
  341, so in practice the shortest round-trip digits);
* FLOAT: the value widened to double, then at most ``FLT_DIG`` = 6 significant digits, or fewer
  when fewer read back as the same double (dtoa mode 4 with 6 digits), trailing zeros dropped;
* both use ``f`` notation when the decimal exponent is within [-14, 15] (``MAX_DECPT_FOR_F_FORMAT``
  = ``DBL_DIG``), else ``e`` notation without ``+`` or leading exponent zeros (``3.40282e38``);
* ``FLOAT(M,D)``/``DOUBLE(M,D)``: fixed notation with exactly D decimals (``my_fcvt``).

(Moved here from the test suite's ``tests/support/sql_text.py``, which imports them.)
"""

from __future__ import annotations

import math
from decimal import Decimal

__all__ = ["RenderError", "fcvt", "format_double", "format_float"]


class RenderError(ValueError):
    """A value cannot be what the column holds (wrong Python type, out of range, ...)."""


# my_gcvt: widths of the buffers the server formats into, and where 'f' notation stops.
_DOUBLE_WIDTH = 341  # String::set_real: FLOATING_POINT_BUFFER (311 + 31) - 1
_FLOAT_WIDTH = 69  # Float::to_string: 70 - 1
_FLT_DIG = 6
_MAX_DECPT_FOR_F_FORMAT = 15  # DBL_DIG


def _digits_of(text: str) -> tuple[str, int]:
    """Significant digits (no trailing zeros) and dtoa's ``decpt`` of a positive decimal text."""
    _sign, digit_tuple, exponent = Decimal(text).as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    decpt = len(digits) + exponent
    stripped = digits.rstrip("0")
    return stripped, decpt


def _dtoa_mode4(x: float, ndigits: int) -> tuple[str, int]:
    """dtoa(x, mode 4, ndigits) for a finite, non-zero, positive x: the shortest digits that
    read back as x if there are at most ``ndigits`` of them, else x correctly rounded to
    ``ndigits`` significant digits; trailing zeros dropped."""
    digits, decpt = _digits_of(repr(x))
    if len(digits) <= ndigits:
        return digits, decpt
    mantissa, _, exp = f"{x:.{ndigits - 1}e}".partition("e")
    return mantissa.replace(".", "").rstrip("0"), int(exp) + 1


def _gcvt(x: float, ndigits: int, width: int) -> str:
    """my_gcvt(x, type, width) for the widths the server uses (no digit is ever truncated)."""
    if math.isnan(x) or math.isinf(x):
        raise RenderError(f"{x!r} cannot be stored in a MariaDB FLOAT/DOUBLE column")
    if x == 0:
        return "0"  # also for -0.0 (checked against the server: a FLOAT -0.0 prints "0")
    negative = x < 0
    if negative:
        width -= 1
    digits, decpt = _dtoa_mode4(abs(x), ndigits)
    length = len(digits)
    exp_len = 1 + (decpt >= 101 or decpt <= -99) + (decpt >= 11 or decpt <= -9)
    if decpt <= 0:
        f_length = length - decpt + 2
    elif decpt < length:
        f_length = length + 1
    else:
        f_length = decpt
    have_space = f_length <= width
    force_e = decpt <= 0 and width <= 2 - decpt and width >= 3 + exp_len
    use_f = (
        have_space
        or (
            decpt <= width
            and (decpt >= -1 or (decpt == -2 and (length > 1 or not force_e)))
            and not force_e
        )
    ) and (
        not have_space
        or (
            decpt >= -_MAX_DECPT_FOR_F_FORMAT + 1
            and (decpt <= _MAX_DECPT_FOR_F_FORMAT or length > decpt)
        )
    )
    sign = "-" if negative else ""
    if use_f:
        if not have_space:
            raise RenderError(f"{x!r} needs digit truncation in my_gcvt (width {width})")
        if decpt <= 0:
            return f"{sign}0.{'0' * -decpt}{digits}"
        if decpt < length:
            return f"{sign}{digits[:decpt]}.{digits[decpt:]}"
        return f"{sign}{digits}{'0' * (decpt - length)}"
    exponent = decpt - 1
    room = width - (1 + exp_len) - (exponent < 0) - (length > 1)
    if room < length:
        raise RenderError(f"{x!r} needs digit truncation in my_gcvt (width {width})")
    mantissa = digits[0] + ("." + digits[1:] if length > 1 else "")
    return f"{sign}{mantissa}e{exponent}"


def format_double(x: float) -> str:
    """A DOUBLE as the server prints it (``String::set_real`` with no fixed decimals)."""
    return _gcvt(x, _DOUBLE_WIDTH, _DOUBLE_WIDTH)


def format_float(x: float) -> str:
    """A FLOAT (already widened to double) as the server prints it (``Float::to_string``)."""
    return _gcvt(x, min(_FLOAT_WIDTH, _FLT_DIG), _FLOAT_WIDTH)


def fcvt(x: float, decimals: int) -> str:
    """my_fcvt: fixed notation with exactly ``decimals`` fraction digits (dtoa mode 5: the
    shortest round-trip digits when they need no more fraction digits, else x correctly
    rounded), zero-padded; a result without a non-zero digit has no sign."""
    if math.isnan(x) or math.isinf(x):
        raise RenderError(f"{x!r} cannot be stored in a MariaDB FLOAT/DOUBLE column")
    if x == 0:
        text = "0"
    else:
        digits, decpt = _digits_of(repr(abs(x)))
        if len(digits) - decpt <= decimals:
            if decpt <= 0:
                text = "0." + "0" * -decpt + digits
            elif decpt < len(digits):
                text = digits[:decpt] + "." + digits[decpt:]
            else:
                text = digits + "0" * (decpt - len(digits))
        else:
            text = f"{abs(x):.{decimals}f}"
    whole, _, fraction = text.partition(".")
    text = whole + ("." + fraction.ljust(decimals, "0") if decimals > 0 else "")
    if x < 0 and text.strip("0.") != "":
        text = "-" + text
    return text
