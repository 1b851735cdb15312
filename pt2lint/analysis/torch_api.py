"""What the analysis knows about torch's API surface, as data.

Sources: the ``torch.Tensor`` and ``torch`` reference pages (return types,
view semantics -- "Tensor Views" in the torch docs) and the in-place naming
convention (a trailing underscore, "In-place semantics" in the torch docs).
"""

from __future__ import annotations

from pt2lint.analysis.dynamo_facts import torch_init_function

# Tensor methods whose result shares storage with the receiver ("Tensor Views"
# in the torch docs).  ``float``/``to``/``type_as``/``contiguous``/``reshape`` are
# views when they are no-ops (a float32 tensor's ``.float()``), which is the
# common case for model inputs, so they keep the alias too.
VIEW_METHODS = frozenset(
    """view view_as reshape reshape_as transpose transpose_ permute t T mT H mH squeeze unsqueeze
    expand expand_as narrow select unflatten flatten contiguous detach diagonal as_strided unfold
    movedim moveaxis swapaxes swapdims real imag view_as_real view_as_complex float to type_as
    data indices values crow_indices col_indices ravel align_to refine_names rename""".split()
)

# The names of ``torch.dtype`` objects in the ``torch`` namespace (torch 2.13:
# ``[n for n in dir(torch) if isinstance(getattr(torch, n), torch.dtype)]``; a test
# checks the list against the installed torch), and those that name float32, the
# default dtype (``torch.get_default_dtype()``) floating tensors are made with.
TORCH_DTYPES = frozenset(
    """bfloat16 bit bits16 bits1x8 bits2x4 bits4x2 bits8 bool cdouble cfloat chalf complex128 complex32
    complex64 double float float16 float32 float4_e2m1fn_x2 float64 float8_e4m3fn float8_e4m3fnuz
    float8_e5m2 float8_e5m2fnuz float8_e8m0fnu half int int1 int16 int2 int3 int32 int4 int5 int6 int64
    int7 int8 long qint32 qint8 quint2x4 quint4x2 quint8 short uint1 uint16 uint2 uint3 uint32 uint4
    uint5 uint6 uint64 uint7 uint8""".split()
)
DEFAULT_FLOAT_DTYPES = frozenset({"float", "float32"})

# Views that are (usually) not contiguous, and the methods that then copy instead of viewing.
STRIDING_VIEWS = frozenset("permute transpose t T mT movedim moveaxis swapaxes swapdims expand expand_as".split())
COPY_IF_STRIDED = frozenset({"contiguous", "reshape", "reshape_as", "flatten", "ravel"})

# Methods returning a tuple of views of the receiver.
SPLIT_METHODS = frozenset("split chunk unbind tensor_split split_with_sizes hsplit vsplit dsplit".split())

# Tensor methods that return tuples of tensors.
TUPLE_METHODS = frozenset(
    "sort topk kthvalue aminmax std_mean var_mean qr svd slogdet lu frexp histogram".split()
)
# ``x.max(dim)`` returns ``(values, indices)``; ``x.max()``/``x.max(other)`` a tensor.
DIM_TUPLE_METHODS = frozenset("max min median nanmedian mode cummax cummin".split())

# Tensor methods returning SymInts / sizes.
SHAPE_METHODS = frozenset("dim ndimension numel nelement element_size get_device storage_offset".split())
SIZE_METHODS = frozenset({"size", "stride"})  # no argument: torch.Size; with a dim: SymInt
CONST_METHODS = frozenset(
    """is_contiguous is_floating_point is_complex is_signed is_pinned is_shared is_set_to
    is_inference is_nonzero_static type""".split()
)
TENSOR_CONST_ATTRS = frozenset(
    """dtype device ndim is_cuda is_cpu is_mps is_meta is_sparse is_quantized is_leaf requires_grad
    layout names is_nested itemsize nbytes""".split()
)
#: Tensor attributes that test for a sparse layout: False on every tensor Dynamo traces.
SPARSE_LAYOUT_TESTS = frozenset({"is_sparse", "is_sparse_csr"})
TENSOR_TENSOR_ATTRS = frozenset({"T", "mT", "H", "mH", "data", "real", "imag", "grad"})
TENSOR_VIEW_ATTRS = frozenset({"T", "mT", "H", "mH", "data", "real", "imag"})

# Tensor methods with a trailing underscore that do not write tensor data.
NON_MUTATING_UNDERSCORE = frozenset({"requires_grad_", "share_memory_", "retain_grad_", "rename_", "refine_names_"})

# Tensor methods / torch functions whose result has dtype bool.
BOOL_RESULT = frozenset(
    """eq ne lt le gt ge greater less greater_equal less_equal not_equal isnan isinf isfinite
    isposinf isneginf isreal signbit logical_and logical_or logical_not logical_xor bool any all
    isclose isin is_nonzero_mask""".split()
)
# Methods that keep the receiver's dtype (so a mask stays a mask).
DTYPE_PRESERVING = VIEW_METHODS | frozenset(
    "clone repeat tile roll flip fliplr flipud tril triu masked_fill index_select gather cpu cuda detach".split()
)

# Qualified torch functions whose result is not a tensor.
CONST_FUNCTIONS = frozenset(
    """torch.is_tensor torch.is_storage torch.is_floating_point torch.is_complex torch.is_nonzero_static
    torch.is_grad_enabled torch.is_inference_mode_enabled torch.get_default_dtype torch.get_default_device
    torch.finfo torch.iinfo torch.device torch.dtype torch.is_autocast_enabled torch.get_autocast_gpu_dtype
    torch.get_autocast_dtype torch.are_deterministic_algorithms_enabled torch.result_type torch.promote_types
    torch.can_cast torch.cuda.is_available torch.cuda.device_count torch.cuda.current_device
    torch.cuda.get_device_capability torch.backends.mps.is_available torch.jit.is_scripting
    torch.jit.is_tracing torch.compiler.is_compiling torch.compiler.is_dynamo_compiling
    torch.compiler.is_exporting torch._dynamo.is_compiling torch._C._get_tracing_state
    torch.overrides.has_torch_function torch.overrides.has_torch_function_unary
    torch.overrides.has_torch_function_variadic torch.get_num_threads torch.cuda.is_bf16_supported
    torch.is_deterministic_algorithms_warn_only_enabled torch.fx._symbolic_trace.is_fx_tracing
    torch.seed torch.initial_seed torch.random.seed torch.random.initial_seed""".split()
)
SHAPE_FUNCTIONS = frozenset({"torch.numel", "torch.Size", "torch.broadcast_shapes", "torch.sym_int", "torch.sym_max", "torch.sym_min"})
# Functions returning a Python value computed from tensor data.
DATA_FUNCTIONS = frozenset({"torch.equal", "torch.allclose", "torch.is_nonzero"})
#: ``torch.func`` transforms: ``vmap(f)``, ``grad(f)``... return a function whose result is a tensor
#: for a function ``f`` of tensors returning one (``grad_and_value``: a (gradient, value) pair),
#: per the ``torch.func`` API reference; Dynamo traces them as higher-order ops.
FUNC_TRANSFORMS = frozenset(
    """torch.func.vmap torch.vmap torch.func.grad torch.func.jacrev torch.func.jacfwd torch.func.hessian
    torch.func.grad_and_value""".split()
)
#: ``torch.func`` / ``torch.autograd.functional`` calls that return tensors outright: ``jvp`` and
#: ``vjp`` return pairs, the others a tensor (for a function of one tensor returning one).
FUNC_TENSOR_CALLS = frozenset(
    """torch.autograd.functional.jacobian torch.autograd.functional.hessian torch.autograd.functional.vjp
    torch.autograd.functional.jvp torch.autograd.functional.hvp torch.autograd.functional.vhp""".split()
)
#: Methods of ``torch.distributions.Distribution`` objects that return tensors (``sample``,
#: ``log_prob``...), and properties that are tensors (``mean``, ``probs``...), per its API reference.
DISTRIBUTION_TENSOR_METHODS = frozenset("sample rsample log_prob entropy cdf icdf perplexity sample_n".split())
DISTRIBUTION_TENSOR_PROPERTIES = frozenset("mean mode stddev variance probs logits loc scale".split())
TUPLE_FUNCTIONS = frozenset(
    """torch.split torch.chunk torch.unbind torch.tensor_split torch.meshgrid torch.broadcast_tensors
    torch.sort torch.topk torch.kthvalue torch.std_mean torch.var_mean torch.aminmax torch.frexp
    torch.atleast_1d torch.atleast_2d torch.atleast_3d torch.autograd.grad torch.linalg.qr
    torch.linalg.svd torch.linalg.eigh torch.linalg.eig torch.linalg.slogdet torch.linalg.lu
    torch.linalg.lstsq torch.histogram torch.unique_consecutive torch.hsplit torch.vsplit torch.dsplit""".split()
)

# Namespaces whose functions return tensors.
TENSOR_NAMESPACES = (
    "torch.nn.functional.",
    "torch.fft.",
    "torch.linalg.",
    "torch.special.",
    "torch.nn.init.",
    "torch.nested.",
    "torch.sparse.",
    "torch.masked.",
    "torch.ops.",
    "torch.Tensor.",
    "torch._C._nn.",
    "torch._C._VariableFunctions.",
)
THIRD_PARTY_TENSOR_FUNCTIONS = frozenset(
    """einops.rearrange einops.repeat einops.reduce einops.einsum einops.pack einops.unpack""".split()
)

# Names that guard code Dynamo never traces (or always traces), with the value
# they have while Dynamo traces a torch.compile region.
COMPILING_GUARDS = {
    "torch.compiler.is_compiling": True,
    "torch.compiler.is_dynamo_compiling": True,
    "torch._dynamo.is_compiling": True,
    "torch._dynamo.external_utils.is_compiling": True,
    "torch._utils.is_compiling": True,
    "torch.jit.is_scripting": False,
    "torch.jit.is_tracing": False,
    "torch._C._get_tracing_state": False,
    "torch.fx._symbolic_trace.is_fx_tracing": False,
}
# Helper names (any module) that libraries define around the same checks
# (transformers' ``is_torchdynamo_compiling``, diffusers' ``is_torch_version``-style guards).
COMPILING_GUARD_NAMES = {
    "is_torchdynamo_compiling": True,
    "is_torch_compiling": True,
    "is_compiling": True,
    "is_dynamo_compiling": True,
    "is_scripting": False,
    "is_tracing": False,
    "is_torch_fx_proxy": False,
}

# Decorators / wrappers that take a function out of Dynamo's tracing.
#: ``nn.Module`` methods that register a module hook and return its ``torch.utils.hooks.RemovableHandle``
#: (torch/nn/modules/module.py, torch 2.13)
MODULE_HOOK_METHODS = frozenset(
    """register_forward_hook register_forward_pre_hook register_full_backward_hook
    register_full_backward_pre_hook register_backward_hook""".split()
)
#: the global module-hook registrations of torch/nn/modules/module.py (torch 2.13), which return a
#: ``RemovableHandle`` too
GLOBAL_MODULE_HOOK_FUNCTIONS = frozenset(
    "torch.nn.modules.module." + n
    for n in """register_module_forward_hook register_module_forward_pre_hook register_module_full_backward_hook
    register_module_full_backward_pre_hook register_module_backward_hook""".split()
)

DISABLE_DECORATORS = frozenset({"torch.compiler.disable", "torch._dynamo.disable", "torch._disable_dynamo"})
# Functions Dynamo puts into the graph without tracing their body.  ``torch.jit.ignore`` and
# ``torch.jit.unused`` are not among them: they only mark the function for TorchScript, and
# Dynamo (torch 2.13) traces their body like any other (a tensor ``if`` inside one breaks).
OPAQUE_DECORATORS = frozenset(
    """torch.compiler.allow_in_graph torch._dynamo.allow_in_graph torch.library.custom_op
    torch._library.custom_ops.custom_op torch.compiler.assume_constant_result
    torch._dynamo.assume_constant_result""".split()
)
COMPILE_FUNCTIONS = frozenset({"torch.compile", "torch._dynamo.optimize"})

MODULE_BASES_PREFIX = "torch.nn."

#: Classes whose ``isinstance`` test tells a tensor from anything else (``torch.Tensor``,
#: ``nn.Parameter`` and the legacy typed tensor classes, which are ``torch.Tensor`` subclasses).
TENSOR_TYPES = frozenset({
    "torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter",
    "torch.FloatTensor", "torch.DoubleTensor", "torch.HalfTensor", "torch.BFloat16Tensor",
    "torch.LongTensor", "torch.IntTensor", "torch.ShortTensor", "torch.ByteTensor",
    "torch.CharTensor", "torch.BoolTensor",
})
NON_MODULE_TORCH_CLASSES = frozenset(
    """torch.nn.Parameter torch.nn.parameter.Parameter torch.nn.Buffer torch.nn.parameter.Buffer
    torch.nn.UninitializedParameter""".split()
)
AUTOGRAD_FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})

# nn modules / functionals with an ``inplace`` flag: position of the flag among
# positional constructor (or call) arguments.
INPLACE_MODULE_POS = {
    "ReLU": 0, "ReLU6": 0, "SiLU": 0, "Hardswish": 0, "Hardsigmoid": 0, "Mish": 0, "SELU": 0,
    "ELU": 1, "CELU": 1, "LeakyReLU": 1, "Dropout": 1, "Dropout1d": 1, "Dropout2d": 1, "Dropout3d": 1,
    "AlphaDropout": 1, "FeatureAlphaDropout": 1, "Threshold": 2, "Hardtanh": 2, "RReLU": 2,
}
INPLACE_FUNCTIONAL_POS = {
    "relu": 1, "relu6": 1, "silu": 1, "hardswish": 1, "hardsigmoid": 1, "mish": 1, "selu": 1,
    "elu": 2, "celu": 2, "leaky_relu": 2, "threshold": 3, "hardtanh": 3, "rrelu": 4,
    "dropout": 3, "dropout1d": 3, "dropout2d": 3, "dropout3d": 3, "alpha_dropout": 3,
    "feature_alpha_dropout": 3,
}


# NumPy names whose values are not arrays under Dynamo (types, dtype info, RNG handled by PTC305).
NUMPY_NON_ARRAY = (
    "numpy.random.", "numpy.dtype", "numpy.finfo", "numpy.iinfo", "numpy.isscalar", "numpy.can_cast",
    "numpy.result_type", "numpy.promote_types", "numpy.errstate", "numpy.printoptions",
)


# NumPy functions that, called on Python numbers only (sizes, constants; not lists or
# tuples), give a one-element floating result that Dynamo's fake tensors constant-fold
# (``FakeTensorMode`` propagates constants of at most ``CONSTANT_NUMEL_LIMIT`` = 1 element):
# ``int()``/``float()``/``.item()`` of it is a Python float read without a break, while an
# integer or bool result, or one from a list, a tuple or tensor data, breaks (torch 2.13:
# "torch.* op returned non-Tensor" / "Data dependent operator"). Source: the dtype and
# ``constant`` of each ``torch._numpy`` function's result on float and on int scalars under
# ``FakeTensorMode``, checked by tests/test_numpy_scalars.py against the installed torch.
NUMPY_FLOAT_OF_FLOAT = frozenset(
    """ceil floor trunc rint round around fix sqrt cbrt exp exp2 expm1 log log2 log10 log1p
    sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh deg2rad rad2deg
    degrees radians abs absolute fabs negative positive square reciprocal sign float64
    float32 float16 asarray array power float_power maximum minimum fmax fmin add subtract
    multiply divide true_divide floor_divide mod remainder fmod hypot arctan2 copysign
    clip""".split()
)
# Of those, the ones whose result is floating also when every argument is a Python int.
NUMPY_FLOAT_OF_INT = frozenset(
    """trunc sqrt cbrt exp exp2 expm1 log log2 log10 log1p sin cos tan arcsin arccos arctan
    sinh cosh tanh arcsinh arccosh arctanh deg2rad rad2deg degrees radians square reciprocal
    float64 float32 float16 float_power divide true_divide arctan2 copysign""".split()
)


#: Lower-case torch classes whose instances are context managers, not tensors.
CONTEXT_MANAGER_CLASSES = frozenset(
    """torch.autocast torch.amp.autocast torch.amp.autocast_mode.autocast torch.cuda.amp.autocast
    torch.cuda.amp.autocast_mode.autocast torch.cpu.amp.autocast torch.cpu.amp.autocast_mode.autocast""".split()
)


def is_tensor_function(qualname: str) -> bool:
    """True when ``qualname`` names a torch function that returns a tensor."""
    if qualname in CONST_FUNCTIONS or qualname in CONTEXT_MANAGER_CLASSES or qualname in SHAPE_FUNCTIONS or qualname in DATA_FUNCTIONS:
        return False
    if qualname in THIRD_PARTY_TENSOR_FUNCTIONS:
        return True
    if qualname in FUNC_TRANSFORMS:
        return False  # ``torch.vmap(f)`` is a function
    if qualname.startswith(TENSOR_NAMESPACES):
        if qualname.startswith("torch.ops."):
            return True  # ``torch.ops.<namespace>.<op>[.<overload>]``: an operator at any depth
        # a public function of the namespace (``torch.nn.functional.relu``); not a member of a class
        # in it nor a private helper (``F._Reduction.get_enum`` returns an int)
        rest = qualname[next(len(ns) for ns in TENSOR_NAMESPACES if qualname.startswith(ns)):]
        return bool(rest) and "." not in rest and not rest.startswith("_") and not rest[0].isupper()
    if qualname.startswith("torch.") and qualname.count(".") == 1:
        if torch_init_function(qualname):
            return False  # ``torch.get_device_module("cuda")``: a module, not a tensor
        name = qualname[6:]
        # the typed tensor classes build tensors (``torch.LongTensor([3, 2])``: traced on torch 2.13)
        return bool(name) and (not name[0].isupper() or qualname in TENSOR_TYPES)
    return False


def is_inplace_method(name: str) -> bool:
    """A tensor method that writes its receiver (``add_``, ``copy_``, ``masked_fill_``...)."""
    return (
        name.endswith("_")
        and not name.startswith("_")
        and name not in NON_MUTATING_UNDERSCORE
        and name != "_"
    )

#: ``torch.nn`` layers whose constructor allocates parameters (or buffers) shaped by its
#: size arguments (``in_features``, ``num_embeddings``, ``normalized_shape``, channels,
#: ``hidden_size``): a Python int from a tensor size passed there becomes a tensor shape,
#: which Dynamo specialises (torch/nn/modules/{linear,sparse,conv,normalization,batchnorm,
#: instancenorm,rnn,activation}.py).  Modules that only keep a size as a hyper-parameter
#: (a loss's ``ignore_index``, a pooling ``output_size``) are not listed: measured on torch
#: 2.13, ``CrossEntropyLoss(ignore_index=logits.size(1))`` in forward stayed symbolic.
PARAMETRISED_MODULES = frozenset(
    """Linear Bilinear Embedding EmbeddingBag Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d
    ConvTranspose3d LayerNorm GroupNorm RMSNorm LocalResponseNorm BatchNorm1d BatchNorm2d BatchNorm3d
    SyncBatchNorm InstanceNorm1d InstanceNorm2d InstanceNorm3d RNN LSTM GRU RNNCell LSTMCell GRUCell
    MultiheadAttention PReLU Transformer TransformerEncoderLayer TransformerDecoderLayer""".split()
)
