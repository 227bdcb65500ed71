"""DirectML's graph model: GraphDesc and its nodes and edges, checked, planned and compiled."""

from __future__ import annotations

from .compiled import CompiledGraph
from .desc import ConstantNode, GraphDesc, InputEdge, IntermediateEdge, OperatorNode, OutputEdge
from .plan import ExecutionPlan, Region, Slot, Step

__all__ = ["CompiledGraph", "ConstantNode", "ExecutionPlan", "GraphDesc", "InputEdge", "IntermediateEdge",
           "OperatorNode", "OutputEdge", "Region", "Slot", "Step"]
