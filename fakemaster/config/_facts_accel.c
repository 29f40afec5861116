/* The start-up scan's walk over events that tell nothing, in C: the inner loop of
 * fakemaster.config.served_facts.FactsScanner._walk, which in Python costs one interpreter pass
 * per event of every served file before `serve` listens (2.4 M events: most of a second).
 *
 * pass_untelling(data, pos, largest, foreign_from, telling, table_map, table_maps,
 *                row_metadata, body_start, crc_len, layout)
 *   Walks the whole events of `data` from `pos` on while each tells nothing new, and returns
 *   (pos, look): where it stopped, and whether the event there is to be looked at (look 1) or
 *   the block ends there (look 0: the end, or bytes that are no whole event). An event is to be
 *   looked at when it is larger than `largest`, when `foreign_from` is not None and its server
 *   id is neither that id nor 0, or when `telling[type code]` is nonzero, unless it is a
 *   TABLE_MAP (type `table_map`) whose body (from `body_start` to `crc_len` bytes before its
 *   end) is a key of the dict `table_maps` whose value's first item is None or equal to
 *   `row_metadata` (table_maps None: every telling event is looked at).
 *
 * `layout` is the event header's, from the vocabulary: (header length, offset of the type code,
 * offset of the server id, offset of the event length), each little-endian.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    Py_ssize_t header_len;
    Py_ssize_t type_offset;
    Py_ssize_t server_offset;
    Py_ssize_t length_offset;
} Layout;

static unsigned long read_u32(const unsigned char *at)
{
    return (unsigned long)at[0] | ((unsigned long)at[1] << 8) | ((unsigned long)at[2] << 16) |
           ((unsigned long)at[3] << 24);
}

/* 1: a known TABLE_MAP that tells nothing new; 0: to be looked at; -1: an error is set. */
static int known_table_map(const unsigned char *event, unsigned long length,
                           Py_ssize_t body_start, Py_ssize_t crc_len, PyObject *table_maps,
                           PyObject *row_metadata)
{
    Py_ssize_t end = (Py_ssize_t)length - crc_len;
    Py_ssize_t size = end > body_start ? end - body_start : 0;
    PyObject *key = PyBytes_FromStringAndSize(size ? (const char *)event + body_start : "", size);
    if (key == NULL) {
        return -1;
    }
    PyObject *known = PyDict_GetItemWithError(table_maps, key); /* borrowed */
    Py_DECREF(key);
    if (known == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    if (!PyTuple_Check(known) || PyTuple_GET_SIZE(known) < 1) {
        return 0;
    }
    PyObject *setting = PyTuple_GET_ITEM(known, 0);
    if (setting == Py_None) {
        return 1;
    }
    int same = PyObject_RichCompareBool(setting, row_metadata, Py_EQ);
    return same < 0 ? -1 : same;
}

static PyObject *pass_untelling(PyObject *module, PyObject *args)
{
    Py_buffer buffer;
    Py_buffer telling;
    Py_ssize_t pos;
    unsigned long long largest;
    PyObject *foreign_from;
    int table_map;
    PyObject *table_maps;
    PyObject *row_metadata;
    Py_ssize_t body_start;
    Py_ssize_t crc_len;
    Layout layout;
    (void)module;
    if (!PyArg_ParseTuple(args, "y*nKOy*iOOnn(nnnn):pass_untelling", &buffer, &pos, &largest,
                          &foreign_from, &telling, &table_map, &table_maps, &row_metadata,
                          &body_start, &crc_len, &layout.header_len, &layout.type_offset,
                          &layout.server_offset, &layout.length_offset)) {
        return NULL;
    }
    PyObject *result = NULL;
    unsigned long fde_server_id = 0;
    int servers = foreign_from != Py_None;
    if (servers) {
        fde_server_id = PyLong_AsUnsignedLong(foreign_from);
        if (PyErr_Occurred()) {
            goto done;
        }
    }
    if (pos < 0 || pos > buffer.len || telling.len != 256 || body_start < 0 || crc_len < 0 ||
        layout.type_offset < 0 || layout.type_offset >= layout.header_len ||
        layout.server_offset < 0 || layout.server_offset + 4 > layout.header_len ||
        layout.length_offset < 0 || layout.length_offset + 4 > layout.header_len ||
        (table_maps != Py_None && !PyDict_Check(table_maps))) {
        PyErr_SetString(PyExc_ValueError,
                        "pass_untelling: pos outside the block, telling not 256 flags, a bad "
                        "layout or table_maps not a dict");
        goto done;
    }
    const unsigned char *data = (const unsigned char *)buffer.buf;
    const unsigned char *flags = (const unsigned char *)telling.buf;
    Py_ssize_t size = buffer.len;
    int look = 0;
    while (pos + layout.header_len <= size) {
        const unsigned char *event = data + pos;
        unsigned long length = read_u32(event + layout.length_offset);
        if (length < (unsigned long)layout.header_len || (unsigned long)(size - pos) < length) {
            break;
        }
        unsigned long server_id = read_u32(event + layout.server_offset);
        int type_code = event[layout.type_offset];
        if (length > largest || (servers && server_id != fde_server_id && server_id != 0)) {
            look = 1;
            break;
        }
        if (flags[type_code]) {
            if (type_code != table_map || table_maps == Py_None) {
                look = 1;
                break;
            }
            int known = known_table_map(event, length, body_start, crc_len, table_maps,
                                        row_metadata);
            if (known < 0) {
                goto done;
            }
            if (!known) {
                look = 1;
                break;
            }
        }
        pos += (Py_ssize_t)length;
    }
    result = Py_BuildValue("(ni)", pos, look);
done:
    PyBuffer_Release(&telling);
    PyBuffer_Release(&buffer);
    return result;
}

static PyMethodDef methods[] = {
    {"pass_untelling", pass_untelling, METH_VARARGS,
     "pass_untelling(data, pos, largest, foreign_from, telling, table_map, table_maps, "
     "row_metadata, body_start, crc_len, layout) -> (pos, look)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_facts_accel",
    "The start-up scan's walk over events that tell nothing, in C (see served_facts.py).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__facts_accel(void)
{
    return PyModule_Create(&module_definition);
}
