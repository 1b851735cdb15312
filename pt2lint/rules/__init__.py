"""The rule registry: every implemented rule, keyed by code.

Each rule's metadata (name, category, severity, explanation, examples) lives in
its TOML spec under the top-level ``rules/`` folder; this package holds the
matching logic only.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Type

from pt2lint.rules.amp_distributed import (
    AutocastManualEnter,
    CollectiveGraphBreak,
    DeprecatedAmpApi,
    FsdpFlatParamsUnderCompile,
    GradScalerInCompiledRegion,
    OptimizerInCompiledRegion,
    RankDependentBranch,
)
from pt2lint.rules.base import Dispatch, Rule
from pt2lint.rules.data_dependent import (
    DataDependentBranch,
    TensorEqualAllclose,
    TensorItem,
    TensorTolist,
    TensorToPythonScalar,
)
from pt2lint.rules.dynamic_shape import BooleanMaskIndex, DynamicShapeOp
from pt2lint.rules.export import DataDependentAssert, TensorNumpy
from pt2lint.rules.inplace_view import InplaceViewOnInput
from pt2lint.rules.iterators import IteratorIntoGraphCall, StoredIteratorNext
from pt2lint.rules.lookups import UntraceableTensorLookup
from pt2lint.rules.mutation import InputMutation
from pt2lint.rules.objects import ModuleInitGraphBreak, ParameterInCompiledRegion, SourcelessMethodCallBreak
from pt2lint.rules.sorting import MinMaxKey, SortNonConstant
from pt2lint.rules.sequences import TensorSequenceSearch
from pt2lint.rules.refused import RefusedTorchApi
from pt2lint.rules.tensor_queries import UntraceableTensorQuery
from pt2lint.rules.hooks import HookHandleUse, ModuleHookRegistration
from pt2lint.rules.recompile import (
    GlobalStateMutation,
    GrowingContainerLen,
    ModuleFromSize,
    ModuleStateMutation,
    SizeKeyedDict,
    TensorId,
)
from pt2lint.rules.sync import HostSync, HostTensorCreation
from pt2lint.rules.side_effects import (
    AutogradInForward,
    DebuggerCall,
    DisabledFunctionCall,
    ExplicitGraphBreak,
    FunctionAttributeStore,
    GeneratorGraphBreak,
    LoggingCall,
    ManualSeed,
    NondeterministicPythonCall,
    NumpyUnsupportedFunction,
    PrintCall,
    RnnModuleCall,
    TorchGeneratorUse,
    TorchScriptModuleCall,
    UntraceableCFunction,
    WarningsWarn,
)

RULES: Dict[str, Type[Rule]] = {
    cls.code: cls
    for cls in (
        TensorItem,
        TensorTolist,
        TensorToPythonScalar,
        DataDependentBranch,
        TensorEqualAllclose,
        BooleanMaskIndex,
        DynamicShapeOp,
        PrintCall,
        LoggingCall,
        WarningsWarn,
        DebuggerCall,
        NondeterministicPythonCall,
        ManualSeed,
        UntraceableCFunction,
        AutogradInForward,
        ExplicitGraphBreak,
        DisabledFunctionCall,
        GeneratorGraphBreak,
        RnnModuleCall,
        NumpyUnsupportedFunction,
        InplaceViewOnInput,
        ParameterInCompiledRegion,
        ModuleInitGraphBreak,
        SourcelessMethodCallBreak,
        UntraceableTensorLookup,
        SortNonConstant,
        MinMaxKey,
        UntraceableTensorQuery,
        RefusedTorchApi,
        TorchScriptModuleCall,
        TensorSequenceSearch,
        IteratorIntoGraphCall,
        StoredIteratorNext,
        FunctionAttributeStore,
        ModuleHookRegistration,
        HookHandleUse,
        TorchGeneratorUse,
        InputMutation,
        ModuleStateMutation,
        TensorId,
        GlobalStateMutation,
        SizeKeyedDict,
        ModuleFromSize,
        GrowingContainerLen,
        TensorNumpy,
        DataDependentAssert,
        DeprecatedAmpApi,
        AutocastManualEnter,
        GradScalerInCompiledRegion,
        OptimizerInCompiledRegion,
        CollectiveGraphBreak,
        RankDependentBranch,
        FsdpFlatParamsUnderCompile,
        HostSync,
        HostTensorCreation,
    )
}

# Codes produced by the engine itself rather than by a rule class.
# PTC004: a call the interpreter did not follow (a limit reached); PTC09x: confirm mode only.
ENGINE_CODES = frozenset({"PTC001", "PTC002", "PTC003", "PTC004", "PTC090", "PTC091"})


def build_dispatch(enabled: FrozenSet[str], settings) -> Dispatch:
    """Instantiate the enabled rules and group their handlers by event."""
    return Dispatch([cls(settings) for code, cls in RULES.items() if code in enabled])


__all__ = ["RULES", "ENGINE_CODES", "build_dispatch", "Rule", "Dispatch"]
