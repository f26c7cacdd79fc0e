//===- KfuseNative.cpp - the kfuse Python extension -----------------------===//
//
// Registers the fusion dialect into the `mlir` package's dialect registry and
// kfuse's passes and pipelines into the global pass registry. The module is
// linked against the mlir package's libMLIRPythonCAPI.so, which exports the
// MLIR C++ symbols, so what is registered here is what the package's
// contexts and pass managers see. Plain CPython API: two functions.
//
//===----------------------------------------------------------------------===//

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstring>

#include "transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"

namespace {

/// register_dialects(registry: mlir.ir.DialectRegistry) -> None
PyObject *registerDialects(PyObject *, PyObject *registry) {
  PyObject *capsule = PyObject_GetAttrString(registry, "_CAPIPtr");
  if (!capsule)
    return nullptr;
  const char *name = PyCapsule_GetName(capsule);
  if (!name || !std::strstr(name, "DialectRegistry._CAPIPtr")) {
    Py_DECREF(capsule);
    PyErr_SetString(PyExc_TypeError,
                    "register_dialects expects an mlir.ir.DialectRegistry");
    return nullptr;
  }
  void *ptr = PyCapsule_GetPointer(capsule, name);
  Py_DECREF(capsule);
  if (!ptr)
    return nullptr;
  kfuse::registerDialects(*static_cast<mlir::DialectRegistry *>(ptr));
  Py_RETURN_NONE;
}

/// register_passes() -> None
PyObject *registerPasses(PyObject *, PyObject *) {
  kfuse::registerAllPassesAndPipelines();
  Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"register_dialects", registerDialects, METH_O,
     "Adds the fusion dialect to an mlir.ir.DialectRegistry."},
    {"register_passes", registerPasses, METH_NOARGS,
     "Registers kfuse's passes and pipelines (idempotent)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kfuse_native",
                      "kfuse's MLIR dialect and pass registration", -1,
                      methods};

} // namespace

PyMODINIT_FUNC PyInit__kfuse_native() { return PyModule_Create(&module); }
