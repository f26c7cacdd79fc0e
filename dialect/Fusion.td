//===- Fusion.td - umbrella for the fusion dialect ---------*- tablegen -*-===//
//
// The fusion dialect says which tensor operations run together in one kernel
// (`fusion.group`) and how that kernel should be generated (strategy
// attributes). What is computed stays in linalg and the upstream dialects.
//
//===----------------------------------------------------------------------===//

#ifndef KFUSE_FUSION_TD
#define KFUSE_FUSION_TD

include "FusionDialect.td"
include "FusionAttrs.td"
include "FusionOps.td"

#endif // KFUSE_FUSION_TD
