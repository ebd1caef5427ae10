/* fw_onednn._native: the per-call path into oneDNN, as one C call from Python.

A cached primitive keeps one oneDNN memory object per argument; a call points them at this
call's arrays (dnnl_memory_set_data_handle) and executes (dnnl_primitive_execute). Doing that
here costs ~0.1 us above the kernel, where a Numba function calling the same C functions cost
~0.45 us (mostly its dispatcher typing and unboxing each array) and plain ctypes ~6 us.

The two oneDNN functions are not linked: fw_onednn.execute hands their addresses (from the
library ctypes loaded) to bind() once at import, so this module builds with Python's and
NumPy's headers alone and loads whatever libdnnl ctypes found.

Every function holds the GIL while it runs: a cached primitive's memory objects are shared by
all threads, and the GIL keeps two threads from swapping the same objects' pointers at once. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <stdint.h>

typedef int (*set_data_fn)(void *memory, void *handle);
typedef int (*execute_fn)(void *primitive, void *stream, int nargs, const void *args);

static set_data_fn set_data = NULL;
static execute_fn execute = NULL;
static PyObject *raise_status = NULL; /* raise_status(status): raises the FwError for it */

/* The scratch buffer's index in a program binding (operands are 0, 1, ...) and the alignment
   of the scratch base, as fw_onednn.program writes them. */
#define SCRATCH_SOURCE 0xFFFF
#define ALIGN 64

/* handles as a uint64 vector of at least `least` entries, or NULL with an exception set. */
static const uint64_t *
handle_vector(PyObject *handles, Py_ssize_t least)
{
    if (!PyArray_Check(handles) || PyArray_TYPE((PyArrayObject *)handles) != NPY_UINT64 ||
        PyArray_NDIM((PyArrayObject *)handles) != 1 ||
        !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)handles)) {
        PyErr_SetString(PyExc_TypeError,
                        "fw_onednn._native: handles must be a 1-d contiguous uint64 array");
        return NULL;
    }
    if (PyArray_SIZE((PyArrayObject *)handles) < least) {
        PyErr_Format(PyExc_ValueError,
                     "fw_onednn._native: handles hold %zd entries, this call needs %zd",
                     (Py_ssize_t)PyArray_SIZE((PyArrayObject *)handles), least);
        return NULL;
    }
    if (execute == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "fw_onednn._native: bind() was not called (import fw_onednn.execute)");
        return NULL;
    }
    return (const uint64_t *)PyArray_DATA((PyArrayObject *)handles);
}

/* The data pointer of array argument `i`, or NULL with a TypeError set. */
static void *
data_of(PyObject *const *args, Py_ssize_t i)
{
    if (!PyArray_Check(args[i])) {
        PyErr_Format(PyExc_TypeError, "fw_onednn._native: argument %zd is %s, not an ndarray",
                     i, Py_TYPE(args[i])->tp_name);
        return NULL;
    }
    return PyArray_DATA((PyArrayObject *)args[i]);
}

static PyObject *
bind(PyObject *self, PyObject *args)
{
    unsigned long long set_data_address, execute_address;
    PyObject *raiser;
    if (!PyArg_ParseTuple(args, "KKO", &set_data_address, &execute_address, &raiser))
        return NULL;
    set_data = (set_data_fn)(uintptr_t)set_data_address;
    execute = (execute_fn)(uintptr_t)execute_address;
    Py_XSETREF(raise_status, Py_NewRef(raiser));
    Py_RETURN_NONE;
}

/* Bind arrays args[0..count) (None skipped), then `last` if not NULL, to h[4], h[5], ... and
   execute; the first status that is not dnnl_success, or -1 with an exception set. */
static int
bind_and_execute(const uint64_t *h, Py_ssize_t room, PyObject *const *args, Py_ssize_t count,
                 PyObject *last)
{
    Py_ssize_t slot = 4;
    for (Py_ssize_t i = 0; i <= count; i++) {
        PyObject *array = i < count ? args[i] : last;
        if (array == Py_None || array == NULL)
            continue;
        if (!PyArray_Check(array)) {
            PyErr_Format(PyExc_TypeError, "fw_onednn._native: argument %zd is %s, not an "
                         "ndarray", i, Py_TYPE(array)->tp_name);
            return -1;
        }
        if (slot >= room) {
            PyErr_SetString(PyExc_ValueError,
                            "fw_onednn._native: more arrays than the primitive has arguments");
            return -1;
        }
        int status = set_data((void *)(uintptr_t)h[slot++], PyArray_DATA((PyArrayObject *)array));
        if (status)
            return status;
    }
    return execute((void *)(uintptr_t)h[0], (void *)(uintptr_t)h[1], (int)h[2],
                   (const void *)(uintptr_t)h[3]);
}

/* call(handles, out_shape, *arrays, **attributes) -> a new float32 array of out_shape, the
   primitive's result. The arrays bind to the memory objects in order (None, an absent optional
   input such as a bias, is skipped) and the result to the next; the keywords, attributes the
   primitive has built in, are ignored. A failed execute raises through raise_status. */
static PyObject *
call(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs < 2 || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError,
                        "call(handles, out_shape, *arrays) takes handles and a shape tuple first");
        return NULL;
    }
    const uint64_t *h = handle_vector(args[0], 4);
    if (h == NULL)
        return NULL;
    npy_intp dims[NPY_MAXDIMS];
    Py_ssize_t ndim = PyTuple_GET_SIZE(args[1]);
    if (ndim > NPY_MAXDIMS) {
        PyErr_SetString(PyExc_ValueError, "fw_onednn._native: out_shape has too many dimensions");
        return NULL;
    }
    for (Py_ssize_t d = 0; d < ndim; d++) {
        dims[d] = PyLong_AsSsize_t(PyTuple_GET_ITEM(args[1], d));
        if (dims[d] == -1 && PyErr_Occurred())
            return NULL;
    }
    PyObject *out = PyArray_SimpleNew((int)ndim, dims, NPY_FLOAT32);
    if (out == NULL)
        return NULL;
    int status = bind_and_execute(h, PyArray_SIZE((PyArrayObject *)args[0]), args + 2,
                                  nargs - 2, out);
    if (status == 0)
        return out;
    Py_DECREF(out);
    if (status > 0) {
        PyObject *raised = PyObject_CallFunction(raise_status, "i", status);
        Py_XDECREF(raised);
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_RuntimeError, "dnnl_primitive_execute failed with status %d",
                         status);
    }
    return NULL;
}

/* run(handles, a0, a1, ...) -> status. handles: [primitive, stream, nargs, args, memory_0, ...],
   memory_i taking the data of a_i (None skipped). Stops at the first status that is not
   dnnl_success. */
static PyObject *
run(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1) {
        PyErr_SetString(PyExc_TypeError, "run(handles, *arrays) takes the handles first");
        return NULL;
    }
    const uint64_t *h = handle_vector(args[0], 4);
    if (h == NULL)
        return NULL;
    int status = bind_and_execute(h, PyArray_SIZE((PyArrayObject *)args[0]), args + 1,
                                  nargs - 1, NULL);
    return status < 0 ? NULL : PyLong_FromLong(status);
}

/* run_program(handles, scratch, a0, a1, ...) -> status. handles: [stream, bindings, steps,
   (memory, source, offset) per binding, (primitive, nargs, args) per step]; a binding's source
   is an operand index, or SCRATCH_SOURCE for `offset` bytes into the scratch array's first
   64-byte boundary. Binds every memory object, then executes the steps in order. */
static PyObject *
run_program(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 2) {
        PyErr_SetString(PyExc_TypeError,
                        "run_program(handles, scratch, *arrays) takes handles and scratch first");
        return NULL;
    }
    const uint64_t *h = handle_vector(args[0], 3);
    if (h == NULL)
        return NULL;
    void *scratch = data_of(args, 1);
    if (scratch == NULL)
        return NULL;
    Py_ssize_t count = nargs - 2;
    uint64_t bindings = h[1], steps = h[2];
    if ((uint64_t)PyArray_SIZE((PyArrayObject *)args[0]) < 3 + 3 * (bindings + steps)) {
        PyErr_SetString(PyExc_ValueError, "fw_onednn._native: a program's handles are cut short");
        return NULL;
    }
    uintptr_t base = ((uintptr_t)scratch + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
    for (uint64_t i = 0; i < bindings; i++) {
        const uint64_t *b = h + 3 + 3 * i;
        void *pointer;
        if (b[1] == SCRATCH_SOURCE) {
            pointer = (void *)(base + b[2]);
        } else if (b[1] < (uint64_t)count) {
            pointer = data_of(args + 2, (Py_ssize_t)b[1]);
            if (pointer == NULL)
                return NULL;
        } else {
            PyErr_Format(PyExc_ValueError,
                         "fw_onednn._native: the program binds operand %llu of %zd given",
                         (unsigned long long)b[1], count);
            return NULL;
        }
        int status = set_data((void *)(uintptr_t)b[0], pointer);
        if (status)
            return PyLong_FromLong(status);
    }
    const uint64_t *s = h + 3 + 3 * bindings;
    for (uint64_t j = 0; j < steps; j++, s += 3) {
        int status = execute((void *)(uintptr_t)s[0], (void *)(uintptr_t)h[0], (int)s[1],
                             (const void *)(uintptr_t)s[2]);
        if (status)
            return PyLong_FromLong(status);
    }
    return PyLong_FromLong(0);
}

/* repeat(handles, n) -> status: the primitive of handles ([primitive, stream, nargs, args, ...])
   executed n times on the arrays it was last bound to, the statuses or-ed together. */
static PyObject *
repeat(PyObject *self, PyObject *args)
{
    PyObject *handles;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "On", &handles, &n))
        return NULL;
    const uint64_t *h = handle_vector(handles, 4);
    if (h == NULL)
        return NULL;
    int status = 0;
    for (Py_ssize_t i = 0; i < n; i++)
        status |= execute((void *)(uintptr_t)h[0], (void *)(uintptr_t)h[1], (int)h[2],
                          (const void *)(uintptr_t)h[3]);
    return PyLong_FromLong(status);
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS,
     "bind(set_data_address, execute_address, raise_status): the addresses of "
     "dnnl_memory_set_data_handle and dnnl_primitive_execute, and the function that raises "
     "for a failed status."},
    {"call", (PyCFunction)(void (*)(void))call, METH_FASTCALL | METH_KEYWORDS,
     "call(handles, out_shape, *arrays, **attributes) -> the primitive's float32 result, in a "
     "new array of out_shape."},
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL,
     "run(handles, *arrays) -> status: bind each array to its memory object and execute."},
    {"run_program", (PyCFunction)(void (*)(void))run_program, METH_FASTCALL,
     "run_program(handles, scratch, *arrays) -> status: bind a program's memory objects to "
     "the arrays and the scratch buffer, then execute its primitives in order."},
    {"repeat", repeat, METH_VARARGS,
     "repeat(handles, n) -> status: execute a bound primitive n times."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "fw_onednn._native",
    "The per-call path into oneDNN: bind arrays to a primitive's memory objects and execute.",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    import_array();
    return PyModule_Create(&module);
}
