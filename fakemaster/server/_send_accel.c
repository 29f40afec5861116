/* The dump thread's write loop, in C, without the GIL: the loop of
 * fakemaster.server.sender.SocketWriter.send_buffers.
 *
 * In Python every sendmsg that the socket's buffer cuts short and every wait for room takes the
 * GIL again; with hundreds of dump threads each of them waits for it behind the others while its
 * replica's socket buffer runs empty. Here a thread takes the GIL once to look at the buffers,
 * then writes and waits without it until everything is written.
 *
 * send_views(fd, buffers, first, skip, timeout_ms)
 *   Writes buffers[first:] (objects with the buffer protocol), the first one from byte `skip`,
 *   to the non-blocking socket `fd` with sendmsg (at most IOV_MAX buffers a call), waiting for
 *   room with poll. Returns the bytes written: all of them, or fewer when a wait found no room
 *   for `timeout_ms` (the caller looks at its stop flag and calls again from there). OSError
 *   when sendmsg or poll fails (the connection broke, or was shut down by an abort).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

/* Write iov[0:count], advancing it; the bytes written. *error is set (errno) on a failure, left
 * 0 when a wait timed out or everything was written. */
static Py_ssize_t write_all(int fd, struct iovec *iov, Py_ssize_t count, int timeout_ms,
                            int *error)
{
    Py_ssize_t written = 0;
    Py_ssize_t index = 0;
    *error = 0;
    while (index < count) {
        if (iov[index].iov_len == 0) {
            index++;
            continue;
        }
        struct msghdr message;
        memset(&message, 0, sizeof(message));
        message.msg_iov = iov + index;
        message.msg_iovlen = (size_t)(count - index < IOV_MAX ? count - index : IOV_MAX);
        ssize_t done = sendmsg(fd, &message, MSG_NOSIGNAL);
        if (done < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                *error = errno;
                return written;
            }
            struct pollfd waiting = {fd, POLLOUT, 0};
            int ready = poll(&waiting, 1, timeout_ms);
            if (ready < 0 && errno != EINTR) {
                *error = errno;
                return written;
            }
            if (ready == 0) {
                return written; /* no room for timeout_ms: the caller looks at its stop flag */
            }
            continue; /* room, or an error sendmsg reports */
        }
        written += done;
        size_t left = (size_t)done;
        while (index < count && left >= iov[index].iov_len) {
            left -= iov[index].iov_len;
            index++;
        }
        if (left) {
            iov[index].iov_base = (char *)iov[index].iov_base + left;
            iov[index].iov_len -= left;
        }
    }
    return written;
}

static PyObject *send_views(PyObject *self, PyObject *args)
{
    int fd;
    PyObject *buffers;
    Py_ssize_t first;
    Py_ssize_t skip;
    int timeout_ms;
    if (!PyArg_ParseTuple(args, "iO!nni", &fd, &PyList_Type, &buffers, &first, &skip,
                          &timeout_ms)) {
        return NULL;
    }
    Py_ssize_t total = PyList_GET_SIZE(buffers);
    if (first < 0 || first > total || skip < 0) {
        PyErr_SetString(PyExc_ValueError, "send_views: first or skip out of range");
        return NULL;
    }
    Py_ssize_t count = total - first;
    if (count == 0) {
        return PyLong_FromSsize_t(0);
    }
    Py_buffer *views = PyMem_Calloc((size_t)count, sizeof(Py_buffer));
    struct iovec *iov = PyMem_Calloc((size_t)count, sizeof(struct iovec));
    if (views == NULL || iov == NULL) {
        PyMem_Free(views);
        PyMem_Free(iov);
        return PyErr_NoMemory();
    }
    Py_ssize_t held = 0;
    PyObject *result = NULL;
    for (; held < count; held++) {
        /* The list is ours (the caller's), but the items are taken before any is looked at. */
        if (PyObject_GetBuffer(PyList_GET_ITEM(buffers, first + held), &views[held],
                               PyBUF_SIMPLE) < 0) {
            goto done;
        }
        iov[held].iov_base = views[held].buf;
        iov[held].iov_len = (size_t)views[held].len;
    }
    if (skip > (Py_ssize_t)iov[0].iov_len) {
        PyErr_SetString(PyExc_ValueError, "send_views: skip past the first buffer");
        goto done;
    }
    iov[0].iov_base = (char *)iov[0].iov_base + skip;
    iov[0].iov_len -= (size_t)skip;
    Py_ssize_t written;
    int error;
    Py_BEGIN_ALLOW_THREADS
    /* The buffers are held (Py_buffer): other threads may run while they are written. */
    written = write_all(fd, iov, count, timeout_ms, &error);
    Py_END_ALLOW_THREADS
    if (error) {
        errno = error;
        PyErr_SetFromErrno(PyExc_OSError);
        goto done;
    }
    result = PyLong_FromSsize_t(written);
done:
    for (Py_ssize_t i = 0; i < held; i++) {
        PyBuffer_Release(&views[i]);
    }
    PyMem_Free(views);
    PyMem_Free(iov);
    return result;
}

static PyMethodDef methods[] = {
    {"send_views", send_views, METH_VARARGS,
     "send_views(fd, buffers, first, skip, timeout_ms) -> bytes written"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_send_accel",
    "The dump thread's write loop, in C, without the GIL (see sender.py).", -1, methods,
};

PyMODINIT_FUNC PyInit__send_accel(void)
{
    return PyModule_Create(&module_definition);
}
