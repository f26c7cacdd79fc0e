//===- fuse-opt.cpp - the kfuse optimizer driver --------------------------===//
//
// mlir-opt with all upstream dialects, extensions and passes, plus the fusion
// dialect and kfuse's passes and pipelines. Python runs the same registered
// pipelines by name, so anything reproducible in Python is reproducible here.
//
//===----------------------------------------------------------------------===//

#include "transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
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
