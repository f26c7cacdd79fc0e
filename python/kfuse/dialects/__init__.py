"""Python classes of kfuse's dialects' ops, generated from their TableGen
definitions at build time. kfuse.mlir_setup puts this package on the mlir
package's dialect search path, so ops of the fusion dialect read from IR come
back as these classes (`fusion.GroupOp`)."""
