"""Tiny, randomly initialised models from libraries other than transformers,
timm and diffusers: the model zoo of bench/libmodels (see README.md).

The zoo plugs into bench/realmodels/collect.py (``--zoo``): ``MODELS`` maps a
name to ``(library, builder)``; a builder returns a realmodels ``Spec`` (the
model and the inputs of its eval and train calls).  ``LIBS`` are the package
folders whose executed lines and break sites are recorded; it includes the
model-code dependencies that the libraries call into (local_attention,
linformer, ... for linear_attention_transformer, linear_operator for
gpytorch).  Nothing is downloaded: every model is built from constructor
arguments with random weights.

Where a library's entry point is a function rather than a module (an ODE
solver, a GP's prediction, a mel spectrogram), a small ``nn.Module`` here
calls it, so that ``torch.compile(model)`` compiles the library call.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).resolve().parent
REALMODELS = HERE.parent / "realmodels"
sys.path.insert(0, str(REALMODELS))

from models import Spec  # noqa: E402  (bench/realmodels/models.py)

LIBS = (
    "x_transformers",
    "vector_quantize_pytorch",
    "rotary_embedding_torch",
    "perceiver_pytorch",
    "linear_attention_transformer",
    "local_attention",
    "linformer",
    "product_key_memory",
    "axial_positional_embedding",
    "whisper",
    "e3nn",
    "gpytorch",
    "linear_operator",
    "torchdiffeq",
    "segment_anything",
    "sam2",
    "efficientnet_pytorch",
    "encodec",
    "demucs",
    "torchtune",
)

# Import-time dependencies that are not installed (torchvision/torchaudio
# would pull another torch build; the others are only used by data loading
# and tokenizers, never in a forward pass).
STUBBED = {
    "segment_anything": ("torchvision",),
    "sam2": ("torchvision",),
    "encodec": ("torchaudio",),
    "demucs": ("torchaudio",),
    "torchtune": ("datasets", "tokenizers", "sentencepiece", "regex", "torchvision"),
}


def prepare(names: list[str]) -> None:
    """Worker setup: import stubs for the libraries of ``names``."""
    from stubs import install

    roots = {r for n in names for r in STUBBED.get(MODELS[n][0], ())}
    if roots:
        install(roots)


B = 2
SEQ = 16
V = 64


def _ids(n: int = SEQ, vocab: int = V) -> torch.Tensor:
    return torch.randint(0, vocab, (B, n))


# --------------------------------------------------------------------------
# x_transformers
# --------------------------------------------------------------------------


def _xt(layers: str = "Decoder", wrapper_kw=None, labels=False, mask=False, dyn=False, **kw):
    def build():
        import x_transformers as xt

        attn = getattr(xt, layers)(dim=32, depth=2, heads=4, attn_dim_head=8, **kw)
        model = xt.TransformerWrapper(num_tokens=V, max_seq_len=64, attn_layers=attn, **(wrapper_kw or {}))
        if labels:
            model = xt.AutoregressiveWrapper(model)
            return Spec(model, (_ids(SEQ + 1),))
        kwargs = {}
        if mask:  # the last 4 positions are padding
            kwargs["mask"] = torch.ones(B, SEQ, dtype=torch.bool).index_fill_(1, torch.arange(12, SEQ), False)
        return Spec(model, (_ids(),), kwargs, alt=(lambda: ((_ids(24),), {})) if dyn else None)

    return build


def xt_xtransformer():
    from x_transformers import XTransformer

    model = XTransformer(
        dim=32, enc_num_tokens=V, enc_depth=2, enc_heads=4, enc_max_seq_len=32,
        dec_num_tokens=V, dec_depth=2, dec_heads=4, dec_max_seq_len=32, tie_token_emb=True,
    )
    src_mask = torch.ones(B, SEQ, dtype=torch.bool)
    src_mask[1, -4:] = False
    return Spec(model, (_ids(), _ids(SEQ + 1)), {"mask": src_mask})


def xt_continuous():
    from x_transformers import ContinuousAutoregressiveWrapper, ContinuousTransformerWrapper, Decoder

    model = ContinuousTransformerWrapper(
        dim_in=8, dim_out=8, max_seq_len=64, attn_layers=Decoder(dim=32, depth=2, heads=4, rotary_pos_emb=True)
    )
    return Spec(ContinuousAutoregressiveWrapper(model), (torch.randn(B, SEQ + 1, 8),))


def xt_vit():
    from x_transformers import Encoder, ViTransformerWrapper

    model = ViTransformerWrapper(
        image_size=32, patch_size=8, num_classes=10, attn_layers=Encoder(dim=32, depth=2, heads=4)
    )
    return Spec(model, (torch.randn(B, 3, 32, 32),))


def xt_nonautoregressive():
    from x_transformers import Encoder, NonAutoregressiveWrapper, TransformerWrapper

    net = TransformerWrapper(num_tokens=V + 1, max_seq_len=SEQ, attn_layers=Encoder(dim=32, depth=2, heads=4))
    model = NonAutoregressiveWrapper(net, mask_id=V, steps=2)
    return Spec(model, (_ids(),))


# --------------------------------------------------------------------------
# vector_quantize_pytorch
# --------------------------------------------------------------------------


def _vq(cls: str, x_shape=(B, 16, 32), **kw):
    def build():
        import vector_quantize_pytorch as vqp

        return Spec(getattr(vqp, cls)(**kw), (torch.randn(*x_shape),))

    return build


# --------------------------------------------------------------------------
# rotary_embedding_torch
# --------------------------------------------------------------------------


class RotaryAttention(nn.Module):
    """q/k rotated by a RotaryEmbedding, then plain attention."""

    def __init__(self, kind: str) -> None:
        super().__init__()
        from rotary_embedding_torch import RotaryEmbedding

        self.kind = kind
        self.qkv = nn.Linear(32, 96)
        if kind == "axial":
            self.rotary = RotaryEmbedding(dim=4, freqs_for="pixel", max_freq=64)
        elif kind == "xpos":
            self.rotary = RotaryEmbedding(dim=8, use_xpos=True)
        else:
            self.rotary = RotaryEmbedding(dim=8)

    def forward(self, x):
        from rotary_embedding_torch import apply_rotary_emb

        b, n, _ = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, 4, 8).permute(2, 0, 3, 1, 4)
        if self.kind == "axial":
            freqs = self.rotary.get_axial_freqs(4, n // 4)
            q = apply_rotary_emb(freqs, q.reshape(b, 4, 4, n // 4, 8)).reshape(b, 4, n, 8)
            k = apply_rotary_emb(freqs, k.reshape(b, 4, 4, n // 4, 8)).reshape(b, 4, n, 8)
        elif self.kind == "xpos":
            q, k = self.rotary.rotate_queries_and_keys(q, k)
        else:
            q = self.rotary.rotate_queries_or_keys(q)
            k = self.rotary.rotate_queries_or_keys(k)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)


def _rotary(kind: str):
    return lambda: Spec(RotaryAttention(kind), (torch.randn(B, SEQ, 32),))


# --------------------------------------------------------------------------
# perceiver_pytorch
# --------------------------------------------------------------------------


def pc_perceiver():
    from perceiver_pytorch import Perceiver

    model = Perceiver(
        num_freq_bands=4, depth=2, max_freq=10.0, input_channels=3, input_axis=2, num_latents=16,
        latent_dim=32, cross_dim_head=8, latent_dim_head=8, num_classes=10, self_per_cross_attn=2,
    )
    return Spec(model, (torch.randn(B, 16, 16, 3),))


def pc_perceiver_io():
    from perceiver_pytorch import PerceiverIO

    model = PerceiverIO(
        depth=2, dim=32, queries_dim=16, logits_dim=10, num_latents=16, latent_dim=32,
        cross_dim_head=8, latent_dim_head=8, seq_dropout_prob=0.2,
    )
    mask = torch.ones(B, SEQ, dtype=torch.bool)
    mask[1, -4:] = False
    return Spec(model, (torch.randn(B, SEQ, 32),), {"mask": mask, "queries": torch.randn(B, 8, 16)})


def pc_perceiver_lm():
    from perceiver_pytorch import PerceiverLM

    model = PerceiverLM(
        num_tokens=V, dim=32, max_seq_len=32, depth=2, num_latents=16, latent_dim=32,
        cross_dim_head=8, latent_dim_head=8,
    )
    return Spec(model, (_ids(),), alt=lambda: ((_ids(24),), {}))


# --------------------------------------------------------------------------
# linear_attention_transformer (+ local_attention, linformer, product_key_memory,
# axial_positional_embedding)
# --------------------------------------------------------------------------


def _lat(causal: bool, linformer_k: int = 0, **kw):
    def build():
        from linear_attention_transformer import LinearAttentionTransformerLM, LinformerSettings

        if linformer_k:
            kw["linformer_settings"] = LinformerSettings(k=linformer_k)
        model = LinearAttentionTransformerLM(
            num_tokens=V, dim=32, depth=2, max_seq_len=64, heads=4, dim_head=8, causal=causal, **kw
        )
        return Spec(model, (_ids(32),))

    return build


def lat_autoregressive():
    from linear_attention_transformer import AutoregressiveWrapper, LinearAttentionTransformerLM

    lm = LinearAttentionTransformerLM(
        num_tokens=V, dim=32, depth=2, max_seq_len=64, heads=4, dim_head=8, causal=True,
        n_local_attn_heads=2, local_attn_window_size=8,
    )
    return Spec(AutoregressiveWrapper(lm), (_ids(33),), {"return_loss": True})


# --------------------------------------------------------------------------
# whisper
# --------------------------------------------------------------------------


def _whisper_dims():
    from whisper.model import ModelDimensions

    return ModelDimensions(
        n_mels=80, n_audio_ctx=32, n_audio_state=32, n_audio_head=4, n_audio_layer=2,
        n_vocab=V, n_text_ctx=32, n_text_state=32, n_text_head=4, n_text_layer=2,
    )


def wh_whisper():
    from whisper.model import Whisper

    model = Whisper(_whisper_dims())
    return Spec(model, (torch.randn(B, 80, 64), _ids(8)), alt=lambda: ((torch.randn(B, 80, 64), _ids(12)), {}))


class WhisperMelEncoder(nn.Module):
    """Raw audio -> log-mel spectrogram (whisper.audio) -> audio encoder."""

    def __init__(self) -> None:
        super().__init__()
        from whisper.model import Whisper

        self.whisper = Whisper(_whisper_dims())

    def forward(self, audio):
        from whisper.audio import log_mel_spectrogram

        mel = log_mel_spectrogram(audio)[..., :64]
        return self.whisper.embed_audio(mel)


class WhisperCachedDecode(nn.Module):
    """Two decoder steps with the kv-cache hooks of install_kv_cache_hooks."""

    def __init__(self) -> None:
        super().__init__()
        from whisper.model import Whisper

        self.whisper = Whisper(_whisper_dims())

    def forward(self, mel, tokens):
        audio = self.whisper.embed_audio(mel)
        cache, hooks = self.whisper.install_kv_cache_hooks()
        try:
            first = self.whisper.decoder(tokens, audio, kv_cache=cache)
            step = self.whisper.decoder(tokens[:, -1:], audio, kv_cache=cache)
        finally:
            for h in hooks:
                h.remove()
        return first, step


def wh_mel_encoder():
    return Spec(WhisperMelEncoder(), (torch.randn(B, 16000 * 64 // 100),))


def wh_cached_decode():
    return Spec(WhisperCachedDecode(), (torch.randn(B, 80, 64), _ids(6)))


# --------------------------------------------------------------------------
# e3nn
# --------------------------------------------------------------------------


def _points(n: int = 12):
    torch.manual_seed(2)
    return {"pos": torch.randn(n, 3), "batch": torch.tensor([0] * (n // 2) + [1] * (n - n // 2))}


class E3Dict(nn.Module):
    """Calls a network that takes a dict of tensors (points, batch, features)."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, pos, batch, x=None):
        data = {"pos": pos, "batch": batch}
        if x is not None:
            data["x"] = x
        return self.net(data)


def e3_gate_points_2101():
    from e3nn.nn.models.gate_points_2101 import Network

    net = Network(
        irreps_in="2x0e", irreps_hidden="4x0e + 4x0o + 2x1e + 2x1o", irreps_out="1x0e + 1x1o",
        irreps_node_attr=None, irreps_edge_attr="0e + 1o + 2e", layers=2, max_radius=2.0,
        number_of_basis=4, radial_layers=1, radial_neurons=8, num_neighbors=3.0, num_nodes=6.0,
        reduce_output=True,
    )
    p = _points()
    return Spec(E3Dict(net), (p["pos"], p["batch"], torch.randn(12, 2)))


def e3_simple_network_2106():
    from e3nn.nn.models.v2106.gate_points_networks import SimpleNetwork

    net = SimpleNetwork(
        irreps_in="2x0e", irreps_out="1x0e + 1x1o", max_radius=2.0, num_neighbors=3.0, num_nodes=6.0,
        mul=4, layers=2, lmax=1,
    )
    p = _points()
    return Spec(E3Dict(net), (p["pos"], p["batch"], torch.randn(12, 2)))


class E3TensorProductNet(nn.Module):
    """Spherical harmonics, a fully connected tensor product, a gate, a norm."""

    def __init__(self) -> None:
        super().__init__()
        from e3nn import nn as enn
        from e3nn import o3

        self.sh = o3.SphericalHarmonics("0e + 1o + 2e", normalize=True, normalization="component")
        self.lin = o3.Linear("4x0e + 2x1o", "4x0e + 2x1o")
        self.tp = o3.FullyConnectedTensorProduct("4x0e + 2x1o", "0e + 1o + 2e", "4x0e + 2x0e + 2x1o")
        self.gate = enn.Gate("4x0e", [torch.relu], "2x0e", [torch.sigmoid], "2x1o")
        self.bn = enn.BatchNorm("4x0e + 2x1o")
        self.norm = o3.Norm("4x0e + 2x1o")

    def forward(self, x, vec):
        y = self.tp(self.lin(x), self.sh(vec))
        y = self.bn(self.gate(y))
        return self.norm(y)


def e3_tensor_product():
    return Spec(E3TensorProductNet(), (torch.randn(10, 10), torch.randn(10, 3)))


class E3Activations(nn.Module):
    """NormActivation, S2Activation on a grid, Extract, and a FullyConnectedNet."""

    def __init__(self) -> None:
        super().__init__()
        from e3nn import nn as enn
        from e3nn import o3

        self.fc = enn.FullyConnectedNet([4, 16, 9], torch.nn.functional.silu)
        self.norm_act = enn.NormActivation("1x0e + 1x1o + 1x2e", torch.sigmoid)
        self.s2 = enn.S2Activation("1x0e + 1x1o + 1x2e", torch.tanh, res=8)
        self.lin = o3.Linear("1x0e + 1x1o + 1x2e", "2x0e + 1x1o")
        self.extract = enn.Extract("2x0e + 1x1o", ["2x0e", "1x1o"], [(0,), (1,)])

    def forward(self, x):
        y = self.s2(self.norm_act(self.fc(x)))
        return self.extract(self.lin(y))


def e3_activations():
    return Spec(E3Activations(), (torch.randn(6, 4),))


# --------------------------------------------------------------------------
# gpytorch (+ linear_operator)
# --------------------------------------------------------------------------


class GPLoss(nn.Module):
    """Train: negative marginal log likelihood; eval: predictive mean and variance."""

    def __init__(self, gp, likelihood, mll_cls, **mll_kw) -> None:
        super().__init__()
        self.gp = gp
        self.likelihood = likelihood
        self.mll = mll_cls(likelihood, gp, **mll_kw)

    def forward(self, x, y):
        out = self.gp(x)
        if self.training:
            return -self.mll(out, y).sum()
        pred = self.likelihood(out)
        return pred.mean, pred.variance


def _gp_data(n: int = 20, tasks: int = 0):
    torch.manual_seed(3)
    x = torch.linspace(0, 1, n).unsqueeze(-1)
    y = torch.sin(6 * x).squeeze(-1) + 0.1 * torch.randn(n)
    if tasks:
        y = torch.stack([y * (t + 1) for t in range(tasks)], -1)
    return x, y


def _exact_gp(kernel: str):
    def build():
        import gpytorch

        x, y = _gp_data()

        class ExactGP(gpytorch.models.ExactGP):
            def __init__(self, likelihood):
                super().__init__(x, y, likelihood)
                self.mean_module = gpytorch.means.ConstantMean()
                if kernel == "rbf":
                    self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())
                elif kernel == "sum":
                    self.covar_module = gpytorch.kernels.ScaleKernel(
                        gpytorch.kernels.MaternKernel(nu=2.5)
                    ) + gpytorch.kernels.ScaleKernel(gpytorch.kernels.PeriodicKernel())
                else:
                    self.covar_module = gpytorch.kernels.SpectralMixtureKernel(num_mixtures=3)
                    self.covar_module.initialize_from_data(x, y)

            def forward(self, x):
                return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))

        likelihood = gpytorch.likelihoods.GaussianLikelihood()
        model = GPLoss(ExactGP(likelihood), likelihood, gpytorch.mlls.ExactMarginalLogLikelihood)
        xt = torch.linspace(0, 1, 7).unsqueeze(-1)
        return _gp_spec(model, x, y, xt)

    return build


def _gp_spec(model, x, y, xt):
    """Eval: predictions at new points; train: the MLL on the training data."""
    spec = Spec(model, (xt, None))
    spec.calls = lambda train=True: [("eval", "eval", lambda m: ((xt, None), {}))] + (
        [("train", "train", lambda m: ((x, y), {}))] if train else []
    )
    return spec


def gp_svgp():
    import gpytorch

    x, y = _gp_data(32)

    class SVGP(gpytorch.models.ApproximateGP):
        def __init__(self):
            inducing = torch.linspace(0, 1, 8).unsqueeze(-1)
            dist = gpytorch.variational.CholeskyVariationalDistribution(8)
            strategy = gpytorch.variational.VariationalStrategy(self, inducing, dist, learn_inducing_locations=True)
            super().__init__(strategy)
            self.mean_module = gpytorch.means.ZeroMean()
            self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))

    likelihood = gpytorch.likelihoods.GaussianLikelihood()
    model = GPLoss(SVGP(), likelihood, gpytorch.mlls.VariationalELBO, num_data=32)
    return _gp_spec(model, x, y, torch.linspace(0, 1, 7).unsqueeze(-1))


def gp_multitask():
    import gpytorch

    x, y = _gp_data(16, tasks=2)

    class MultitaskGP(gpytorch.models.ExactGP):
        def __init__(self, likelihood):
            super().__init__(x, y, likelihood)
            self.mean_module = gpytorch.means.MultitaskMean(gpytorch.means.ConstantMean(), num_tasks=2)
            self.covar_module = gpytorch.kernels.MultitaskKernel(gpytorch.kernels.RBFKernel(), num_tasks=2, rank=1)

        def forward(self, x):
            return gpytorch.distributions.MultitaskMultivariateNormal(self.mean_module(x), self.covar_module(x))

    likelihood = gpytorch.likelihoods.MultitaskGaussianLikelihood(num_tasks=2)
    model = GPLoss(MultitaskGP(likelihood), likelihood, gpytorch.mlls.ExactMarginalLogLikelihood)
    return _gp_spec(model, x, y, torch.linspace(0, 1, 5).unsqueeze(-1))


# --------------------------------------------------------------------------
# torchdiffeq
# --------------------------------------------------------------------------


class ODEFunc(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 16), nn.Tanh(), nn.Linear(16, dim))

    def forward(self, t, y):
        return self.net(y) * torch.cos(t)


class ODEBlock(nn.Module):
    """Integrates ODEFunc from t=0 to 1 with torchdiffeq and returns the end state."""

    def __init__(self, method: str, adjoint: bool = False, event: bool = False, **options) -> None:
        super().__init__()
        self.func = ODEFunc()
        self.method = method
        self.adjoint = adjoint
        self.event = event
        self.options = options

    def forward(self, y0):
        import torchdiffeq

        t = torch.linspace(0.0, 1.0, 3)
        if self.event:
            def event_fn(t, y):
                return t - 0.6 + 0.0 * y.sum()

            t_event, ys = torchdiffeq.odeint_event(
                self.func, y0, torch.tensor(0.0), event_fn=event_fn, method=self.method, options=self.options
            )
            return ys[-1]
        solve = torchdiffeq.odeint_adjoint if self.adjoint else torchdiffeq.odeint
        return solve(self.func, y0, t, method=self.method, rtol=1e-3, atol=1e-4, options=self.options or None)[-1]


def _ode(method: str, **kw):
    return lambda: Spec(ODEBlock(method, **kw), (torch.randn(B, 8),))


# --------------------------------------------------------------------------
# segment_anything
# --------------------------------------------------------------------------


def _sam_parts():
    from segment_anything.modeling import ImageEncoderViT, MaskDecoder, PromptEncoder, TwoWayTransformer

    enc = ImageEncoderViT(
        img_size=64, patch_size=16, embed_dim=32, depth=2, num_heads=2, out_chans=32, use_rel_pos=True,
        window_size=2, global_attn_indexes=(1,),
    )
    prompt = PromptEncoder(embed_dim=32, image_embedding_size=(4, 4), input_image_size=(64, 64), mask_in_chans=8)
    dec = MaskDecoder(
        num_multimask_outputs=3, transformer=TwoWayTransformer(depth=2, embedding_dim=32, mlp_dim=64, num_heads=2),
        transformer_dim=32, iou_head_depth=2, iou_head_hidden_dim=32,
    )
    return enc, prompt, dec


def sa_sam():
    from segment_anything.modeling import Sam

    model = Sam(*_sam_parts())
    batch = [
        {"image": torch.rand(3, 64, 48) * 255, "original_size": (64, 48),
         "point_coords": torch.rand(1, 2, 2) * 48, "point_labels": torch.tensor([[1, 0]])},
        {"image": torch.rand(3, 48, 64) * 255, "original_size": (48, 64),
         "boxes": torch.tensor([[4.0, 4.0, 40.0, 30.0]])},
    ]
    return Spec(model, (batch, True))


def sa_image_encoder():
    return Spec(_sam_parts()[0], (torch.randn(1, 3, 64, 64),))


class PromptMaskDecoder(nn.Module):
    """Prompt encoder + mask decoder on a given image embedding (points, box, mask)."""

    def __init__(self, prompt, dec) -> None:
        super().__init__()
        self.prompt = prompt
        self.dec = dec

    def forward(self, emb, points, labels, boxes, masks):
        sparse, dense = self.prompt(points=(points, labels), boxes=boxes, masks=masks)
        return self.dec(emb, self.prompt.get_dense_pe(), sparse, dense, multimask_output=True)


def sa_prompt_mask_decoder():
    _, prompt, dec = _sam_parts()
    args = (torch.randn(1, 32, 4, 4), torch.rand(1, 3, 2) * 64, torch.tensor([[1, 0, 1]]),
            torch.tensor([[2.0, 2.0, 40.0, 50.0]]), torch.randn(1, 1, 16, 16))
    return Spec(PromptMaskDecoder(prompt, dec), args)


# --------------------------------------------------------------------------
# sam2
# --------------------------------------------------------------------------


def s2_image_encoder():
    from sam2.modeling.backbones.hieradet import Hiera
    from sam2.modeling.backbones.image_encoder import FpnNeck, ImageEncoder
    from sam2.modeling.position_encoding import PositionEmbeddingSine

    trunk = Hiera(
        embed_dim=16, num_heads=1, stages=(1, 1, 2, 1), global_att_blocks=(3,), window_spec=(4, 4, 4, 2),
        window_pos_embed_bkg_spatial_size=(4, 4), drop_path_rate=0.1,
    )
    neck = FpnNeck(
        position_encoding=PositionEmbeddingSine(num_pos_feats=32), d_model=32,
        backbone_channel_list=trunk.channel_list,
        fpn_top_down_levels=[2, 3], fpn_interp_model="nearest",
    )
    return Spec(ImageEncoder(trunk, neck, scalp=1), (torch.randn(1, 3, 64, 64),))


def s2_prompt_mask_decoder():
    from sam2.modeling.sam.mask_decoder import MaskDecoder
    from sam2.modeling.sam.prompt_encoder import PromptEncoder
    from sam2.modeling.sam.transformer import TwoWayTransformer

    prompt = PromptEncoder(embed_dim=32, image_embedding_size=(4, 4), input_image_size=(64, 64), mask_in_chans=8)
    dec = MaskDecoder(
        num_multimask_outputs=3, transformer=TwoWayTransformer(depth=2, embedding_dim=32, mlp_dim=64, num_heads=2),
        transformer_dim=32, iou_head_depth=2, iou_head_hidden_dim=32, use_high_res_features=False,
        pred_obj_scores=True, pred_obj_scores_mlp=True, use_multimask_token_for_obj_ptr=True,
        dynamic_multimask_via_stability=True,
    )

    class Sam2PromptMaskDecoder(PromptMaskDecoder):
        def forward(self, emb, points, labels, boxes, masks):
            sparse, dense = self.prompt(points=(points, labels), boxes=boxes, masks=masks)
            return self.dec(emb, self.prompt.get_dense_pe(), sparse, dense, multimask_output=False,
                            repeat_image=False)

    args = (torch.randn(1, 32, 4, 4), torch.rand(1, 3, 2) * 64, torch.tensor([[1, 0, 1]]),
            torch.tensor([[2.0, 2.0, 40.0, 50.0]]), torch.randn(1, 1, 16, 16))
    return Spec(Sam2PromptMaskDecoder(prompt, dec), args)


def s2_memory_attention():
    from sam2.modeling.memory_attention import MemoryAttention, MemoryAttentionLayer
    from sam2.modeling.sam.transformer import RoPEAttention

    layer = MemoryAttentionLayer(
        activation="relu", d_model=32, dim_feedforward=64, dropout=0.1, pos_enc_at_attn=False,
        pos_enc_at_cross_attn_keys=True, pos_enc_at_cross_attn_queries=False,
        self_attention=RoPEAttention(
            embedding_dim=32, num_heads=1, downsample_rate=1, rope_theta=10000.0, feat_sizes=(4, 4)
        ),
        cross_attention=RoPEAttention(embedding_dim=32, num_heads=1, downsample_rate=1, rope_theta=10000.0,
                                      feat_sizes=(4, 4), rope_k_repeat=True, kv_in_dim=16),
    )
    model = MemoryAttention(d_model=32, pos_enc_at_input=True, layer=layer, num_layers=2)
    # 16 current tokens, memory: two frames of 16 tokens plus 4 object-pointer tokens
    args = (torch.randn(16, 1, 32), torch.randn(36, 1, 16), torch.randn(16, 1, 32), torch.randn(36, 1, 16))
    return Spec(model, args, {"num_obj_ptr_tokens": 4})


# --------------------------------------------------------------------------
# efficientnet_pytorch
# --------------------------------------------------------------------------


def _effnet(name: str, memory_efficient: bool = True):
    def build():
        from efficientnet_pytorch import EfficientNet

        model = EfficientNet.from_name(name, image_size=64, num_classes=10)
        model.set_swish(memory_efficient=memory_efficient)
        return Spec(model, (torch.randn(B, 3, 64, 64),))

    return build


# --------------------------------------------------------------------------
# encodec
# --------------------------------------------------------------------------


def _encodec(which: str):
    def build():
        from encodec import EncodecModel

        if which == "24khz":
            model = EncodecModel.encodec_model_24khz(pretrained=False)
            model.set_target_bandwidth(6.0)
            return Spec(model, (torch.randn(1, 1, 4800),))
        model = EncodecModel.encodec_model_48khz(pretrained=False)
        model.set_target_bandwidth(6.0)
        return Spec(model, (torch.randn(1, 2, 9600),))

    return build


# --------------------------------------------------------------------------
# demucs
# --------------------------------------------------------------------------

SOURCES = ["drums", "bass", "other", "vocals"]


def dm_htdemucs():
    from demucs.htdemucs import HTDemucs

    model = HTDemucs(
        sources=SOURCES, channels=8, depth=2, nfft=512, t_layers=1, bottom_channels=0,
        t_heads=2, dconv_comp=2, samplerate=8000, segment=2,
    )
    return Spec(model, (torch.randn(1, 2, 8000),))


def dm_hdemucs():
    from demucs.hdemucs import HDemucs

    model = HDemucs(sources=SOURCES, channels=8, depth=4, nfft=1024, dconv_comp=2, samplerate=8000, segment=2)
    return Spec(model, (torch.randn(1, 2, 8000),))


def dm_demucs():
    from demucs.demucs import Demucs

    model = Demucs(sources=SOURCES, channels=8, depth=3, lstm_layers=1, dconv_comp=2, samplerate=8000, segment=2)
    return Spec(model, (torch.randn(1, 2, 4000),))


# --------------------------------------------------------------------------
# torchtune
# --------------------------------------------------------------------------

TT = dict(vocab_size=V, num_layers=2, num_heads=4, num_kv_heads=2, embed_dim=32, max_seq_len=64)


def _tt(module: str, builder: str, mask: bool = False, dyn: bool = False, **kw):
    def build():
        import importlib

        fn = getattr(importlib.import_module(f"torchtune.models.{module}._component_builders"), builder)
        model = fn(**{**TT, **kw})
        kwargs = {}
        if mask:
            kwargs["mask"] = torch.tril(torch.ones(SEQ, SEQ, dtype=torch.bool)).expand(B, SEQ, SEQ).clone()
            kwargs["input_pos"] = torch.arange(SEQ).expand(B, SEQ).clone()
        return Spec(model, (_ids(),), kwargs, alt=(lambda: ((_ids(24),), {})) if dyn else None)

    return build


class TTCachedDecode(nn.Module):
    """torchtune decoder with kv caches: a prefill of 12 tokens, then one step."""

    def __init__(self, model) -> None:
        super().__init__()
        self.model = model
        model.setup_caches(batch_size=B, dtype=torch.float32, decoder_max_seq_len=32)

    def forward(self, ids):
        self.model.reset_caches()
        n = ids.shape[1] - 1
        causal = torch.tril(torch.ones(32, 32, dtype=torch.bool))
        mask = causal[None, :n].expand(B, n, 32)
        pos = torch.arange(n).expand(B, n)
        self.model(ids[:, :n], mask=mask, input_pos=pos)
        return self.model(ids[:, n:], mask=causal[None, n : n + 1].expand(B, 1, 32), input_pos=pos[:, -1:] + 1)


def tt_llama3_decode():
    from torchtune.models.llama3._component_builders import llama3

    return Spec(TTCachedDecode(llama3(**TT)), (_ids(13),))


def tt_clip_vision():
    from torchtune.models.clip._component_builders import clip_vision_encoder

    model = clip_vision_encoder(
        tile_size=32, patch_size=8, embed_dim=32, num_layers=2, num_heads=4, max_num_tiles=2,
        in_channels=3, out_indices=[0], output_cls_projection=False,
    )
    images = torch.randn(B, 1, 2, 3, 32, 32)  # batch, images, tiles, channels, width, height
    return Spec(model, (images,), {"aspect_ratio": torch.tensor([[[1, 2]], [[2, 1]]])})


def tt_t5_encoder():
    from torchtune.models.t5._component_builders import t5_encoder

    model = t5_encoder(
        embed_dim=32, mlp_dim=64, num_heads=4, head_dim=8, num_layers=2, rel_pos_num_buckets=8,
        rel_pos_max_dist=32, vocab_size=V, norm_eps=1e-6, max_seq_len=SEQ,
    )
    return Spec(model, (_ids(),))


# --------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------

MODELS = {
    # x_transformers
    "xt_decoder": ("x_transformers", _xt(dyn=True)),
    "xt_decoder_rotary_glu": (
        "x_transformers",
        _xt(rotary_pos_emb=True, ff_glu=True, use_rmsnorm=True, attn_num_mem_kv=2, dyn=True),
    ),
    "xt_decoder_alibi_memtokens": (
        "x_transformers",
        _xt(alibi_pos_bias=True, wrapper_kw={"num_memory_tokens": 2}),
    ),
    "xt_decoder_relpos_layerdrop": (
        "x_transformers",
        _xt(rel_pos_bias=True, layer_dropout=0.1, residual_attn=True),
    ),
    "xt_decoder_dynpos_shift": (
        "x_transformers",
        _xt(dynamic_pos_bias=True, shift_tokens=1, macaron=True, sandwich_norm=True),
    ),
    "xt_encoder_masked": ("x_transformers", _xt("Encoder", mask=True, attn_qk_norm=True, gate_residual=True)),
    "xt_decoder_hyperconn": ("x_transformers", _xt(num_residual_streams=2, add_value_residual=True)),
    "xt_autoregressive": ("x_transformers", _xt(labels=True, rotary_pos_emb=True)),
    "xt_xtransformer": ("x_transformers", xt_xtransformer),
    "xt_continuous": ("x_transformers", xt_continuous),
    "xt_vit": ("x_transformers", xt_vit),
    "xt_nonautoregressive": ("x_transformers", xt_nonautoregressive),
    # vector_quantize_pytorch
    "vq_vector_quantize": ("vector_quantize_pytorch", _vq("VectorQuantize", dim=32, codebook_size=16)),
    "vq_vq_kmeans_cosine": ("vector_quantize_pytorch", _vq(
        "VectorQuantize", dim=32, codebook_size=16, kmeans_init=True, kmeans_iters=2, use_cosine_sim=True,
        threshold_ema_dead_code=2)),
    "vq_vq_multihead_orthogonal": ("vector_quantize_pytorch", _vq(
        "VectorQuantize", dim=32, codebook_size=16, heads=2, separate_codebook_per_head=True, codebook_dim=8,
        orthogonal_reg_weight=0.1, stochastic_sample_codes=True)),
    "vq_residual_vq": (
        "vector_quantize_pytorch",
        _vq("ResidualVQ", dim=32, num_quantizers=3, codebook_size=16, quantize_dropout=True),
    ),
    "vq_grouped_residual_vq": (
        "vector_quantize_pytorch",
        _vq("GroupedResidualVQ", dim=32, groups=2, num_quantizers=2, codebook_size=16),
    ),
    "vq_fsq": ("vector_quantize_pytorch", _vq("FSQ", levels=[8, 5, 5], dim=32)),
    "vq_residual_fsq": (
        "vector_quantize_pytorch",
        _vq("ResidualFSQ", levels=[8, 5, 5], num_quantizers=2, dim=32, quantize_dropout=True),
    ),
    "vq_lfq": ("vector_quantize_pytorch", _vq("LFQ", dim=32, codebook_size=64, entropy_loss_weight=0.1)),
    "vq_residual_lfq": (
        "vector_quantize_pytorch",
        _vq("ResidualLFQ", dim=32, num_quantizers=2, codebook_size=64),
    ),
    "vq_latent_quantize": (
        "vector_quantize_pytorch",
        _vq("LatentQuantize", x_shape=(B, 32, 16), levels=[5, 5, 8], dim=32),
    ),
    "vq_sim_vq": ("vector_quantize_pytorch", _vq("SimVQ", dim=32, codebook_size=16)),
    "vq_residual_sim_vq": (
        "vector_quantize_pytorch",
        _vq("ResidualSimVQ", dim=32, num_quantizers=2, codebook_size=16),
    ),
    "vq_random_projection": (
        "vector_quantize_pytorch",
        _vq("RandomProjectionQuantizer", dim=32, codebook_size=16, codebook_dim=8),
    ),
    # rotary_embedding_torch
    "rotary_lang": ("rotary_embedding_torch", _rotary("lang")),
    "rotary_xpos": ("rotary_embedding_torch", _rotary("xpos")),
    "rotary_axial": ("rotary_embedding_torch", _rotary("axial")),
    # perceiver_pytorch
    "perceiver": ("perceiver_pytorch", pc_perceiver),
    "perceiver_io": ("perceiver_pytorch", pc_perceiver_io),
    "perceiver_lm": ("perceiver_pytorch", pc_perceiver_lm),
    # linear_attention_transformer
    "lat_causal_local": (
        "linear_attention_transformer",
        _lat(True, n_local_attn_heads=2, local_attn_window_size=8),
    ),
    "lat_encoder_linformer": (
        "linear_attention_transformer",
        _lat(False, linformer_k=8, pkm_layers=(1,), pkm_num_keys=16),
    ),
    "lat_reversible_shift": (
        "linear_attention_transformer",
        _lat(True, reversible=True, shift_tokens=True, ff_chunks=2),
    ),
    "lat_autoregressive": ("linear_attention_transformer", lat_autoregressive),
    # whisper
    "whisper": ("whisper", wh_whisper),
    "whisper_mel_encoder": ("whisper", wh_mel_encoder),
    "whisper_cached_decode": ("whisper", wh_cached_decode),
    # e3nn
    "e3nn_gate_points_2101": ("e3nn", e3_gate_points_2101),
    "e3nn_simple_network_2106": ("e3nn", e3_simple_network_2106),
    "e3nn_tensor_product": ("e3nn", e3_tensor_product),
    "e3nn_activations": ("e3nn", e3_activations),
    # gpytorch
    "gp_exact_rbf": ("gpytorch", _exact_gp("rbf")),
    "gp_exact_sum_kernel": ("gpytorch", _exact_gp("sum")),
    "gp_exact_spectral_mixture": ("gpytorch", _exact_gp("sm")),
    "gp_svgp": ("gpytorch", gp_svgp),
    "gp_multitask": ("gpytorch", gp_multitask),
    # torchdiffeq
    "ode_dopri5": ("torchdiffeq", _ode("dopri5")),
    "ode_rk4": ("torchdiffeq", _ode("rk4", step_size=0.25)),
    "ode_euler": ("torchdiffeq", _ode("euler", step_size=0.25)),
    "ode_bosh3": ("torchdiffeq", _ode("bosh3")),
    "ode_adjoint_dopri5": ("torchdiffeq", _ode("dopri5", adjoint=True)),
    "ode_event_rk4": ("torchdiffeq", _ode("rk4", event=True, step_size=0.5)),
    # segment_anything
    "sam": ("segment_anything", sa_sam),
    "sam_image_encoder": ("segment_anything", sa_image_encoder),
    "sam_prompt_mask_decoder": ("segment_anything", sa_prompt_mask_decoder),
    # sam2
    "sam2_image_encoder": ("sam2", s2_image_encoder),
    "sam2_prompt_mask_decoder": ("sam2", s2_prompt_mask_decoder),
    "sam2_memory_attention": ("sam2", s2_memory_attention),
    # efficientnet_pytorch
    "effnet_b0": ("efficientnet_pytorch", _effnet("efficientnet-b0")),
    "effnet_b1_plain_swish": ("efficientnet_pytorch", _effnet("efficientnet-b1", memory_efficient=False)),
    # encodec
    "encodec_24khz": ("encodec", _encodec("24khz")),
    "encodec_48khz": ("encodec", _encodec("48khz")),
    # demucs
    "htdemucs": ("demucs", dm_htdemucs),
    "hdemucs": ("demucs", dm_hdemucs),
    "demucs": ("demucs", dm_demucs),
    # torchtune
    "tt_llama3": ("torchtune", _tt("llama3", "llama3", dyn=True)),
    "tt_llama3_masked": ("torchtune", _tt("llama3", "llama3", mask=True)),
    "tt_llama3_decode": ("torchtune", tt_llama3_decode),
    "tt_lora_llama3": (
        "torchtune",
        _tt("llama3", "lora_llama3", lora_attn_modules=["q_proj", "v_proj"], apply_lora_to_mlp=True,
            lora_rank=4, lora_alpha=8.0, lora_dropout=0.1),
    ),
    "tt_qwen2": ("torchtune", _tt("qwen2", "qwen2", intermediate_dim=64, tie_word_embeddings=True, dyn=True)),
    "tt_gemma": ("torchtune", _tt("gemma", "gemma", head_dim=8, intermediate_dim=64)),
    "tt_mistral": ("torchtune", _tt("mistral", "mistral", intermediate_dim=64)),
    "tt_phi3": ("torchtune", _tt("phi3", "phi3", intermediate_dim=64)),
    "tt_clip_vision": ("torchtune", tt_clip_vision),
    "tt_t5_encoder": ("torchtune", tt_t5_encoder),
}
