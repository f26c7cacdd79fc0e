//===- fuse-opt.cpp - the kfuse optimizer driver --------------------------===//
//
// mlir-opt with all upstream dialects, extensions and passes, plus the fusion
// dialect and kfuse's passes and pipelines. Python runs the same registered
// pipelines by name, so anything reproducible in Python is reproducible here.
//
// MLIR's parser aborts the process on some invalid input (an assertion while
// it discards a half-parsed operation, after it has printed the input's
// error). So the driver runs in a child process whose error stream passes
// through this one: if the child dies of a signal, the crash report (bug
// report request, stack dump) is left out and fuse-opt fails with an error
// instead, exit status 1. Python's kfuse.compile guards its parser the same
// way (pipeline._parser_aborts).
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

int runDriver(int argc, char **argv) {
  mlir::registerAllPasses();
  kfuse::registerAllPassesAndPipelines();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  kfuse::registerDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "kfuse optimizer driver\n", registry));
}

/// Whether `line` starts LLVM's crash report (what follows it is the report).
bool startsCrashReport(const std::string &line) {
  return line.rfind("PLEASE submit a bug report", 0) == 0 ||
         line.rfind("Stack dump:", 0) == 0;
}

/// Copies the child's error stream to ours line by line, up to its crash
/// report if it has one. Returns whether an error diagnostic came first.
bool forwardErrors(int fd) {
  std::string line;
  bool inReport = false, sawError = false;
  char buf[4096];
  auto flush = [&] {
    inReport = inReport || startsCrashReport(line);
    if (!inReport) {
      sawError = sawError || line.find(": error: ") != std::string::npos;
      fwrite(line.data(), 1, line.size(), stderr);
    }
    line.clear();
  };
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    for (ssize_t i = 0; i < n; ++i) {
      line.push_back(buf[i]);
      if (buf[i] == '\n')
        flush();
    }
  }
  if (!line.empty())
    flush();
  fflush(stderr);
  return sawError;
}

} // namespace

int main(int argc, char **argv) {
  int errPipe[2];
  if (pipe(errPipe) != 0)
    return runDriver(argc, argv);
  fflush(stdout);
  fflush(stderr);
  pid_t child = fork();
  if (child < 0) {
    close(errPipe[0]);
    close(errPipe[1]);
    return runDriver(argc, argv);
  }
  if (child == 0) {
    close(errPipe[0]);
    dup2(errPipe[1], STDERR_FILENO);
    close(errPipe[1]);
    return runDriver(argc, argv);
  }
  close(errPipe[1]);
  bool inputErrors = forwardErrors(errPipe[0]);
  close(errPipe[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  if (sig != SIGABRT && sig != SIGSEGV && sig != SIGBUS && sig != SIGILL &&
      sig != SIGFPE) {
    // stopped from outside (a closed pipe, an interrupt): end the same way
    signal(sig, SIG_DFL);
    raise(sig);
    return 128 + sig;
  }
  if (inputErrors)
    fprintf(stderr,
            "fuse-opt: error: MLIR aborted (signal %d: %s) after the errors "
            "above: the input is not valid MLIR\n",
            sig, strsignal(sig));
  else
    fprintf(stderr,
            "fuse-opt: error: crashed (signal %d: %s): a bug in kfuse or "
            "MLIR; please report it with this input and command line\n",
            sig, strsignal(sig));
  return 1;
}
