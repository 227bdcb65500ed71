"""opendml: DirectML's operator model in Python, on the CPU (NumPy) and on NVIDIA GPUs.

>>> import numpy as np, opendml
>>> opendml.clip(np.array([-4.0, 0.5, 4.0], np.float32), -2.5, 2.5)
array([-2.5,  0.5,  2.5], dtype=float32)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import graph, typing
from .buffer import Buffer, BufferBinding
from .device import Device
from .dtypes import DataType
from .enums import (
    AxisDirection,
    ExecutionFlags,
    IsInfinityMode,
    NanPolicy,
    QuantizationType,
    ReduceFunction,
    RoundingMode,
    TensorFlags,
)
from .errors import (
    BackendUnavailableError,
    BindingError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    KernelUnsupportedError,
    OpenDMLError,
    OutOfMemoryError,
    UnsupportedFeatureLevelError,
)
from .feature_levels import FeatureLevel
from .functional import FUNCTIONS as _FUNCTIONS
from .functional import (
    argmax,
    argmin,
    cast,
    dequantize,
    dequantize_linear,
    hardmax,
    log_softmax,
    quantize,
    quantize_linear,
    quantized_linear_add,
    reduce,
    softmax,
    top_k,
    unravel_index,
)
from .graph import Graph
from .graphs import CompiledGraph, ConstantNode, GraphDesc, InputEdge, IntermediateEdge, OperatorNode, OutputEdge
from .operator import BindingProperties, CompiledOperator, Operator
from .ops.abs import ElementWiseAbsDesc
from .ops.acos import ElementWiseAcosDesc
from .ops.acosh import ElementWiseAcoshDesc
from .ops.activation_identity import ActivationIdentityDesc
from .ops.activation_tanh import ActivationTanhDesc
from .ops.add import ElementWiseAddDesc
from .ops.add1 import ElementWiseAdd1Desc
from .ops.argmax import ArgMaxDesc
from .ops.argmin import ArgMinDesc
from .ops.asin import ElementWiseAsinDesc
from .ops.asinh import ElementWiseAsinhDesc
from .ops.atan import ElementWiseAtanDesc
from .ops.atan_yx import ElementWiseAtanYxDesc
from .ops.atanh import ElementWiseAtanhDesc
from .ops.bit_and import ElementWiseBitAndDesc
from .ops.bit_count import ElementWiseBitCountDesc
from .ops.bit_not import ElementWiseBitNotDesc
from .ops.bit_or import ElementWiseBitOrDesc
from .ops.bit_shift_left import ElementWiseBitShiftLeftDesc
from .ops.bit_shift_right import ElementWiseBitShiftRightDesc
from .ops.bit_xor import ElementWiseBitXorDesc
from .ops.cast import CastDesc
from .ops.ceil import ElementWiseCeilDesc
from .ops.celu import ActivationCeluDesc
from .ops.clip import ElementWiseClip1Desc, ElementWiseClipDesc
from .ops.clip_grad import ElementWiseClipGrad1Desc, ElementWiseClipGradDesc
from .ops.constant_pow import ElementWiseConstantPowDesc
from .ops.cos import ElementWiseCosDesc
from .ops.cosh import ElementWiseCoshDesc
from .ops.dequantize import DequantizeDesc
from .ops.dequantize_linear import ElementWiseDequantizeLinearDesc
from .ops.difference_square import ElementWiseDifferenceSquareDesc
from .ops.divide import ElementWiseDivideDesc
from .ops.elementwise import ScaleBias
from .ops.elementwise_tanh import ElementWiseTanhDesc
from .ops.elu import ActivationEluDesc
from .ops.erf import ElementWiseErfDesc
from .ops.exp import ElementWiseExpDesc
from .ops.floor import ElementWiseFloorDesc
from .ops.gelu import ActivationGeluDesc
from .ops.hard_sigmoid import ActivationHardSigmoidDesc
from .ops.hard_swish import ActivationHardSwishDesc
from .ops.identity import ElementWiseIdentityDesc
from .ops.is_infinity import ElementWiseIsInfinityDesc
from .ops.is_nan import ElementWiseIsNanDesc
from .ops.leaky_relu import ActivationLeakyReluDesc
from .ops.linear import ActivationLinearDesc
from .ops.log import ElementWiseLogDesc
from .ops.logical_and import ElementWiseLogicalAndDesc
from .ops.logical_equals import ElementWiseLogicalEqualsDesc
from .ops.logical_greater_than import ElementWiseLogicalGreaterThanDesc
from .ops.logical_greater_than_or_equal import ElementWiseLogicalGreaterThanOrEqualDesc
from .ops.logical_less_than import ElementWiseLogicalLessThanDesc
from .ops.logical_less_than_or_equal import ElementWiseLogicalLessThanOrEqualDesc
from .ops.logical_not import ElementWiseLogicalNotDesc
from .ops.logical_or import ElementWiseLogicalOrDesc
from .ops.logical_xor import ElementWiseLogicalXorDesc
from .ops.maximum import ElementWiseMaxDesc
from .ops.mean import ElementWiseMeanDesc
from .ops.minimum import ElementWiseMinDesc
from .ops.modulus_floor import ElementWiseModulusFloorDesc
from .ops.modulus_truncate import ElementWiseModulusTruncateDesc
from .ops.multiply import ElementWiseMultiplyDesc
from .ops.negate import ElementWiseNegateDesc
from .ops.parameterized_relu import ActivationParameterizedReluDesc
from .ops.parametric_softplus import ActivationParametricSoftplusDesc
from .ops.pow import ElementWisePowDesc
from .ops.quantize import QuantizeDesc
from .ops.quantize_linear import ElementWiseQuantizeLinearDesc
from .ops.quantized_linear_add import ElementWiseQuantizedLinearAddDesc
from .ops.recip import ElementWiseRecipDesc
from .ops.reduce import ReduceDesc
from .ops.relu import ActivationReluDesc
from .ops.relu_grad import ActivationReluGradDesc
from .ops.round import ElementWiseRoundDesc
from .ops.scaled_elu import ActivationScaledEluDesc
from .ops.scaled_tanh import ActivationScaledTanhDesc
from .ops.shrink import ActivationShrinkDesc
from .ops.sigmoid import ActivationSigmoidDesc
from .ops.sign import ElementWiseSignDesc
from .ops.sin import ElementWiseSinDesc
from .ops.sinh import ElementWiseSinhDesc
from .ops.softmax import (
    ActivationHardmax1Desc,
    ActivationHardmaxDesc,
    ActivationLogSoftmax1Desc,
    ActivationLogSoftmaxDesc,
    ActivationSoftmax1Desc,
    ActivationSoftmaxDesc,
)
from .ops.softplus import ActivationSoftplusDesc
from .ops.softsign import ActivationSoftsignDesc
from .ops.sqrt import ElementWiseSqrtDesc
from .ops.subtract import ElementWiseSubtractDesc
from .ops.swish import ActivationSwishDesc
from .ops.tan import ElementWiseTanDesc
from .ops.threshold import ElementWiseThresholdDesc
from .ops.thresholded_relu import ActivationThresholdedReluDesc
from .ops.top_k import TopK1Desc, TopKDesc
from .ops.where import ElementWiseIfDesc
from .packing import pack4, unpack4
from .recording import BindingTable, CommandList, CommandQueue, CommandRecorder, OperatorInitializer
from .tensor import TensorDesc, calc_buffer_tensor_size
from .tracing import compile

__version__ = "0.1.0"

__all__ = [
    "ActivationCeluDesc",
    "ActivationEluDesc",
    "ActivationGeluDesc",
    "ActivationHardSigmoidDesc",
    "ActivationHardSwishDesc",
    "ActivationHardmax1Desc",
    "ActivationHardmaxDesc",
    "ActivationIdentityDesc",
    "ActivationLeakyReluDesc",
    "ActivationLinearDesc",
    "ActivationLogSoftmax1Desc",
    "ActivationLogSoftmaxDesc",
    "ActivationParameterizedReluDesc",
    "ActivationParametricSoftplusDesc",
    "ActivationReluDesc",
    "ActivationReluGradDesc",
    "ActivationScaledEluDesc",
    "ActivationScaledTanhDesc",
    "ActivationShrinkDesc",
    "ActivationSigmoidDesc",
    "ActivationSoftmax1Desc",
    "ActivationSoftmaxDesc",
    "ActivationSoftplusDesc",
    "ActivationSoftsignDesc",
    "ActivationSwishDesc",
    "ActivationTanhDesc",
    "ActivationThresholdedReluDesc",
    "ArgMaxDesc",
    "ArgMinDesc",
    "AxisDirection",
    "BackendUnavailableError",
    "BindingError",
    "BindingProperties",
    "BindingTable",
    "Buffer",
    "BufferBinding",
    "CastDesc",
    "CommandList",
    "CommandQueue",
    "CommandRecorder",
    "CompiledGraph",
    "CompiledOperator",
    "ConstantNode",
    "DataType",
    "DequantizeDesc",
    "Device",
    "ElementWiseAbsDesc",
    "ElementWiseAcosDesc",
    "ElementWiseAcoshDesc",
    "ElementWiseAdd1Desc",
    "ElementWiseAddDesc",
    "ElementWiseAsinDesc",
    "ElementWiseAsinhDesc",
    "ElementWiseAtanDesc",
    "ElementWiseAtanYxDesc",
    "ElementWiseAtanhDesc",
    "ElementWiseBitAndDesc",
    "ElementWiseBitCountDesc",
    "ElementWiseBitNotDesc",
    "ElementWiseBitOrDesc",
    "ElementWiseBitShiftLeftDesc",
    "ElementWiseBitShiftRightDesc",
    "ElementWiseBitXorDesc",
    "ElementWiseCeilDesc",
    "ElementWiseClip1Desc",
    "ElementWiseClipDesc",
    "ElementWiseClipGrad1Desc",
    "ElementWiseClipGradDesc",
    "ElementWiseConstantPowDesc",
    "ElementWiseCosDesc",
    "ElementWiseCoshDesc",
    "ElementWiseDequantizeLinearDesc",
    "ElementWiseDifferenceSquareDesc",
    "ElementWiseDivideDesc",
    "ElementWiseErfDesc",
    "ElementWiseExpDesc",
    "ElementWiseFloorDesc",
    "ElementWiseIdentityDesc",
    "ElementWiseIfDesc",
    "ElementWiseIsInfinityDesc",
    "ElementWiseIsNanDesc",
    "ElementWiseLogDesc",
    "ElementWiseLogicalAndDesc",
    "ElementWiseLogicalEqualsDesc",
    "ElementWiseLogicalGreaterThanDesc",
    "ElementWiseLogicalGreaterThanOrEqualDesc",
    "ElementWiseLogicalLessThanDesc",
    "ElementWiseLogicalLessThanOrEqualDesc",
    "ElementWiseLogicalNotDesc",
    "ElementWiseLogicalOrDesc",
    "ElementWiseLogicalXorDesc",
    "ElementWiseMaxDesc",
    "ElementWiseMeanDesc",
    "ElementWiseMinDesc",
    "ElementWiseModulusFloorDesc",
    "ElementWiseModulusTruncateDesc",
    "ElementWiseMultiplyDesc",
    "ElementWiseNegateDesc",
    "ElementWisePowDesc",
    "ElementWiseQuantizeLinearDesc",
    "ElementWiseQuantizedLinearAddDesc",
    "ElementWiseRecipDesc",
    "ElementWiseRoundDesc",
    "ElementWiseSignDesc",
    "ElementWiseSinDesc",
    "ElementWiseSinhDesc",
    "ElementWiseSqrtDesc",
    "ElementWiseSubtractDesc",
    "ElementWiseTanDesc",
    "ElementWiseTanhDesc",
    "ElementWiseThresholdDesc",
    "ExecutionFlags",
    "FeatureLevel",
    "Graph",
    "GraphDesc",
    "InputEdge",
    "IntermediateEdge",
    "InvalidArgumentError",
    "InvalidArgumentTypeError",
    "IsInfinityMode",
    "KernelUnsupportedError",
    "NanPolicy",
    "OpenDMLError",
    "Operator",
    "OperatorInitializer",
    "OperatorNode",
    "OutOfMemoryError",
    "OutputEdge",
    "QuantizationType",
    "QuantizeDesc",
    "ReduceDesc",
    "ReduceFunction",
    "RoundingMode",
    "ScaleBias",
    "TensorDesc",
    "TensorFlags",
    "TopK1Desc",
    "TopKDesc",
    "UnsupportedFeatureLevelError",
    "argmax",
    "argmin",
    "calc_buffer_tensor_size",
    "cast",
    "compile",
    "dequantize",
    "dequantize_linear",
    "graph",
    "hardmax",
    "log_softmax",
    "pack4",
    "quantize",
    "quantize_linear",
    "quantized_linear_add",
    "reduce",
    "softmax",
    "top_k",
    "typing",
    "unpack4",
    "unravel_index",
]

# The declared operators' functions (opendml.functional.declared): clip, threshold, relu, leaky_relu, ...; type
# checkers read their signatures from the stub generated from them (opendml.functional.declared_stub).
if TYPE_CHECKING:
    from .functional.declared_api import *  # noqa: F403
else:
    globals().update({f.__name__: f for f in _FUNCTIONS.values()})
__all__ += sorted(f.__name__ for f in _FUNCTIONS.values() if f.__name__ not in __all__)
