//===- Registration.cpp - register kfuse dialects, passes, pipelines ------===//

#include "transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"

namespace kfuse {
void registerPipelines();

void registerDialects(mlir::DialectRegistry &registry) {
  registry.insert<fusion::FusionDialect>();
}

void registerAllPassesAndPipelines() {
  // Registration is global; the Python extension may be imported into a
  // process that already registered (e.g. twice through reloads).
  static bool done = [] {
    registerKfusePasses();
    registerPipelines();
    return true;
  }();
  (void)done;
}
} // namespace kfuse
