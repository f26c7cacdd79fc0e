"""The fusion dialect's ops as Python classes (GroupOp, YieldOp, ...),
generated from dialect/FusionOps.td."""

from ._fusion_ops_gen import *  # noqa: F401,F403
