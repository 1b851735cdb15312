"""Tiny, randomly initialised models from transformers, timm and diffusers.

Every builder returns a :class:`Spec`: the model and the inputs of the calls
that collect.py runs (eager and compiled).  Nothing is downloaded: models are
built from small configs with random weights (HF_HUB_OFFLINE=1).  Builders
import their library lazily so a worker only imports what it needs.

Calls made for every model:
  eval   model.eval(), torch.no_grad(), ``args``/``kwargs``
  train  model.train(), grad enabled, ``kwargs`` updated with ``train_kwargs``
         (usually labels, so the loss code runs too)
plus any ``extra`` calls, e.g. ``decode``: one cached decoding step of a
causal LM after an (uncompiled) prefill, and, where ``alt`` is set (text
models), ``eval_dyn``: the compiled eval model called again, without a
reset, on a longer sequence, so Dynamo recompiles with dynamic shapes.

Configs are tiny but otherwise keep the library defaults, except that
LayerDrop is switched on (0.1) for bart, whisper and speech_to_text, as in
common training setups (wav2vec2-style models already default to it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch

# Shared tiny sizes.
V = 128  # vocab
H = 32  # hidden
I = 64  # intermediate
L = 2  # layers
NH = 4  # heads
KV = 2  # kv heads
SEQ = 16
B = 2


@dataclass
class Spec:
    model: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    train_kwargs: dict = field(default_factory=dict)
    # (label, mode, make(model) -> (args, kwargs))
    extra: list = field(default_factory=list)
    # Inputs of another size for a second compiled eval call ("eval_dyn"):
    # the compiled model is called again without a reset, so Dynamo
    # recompiles with dynamic shapes (automatic dynamic).
    alt: Callable[[], tuple] | None = None

    def calls(self, train: bool = True) -> list[tuple[str, str, Callable]]:
        out = [("eval", "eval", lambda m: (self.args, self.kwargs))]
        if train:
            out.append(
                ("train", "train", lambda m: (self.args, {**self.kwargs, **self.train_kwargs}))
            )
        out.extend(self.extra)
        return out


def prepare(names: list[str]) -> None:
    """Worker setup before building ``names`` (see collect.load_zoo)."""
    import sys
    from pathlib import Path

    if any(MODELS[n][0] == "timm" for n in names):
        # timm imports torchvision at import time; it is not installed here.
        sys.path.insert(0, str(Path(__file__).resolve().parent / "_stubs"))


def _ids(n: int = SEQ, vocab: int = V) -> torch.Tensor:
    return torch.randint(3, vocab, (B, n))


def _mask(n: int = SEQ, pad: str = "right") -> torch.Tensor:
    """All ones except three padding positions in the second row."""
    m = torch.ones(B, n, dtype=torch.long)
    if pad == "left":
        m[1, :3] = 0
    elif pad == "right":
        m[1, -3:] = 0
    return m


def _text_spec(model, n: int = SEQ, pad: str = "right", labels: str | None = "lm", **extra_kw) -> Spec:
    ids = _ids(n)
    kw = {"input_ids": ids, "attention_mask": _mask(n, pad), **extra_kw}
    train_kw = {}
    if labels == "lm":
        train_kw["labels"] = ids
    elif labels == "cls":
        train_kw["labels"] = torch.tensor([0, 1])
    spec = Spec(model, (), kw, train_kw)
    m = n + 8
    ids2, mask2 = _ids(m), _mask(m, pad)

    def alt():
        kw2 = dict(spec.kwargs)
        kw2["input_ids"] = ids2
        kw2["attention_mask"] = mask2
        return (), kw2

    spec.alt = alt
    return spec


def _decode_step(kwargs: dict, n: int = SEQ) -> tuple:
    """Extra call: one cached decoding step after an eager prefill."""
    nxt = torch.randint(3, V, (B, 1))

    def make(model):
        with torch.no_grad():
            out = model(**kwargs, use_cache=True)
        kw = {"input_ids": nxt, "use_cache": True}
        if "attention_mask" in kwargs:
            kw["attention_mask"] = torch.cat(
                [kwargs["attention_mask"], torch.ones(B, 1, dtype=torch.long)], dim=1
            )
        if getattr(out, "past_key_values", None) is not None:
            kw["past_key_values"] = out.past_key_values
        elif getattr(out, "cache_params", None) is not None:
            kw["cache_params"] = out.cache_params
            kw["cache_position"] = torch.tensor([n])
        elif getattr(out, "state", None) is not None:
            kw["state"] = out.state
        return (), kw

    return ("decode", "eval", make)


def _hf(model_cls: str, config_cls: str, **cfg):
    import transformers

    config = getattr(transformers, config_cls)(**cfg)
    return getattr(transformers, model_cls)(config)


def _lm_kw(**extra):
    kw = dict(
        vocab_size=V,
        hidden_size=H,
        intermediate_size=I,
        num_hidden_layers=L,
        num_attention_heads=NH,
        num_key_value_heads=KV,
        max_position_embeddings=64,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
    )
    kw.update(extra)
    return kw


def causal_lm(model_cls: str, config_cls: str, decode: bool = True, lm_kw: bool = True, **cfg):
    """Builder for a decoder-only LM: eval + train (with labels) + decode."""

    def build() -> Spec:
        model = _hf(model_cls, config_cls, **(_lm_kw(**cfg) if lm_kw else cfg))
        spec = _text_spec(model, pad="left")
        if decode:
            spec.extra.append(_decode_step(spec.kwargs))
        return spec

    build.__name__ = "causal_" + model_cls
    return build


def _enc_kw(**extra):
    kw = dict(
        vocab_size=V,
        hidden_size=H,
        num_hidden_layers=L,
        num_attention_heads=NH,
        intermediate_size=I,
        max_position_embeddings=64,
    )
    kw.update(extra)
    return {k: v for k, v in kw.items() if v is not None}


def encoder(model_cls: str, config_cls: str, labels: str = "lm", n: int = SEQ, **cfg):
    def build() -> Spec:
        return _text_spec(_hf(model_cls, config_cls, **_enc_kw(**cfg)), n=n, labels=labels)

    build.__name__ = "enc_" + model_cls
    return build


def _seq2seq_spec(model) -> Spec:
    spec = _text_spec(model, labels=None)
    spec.kwargs["decoder_input_ids"] = _ids(8)
    spec.train_kwargs = {"labels": _ids(8)}
    return spec


def _image_spec(model, size: int = 32, labels: bool = True) -> Spec:
    return Spec(
        model,
        (),
        {"pixel_values": torch.randn(B, 3, size, size)},
        {"labels": torch.tensor([0, 1])} if labels else {},
    )


# --------------------------------------------------------------------------
# transformers: decoder-only LMs
# --------------------------------------------------------------------------

hf_llama = causal_lm("LlamaForCausalLM", "LlamaConfig")
hf_mistral = causal_lm("MistralForCausalLM", "MistralConfig", sliding_window=8)
hf_qwen3 = causal_lm("Qwen3ForCausalLM", "Qwen3Config", head_dim=8)
hf_gemma2 = causal_lm("Gemma2ForCausalLM", "Gemma2Config", head_dim=8, sliding_window=8)
hf_phi3 = causal_lm("Phi3ForCausalLM", "Phi3Config")
hf_mixtral = causal_lm(
    "MixtralForCausalLM", "MixtralConfig", num_local_experts=4, num_experts_per_tok=2
)
hf_qwen2_moe = causal_lm(
    "Qwen2MoeForCausalLM",
    "Qwen2MoeConfig",
    moe_intermediate_size=32,
    shared_expert_intermediate_size=32,
    num_experts=4,
    num_experts_per_tok=2,
)
hf_qwen3_moe = causal_lm(
    "Qwen3MoeForCausalLM",
    "Qwen3MoeConfig",
    head_dim=8,
    moe_intermediate_size=32,
    num_experts=4,
    num_experts_per_tok=2,
)
hf_deepseek_v3 = causal_lm(
    "DeepseekV3ForCausalLM",
    "DeepseekV3Config",
    moe_intermediate_size=16,
    n_routed_experts=4,
    n_shared_experts=1,
    num_experts_per_tok=2,
    n_group=2,
    topk_group=1,
    first_k_dense_replace=1,
    kv_lora_rank=16,
    q_lora_rank=16,
    qk_rope_head_dim=8,
    qk_nope_head_dim=8,
    v_head_dim=8,
    num_key_value_heads=NH,
)
hf_olmoe = causal_lm("OlmoeForCausalLM", "OlmoeConfig", num_experts=4, num_experts_per_tok=2)
hf_granitemoe = causal_lm(
    "GraniteMoeForCausalLM", "GraniteMoeConfig", num_local_experts=4, num_experts_per_tok=2
)
hf_jetmoe = causal_lm(
    "JetMoeForCausalLM",
    "JetMoeConfig",
    lm_kw=False,
    vocab_size=V,
    hidden_size=H,
    num_hidden_layers=L,
    num_key_value_heads=2,
    kv_channels=8,
    intermediate_size=I,
    max_position_embeddings=64,
    num_local_experts=4,
    num_experts_per_tok=2,
)
hf_dbrx = causal_lm(
    "DbrxForCausalLM",
    "DbrxConfig",
    lm_kw=False,
    d_model=H,
    n_heads=NH,
    n_layers=L,
    max_seq_len=64,
    vocab_size=V,
    attn_config={"kv_n_heads": 2, "rope_theta": 10000.0, "clip_qkv": 8.0},
    ffn_config={"ffn_hidden_size": I, "moe_num_experts": 4, "moe_top_k": 2},
)
hf_gpt_oss = causal_lm(
    "GptOssForCausalLM",
    "GptOssConfig",
    head_dim=8,
    num_local_experts=4,
    num_experts_per_tok=2,
    sliding_window=8,
)
hf_jamba = causal_lm(
    "JambaForCausalLM",
    "JambaConfig",
    num_hidden_layers=4,
    num_experts=4,
    num_experts_per_tok=2,
    expert_layer_period=2,
    expert_layer_offset=1,
    attn_layer_period=2,
    attn_layer_offset=1,
    use_mamba_kernels=False,
    mamba_d_state=4,
    mamba_dt_rank=4,
)
hf_gpt2 = causal_lm(
    "GPT2LMHeadModel", "GPT2Config", lm_kw=False, vocab_size=V, n_positions=64, n_embd=H, n_layer=L, n_head=NH
)
hf_gpt_bigcode = causal_lm(
    "GPTBigCodeForCausalLM",
    "GPTBigCodeConfig",
    lm_kw=False,
    vocab_size=V,
    n_positions=64,
    n_embd=H,
    n_layer=L,
    n_head=NH,
)
hf_gptj = causal_lm(
    "GPTJForCausalLM", "GPTJConfig", lm_kw=False, vocab_size=V, n_positions=64, n_embd=H, n_layer=L, n_head=NH, rotary_dim=4
)
hf_codegen = causal_lm(
    "CodeGenForCausalLM",
    "CodeGenConfig",
    lm_kw=False,
    vocab_size=V,
    n_positions=64,
    n_ctx=64,
    n_embd=H,
    n_layer=L,
    n_head=NH,
    rotary_dim=4,
)
hf_opt = causal_lm(
    "OPTForCausalLM",
    "OPTConfig",
    lm_kw=False,
    vocab_size=V,
    hidden_size=H,
    num_hidden_layers=L,
    ffn_dim=I,
    num_attention_heads=NH,
    max_position_embeddings=64,
    word_embed_proj_dim=H,
)
hf_bloom = causal_lm(
    "BloomForCausalLM", "BloomConfig", lm_kw=False, vocab_size=V, hidden_size=H, n_layer=L, n_head=NH
)
hf_mpt = causal_lm(
    "MptForCausalLM",
    "MptConfig",
    lm_kw=False,
    vocab_size=V,
    d_model=H,
    n_layers=L,
    n_heads=NH,
    max_seq_len=64,
)
hf_gpt_neox = causal_lm(
    "GPTNeoXForCausalLM",
    "GPTNeoXConfig",
    lm_kw=False,
    vocab_size=V,
    hidden_size=H,
    num_hidden_layers=L,
    num_attention_heads=NH,
    intermediate_size=I,
    max_position_embeddings=64,
)
hf_falcon = causal_lm(
    "FalconForCausalLM",
    "FalconConfig",
    lm_kw=False,
    vocab_size=V,
    hidden_size=H,
    num_hidden_layers=L,
    num_attention_heads=NH,
    max_position_embeddings=64,
)
hf_mamba = causal_lm(
    "MambaForCausalLM",
    "MambaConfig",
    lm_kw=False,
    vocab_size=V,
    hidden_size=H,
    state_size=4,
    num_hidden_layers=L,
    expand=2,
)
hf_mamba2 = causal_lm(
    "Mamba2ForCausalLM",
    "Mamba2Config",
    lm_kw=False,
    vocab_size=V,
    hidden_size=H,
    num_heads=8,
    head_dim=8,
    state_size=8,
    n_groups=1,
    num_hidden_layers=L,
    expand=2,
    chunk_size=8,
)
hf_rwkv = causal_lm(
    "RwkvForCausalLM",
    "RwkvConfig",
    lm_kw=False,
    vocab_size=V,
    context_length=64,
    hidden_size=H,
    num_hidden_layers=L,
    attention_hidden_size=H,
    intermediate_size=I,
)


def hf_reformer():
    model = _hf(
        "ReformerModelWithLMHead",
        "ReformerConfig",
        vocab_size=V,
        hidden_size=H,
        num_attention_heads=2,
        attention_head_size=8,
        attn_layers=["local", "lsh"],
        axial_pos_embds=True,
        axial_pos_shape=[4, 8],
        axial_pos_embds_dim=[16, 16],
        feed_forward_size=I,
        local_attn_chunk_length=8,
        lsh_attn_chunk_length=8,
        num_buckets=4,
        num_hashes=1,
        max_position_embeddings=32,
        is_decoder=True,
        pad_token_id=0,
        eos_token_id=2,
    )
    ids = _ids(32)
    return Spec(model, (), {"input_ids": ids, "attention_mask": _mask(32, "left")}, {"labels": ids})


# --------------------------------------------------------------------------
# transformers: encoders
# --------------------------------------------------------------------------

hf_bert = encoder("BertForMaskedLM", "BertConfig")
hf_roberta = encoder("RobertaForMaskedLM", "RobertaConfig", pad_token_id=1)
hf_albert = encoder("AlbertForMaskedLM", "AlbertConfig", embedding_size=16)
hf_electra = encoder("ElectraForMaskedLM", "ElectraConfig", embedding_size=16)
hf_mpnet = encoder("MPNetForMaskedLM", "MPNetConfig")
hf_esm = encoder("EsmForMaskedLM", "EsmConfig", pad_token_id=1, mask_token_id=2)
hf_fnet = encoder(
    "FNetForMaskedLM", "FNetConfig", labels="lm", num_attention_heads=None
)
hf_funnel = encoder(
    "FunnelForMaskedLM",
    "FunnelConfig",
    block_sizes=[1, 1],
    d_model=H,
    n_head=NH,
    d_head=8,
    d_inner=I,
    num_hidden_layers=None,
    hidden_size=None,
    num_attention_heads=None,
    intermediate_size=None,
    max_position_embeddings=None,
)
hf_deberta_v2 = encoder(
    "DebertaV2ForSequenceClassification",
    "DebertaV2Config",
    labels="cls",
    relative_attention=True,
    pos_att_type=["p2c", "c2p"],
    position_buckets=8,
    max_relative_positions=16,
    num_labels=3,
)
hf_longformer = encoder(
    "LongformerForMaskedLM",
    "LongformerConfig",
    attention_window=[4, 4],
    pad_token_id=1,
    max_position_embeddings=80,
)
hf_big_bird = encoder(
    "BigBirdForMaskedLM",
    "BigBirdConfig",
    n=64,
    attention_type="block_sparse",
    block_size=4,
    num_random_blocks=2,
    max_position_embeddings=128,
)
hf_xlnet = encoder(
    "XLNetLMHeadModel",
    "XLNetConfig",
    d_model=H,
    n_layer=L,
    n_head=NH,
    d_inner=I,
    num_hidden_layers=None,
    hidden_size=None,
    num_attention_heads=None,
    intermediate_size=None,
    max_position_embeddings=None,
)


def hf_distilbert():
    model = _hf(
        "DistilBertForMaskedLM", "DistilBertConfig", vocab_size=V, dim=H, n_layers=L, n_heads=NH, hidden_dim=I, max_position_embeddings=64
    )
    return _text_spec(model)


def hf_canine():
    model = _hf(
        "CanineModel",
        "CanineConfig",
        hidden_size=H,
        num_hidden_layers=L,
        num_attention_heads=NH,
        intermediate_size=I,
        num_hash_buckets=64,
        num_hash_functions=2,
        downsampling_rate=4,
        max_position_embeddings=128,
    )
    return _text_spec(model, labels=None)


# --------------------------------------------------------------------------
# transformers: encoder-decoders
# --------------------------------------------------------------------------


def hf_t5():
    return _seq2seq_spec(
        _hf(
            "T5ForConditionalGeneration",
            "T5Config",
            vocab_size=V,
            d_model=H,
            d_kv=8,
            d_ff=I,
            num_layers=L,
            num_heads=NH,
            decoder_start_token_id=0,
            pad_token_id=0,
        )
    )


def hf_switch_transformers():
    return _seq2seq_spec(
        _hf(
            "SwitchTransformersForConditionalGeneration",
            "SwitchTransformersConfig",
            vocab_size=V,
            d_model=H,
            d_kv=8,
            d_ff=I,
            num_layers=2,
            num_sparse_encoder_layers=1,
            num_decoder_layers=2,
            num_sparse_decoder_layers=1,
            num_heads=NH,
            num_experts=4,
            expert_capacity=8,
            decoder_start_token_id=0,
            pad_token_id=0,
        )
    )


def _bart_kw(**extra):
    kw = dict(
        vocab_size=V,
        d_model=H,
        encoder_layers=L,
        decoder_layers=L,
        encoder_attention_heads=NH,
        decoder_attention_heads=NH,
        encoder_ffn_dim=I,
        decoder_ffn_dim=I,
        max_position_embeddings=64,
    )
    kw.update(extra)
    return {k: v for k, v in kw.items() if v is not None}


def hf_bart():
    return _seq2seq_spec(
        _hf(
            "BartForConditionalGeneration",
            "BartConfig",
            **_bart_kw(encoder_layerdrop=0.1, decoder_layerdrop=0.1),
        )
    )


def hf_nllb_moe():
    return _seq2seq_spec(
        _hf(
            "NllbMoeForConditionalGeneration",
            "NllbMoeConfig",
            **_bart_kw(num_experts=4, expert_capacity=8, encoder_sparse_step=2, decoder_sparse_step=2),
        )
    )


def hf_whisper():
    model = _hf(
        "WhisperForConditionalGeneration",
        "WhisperConfig",
        **_bart_kw(
            max_position_embeddings=None,
            encoder_layerdrop=0.1,
            decoder_layerdrop=0.1,
            num_mel_bins=16,
            max_source_positions=16,
            max_target_positions=32,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            decoder_start_token_id=1,
        ),
    )
    return Spec(
        model,
        (),
        {"input_features": torch.randn(B, 16, 32), "decoder_input_ids": _ids(8)},
        {"labels": _ids(8)},
    )


def hf_speech_to_text():
    model = _hf(
        "Speech2TextForConditionalGeneration",
        "Speech2TextConfig",
        **_bart_kw(
            max_source_positions=64,
            max_target_positions=32,
            encoder_layerdrop=0.1,
            decoder_layerdrop=0.1,
            num_conv_layers=2,
            conv_kernel_sizes=(5, 5),
            conv_channels=16,
            input_feat_per_channel=8,
            input_channels=1,
            decoder_start_token_id=1,
        ),
    )
    return Spec(
        model,
        (),
        {
            "input_features": torch.randn(B, 40, 8),
            "attention_mask": _mask(40),
            "decoder_input_ids": _ids(8),
        },
        {"labels": _ids(8)},
    )


# --------------------------------------------------------------------------
# transformers: speech / audio
# --------------------------------------------------------------------------


def _w2v_kw(**extra):
    kw = dict(
        vocab_size=32,
        hidden_size=H,
        num_hidden_layers=L,
        num_attention_heads=NH,
        intermediate_size=I,
        conv_dim=(16, 16),
        conv_stride=(5, 2),
        conv_kernel=(10, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4,
        mask_time_length=2,
    )
    kw.update(extra)
    return kw


def _audio_spec(model) -> Spec:
    # CTC heads: train with labels so the loss path (and its checks) runs too.
    return Spec(
        model,
        (),
        {"input_values": torch.randn(B, 1600)},
        {"labels": torch.randint(1, 32, (B, 5))},
    )


def hf_wav2vec2():
    return _audio_spec(_hf("Wav2Vec2ForCTC", "Wav2Vec2Config", **_w2v_kw()))


def hf_hubert():
    return _audio_spec(_hf("HubertForCTC", "HubertConfig", **_w2v_kw()))


def hf_wavlm():
    return _audio_spec(_hf("WavLMForCTC", "WavLMConfig", **_w2v_kw(num_buckets=32, max_bucket_distance=64)))


def hf_encodec():
    model = _hf(
        "EncodecModel",
        "EncodecConfig",
        target_bandwidths=[12.0],
        sampling_rate=8000,
        hidden_size=16,
        num_filters=4,
        num_residual_layers=1,
        upsampling_ratios=[4, 2],
        codebook_size=32,
        num_lstm_layers=1,
    )
    return Spec(model, (), {"input_values": torch.randn(B, 1, 256)})


# --------------------------------------------------------------------------
# transformers: vision
# --------------------------------------------------------------------------


def _vit_kw(**extra):
    kw = dict(
        image_size=32,
        patch_size=8,
        hidden_size=H,
        num_hidden_layers=L,
        num_attention_heads=NH,
        intermediate_size=I,
        num_labels=10,
    )
    kw.update(extra)
    return kw


def hf_vit():
    return _image_spec(_hf("ViTForImageClassification", "ViTConfig", **_vit_kw()))


def hf_dinov2():
    return _image_spec(_hf("Dinov2ForImageClassification", "Dinov2Config", **_vit_kw()), size=40)


def hf_beit():
    return _image_spec(
        _hf(
            "BeitForImageClassification",
            "BeitConfig",
            **_vit_kw(use_relative_position_bias=True, use_mean_pooling=True),
        )
    )


def hf_swin():
    return _image_spec(
        _hf(
            "SwinForImageClassification",
            "SwinConfig",
            image_size=32,
            patch_size=2,
            embed_dim=16,
            depths=[1, 1],
            num_heads=[2, 2],
            window_size=4,
            num_labels=10,
        )
    )


def hf_convnext():
    return _image_spec(
        _hf(
            "ConvNextForImageClassification",
            "ConvNextConfig",
            hidden_sizes=[8, 16, 32, 64],
            depths=[1, 1, 1, 1],
            num_labels=10,
        )
    )


def hf_mobilevit():
    return _image_spec(
        _hf(
            "MobileViTForImageClassification",
            "MobileViTConfig",
            image_size=64,
            hidden_sizes=[16, 24, 32],
            neck_hidden_sizes=[8, 8, 16, 16, 24, 24, 32],
            num_labels=10,
        ),
        size=64,
    )


def hf_efficientnet():
    return _image_spec(
        _hf(
            "EfficientNetForImageClassification",
            "EfficientNetConfig",
            image_size=32,
            width_coefficient=0.25,
            depth_coefficient=0.25,
            hidden_dim=320,
            num_labels=10,
        )
    )


def hf_segformer():
    model = _hf(
        "SegformerForSemanticSegmentation",
        "SegformerConfig",
        num_encoder_blocks=2,
        depths=[1, 1],
        sr_ratios=[2, 1],
        hidden_sizes=[16, 32],
        patch_sizes=[7, 3],
        strides=[4, 2],
        num_attention_heads=[1, 2],
        mlp_ratios=[2, 2],
        decoder_hidden_size=32,
        num_labels=5,
    )
    return Spec(model, (), {"pixel_values": torch.randn(B, 3, 32, 32)}, {"labels": torch.randint(0, 5, (B, 32, 32))})


def hf_clip():
    model = _hf(
        "CLIPModel",
        "CLIPConfig",
        text_config=dict(
            vocab_size=V,
            hidden_size=H,
            intermediate_size=I,
            num_hidden_layers=L,
            num_attention_heads=NH,
            max_position_embeddings=32,
        ),
        vision_config=dict(
            image_size=32,
            patch_size=8,
            hidden_size=H,
            intermediate_size=I,
            num_hidden_layers=L,
            num_attention_heads=NH,
        ),
        projection_dim=16,
    )
    spec = _text_spec(model, labels=None)
    spec.kwargs["pixel_values"] = torch.randn(B, 3, 32, 32)
    spec.train_kwargs = {"return_loss": True}
    return spec


def hf_owlvit():
    model = _hf(
        "OwlViTForObjectDetection",
        "OwlViTConfig",
        text_config=dict(
            vocab_size=V,
            hidden_size=H,
            intermediate_size=I,
            num_hidden_layers=L,
            num_attention_heads=NH,
            max_position_embeddings=16,
        ),
        vision_config=dict(
            image_size=32,
            patch_size=8,
            hidden_size=H,
            intermediate_size=I,
            num_hidden_layers=L,
            num_attention_heads=NH,
        ),
        projection_dim=H,
    )
    ids = _ids(SEQ)
    return Spec(
        model,
        (),
        {"input_ids": ids, "attention_mask": _mask(), "pixel_values": torch.randn(1, 3, 32, 32)},
    )


def _resnet_backbone(out=("stage2", "stage3", "stage4")):
    import transformers

    return transformers.ResNetConfig(
        embedding_size=8,
        hidden_sizes=[8, 16, 16, 32],
        depths=[1, 1, 1, 1],
        layer_type="basic",
        out_features=list(out),
    )


def _detr_kw(**extra):
    kw = dict(
        backbone_config=_resnet_backbone(),
        d_model=32,
        encoder_layers=1,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        num_queries=10,
        num_labels=5,
    )
    kw.update(extra)
    return kw


def _detr_spec(model, size: int = 64) -> Spec:
    return Spec(model, (), {"pixel_values": torch.randn(B, 3, size, size)})


def hf_detr():
    return _detr_spec(_hf("DetrForObjectDetection", "DetrConfig", **_detr_kw()))


def hf_conditional_detr():
    return _detr_spec(
        _hf("ConditionalDetrForObjectDetection", "ConditionalDetrConfig", **_detr_kw())
    )


def hf_deformable_detr():
    return _detr_spec(
        _hf(
            "DeformableDetrForObjectDetection",
            "DeformableDetrConfig",
            **_detr_kw(
                num_feature_levels=3,
                encoder_n_points=2,
                decoder_n_points=2,
                disable_custom_kernels=True,
            ),
        )
    )


def hf_rt_detr():
    import transformers

    backbone = transformers.RTDetrResNetConfig(
        embedding_size=10,
        hidden_sizes=[10, 20, 30, 40],
        depths=[1, 1, 2, 1],
        hidden_act="relu",
        layer_type="bottleneck",
        out_features=["stage2", "stage3", "stage4"],
    )
    model = _hf(
        "RTDetrForObjectDetection",
        "RTDetrConfig",
        backbone_config=backbone,
        encoder_hidden_dim=32,
        encoder_in_channels=[20, 30, 40],
        encoder_ffn_dim=64,
        encoder_attention_heads=4,
        d_model=32,
        num_queries=10,
        decoder_in_channels=[32, 32, 32],
        decoder_ffn_dim=64,
        decoder_layers=2,
        decoder_attention_heads=4,
        decoder_n_points=2,
        num_labels=5,
        num_denoising=0,
        anchor_image_size=None,
        disable_custom_kernels=True,
    )
    return _detr_spec(model)


def hf_yolos():
    return _image_spec(
        _hf(
            "YolosForObjectDetection",
            "YolosConfig",
            **_vit_kw(image_size=[32, 32], num_detection_tokens=5, num_labels=5),
        ),
        labels=False,
    )


# --------------------------------------------------------------------------
# transformers: time series
# --------------------------------------------------------------------------


def hf_patchtst():
    model = _hf(
        "PatchTSTForPrediction",
        "PatchTSTConfig",
        num_input_channels=3,
        context_length=32,
        patch_length=8,
        patch_stride=8,
        num_hidden_layers=L,
        d_model=H,
        num_attention_heads=NH,
        ffn_dim=I,
        prediction_length=8,
    )
    return Spec(
        model,
        (),
        {"past_values": torch.randn(B, 32, 3)},
        {"future_values": torch.randn(B, 8, 3)},
    )


def hf_informer():
    model = _hf(
        "InformerForPrediction",
        "InformerConfig",
        prediction_length=4,
        context_length=8,
        lags_sequence=[1, 2],
        num_time_features=1,
        d_model=16,
        encoder_layers=2,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
    )
    past = 8 + 2
    return Spec(
        model,
        (),
        {
            "past_values": torch.randn(B, past),
            "past_time_features": torch.randn(B, past, 1),
            "past_observed_mask": torch.ones(B, past),
            "future_values": torch.randn(B, 4),
            "future_time_features": torch.randn(B, 4, 1),
        },
    )


# --------------------------------------------------------------------------
# timm
# --------------------------------------------------------------------------


def _timm(name: str, size: int = 64, **kw):
    def build() -> Spec:
        import timm

        model = timm.create_model(name, pretrained=False, num_classes=10, **kw)
        return Spec(model, (torch.randn(B, 3, size, size),), {})

    build.__name__ = "timm_" + name
    return build


# --------------------------------------------------------------------------
# diffusers
# --------------------------------------------------------------------------


def _t(*v):
    return torch.tensor(list(v))


def df_unet2d():
    import diffusers

    model = diffusers.UNet2DModel(
        sample_size=16,
        in_channels=3,
        out_channels=3,
        block_out_channels=(8, 16),
        layers_per_block=1,
        down_block_types=("DownBlock2D", "AttnDownBlock2D"),
        up_block_types=("AttnUpBlock2D", "UpBlock2D"),
        norm_num_groups=4,
        attention_head_dim=4,
    )
    return Spec(model, (torch.randn(B, 3, 16, 16), _t(10, 20)))


def _unet_cond_kw(**extra):
    kw = dict(
        sample_size=16,
        in_channels=4,
        out_channels=4,
        block_out_channels=(8, 16),
        layers_per_block=1,
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=16,
        attention_head_dim=2,
        norm_num_groups=4,
    )
    kw.update(extra)
    return kw


def df_unet2d_condition():
    import diffusers

    model = diffusers.UNet2DConditionModel(**_unet_cond_kw())
    return Spec(model, (torch.randn(B, 4, 16, 16), _t(10, 20), torch.randn(B, 5, 16)))


def df_unet_sdxl():
    """UNet2DConditionModel with SDXL-style text_time additional embeddings."""
    import diffusers

    model = diffusers.UNet2DConditionModel(
        **_unet_cond_kw(
            addition_embed_type="text_time",
            addition_time_embed_dim=4,
            projection_class_embeddings_input_dim=8 + 6 * 4,
            transformer_layers_per_block=(1, 1),
            use_linear_projection=True,
        )
    )
    return Spec(
        model,
        (torch.randn(B, 4, 16, 16), _t(10, 20), torch.randn(B, 5, 16)),
        {"added_cond_kwargs": {"text_embeds": torch.randn(B, 8), "time_ids": torch.randn(B, 6)}},
    )


def df_controlnet():
    import diffusers

    kw = _unet_cond_kw()
    kw.pop("up_block_types")
    kw.pop("out_channels")
    kw.pop("sample_size")
    model = diffusers.ControlNetModel(conditioning_embedding_out_channels=(4, 8), **kw)
    return Spec(
        model,
        (torch.randn(B, 4, 16, 16), _t(10, 20), torch.randn(B, 5, 16), torch.randn(B, 3, 32, 32)),
    )


def df_unet1d():
    import diffusers

    model = diffusers.UNet1DModel(
        sample_size=32,
        in_channels=2,
        out_channels=2,
        extra_in_channels=64,
        block_out_channels=(32, 32, 64),
        down_block_types=("DownBlock1DNoSkip", "DownBlock1D", "AttnDownBlock1D"),
        up_block_types=("AttnUpBlock1D", "UpBlock1D", "UpBlock1DNoSkip"),
        mid_block_type="UNetMidBlock1D",
        use_timestep_embedding=False,
        norm_num_groups=8,
    )
    return Spec(model, (torch.randn(B, 2, 32), _t(10, 20)))


def df_autoencoder_kl():
    import diffusers

    model = diffusers.AutoencoderKL(
        in_channels=3,
        out_channels=3,
        block_out_channels=(8, 16),
        down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
        up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
        latent_channels=4,
        norm_num_groups=4,
        layers_per_block=1,
        sample_size=32,
    )
    return Spec(model, (torch.randn(B, 3, 32, 32),), {}, {"sample_posterior": True})


def df_vq_model():
    import diffusers

    model = diffusers.VQModel(
        in_channels=3,
        out_channels=3,
        block_out_channels=(8, 16),
        down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
        up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
        latent_channels=4,
        norm_num_groups=4,
        layers_per_block=1,
        num_vq_embeddings=16,
        sample_size=32,
    )
    return Spec(model, (torch.randn(B, 3, 32, 32),))


def df_autoencoder_tiny():
    import diffusers

    model = diffusers.AutoencoderTiny(
        encoder_block_out_channels=(8, 8, 8, 8),
        decoder_block_out_channels=(8, 8, 8, 8),
        num_encoder_blocks=(1, 1, 1, 1),
        num_decoder_blocks=(1, 1, 1, 1),
        latent_channels=4,
    )
    return Spec(model, (torch.randn(B, 3, 32, 32),))


def df_dit():
    import diffusers

    model = diffusers.DiTTransformer2DModel(
        num_attention_heads=2,
        attention_head_dim=8,
        in_channels=4,
        out_channels=8,
        num_layers=2,
        sample_size=8,
        patch_size=2,
        num_embeds_ada_norm=10,
        norm_num_groups=4,
    )
    return Spec(
        model,
        (torch.randn(B, 4, 8, 8),),
        {"timestep": _t(3, 4), "class_labels": _t(1, 2)},
    )


def df_pixart():
    import diffusers

    model = diffusers.PixArtTransformer2DModel(
        num_attention_heads=2,
        attention_head_dim=8,
        in_channels=4,
        out_channels=8,
        num_layers=2,
        cross_attention_dim=16,
        sample_size=8,
        patch_size=2,
        caption_channels=16,
        norm_num_groups=4,
    )
    return Spec(
        model,
        (torch.randn(B, 4, 8, 8),),
        {
            "encoder_hidden_states": torch.randn(B, 5, 16),
            "timestep": _t(3, 4),
            "added_cond_kwargs": {"resolution": None, "aspect_ratio": None},
            "encoder_attention_mask": _mask(5),
        },
    )


def df_sd3():
    import diffusers

    model = diffusers.SD3Transformer2DModel(
        sample_size=8,
        patch_size=2,
        in_channels=4,
        out_channels=4,
        num_layers=2,
        attention_head_dim=8,
        num_attention_heads=2,
        joint_attention_dim=16,
        caption_projection_dim=16,
        pooled_projection_dim=16,
        pos_embed_max_size=16,
    )
    return Spec(
        model,
        (),
        {
            "hidden_states": torch.randn(B, 4, 8, 8),
            "encoder_hidden_states": torch.randn(B, 5, 16),
            "pooled_projections": torch.randn(B, 16),
            "timestep": _t(3, 4),
        },
    )


def df_flux():
    import diffusers

    model = diffusers.FluxTransformer2DModel(
        patch_size=1,
        in_channels=16,
        num_layers=1,
        num_single_layers=1,
        attention_head_dim=8,
        num_attention_heads=2,
        joint_attention_dim=16,
        pooled_projection_dim=16,
        axes_dims_rope=(2, 2, 4),
    )
    seq, txt = 16, 4
    return Spec(
        model,
        (),
        {
            "hidden_states": torch.randn(1, seq, 16),
            "encoder_hidden_states": torch.randn(1, txt, 16),
            "pooled_projections": torch.randn(1, 16),
            "timestep": torch.tensor([0.5]),
            "img_ids": torch.zeros(seq, 3),
            "txt_ids": torch.zeros(txt, 3),
        },
    )


def df_auraflow():
    import diffusers

    model = diffusers.AuraFlowTransformer2DModel(
        sample_size=8,
        patch_size=2,
        in_channels=4,
        num_mmdit_layers=1,
        num_single_dit_layers=1,
        attention_head_dim=8,
        num_attention_heads=2,
        joint_attention_dim=16,
        caption_projection_dim=16,
        out_channels=4,
        pos_embed_max_size=64,
    )
    return Spec(
        model,
        (),
        {
            "hidden_states": torch.randn(B, 4, 8, 8),
            "encoder_hidden_states": torch.randn(B, 5, 16),
            "timestep": _t(3, 4),
        },
    )


def df_hunyuan_dit():
    import diffusers

    model = diffusers.HunyuanDiT2DModel(
        num_attention_heads=2,
        attention_head_dim=8,
        in_channels=4,
        patch_size=2,
        sample_size=8,
        hidden_size=16,
        num_layers=2,
        mlp_ratio=2.0,
        cross_attention_dim=16,
        cross_attention_dim_t5=16,
        pooled_projection_dim=8,
        text_len=5,
        text_len_t5=5,
    )
    from diffusers.models.embeddings import get_2d_rotary_pos_embed

    rope = get_2d_rotary_pos_embed(8, ((0, 0), (4, 4)), (4, 4))
    return Spec(
        model,
        (torch.randn(B, 4, 8, 8), _t(3.0, 4.0)),
        {
            "encoder_hidden_states": torch.randn(B, 5, 16),
            "text_embedding_mask": _mask(5),
            "encoder_hidden_states_t5": torch.randn(B, 5, 16),
            "text_embedding_mask_t5": _mask(5),
            "image_meta_size": torch.randn(B, 6),
            "style": torch.zeros(B, dtype=torch.long),
            "image_rotary_emb": rope,
        },
    )


def df_cogvideox():
    import diffusers

    model = diffusers.CogVideoXTransformer3DModel(
        num_attention_heads=2,
        attention_head_dim=8,
        in_channels=4,
        out_channels=4,
        time_embed_dim=8,
        text_embed_dim=16,
        num_layers=1,
        sample_width=8,
        sample_height=8,
        sample_frames=9,
        patch_size=2,
        temporal_compression_ratio=4,
        max_text_seq_length=5,
    )
    return Spec(
        model,
        (),
        {
            "hidden_states": torch.randn(B, 3, 4, 8, 8),
            "encoder_hidden_states": torch.randn(B, 5, 16),
            "timestep": _t(3, 4),
        },
    )


def df_ltx_video():
    import diffusers

    model = diffusers.LTXVideoTransformer3DModel(
        in_channels=8,
        out_channels=8,
        patch_size=1,
        patch_size_t=1,
        num_attention_heads=2,
        attention_head_dim=8,
        cross_attention_dim=16,
        num_layers=1,
        caption_channels=16,
    )
    f, h, w = 2, 4, 4
    return Spec(
        model,
        (),
        {
            "hidden_states": torch.randn(B, f * h * w, 8),
            "encoder_hidden_states": torch.randn(B, 5, 16),
            "timestep": _t(3, 4),
            "encoder_attention_mask": _mask(5),
            "num_frames": f,
            "height": h,
            "width": w,
        },
    )


def df_wan():
    import diffusers

    model = diffusers.WanTransformer3DModel(
        patch_size=(1, 2, 2),
        num_attention_heads=2,
        attention_head_dim=8,
        in_channels=4,
        out_channels=4,
        text_dim=16,
        freq_dim=16,
        ffn_dim=32,
        num_layers=2,
        rope_max_seq_len=32,
    )
    return Spec(
        model,
        (),
        {
            "hidden_states": torch.randn(B, 4, 2, 8, 8),
            "timestep": _t(3, 4),
            "encoder_hidden_states": torch.randn(B, 5, 16),
        },
    )


def df_hidream():
    import diffusers

    model = diffusers.HiDreamImageTransformer2DModel(
        patch_size=2,
        in_channels=4,
        out_channels=4,
        num_layers=1,
        num_single_layers=1,
        attention_head_dim=8,
        num_attention_heads=2,
        caption_channels=[16, 16],
        text_emb_dim=16,
        num_routed_experts=4,
        num_activated_experts=2,
        axes_dims_rope=(4, 2, 2),
        max_resolution=(32, 32),
        llama_layers=[0, 1],
    )
    return Spec(
        model,
        (),
        {
            "hidden_states": torch.randn(B, 4, 8, 8),
            "timesteps": _t(3, 4),
            "encoder_hidden_states_t5": torch.randn(B, 5, 16),
            "encoder_hidden_states_llama3": torch.randn(2, B, 5, 16),
            "pooled_embeds": torch.randn(B, 16),
        },
    )


def df_stable_audio():
    import diffusers

    model = diffusers.StableAudioDiTModel(
        sample_size=16,
        in_channels=4,
        num_layers=2,
        attention_head_dim=8,
        num_attention_heads=2,
        num_key_value_attention_heads=1,
        out_channels=4,
        cross_attention_dim=16,
        time_proj_dim=16,
        global_states_input_dim=16,
        cross_attention_input_dim=16,
    )
    return Spec(
        model,
        (),
        {
            "hidden_states": torch.randn(B, 4, 16),
            "timestep": _t(3, 4),
            "encoder_hidden_states": torch.randn(B, 5, 16),
            "global_hidden_states": torch.randn(B, 1, 16),
            "rotary_embedding": None,
        },
    )


def df_prior_transformer():
    import diffusers

    model = diffusers.PriorTransformer(
        num_attention_heads=2,
        attention_head_dim=8,
        num_layers=2,
        embedding_dim=16,
        num_embeddings=5,
        additional_embeddings=4,
    )
    return Spec(
        model,
        (torch.randn(B, 16), _t(3, 4), torch.randn(B, 16)),
        {"encoder_hidden_states": torch.randn(B, 5, 16), "attention_mask": _mask(5).bool()},
    )


# name -> (library, builder)
MODELS: dict[str, tuple[str, Callable[[], Spec]]] = {
    # transformers: decoder-only LMs
    "llama": ("transformers", hf_llama),
    "mistral": ("transformers", hf_mistral),
    "qwen3": ("transformers", hf_qwen3),
    "gemma2": ("transformers", hf_gemma2),
    "phi3": ("transformers", hf_phi3),
    "mixtral": ("transformers", hf_mixtral),
    "qwen2_moe": ("transformers", hf_qwen2_moe),
    "qwen3_moe": ("transformers", hf_qwen3_moe),
    "deepseek_v3": ("transformers", hf_deepseek_v3),
    "olmoe": ("transformers", hf_olmoe),
    "granitemoe": ("transformers", hf_granitemoe),
    "jetmoe": ("transformers", hf_jetmoe),
    "dbrx": ("transformers", hf_dbrx),
    "gpt_oss": ("transformers", hf_gpt_oss),
    "jamba": ("transformers", hf_jamba),
    "gpt2": ("transformers", hf_gpt2),
    "gpt_bigcode": ("transformers", hf_gpt_bigcode),
    "gptj": ("transformers", hf_gptj),
    "codegen": ("transformers", hf_codegen),
    "opt": ("transformers", hf_opt),
    "bloom": ("transformers", hf_bloom),
    "mpt": ("transformers", hf_mpt),
    "gpt_neox": ("transformers", hf_gpt_neox),
    "falcon": ("transformers", hf_falcon),
    "mamba": ("transformers", hf_mamba),
    "mamba2": ("transformers", hf_mamba2),
    "rwkv": ("transformers", hf_rwkv),
    "reformer": ("transformers", hf_reformer),
    # transformers: encoders
    "bert": ("transformers", hf_bert),
    "roberta": ("transformers", hf_roberta),
    "albert": ("transformers", hf_albert),
    "electra": ("transformers", hf_electra),
    "distilbert": ("transformers", hf_distilbert),
    "mpnet": ("transformers", hf_mpnet),
    "esm": ("transformers", hf_esm),
    "fnet": ("transformers", hf_fnet),
    "funnel": ("transformers", hf_funnel),
    "deberta_v2": ("transformers", hf_deberta_v2),
    "longformer": ("transformers", hf_longformer),
    "big_bird": ("transformers", hf_big_bird),
    "xlnet": ("transformers", hf_xlnet),
    "canine": ("transformers", hf_canine),
    # transformers: encoder-decoders
    "t5": ("transformers", hf_t5),
    "switch_transformers": ("transformers", hf_switch_transformers),
    "bart": ("transformers", hf_bart),
    "nllb_moe": ("transformers", hf_nllb_moe),
    "whisper": ("transformers", hf_whisper),
    "speech_to_text": ("transformers", hf_speech_to_text),
    # transformers: audio
    "wav2vec2": ("transformers", hf_wav2vec2),
    "hubert": ("transformers", hf_hubert),
    "wavlm": ("transformers", hf_wavlm),
    "encodec": ("transformers", hf_encodec),
    # transformers: vision
    "vit": ("transformers", hf_vit),
    "dinov2": ("transformers", hf_dinov2),
    "beit": ("transformers", hf_beit),
    "swin": ("transformers", hf_swin),
    "convnext": ("transformers", hf_convnext),
    "mobilevit": ("transformers", hf_mobilevit),
    "efficientnet": ("transformers", hf_efficientnet),
    "segformer": ("transformers", hf_segformer),
    "clip": ("transformers", hf_clip),
    "owlvit": ("transformers", hf_owlvit),
    "detr": ("transformers", hf_detr),
    "conditional_detr": ("transformers", hf_conditional_detr),
    "deformable_detr": ("transformers", hf_deformable_detr),
    "rt_detr": ("transformers", hf_rt_detr),
    "yolos": ("transformers", hf_yolos),
    # transformers: time series
    "patchtst": ("transformers", hf_patchtst),
    "informer": ("transformers", hf_informer),
    # timm
    "timm_resnet18": ("timm", _timm("resnet18")),
    "timm_vit_tiny": ("timm", _timm("vit_tiny_patch16_224", 64, img_size=64)),
    "timm_vit_tiny_dynamic": (
        "timm",
        _timm("vit_tiny_patch16_224", 48, img_size=64, dynamic_img_size=True),
    ),
    "timm_deit_tiny_distilled": (
        "timm",
        _timm("deit_tiny_distilled_patch16_224", 64, img_size=64),
    ),
    "timm_convnext_atto": ("timm", _timm("convnext_atto")),
    "timm_efficientnet_b0": ("timm", _timm("efficientnet_b0")),
    "timm_swin_tiny": (
        "timm",
        _timm("swin_tiny_patch4_window7_224", 128, img_size=128, window_size=4),
    ),
    "timm_mobilevit_xxs": ("timm", _timm("mobilevit_xxs")),
    "timm_eva02_tiny": ("timm", _timm("eva02_tiny_patch14_224", 56, img_size=56)),
    "timm_regnetx_002": ("timm", _timm("regnetx_002")),
    "timm_mobilenetv3_small": ("timm", _timm("mobilenetv3_small_050")),
    "timm_sequencer2d_s": ("timm", _timm("sequencer2d_s", 64)),
    "timm_levit_128s": ("timm", _timm("levit_128s", 64, img_size=64)),
    "timm_coat_lite_tiny": ("timm", _timm("coat_lite_tiny", 64, img_size=64)),
    "timm_crossvit_tiny": ("timm", _timm("crossvit_tiny_240", 240)),
    "timm_pit_ti": ("timm", _timm("pit_ti_224", 64, img_size=64)),
    "timm_xcit_nano": ("timm", _timm("xcit_nano_12_p16_224", 64, img_size=64)),
    "timm_twins_svt_small": ("timm", _timm("twins_svt_small", 64, img_size=64)),
    "timm_pvt_v2_b0": ("timm", _timm("pvt_v2_b0", 64)),
    "timm_maxvit_nano": ("timm", _timm("maxvit_nano_rw_256", 64, img_size=64)),
    "timm_davit_tiny": ("timm", _timm("davit_tiny", 64)),
    "timm_edgenext_xx_small": ("timm", _timm("edgenext_xx_small", 64)),
    "timm_fastvit_t8": ("timm", _timm("fastvit_t8", 64)),
    "timm_hiera_tiny": ("timm", _timm("hiera_tiny_224", 64, img_size=64)),
    "timm_tiny_vit_5m": ("timm", _timm("tiny_vit_5m_224", 224)),
    "timm_mvitv2_tiny": ("timm", _timm("mvitv2_tiny", 64, img_size=64)),
    "timm_volo_d1": ("timm", _timm("volo_d1_224", 64, img_size=64)),
    "timm_gcvit_xxtiny": ("timm", _timm("gcvit_xxtiny", 64, img_size=64)),
    "timm_focalnet_tiny": ("timm", _timm("focalnet_tiny_srf", 64)),
    "timm_cait_xxs24": ("timm", _timm("cait_xxs24_224", 64, img_size=64)),
    "timm_nf_resnet26": ("timm", _timm("nf_resnet26", 64)),
    "timm_res2net50": ("timm", _timm("res2net50_14w_8s", 64)),
    "timm_skresnet18": ("timm", _timm("skresnet18", 64)),
    "timm_dla34": ("timm", _timm("dla34", 64)),
    "timm_hrnet_w18_small": ("timm", _timm("hrnet_w18_small", 64)),
    "timm_ghostnet": ("timm", _timm("ghostnet_100", 64)),
    "timm_repvit_m0_9": ("timm", _timm("repvit_m0_9", 64)),
    "timm_inception_v3": ("timm", _timm("inception_v3", 96)),
    "timm_efficientformer_l1": ("timm", _timm("efficientformer_l1", 224)),
    "timm_poolformer_s12": ("timm", _timm("poolformer_s12", 64)),
    "timm_mixer_s16": ("timm", _timm("mixer_s16_224", 64, img_size=64)),
    "timm_beitv2_base_d2": ("timm", _timm("beitv2_base_patch16_224", 64, img_size=64, depth=2)),
    "timm_naflexvit_base_d2": ("timm", _timm("naflexvit_base_patch16_gap", 64, depth=2)),
    # diffusers
    "diffusers_unet2d": ("diffusers", df_unet2d),
    "diffusers_unet2d_condition": ("diffusers", df_unet2d_condition),
    "diffusers_unet_sdxl": ("diffusers", df_unet_sdxl),
    "diffusers_controlnet": ("diffusers", df_controlnet),
    "diffusers_unet1d": ("diffusers", df_unet1d),
    "diffusers_autoencoder_kl": ("diffusers", df_autoencoder_kl),
    "diffusers_vq_model": ("diffusers", df_vq_model),
    "diffusers_autoencoder_tiny": ("diffusers", df_autoencoder_tiny),
    "diffusers_dit": ("diffusers", df_dit),
    "diffusers_pixart": ("diffusers", df_pixart),
    "diffusers_sd3": ("diffusers", df_sd3),
    "diffusers_flux": ("diffusers", df_flux),
    "diffusers_auraflow": ("diffusers", df_auraflow),
    "diffusers_hunyuan_dit": ("diffusers", df_hunyuan_dit),
    "diffusers_cogvideox": ("diffusers", df_cogvideox),
    "diffusers_ltx_video": ("diffusers", df_ltx_video),
    "diffusers_wan": ("diffusers", df_wan),
    "diffusers_hidream": ("diffusers", df_hidream),
    "diffusers_stable_audio": ("diffusers", df_stable_audio),
    "diffusers_prior_transformer": ("diffusers", df_prior_transformer),
}
