/* nullcuda: a CUDA driver without a GPU, for testing and profiling kfuse's
 * CUDA runtime on machines that have none.
 *
 * Built as libcuda.so.1; a process started with its directory first on
 * LD_LIBRARY_PATH gets it from cuda-bindings in place of NVIDIA's driver.
 * It reports one sm_90 device with 132 SMs. "Device" memory is host memory,
 * so copies really copy; kernels run nothing: a launch only checks its
 * function handle, shape, dynamic shared memory (above 48 KB only up to
 * what cuFuncSetAttribute allowed the function, at most the H100's 227
 * KB a block) and parameters, and writes them to the log.
 *
 * Environment:
 *   NULLCUDA_LOG=path     appends one line per driver call that queues or
 *                         moves work (alloc, free, copies, launches, waits)
 *   NULLCUDA_FAIL=name:N  the driver function `name` returns CUresult N
 *   NULLCUDA_SMEM_OPTIN=N the dynamic shared memory a block may opt in to
 *                         (bytes; default 227 KB, the H100's)
 *   NULLCUDA_CLUSTERS=N   what cuOccupancyMaxActiveClusters answers: the
 *                         clusters of any kernel the device holds at once
 *                         (default 15, an H100's of 8 blocks of 1024 threads)
 *   NULLCUDA_BLOCKS_PER_SM=N  what cuOccupancyMaxActiveBlocksPerMultiprocessor
 *                         answers (default 1)
 *
 * Log lines (numbers in decimal, pointers in hex):
 *   alloc PTR BYTES sync|STREAM     free PTR sync|STREAM
 *   htod DST BYTES sync|STREAM      dtoh SRC BYTES STREAM
 *   dtod SRC DST BYTES STREAM       sync STREAM|context
 *   launch KERNEL GX GY GZ BX BY BZ SMEM STREAM P0 P1 ...
 *     (each parameter as the unsigned integer its bytes hold, parameter
 *     sizes read from the .entry's declaration in the loaded PTX)
 *   attr ID VALUE                   (after the launch line of cuLaunchKernelEx:
 *     each launch attribute; only 6, programmatic stream serialization, is
 *     accepted)
 *   wait STREAM                     (cuStreamWaitEvent)
 *   record STREAM                   (cuEventRecord)
 *   query                           (cuEventQuery: its work is done, unless
 *                                   NULLCUDA_FAIL=cuEventQuery:600, not ready)
 *   hostalloc PTR BYTES             (cuMemAllocHost: page-locked host memory)
 *   occupancy KERNEL GX GY GZ BX BY BZ SMEM CLUSTERS
 *                                   (cuOccupancyMaxActiveClusters: the launch
 *                                   configuration asked about, the answer)
 *   occupancy_sm KERNEL THREADS SMEM BLOCKS
 *                                   (cuOccupancyMaxActiveBlocksPerMultiprocessor)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef uint64_t CUdeviceptr;
typedef void *CUstream;

enum {
  OK = 0,
  INVALID_VALUE = 1,
  NOT_INITIALIZED = 3,
  INVALID_IMAGE = 200,
  INVALID_HANDLE = 400,
  NOT_FOUND = 500,
};

/* ---- failure injection and the log */

static int failing(const char *fn, CUresult *code) {
  const char *spec = getenv("NULLCUDA_FAIL");
  size_t n = strlen(fn);
  if (!spec || strncmp(spec, fn, n) != 0 || spec[n] != ':')
    return 0;
  *code = atoi(spec + n + 1);
  return 1;
}
#define FAIL_IF_ASKED(fn)                                                      \
  do {                                                                         \
    CUresult c_;                                                               \
    if (failing(fn, &c_))                                                      \
      return c_;                                                               \
  } while (0)

static FILE *logFile(void) {
  static FILE *f;
  static int opened;
  if (!opened) {
    const char *path = getenv("NULLCUDA_LOG");
    f = path ? fopen(path, "a") : NULL;
    if (f)
      setvbuf(f, NULL, _IOLBF, 0);
    opened = 1;
  }
  return f;
}
#define LOG(...)                                                               \
  do {                                                                         \
    FILE *f_ = logFile();                                                      \
    if (f_)                                                                    \
      fprintf(f_, __VA_ARGS__);                                                \
  } while (0)

/* ---- initialization, devices, contexts */

enum { SHARED_DEFAULT = 48 * 1024 };
static int sharedOptIn(void) {
  const char *v = getenv("NULLCUDA_SMEM_OPTIN");
  return v ? atoi(v) : 227 * 1024;
}

static int initialized;
static int context = 1; /* the primary context's handle is &context */
static void *current;

CUresult cuInit(unsigned flags) {
  FAIL_IF_ASKED("cuInit");
  initialized = 1;
  return OK;
}
CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return OK;
}
CUresult cuDeviceGetCount(int *n) {
  if (!initialized)
    return NOT_INITIALIZED;
  FAIL_IF_ASKED("cuDeviceGetCount");
  *n = 1;
  return OK;
}
CUresult cuDeviceGet(int *dev, int ordinal) {
  if (ordinal != 0)
    return INVALID_VALUE;
  *dev = 0;
  return OK;
}
CUresult cuDeviceGetName(char *name, int len, int dev) {
  snprintf(name, len, "nullcuda (no GPU)");
  return OK;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
  switch (attr) {
  case 16: /* multiprocessor count */
    *v = 132;
    break;
  case 75: /* compute capability */
    *v = 9;
    break;
  case 76:
    *v = 0;
    break;
  case 115: /* memory pools supported */
    *v = 1;
    break;
  case 97: /* shared memory a block may opt in to */
    *v = sharedOptIn();
    break;
  default:
    *v = 0;
  }
  return OK;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  *ctx = &context;
  return OK;
}
CUresult cuCtxGetCurrent(void **ctx) {
  *ctx = current;
  return OK;
}
CUresult cuCtxSetCurrent(void *ctx) {
  current = ctx;
  return OK;
}
CUresult cuCtxPushCurrent(void *ctx) {
  current = ctx;
  return OK;
}
CUresult cuCtxPopCurrent(void **ctx) {
  if (ctx)
    *ctx = current;
  current = NULL;
  return OK;
}
CUresult cuGetErrorString(CUresult err, const char **s) {
  *s = "an error from nullcuda (NULLCUDA_FAIL, or a call it refuses)";
  return OK;
}
CUresult cuGetErrorName(CUresult err, const char **s) {
  *s = "CUDA_ERROR_NULLCUDA";
  return OK;
}
CUresult cuPointerGetAttribute(void *data, int attr, CUdeviceptr p) {
  if (attr != 9) /* device ordinal */
    return INVALID_VALUE;
  *(int *)data = 0;
  return OK;
}

/* ---- memory: host memory standing in for the device's */

static CUresult allocate(CUdeviceptr *p, size_t bytes, const char *how) {
  void *m = NULL;
  if (posix_memalign(&m, 256, bytes ? bytes : 1) != 0)
    return 2; /* out of memory */
  *p = (CUdeviceptr)(uintptr_t)m;
  LOG("alloc %llx %zu %s\n", (unsigned long long)*p, bytes, how);
  return OK;
}
CUresult cuMemAlloc(CUdeviceptr *p, size_t bytes) {
  FAIL_IF_ASKED("cuMemAlloc");
  return allocate(p, bytes, "sync");
}
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t bytes, CUstream s) {
  FAIL_IF_ASKED("cuMemAllocAsync");
  char how[32];
  snprintf(how, sizeof how, "%llx", (unsigned long long)(uintptr_t)s);
  return allocate(p, bytes, how);
}
CUresult cuMemFree(CUdeviceptr p) {
  LOG("free %llx sync\n", (unsigned long long)p);
  free((void *)(uintptr_t)p);
  return OK;
}
CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s) {
  LOG("free %llx %llx\n", (unsigned long long)p,
      (unsigned long long)(uintptr_t)s);
  free((void *)(uintptr_t)p);
  return OK;
}
CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n) {
  LOG("htod %llx %zu sync\n", (unsigned long long)dst, n);
  memcpy((void *)(uintptr_t)dst, src, n);
  return OK;
}
CUresult cuMemAllocHost(void **p, size_t n) {
  FAIL_IF_ASKED("cuMemAllocHost");
  *p = malloc(n ? n : 1);
  if (!*p)
    return 2; /* out of memory */
  LOG("hostalloc %llx %zu\n", (unsigned long long)(uintptr_t)*p, n);
  return OK;
}
CUresult cuMemFreeHost(void *p) {
  free(p);
  return OK;
}
CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n,
                           CUstream s) {
  FAIL_IF_ASKED("cuMemcpyHtoDAsync");
  LOG("htod %llx %zu %llx\n", (unsigned long long)dst, n,
      (unsigned long long)(uintptr_t)s);
  memcpy((void *)(uintptr_t)dst, src, n);
  return OK;
}
CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s) {
  LOG("dtoh %llx %zu %llx\n", (unsigned long long)src, n,
      (unsigned long long)(uintptr_t)s);
  memcpy(dst, (void *)(uintptr_t)src, n);
  return OK;
}
CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n,
                           CUstream s) {
  LOG("dtod %llx %llx %zu %llx\n", (unsigned long long)src,
      (unsigned long long)dst, n, (unsigned long long)(uintptr_t)s);
  memmove((void *)(uintptr_t)dst, (void *)(uintptr_t)src, n);
  return OK;
}

CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n,
                         CUstream s) {
  FAIL_IF_ASKED("cuMemsetD8Async");
  LOG("memset %llx %u %zu %llx\n", (unsigned long long)dst, (unsigned)value, n,
      (unsigned long long)(uintptr_t)s);
  memset((void *)(uintptr_t)dst, value, n);
  return OK;
}

/* ---- streams and events */

CUresult cuStreamSynchronize(CUstream s) {
  FAIL_IF_ASKED("cuStreamSynchronize");
  LOG("sync %llx\n", (unsigned long long)(uintptr_t)s);
  return OK;
}
CUresult cuCtxSynchronize(void) {
  LOG("sync context\n");
  return OK;
}
static int event;
CUresult cuEventCreate(void **ev, unsigned flags) {
  *ev = &event;
  return OK;
}
CUresult cuEventRecord(void *ev, CUstream s) {
  LOG("record %llx\n", (unsigned long long)(uintptr_t)s);
  return OK;
}
CUresult cuEventQuery(void *ev) {
  LOG("query\n");
  FAIL_IF_ASKED("cuEventQuery");
  return OK;
}
CUresult cuEventDestroy(void *ev) { return OK; }
CUresult cuStreamWaitEvent(CUstream s, void *ev, unsigned flags) {
  LOG("wait %llx\n", (unsigned long long)(uintptr_t)s);
  return OK;
}

/* ---- modules: each .entry of the PTX with its parameters' sizes */

#define MAX_PARAMS 256
typedef struct Function {
  char name[256];
  int numParams;
  int paramSize[MAX_PARAMS];
  int sharedAllowed; /* cuFuncSetAttribute set maxDynamicShared */
  int maxDynamicShared;
} Function;
typedef struct Module {
  int numFunctions;
  Function *functions;
} Module;

/* The size of the parameter declared at `decl` (".param .u64 .ptr ... name",
 * ".param .align 8 .b8 name[16]"), up to `end`. */
static int paramSize(const char *decl, const char *end) {
  const char *bracket = memchr(decl, '[', end - decl);
  if (bracket)
    return atoi(bracket + 1);
  static const char *const types[] = {".u64", ".s64", ".b64", ".f64", ".u32",
                                      ".s32", ".b32", ".f32", ".u16", ".s16",
                                      ".b16", ".f16", ".u8",  ".s8",  ".b8"};
  static const int sizes[] = {8, 8, 8, 8, 4, 4, 4, 4, 2, 2, 2, 2, 1, 1, 1};
  for (unsigned i = 0; i < sizeof sizes / sizeof *sizes; ++i) {
    const char *t = strstr(decl, types[i]);
    size_t n = strlen(types[i]);
    if (t && t < end && (t[n] == ' ' || t[n] == '\t'))
      return sizes[i];
  }
  return -1;
}

CUresult cuModuleLoadData(void **module, const void *image) {
  FAIL_IF_ASKED("cuModuleLoadData");
  const char *ptx = image;
  if (!strstr(ptx, ".version") || !strstr(ptx, ".target"))
    return INVALID_IMAGE;
  Module *m = calloc(1, sizeof *m);
  for (const char *at = strstr(ptx, ".entry"); at;
       at = strstr(at + 1, ".entry")) {
    m->functions =
        realloc(m->functions, (m->numFunctions + 1) * sizeof(Function));
    Function *f = &m->functions[m->numFunctions++];
    memset(f, 0, sizeof *f);
    const char *name = at + strlen(".entry");
    while (*name == ' ' || *name == '\t')
      ++name;
    size_t len = strcspn(name, "( \t\n");
    if (len >= sizeof f->name)
      return INVALID_IMAGE;
    memcpy(f->name, name, len);
    const char *open = strchr(name, '('), *close = open ? strchr(open, ')') : 0;
    if (!open || !close)
      return INVALID_IMAGE;
    for (const char *p = strstr(open, ".param"); p && p < close;
         p = strstr(p + 1, ".param")) {
      const char *end = strpbrk(p, ",)");
      int size = paramSize(p, end);
      if (size <= 0 || f->numParams == MAX_PARAMS)
        return INVALID_IMAGE;
      f->paramSize[f->numParams++] = size;
    }
  }
  *module = m;
  return OK;
}
CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned n,
                            void *options, void **values) {
  return cuModuleLoadData(module, image);
}
CUresult cuModuleUnload(void *module) { return OK; }
CUresult cuModuleGetFunction(void **fn, void *module, const char *name) {
  Module *m = module;
  for (int i = 0; m && i < m->numFunctions; ++i)
    if (strcmp(m->functions[i].name, name) == 0) {
      *fn = &m->functions[i];
      return OK;
    }
  return NOT_FOUND;
}
/* (no compiled code: every attribute a function has reads 0) */
CUresult cuFuncGetAttribute(int *value, int attr, void *fn) {
  FAIL_IF_ASKED("cuFuncGetAttribute");
  if (!fn)
    return INVALID_HANDLE;
  if (!value)
    return INVALID_VALUE;
  *value = 0;
  return OK;
}
CUresult cuFuncSetAttribute(void *fn, int attr, int value) {
  FAIL_IF_ASKED("cuFuncSetAttribute");
  Function *f = fn;
  if (!f)
    return INVALID_HANDLE;
  if (attr == 8) { /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
    if (value < 0 || value > sharedOptIn())
      return INVALID_VALUE;
    f->maxDynamicShared = value;
    f->sharedAllowed = 1;
  }
  return OK;
}

static CUresult launch(void *fn, unsigned gx, unsigned gy, unsigned gz,
                       unsigned bx, unsigned by, unsigned bz, unsigned smem,
                       CUstream s, void **params) {
  Function *f = fn;
  if (!f)
    return INVALID_HANDLE;
  if (!gx || !gy || !gz || !bx || !by || !bz || (uint64_t)bx * by * bz > 1024)
    return INVALID_VALUE;
  if (f->numParams && !params)
    return INVALID_VALUE;
  if (smem > (unsigned)(f->sharedAllowed ? f->maxDynamicShared : SHARED_DEFAULT))
    return INVALID_VALUE;
  FILE *log = logFile();
  if (!log)
    return OK;
  fprintf(log, "launch %s %u %u %u %u %u %u %u %llx", f->name, gx, gy, gz, bx,
          by, bz, smem, (unsigned long long)(uintptr_t)s);
  for (int i = 0; i < f->numParams; ++i) {
    uint64_t v = 0;
    memcpy(&v, params[i], f->paramSize[i] < 8 ? f->paramSize[i] : 8);
    fprintf(log, " %llu", (unsigned long long)v);
  }
  fputc('\n', log);
  return OK;
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned smem,
                        CUstream s, void **params, void **extra) {
  FAIL_IF_ASKED("cuLaunchKernel");
  return launch(fn, gx, gy, gz, bx, by, bz, smem, s, params);
}

/* (the driver's CUlaunchConfig and CUlaunchAttribute: an id, padding, and
 * a 64-byte union whose first int is the programmatic stream
 * serialization flag) */
typedef struct {
  int id;
  char pad[4];
  union {
    int value;
    char bytes[64];
  } value;
} LaunchAttribute;
typedef struct {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  LaunchAttribute *attrs;
  unsigned numAttrs;
} LaunchConfig;

CUresult cuLaunchKernelEx(const LaunchConfig *config, void *fn, void **params,
                          void **extra) {
  FAIL_IF_ASKED("cuLaunchKernelEx");
  if (!config || (config->numAttrs && !config->attrs))
    return INVALID_VALUE;
  for (unsigned i = 0; i < config->numAttrs; ++i)
    /* (6: programmatic stream serialization, the one kfuse sets) */
    if (config->attrs[i].id != 6)
      return INVALID_VALUE;
  CUresult r = launch(fn, config->gridDimX, config->gridDimY, config->gridDimZ,
                      config->blockDimX, config->blockDimY, config->blockDimZ,
                      config->sharedMemBytes, config->hStream, params);
  FILE *log = logFile();
  if (r != OK || !log)
    return r;
  for (unsigned i = 0; i < config->numAttrs; ++i)
    fprintf(log, "attr %d %d\n", config->attrs[i].id,
            config->attrs[i].value.value);
  return OK;
}

CUresult cuOccupancyMaxActiveClusters(int *clusters, void *fn,
                                      const LaunchConfig *config) {
  FAIL_IF_ASKED("cuOccupancyMaxActiveClusters");
  Function *f = fn;
  if (!f)
    return INVALID_HANDLE;
  if (!clusters || !config)
    return INVALID_VALUE;
  const char *v = getenv("NULLCUDA_CLUSTERS");
  *clusters = v ? atoi(v) : 15;
  FILE *log = logFile();
  if (log)
    fprintf(log, "occupancy %s %u %u %u %u %u %u %u %d\n", f->name,
            config->gridDimX, config->gridDimY, config->gridDimZ,
            config->blockDimX, config->blockDimY, config->blockDimZ,
            config->sharedMemBytes, *clusters);
  return OK;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, void *fn,
                                                     int threads, size_t smem) {
  FAIL_IF_ASKED("cuOccupancyMaxActiveBlocksPerMultiprocessor");
  Function *f = fn;
  if (!f)
    return INVALID_HANDLE;
  if (!blocks || threads <= 0 || threads > 1024)
    return INVALID_VALUE;
  const char *v = getenv("NULLCUDA_BLOCKS_PER_SM");
  *blocks = v ? atoi(v) : 1;
  FILE *log = logFile();
  if (log)
    fprintf(log, "occupancy_sm %s %d %zu %d\n", f->name, threads, smem, *blocks);
  return OK;
}

/* ---- cuda-bindings finds every entry point through this one */

CUresult cuGetProcAddress_v2(const char *symbol, void **fn, int version,
                             uint64_t flags, int *status) {
  /* (this library's own symbols: it may be loaded RTLD_LOCAL) */
  static void *self;
  if (!self) {
    Dl_info info;
    if (dladdr((void *)&cuGetProcAddress_v2, &info) && info.dli_fname)
      self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  }
  *fn = self ? dlsym(self, symbol) : NULL;
  /* (CU_GET_PROC_ADDRESS_SUCCESS = 0, SYMBOL_NOT_FOUND = 1) */
  if (status)
    *status = *fn ? 0 : 1;
  return *fn ? OK : NOT_FOUND;
}
CUresult cuGetProcAddress(const char *symbol, void **fn, int version,
                          uint64_t flags) {
  return cuGetProcAddress_v2(symbol, fn, version, flags, NULL);
}
