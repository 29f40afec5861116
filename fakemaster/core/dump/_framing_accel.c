/* The dump's framing of small binlog events, in C: the inner loop of
 * fakemaster.core.dump.framing.frame_block, which in Python costs one interpreter pass per
 * event (about 0.3 us) where a real primary's whole dump costs about 0.1 us per event.
 *
 * frame_small(data, index, seq, skip, skip_annotate, large, layout)
 *   Walks the whole events of `data` from `index` on and frames each as a dump packet:
 *   [3-byte length + 1][sequence][0x00][event]. An event whose type code is `skip` or
 *   `skip_annotate` is walked and left out. The walk stops at the end of `data`, before bytes
 *   that are no whole event (a length below the header's or past the end), and before an event
 *   of `large` bytes or more (framed by the caller: never copied). Returns
 *   (packets, index, seq, events, last_event): the packets joined in one bytes object, where
 *   the walk stopped, the next sequence number, the events framed and the offset of the last
 *   event walked (-1 when none was).
 *
 * `layout` is the event header's, from the vocabulary: (header length, offset of the type code,
 * offset of the little-endian 4-byte event length); no number of it is written here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

typedef struct {
    Py_ssize_t header_len;
    Py_ssize_t type_offset;
    Py_ssize_t length_offset;
} Layout;

static unsigned long read_u32(const unsigned char *at)
{
    return (unsigned long)at[0] | ((unsigned long)at[1] << 8) | ((unsigned long)at[2] << 16) |
           ((unsigned long)at[3] << 24);
}

/* One walk, counting (out == NULL) or writing the packets. Both walks stop at the same place:
 * nothing but `data` decides where. */
static Py_ssize_t walk(const Layout *layout, const unsigned char *data, Py_ssize_t end,
                       Py_ssize_t *index,
                       unsigned int *seq, int skip, int skip_annotate, unsigned long large,
                       Py_ssize_t *events, Py_ssize_t *last_event, unsigned char *out,
                       Py_ssize_t capacity)
{
    Py_ssize_t at = *index;
    Py_ssize_t written = 0;
    unsigned int sequence = *seq;
    while (at + layout->header_len <= end) {
        const unsigned char *event = data + at;
        unsigned long length = read_u32(event + layout->length_offset);
        int type_code = event[layout->type_offset];
        if (length < (unsigned long)layout->header_len || (unsigned long)(end - at) < length) {
            break;
        }
        if (type_code == skip || type_code == skip_annotate) {
            *last_event = at;
            at += (Py_ssize_t)length;
            continue;
        }
        if (length >= large) {
            break;
        }
        if (out != NULL && capacity - written < (Py_ssize_t)length + 5) {
            break; /* the bytes changed since they were counted: the caller raises */
        }
        *last_event = at;
        if (out != NULL) {
            unsigned long payload = length + 1;
            unsigned char *packet = out + written;
            packet[0] = (unsigned char)(payload & 0xFF);
            packet[1] = (unsigned char)((payload >> 8) & 0xFF);
            packet[2] = (unsigned char)((payload >> 16) & 0xFF);
            packet[3] = (unsigned char)sequence;
            packet[4] = 0;
            memcpy(packet + 5, event, length);
        }
        written += (Py_ssize_t)length + 5;
        sequence = (sequence + 1) & 0xFF;
        *events += 1;
        at += (Py_ssize_t)length;
    }
    *index = at;
    *seq = sequence;
    return written;
}

static PyObject *frame_small(PyObject *module, PyObject *args)
{
    Py_buffer buffer;
    Py_ssize_t index;
    unsigned int seq;
    int skip;
    int skip_annotate;
    unsigned long large;
    Layout layout;
    (void)module;
    if (!PyArg_ParseTuple(args, "y*nIiik(nnn):frame_small", &buffer, &index, &seq, &skip,
                          &skip_annotate, &large, &layout.header_len, &layout.type_offset,
                          &layout.length_offset)) {
        return NULL;
    }
    /* A layout whose reads would leave the header: refused, as a bad index or sequence. */
    if (index < 0 || index > buffer.len || seq > 0xFF || layout.type_offset < 0 ||
        layout.length_offset < 0 || layout.type_offset >= layout.header_len ||
        layout.length_offset + 4 > layout.header_len) {
        PyBuffer_Release(&buffer);
        PyErr_SetString(PyExc_ValueError,
                        "frame_small: index outside the block, seq above 255 or a bad layout");
        return NULL;
    }
    const unsigned char *data = (const unsigned char *)buffer.buf;
    Py_ssize_t end = buffer.len;
    Py_ssize_t count_index = index;
    unsigned int count_seq = seq;
    Py_ssize_t count_events = 0;
    Py_ssize_t count_last = -1;
    Py_ssize_t size = walk(&layout, data, end, &count_index, &count_seq, skip, skip_annotate, large,
                           &count_events, &count_last, NULL, 0);
    PyObject *packets = PyBytes_FromStringAndSize(NULL, size);
    if (packets == NULL) {
        PyBuffer_Release(&buffer);
        return NULL;
    }
    Py_ssize_t events = 0;
    Py_ssize_t last_event = -1;
    Py_ssize_t written;
    Py_BEGIN_ALLOW_THREADS
    /* The buffer is held (PyBuffer) and the bytes object is not shared yet: other threads may
     * run while the events are copied. */
    written = walk(&layout, data, end, &index, &seq, skip, skip_annotate, large, &events, &last_event,
                   (unsigned char *)PyBytes_AS_STRING(packets), size);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buffer);
    if (written != size || index != count_index || events != count_events) {
        Py_DECREF(packets);
        PyErr_SetString(PyExc_RuntimeError, "frame_small: the block changed while it was framed");
        return NULL;
    }
    return Py_BuildValue("(NnInn)", packets, index, seq, events, last_event);
}

static PyMethodDef methods[] = {
    {"frame_small", frame_small, METH_VARARGS,
     "frame_small(data, index, seq, skip, skip_annotate, large, layout) -> "
     "(packets, index, seq, events, last_event)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_framing_accel",
    "The dump's framing of small binlog events, in C (see framing.py).", -1, methods,
};

PyMODINIT_FUNC PyInit__framing_accel(void)
{
    return PyModule_Create(&module_definition);
}
