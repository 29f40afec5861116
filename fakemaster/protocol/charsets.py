"""Character sets and collations of MariaDB 10.11 (ids as sent on the wire).

The table is the server's own ``information_schema.COLLATIONS`` / ``CHARACTER_SETS``: each
character set with its maximum bytes per character, its default collation id, and its
collations as ``id:suffix`` (the name is ``<charset>_<suffix>``; ``=name`` when the name does not
start with the character set's name).

Result-set column definitions depend on these: a text column is described in the connection's
``character_set_results`` with ``length = characters * mbmaxlen``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BINARY_COLLATION_ID",
    "CHARSET_ALIASES",
    "COLLATIONS_BY_ID",
    "COLLATIONS_BY_NAME",
    "DEFAULT_COLLATIONS",
    "MBMINLEN",
    "NON_CLIENT_CHARSETS",
    "UTF8MB3_GENERAL_CI",
    "UTF8MB4_GENERAL_CI",
    "Collation",
    "charset_default",
    "client_collation",
    "collation_by_id",
    "collation_by_name",
]

BINARY_COLLATION_ID = 63
UTF8MB3_GENERAL_CI = 33  # the system character set: metadata, system variables
UTF8MB4_GENERAL_CI = 45

# (charset, mbmaxlen, default collation id, "id:suffix ..." chunks)
_TABLE: tuple[tuple[str, int, int, tuple[str, ...]], ...] = (
    ("armscii8", 1, 32, ("32:general_ci 64:bin 1056:general_nopad_ci 1088:nopad_bin ",)),
    ("ascii", 1, 11, ("11:general_ci 65:bin 1035:general_nopad_ci 1089:nopad_bin ",)),
    ("big5", 2, 1, ("1:chinese_ci 84:bin 1025:chinese_nopad_ci 1108:nopad_bin ",)),
    ("binary", 1, 63, ("63:=binary ",)),
    (
        "cp1250",
        1,
        26,
        (
            "26:general_ci 34:czech_cs 44:croatian_ci 66:bin 99:polish_ci 1050:general_nopad_ci ",
            "1090:nopad_bin ",
        ),
    ),
    (
        "cp1251",
        1,
        51,
        (
            "14:bulgarian_ci 23:ukrainian_ci 50:bin 51:general_ci 52:general_cs 1074:nopad_bin ",
            "1075:general_nopad_ci ",
        ),
    ),
    ("cp1256", 1, 57, ("57:general_ci 67:bin 1081:general_nopad_ci 1091:nopad_bin ",)),
    (
        "cp1257",
        1,
        59,
        ("29:lithuanian_ci 58:bin 59:general_ci 1082:nopad_bin 1083:general_nopad_ci ",),
    ),
    ("cp850", 1, 4, ("4:general_ci 80:bin 1028:general_nopad_ci 1104:nopad_bin ",)),
    ("cp852", 1, 40, ("40:general_ci 81:bin 1064:general_nopad_ci 1105:nopad_bin ",)),
    ("cp866", 1, 36, ("36:general_ci 68:bin 1060:general_nopad_ci 1092:nopad_bin ",)),
    ("cp932", 2, 95, ("95:japanese_ci 96:bin 1119:japanese_nopad_ci 1120:nopad_bin ",)),
    ("dec8", 1, 3, ("3:swedish_ci 69:bin 1027:swedish_nopad_ci 1093:nopad_bin ",)),
    ("eucjpms", 3, 97, ("97:japanese_ci 98:bin 1121:japanese_nopad_ci 1122:nopad_bin ",)),
    ("euckr", 2, 19, ("19:korean_ci 85:bin 1043:korean_nopad_ci 1109:nopad_bin ",)),
    ("gb2312", 2, 24, ("24:chinese_ci 86:bin 1048:chinese_nopad_ci 1110:nopad_bin ",)),
    ("gbk", 2, 28, ("28:chinese_ci 87:bin 1052:chinese_nopad_ci 1111:nopad_bin ",)),
    ("geostd8", 1, 92, ("92:general_ci 93:bin 1116:general_nopad_ci 1117:nopad_bin ",)),
    ("greek", 1, 25, ("25:general_ci 70:bin 1049:general_nopad_ci 1094:nopad_bin ",)),
    ("hebrew", 1, 16, ("16:general_ci 71:bin 1040:general_nopad_ci 1095:nopad_bin ",)),
    ("hp8", 1, 6, ("6:english_ci 72:bin 1030:english_nopad_ci 1096:nopad_bin ",)),
    ("keybcs2", 1, 37, ("37:general_ci 73:bin 1061:general_nopad_ci 1097:nopad_bin ",)),
    ("koi8r", 1, 7, ("7:general_ci 74:bin 1031:general_nopad_ci 1098:nopad_bin ",)),
    ("koi8u", 1, 22, ("22:general_ci 75:bin 1046:general_nopad_ci 1099:nopad_bin ",)),
    (
        "latin1",
        1,
        8,
        (
            "5:german1_ci 8:swedish_ci 15:danish_ci 31:german2_ci 47:bin 48:general_ci ",
            "49:general_cs 94:spanish_ci 1032:swedish_nopad_ci 1071:nopad_bin ",
        ),
    ),
    (
        "latin2",
        1,
        9,
        (
            "2:czech_cs 9:general_ci 21:hungarian_ci 27:croatian_ci 77:bin 1033:general_nopad_ci ",
            "1101:nopad_bin ",
        ),
    ),
    ("latin5", 1, 30, ("30:turkish_ci 78:bin 1054:turkish_nopad_ci 1102:nopad_bin ",)),
    (
        "latin7",
        1,
        41,
        (
            "20:estonian_cs 41:general_ci 42:general_cs 79:bin 1065:general_nopad_ci ",
            "1103:nopad_bin ",
        ),
    ),
    ("macce", 1, 38, ("38:general_ci 43:bin 1062:general_nopad_ci 1067:nopad_bin ",)),
    ("macroman", 1, 39, ("39:general_ci 53:bin 1063:general_nopad_ci 1077:nopad_bin ",)),
    ("sjis", 2, 13, ("13:japanese_ci 88:bin 1037:japanese_nopad_ci 1112:nopad_bin ",)),
    ("swe7", 1, 10, ("10:swedish_ci 82:bin 1034:swedish_nopad_ci 1106:nopad_bin ",)),
    ("tis620", 1, 18, ("18:thai_ci 89:bin 1042:thai_nopad_ci 1113:nopad_bin ",)),
    (
        "ucs2",
        2,
        35,
        (
            "35:general_ci 90:bin 128:unicode_ci 129:icelandic_ci 130:latvian_ci 131:romanian_ci ",
            "132:slovenian_ci 133:polish_ci 134:estonian_ci 135:spanish_ci 136:swedish_ci ",
            "137:turkish_ci 138:czech_ci 139:danish_ci 140:lithuanian_ci 141:slovak_ci ",
            "142:spanish2_ci 143:roman_ci 144:persian_ci 145:esperanto_ci 146:hungarian_ci ",
            "147:sinhala_ci 148:german2_ci 149:croatian_mysql561_ci 150:unicode_520_ci ",
            "151:vietnamese_ci 159:general_mysql500_ci 640:croatian_ci 641:myanmar_ci ",
            "642:thai_520_w2 1059:general_nopad_ci 1114:nopad_bin 1152:unicode_nopad_ci ",
            "1174:unicode_520_nopad_ci ",
        ),
    ),
    ("ujis", 3, 12, ("12:japanese_ci 91:bin 1036:japanese_nopad_ci 1115:nopad_bin ",)),
    (
        "utf16",
        4,
        54,
        (
            "54:general_ci 55:bin 101:unicode_ci 102:icelandic_ci 103:latvian_ci 104:romanian_ci ",
            "105:slovenian_ci 106:polish_ci 107:estonian_ci 108:spanish_ci 109:swedish_ci ",
            "110:turkish_ci 111:czech_ci 112:danish_ci 113:lithuanian_ci 114:slovak_ci ",
            "115:spanish2_ci 116:roman_ci 117:persian_ci 118:esperanto_ci 119:hungarian_ci ",
            "120:sinhala_ci 121:german2_ci 122:croatian_mysql561_ci 123:unicode_520_ci ",
            "124:vietnamese_ci 672:croatian_ci 673:myanmar_ci 674:thai_520_w2 ",
            "1078:general_nopad_ci 1079:nopad_bin 1125:unicode_nopad_ci 1147:unicode_520_nopad_ci ",
        ),
    ),
    ("utf16le", 4, 56, ("56:general_ci 62:bin 1080:general_nopad_ci 1086:nopad_bin ",)),
    (
        "utf32",
        4,
        60,
        (
            "60:general_ci 61:bin 160:unicode_ci 161:icelandic_ci 162:latvian_ci 163:romanian_ci ",
            "164:slovenian_ci 165:polish_ci 166:estonian_ci 167:spanish_ci 168:swedish_ci ",
            "169:turkish_ci 170:czech_ci 171:danish_ci 172:lithuanian_ci 173:slovak_ci ",
            "174:spanish2_ci 175:roman_ci 176:persian_ci 177:esperanto_ci 178:hungarian_ci ",
            "179:sinhala_ci 180:german2_ci 181:croatian_mysql561_ci 182:unicode_520_ci ",
            "183:vietnamese_ci 736:croatian_ci 737:myanmar_ci 738:thai_520_w2 ",
            "1084:general_nopad_ci 1085:nopad_bin 1184:unicode_nopad_ci 1206:unicode_520_nopad_ci ",
        ),
    ),
    (
        "utf8mb3",
        3,
        33,
        (
            "33:general_ci 83:bin 192:unicode_ci 193:icelandic_ci 194:latvian_ci 195:romanian_ci ",
            "196:slovenian_ci 197:polish_ci 198:estonian_ci 199:spanish_ci 200:swedish_ci ",
            "201:turkish_ci 202:czech_ci 203:danish_ci 204:lithuanian_ci 205:slovak_ci ",
            "206:spanish2_ci 207:roman_ci 208:persian_ci 209:esperanto_ci 210:hungarian_ci ",
            "211:sinhala_ci 212:german2_ci 213:croatian_mysql561_ci 214:unicode_520_ci ",
            "215:vietnamese_ci 223:general_mysql500_ci 576:croatian_ci 577:myanmar_ci ",
            "578:thai_520_w2 1057:general_nopad_ci 1107:nopad_bin 1216:unicode_nopad_ci ",
            "1238:unicode_520_nopad_ci ",
        ),
    ),
    (
        "utf8mb4",
        4,
        45,
        (
            "45:general_ci 46:bin 224:unicode_ci 225:icelandic_ci 226:latvian_ci 227:romanian_ci ",
            "228:slovenian_ci 229:polish_ci 230:estonian_ci 231:spanish_ci 232:swedish_ci ",
            "233:turkish_ci 234:czech_ci 235:danish_ci 236:lithuanian_ci 237:slovak_ci ",
            "238:spanish2_ci 239:roman_ci 240:persian_ci 241:esperanto_ci 242:hungarian_ci ",
            "243:sinhala_ci 244:german2_ci 245:croatian_mysql561_ci 246:unicode_520_ci ",
            "247:vietnamese_ci 608:croatian_ci 609:myanmar_ci 610:thai_520_w2 ",
            "1069:general_nopad_ci 1070:nopad_bin 1248:unicode_nopad_ci 1270:unicode_520_nopad_ci ",
        ),
    ),
)

# Character sets a client cannot use for its connection (the parser needs ASCII-compatible
# bytes); a handshake naming one of their collations gets the server's default instead.
NON_CLIENT_CHARSETS = frozenset({"ucs2", "utf16", "utf16le", "utf32"})

# The sets whose narrowest character takes more than a byte (MariaDB's mbminlen; 1 elsewhere).
MBMINLEN = {"ucs2": 2, "utf16": 2, "utf16le": 2, "utf32": 4}

# ``utf8`` means utf8mb3 in 10.11 (old_mode=UTF8_IS_UTF8MB3, the default).
CHARSET_ALIASES = {"utf8": "utf8mb3"}


@dataclass(frozen=True, slots=True)
class Collation:
    """A MariaDB collation: its id, name, character set and that set's bytes per character."""

    id: int
    name: str
    charset: str
    mbmaxlen: int
    is_default: bool

    @property
    def mbminlen(self) -> int:
        return MBMINLEN.get(self.charset, 1)

    @property
    def is_binary_charset(self) -> bool:
        return self.id == BINARY_COLLATION_ID


def _build() -> tuple[dict[int, Collation], dict[str, Collation], dict[str, Collation]]:
    by_id: dict[int, Collation] = {}
    by_name: dict[str, Collation] = {}
    default_of: dict[str, Collation] = {}
    for charset, mbmaxlen, default_id, chunks in _TABLE:
        for entry in " ".join(chunks).split():
            number, _, suffix = entry.partition(":")
            name = suffix[1:] if suffix.startswith("=") else f"{charset}_{suffix}"
            collation = Collation(int(number), name, charset, mbmaxlen, int(number) == default_id)
            by_id[collation.id] = collation
            by_name[name] = collation
            if collation.is_default:
                default_of[charset] = collation
    return by_id, by_name, default_of


COLLATIONS_BY_ID, COLLATIONS_BY_NAME, DEFAULT_COLLATIONS = _build()


def collation_by_id(collation_id: int) -> Collation | None:
    return COLLATIONS_BY_ID.get(collation_id)


def collation_by_name(name: str) -> Collation | None:
    """A collation by name, case-insensitively (``utf8_*`` names mean ``utf8mb3_*``)."""
    key = name.lower()
    if key.startswith("utf8_"):
        key = "utf8mb3_" + key[5:]
    return COLLATIONS_BY_NAME.get(key)


def charset_default(name: str) -> Collation | None:
    """The default collation of a character set named case-insensitively, aliases resolved."""
    key = name.lower()
    return DEFAULT_COLLATIONS.get(CHARSET_ALIASES.get(key, key))


def client_collation(collation_id: int) -> Collation | None:
    """The collation a handshake's charset byte selects, None when the server must fall back to
    its own default (unknown id, or a character set clients cannot use)."""
    collation = COLLATIONS_BY_ID.get(collation_id)
    if collation is None or collation.charset in NON_CLIENT_CHARSETS:
        return None
    return collation
