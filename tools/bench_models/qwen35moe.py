"""Qwen3.5-MoE (hybrid Gated DeltaNet + gated attention + MoE + MTP) at real width.

Shapes (shared/docs/QWEN35.md §1.1 and §1.3, from the published config.json files):
- qwen35moe-a3b: Qwen/Qwen3.5-35B-A3B — hidden 2048, 16 query / 2 KV heads of 256, GDN 16 key /
  32 value heads of 128, conv 4, 256 experts top-8 of width 512, one shared expert of 512,
  vocabulary 248320, full attention every 4th layer, one MTP layer; the 40 layers cut to 8.
- qwen35moe-397b-1layer: Qwen/Qwen3.5-397B-A17B — hidden 4096, 32 / 2 heads of 256, GDN 16 / 64
  heads of 128, 512 experts top-10 of width 1024, shared 1024; 4 layers (three GDN, one full
  attention) and no MTP: one real layer's step.
The tokenizer is Qwen3's (151,643 + 26 added tokens, from ../shared/models/tiny-qwen3.5-moe);
ids past it up to the vocabulary are [PAD<id>] (unused), and the output rows of every id that is
not a normal token decoding to valid UTF-8 on its own are zero, so greedy text stays valid.

GGUF layout as llama.cpp's converter writes `qwen35moe` (conversion/qwen.py, and the checks in
tiny-qwen3.5-moe/PROVENANCE.md): the zero-centred norms +1 (not linear_attn.norm), ssm_a =
-exp(A_log), GDN value heads from grouped to tiled order (attn_qkv v rows, attn_gate, ssm_beta,
ssm_alpha, ssm_a, ssm_dt, ssm_conv1d v channels, ssm_out input columns), conv1d squeezed, the
fused gate_up split, the MTP layer as the last block with nextn.* tensors; 1-D tensors, the
routers and conv1d in F32.
"""
import json
import os

import numpy as np

from . import common

CONFIGS = {
    "qwen35moe-a3b": dict(hidden=2048, layers=8, heads=16, kv_heads=2, head_dim=256, gk=16, gv=32,
                          dk=128, dv=128, conv=4, experts=256, top_k=8, moe=512, shared=512,
                          vocab=248320, mtp=1, interval=4),
    "qwen35moe-397b-1layer": dict(hidden=4096, layers=4, heads=32, kv_heads=2, head_dim=256, gk=16,
                                  gv=64, dk=128, dv=128, conv=4, experts=512, top_k=10, moe=1024,
                                  shared=1024, vocab=248320, mtp=0, interval=4),
    # The same layout at toy width, for checking the writer (GGUF vs HF vs llama.cpp) in seconds.
    "qwen35moe-tiny": dict(hidden=64, layers=4, heads=4, kv_heads=2, head_dim=32, gk=2, gv=4, dk=16,
                           dv=16, conv=4, experts=8, top_k=2, moe=32, shared=32, vocab=151936,
                           mtp=1, interval=4),
}
TEMPLATE = "tiny-qwen3.5-moe"  # tokenizer files and GGUF tokenizer metadata come from here
ZC = 0.02  # spread of a zero-centred norm's weight around 0 (stored +1 in GGUF)


def full_attention(c, layer):
    return (layer + 1) % c["interval"] == 0


class Model:
    def __init__(self, name, seed, shared_models, gguf, gguf_mtp=False):
        self.c = dict(CONFIGS[name])
        # The MTP layer in the GGUF too (blk.{layers} + nextn.*, as llama.cpp's converter writes
        # it): off by default, the peer's llama.cpp (cf8b0dbda) refusing such a file ("missing
        # tensor blk.N.ssm_conv1d.weight": it reads every block as a trunk layer).
        self.gguf_mtp = gguf_mtp and self.c["mtp"] > 0
        self.name, self.seed, self.gguf = name, seed, gguf
        self.template = os.path.join(shared_models, TEMPLATE)
        reader = gguf.GGUFReader(os.path.join(self.template, TEMPLATE + "-f16.gguf"))
        self.tok = {k: reader.fields[k].contents() for k in reader.fields
                    if k.startswith("tokenizer.")}
        n = len(self.tok["tokenizer.ggml.tokens"])
        assert n <= self.c["vocab"]
        self.tok["tokenizer.ggml.tokens"] += [f"[PAD{i}]" for i in range(n, self.c["vocab"])]
        self.tok["tokenizer.ggml.token_type"] += [5] * (self.c["vocab"] - n)  # UNUSED
        self.valid = common.valid_output_ids(self.tok["tokenizer.ggml.tokens"],
                                             self.tok["tokenizer.ggml.token_type"])

    # ---- the HF checkpoint: names, shapes, values ----
    def hf_specs(self):
        """[(name, dtype, shape, make)]: every tensor of the HF checkpoint."""
        c, out = self.c, []
        h, e, i, s = c["hidden"], c["experts"], c["moe"], c["shared"]
        nh, nkv, hd = c["heads"], c["kv_heads"], c["head_dim"]
        gk, gv, dk, dv, k = c["gk"], c["gv"], c["dk"], c["dv"], c["conv"]
        channels = 2 * gk * dk + gv * dv

        def mat(name, shape, fan_in):
            out.append((name, "BF16", shape, lambda: common.normal(self.seed, name, shape,
                                                                    fan_in ** -0.5)))

        def zc_norm(name, n):
            out.append((name, "BF16", (n,), lambda: common.normal(self.seed, name, (n,), ZC)))

        def plain_norm(name, n):
            out.append((name, "BF16", (n,),
                        lambda: common.bf16_round(1 + common.normal(self.seed, name, (n,), ZC))))

        def f32(name, n, make):
            out.append((name, "F32", (n,), lambda: make(common.rng_for(self.seed, name))))

        def attention(p):
            mat(p + "self_attn.q_proj.weight", (2 * nh * hd, h), h)
            mat(p + "self_attn.k_proj.weight", (nkv * hd, h), h)
            mat(p + "self_attn.v_proj.weight", (nkv * hd, h), h)
            mat(p + "self_attn.o_proj.weight", (h, nh * hd), nh * hd)
            zc_norm(p + "self_attn.q_norm.weight", hd)
            zc_norm(p + "self_attn.k_norm.weight", hd)

        def moe(p):
            zc_norm(p + "input_layernorm.weight", h)
            zc_norm(p + "post_attention_layernorm.weight", h)
            mat(p + "mlp.gate.weight", (e, h), h)
            mat(p + "mlp.experts.gate_up_proj", (e, 2 * i, h), h)
            mat(p + "mlp.experts.down_proj", (e, h, i), i)
            if s:
                mat(p + "mlp.shared_expert.gate_proj.weight", (s, h), h)
                mat(p + "mlp.shared_expert.up_proj.weight", (s, h), h)
                mat(p + "mlp.shared_expert.down_proj.weight", (h, s), s)
                mat(p + "mlp.shared_expert_gate.weight", (1, h), h)

        mat("model.language_model.embed_tokens.weight", (c["vocab"], h), 1 / ZC ** 2)
        out.append(("lm_head.weight", "BF16", (c["vocab"], h), self._lm_head))
        zc_norm("model.language_model.norm.weight", h)
        for layer in range(c["layers"]):
            p = f"model.language_model.layers.{layer}."
            moe(p)
            if full_attention(c, layer):
                attention(p)
                continue
            g = p + "linear_attn."
            f32(g + "A_log", gv, lambda r: np.log(r.uniform(1, 16, gv)).astype(np.float32))
            f32(g + "dt_bias", gv, lambda r: r.normal(0, 0.5, gv).astype(np.float32))
            name = g + "conv1d.weight"
            out.append((name, "BF16", (channels, 1, k),
                        lambda name=name: common.normal(self.seed, name, (channels, 1, k),
                                                        k ** -0.5)))
            mat(g + "in_proj_qkv.weight", (channels, h), h)
            mat(g + "in_proj_z.weight", (gv * dv, h), h)
            mat(g + "in_proj_b.weight", (gv, h), h)
            mat(g + "in_proj_a.weight", (gv, h), h)
            plain_norm(g + "norm.weight", dv)
            mat(g + "out_proj.weight", (h, gv * dv), gv * dv)
        if c["mtp"]:
            mat("mtp.fc.weight", (h, 2 * h), 2 * h)
            for n in ("mtp.norm.weight", "mtp.pre_fc_norm_embedding.weight",
                      "mtp.pre_fc_norm_hidden.weight"):
                zc_norm(n, h)
            moe("mtp.layers.0.")
            attention("mtp.layers.0.")
        return out

    def _lm_head(self):
        w = common.normal(self.seed, "lm_head.weight", (self.c["vocab"], self.c["hidden"]),
                          self.c["hidden"] ** -0.5)
        w[~self.valid] = 0
        return w

    def hf_config(self):
        c = self.c
        with open(os.path.join(self.template, "config.json")) as f:
            config = json.load(f)
        t = config["text_config"]
        t.update({
            "hidden_size": c["hidden"], "num_hidden_layers": c["layers"],
            "layer_types": ["full_attention" if full_attention(c, l) else "linear_attention"
                            for l in range(c["layers"])],
            "full_attention_interval": c["interval"], "num_attention_heads": c["heads"],
            "num_key_value_heads": c["kv_heads"], "head_dim": c["head_dim"],
            "linear_num_key_heads": c["gk"], "linear_num_value_heads": c["gv"],
            "linear_key_head_dim": c["dk"], "linear_value_head_dim": c["dv"],
            "linear_conv_kernel_dim": c["conv"], "num_experts": c["experts"],
            "num_experts_per_tok": c["top_k"], "moe_intermediate_size": c["moe"],
            "shared_expert_intermediate_size": c["shared"], "vocab_size": c["vocab"],
            "mtp_num_hidden_layers": c["mtp"],
        })
        t["rope_parameters"]["mrope_section"] = [11, 11, 10]
        config["vision_config"]["out_hidden_size"] = c["hidden"]
        return config

    def write_hf(self, folder):
        return common.write_hf_folder(folder, self.hf_specs(), self.hf_config(), self.template)

    # ---- the GGUF: llama.cpp's names, layouts and transforms of the same values ----
    def _tile(self, x, first, head_rows):
        """Rows first … first + gv·head_rows from grouped value-head order to tiled."""
        c = self.c
        r = c["gv"] // c["gk"]
        block = x[first:first + c["gv"] * head_rows]
        shape = block.shape
        block = block.reshape((c["gk"], r, head_rows) + shape[1:]).swapaxes(0, 1)
        x = x.copy()
        x[first:first + c["gv"] * head_rows] = block.reshape(shape)
        return x

    def gguf_tensors(self, qtype):
        """[(gguf name, numpy shape, qtype, make)] in llama.cpp's order and layout."""
        c, q, gg = self.c, self.gguf.GGMLQuantizationType, []
        hf = {name: (shape, make) for name, _, shape, make in self.hf_specs()}
        h, i = c["hidden"], c["moe"]
        gk, dk, dv, k = c["gk"], c["dk"], c["dv"], c["conv"]

        def add(name, shape, kind, make):
            gg.append((name, tuple(shape), kind, make))

        def direct(name, src, kind=None):
            shape, make = hf[src]
            add(name, shape, kind or (q.F32 if len(shape) == 1 else qtype), make)

        def plus_one(name, src):
            shape, make = hf[src]
            add(name, shape, q.F32, lambda: make() + np.float32(1))

        def tiled(name, src, first, head_rows, kind=None):
            shape, make = hf[src]
            add(name, shape, kind or (q.F32 if len(shape) == 1 else qtype),
                lambda: self._tile(make(), first, head_rows))

        def block(b, p, attn):
            g = f"blk.{b}."
            plus_one(g + "attn_norm.weight", p + "input_layernorm.weight")
            if attn:
                a = p + "self_attn."
                direct(g + "attn_q.weight", a + "q_proj.weight")
                direct(g + "attn_k.weight", a + "k_proj.weight")
                direct(g + "attn_v.weight", a + "v_proj.weight")
                direct(g + "attn_output.weight", a + "o_proj.weight")
                plus_one(g + "attn_q_norm.weight", a + "q_norm.weight")
                plus_one(g + "attn_k_norm.weight", a + "k_norm.weight")
            else:
                la = p + "linear_attn."
                a_shape, a_make = hf[la + "A_log"]
                add(g + "ssm_a", a_shape, q.F32, lambda: self._tile(-np.exp(a_make()), 0, 1))
                cshape, cmake = hf[la + "conv1d.weight"]
                add(g + "ssm_conv1d.weight", (cshape[0], k), q.F32,
                    lambda: self._tile(cmake().reshape(cshape[0], k), 2 * gk * dk, dv))
                tiled(g + "ssm_dt.bias", la + "dt_bias", 0, 1)
                tiled(g + "ssm_alpha.weight", la + "in_proj_a.weight", 0, 1)
                tiled(g + "ssm_beta.weight", la + "in_proj_b.weight", 0, 1)
                tiled(g + "attn_qkv.weight", la + "in_proj_qkv.weight", 2 * gk * dk, dv)
                tiled(g + "attn_gate.weight", la + "in_proj_z.weight", 0, dv)
                direct(g + "ssm_norm.weight", la + "norm.weight")
                oshape, omake = hf[la + "out_proj.weight"]
                add(g + "ssm_out.weight", oshape, qtype,
                    lambda: self._tile(omake().T, 0, dv).T.copy())
            m = p + "mlp."
            gshape, gmake = hf[m + "experts.gate_up_proj"]
            eshape = (gshape[0], i, h)
            add(g + "ffn_gate_exps.weight", eshape, qtype, lambda: gmake()[:, :i].copy())
            add(g + "ffn_up_exps.weight", eshape, qtype, lambda: gmake()[:, i:].copy())
            direct(g + "ffn_down_exps.weight", m + "experts.down_proj")
            direct(g + "ffn_gate_inp.weight", m + "gate.weight", q.F32)
            if c["shared"]:
                direct(g + "ffn_gate_shexp.weight", m + "shared_expert.gate_proj.weight")
                direct(g + "ffn_up_shexp.weight", m + "shared_expert.up_proj.weight")
                direct(g + "ffn_down_shexp.weight", m + "shared_expert.down_proj.weight")
                direct(g + "ffn_gate_inp_shexp.weight", m + "shared_expert_gate.weight", q.F32)
            plus_one(g + "post_attention_norm.weight", p + "post_attention_layernorm.weight")

        direct("token_embd.weight", "model.language_model.embed_tokens.weight")
        direct("output.weight", "lm_head.weight")
        plus_one("output_norm.weight", "model.language_model.norm.weight")
        for layer in range(c["layers"]):
            block(layer, f"model.language_model.layers.{layer}.", full_attention(c, layer))
        if self.gguf_mtp:
            b = c["layers"]
            block(b, "mtp.layers.0.", True)
            direct(f"blk.{b}.nextn.eh_proj.weight", "mtp.fc.weight")
            plus_one(f"blk.{b}.nextn.enorm.weight", "mtp.pre_fc_norm_embedding.weight")
            plus_one(f"blk.{b}.nextn.hnorm.weight", "mtp.pre_fc_norm_hidden.weight")
            plus_one(f"blk.{b}.nextn.shared_head_norm.weight", "mtp.norm.weight")
        return gg

    def gguf_metadata(self, w, qtype, file_type):
        c, a = self.c, "qwen35moe."
        w.add_name(self.name)
        w.add_file_type(file_type)
        w.add_quantization_version(2)
        mtp = c["mtp"] if self.gguf_mtp else 0
        for key, value in [("block_count", c["layers"] + mtp), ("context_length", 262144),
                           ("embedding_length", c["hidden"]),
                           ("attention.head_count", c["heads"]),
                           ("attention.head_count_kv", c["kv_heads"]),
                           ("attention.key_length", c["head_dim"]),
                           ("attention.value_length", c["head_dim"]),
                           ("expert_count", c["experts"]), ("expert_used_count", c["top_k"]),
                           ("expert_feed_forward_length", c["moe"]),
                           ("expert_shared_feed_forward_length", c["shared"]),
                           ("nextn_predict_layers", mtp), ("ssm.conv_kernel", c["conv"]),
                           ("ssm.state_size", c["dk"]), ("ssm.group_count", c["gk"]),
                           ("ssm.time_step_rank", c["gv"]), ("ssm.inner_size", c["gv"] * c["dv"]),
                           ("full_attention_interval", c["interval"]),
                           ("rope.dimension_count", c["head_dim"] // 4)]:
            w.add_uint32(a + key, value)
        w.add_array(a + "rope.dimension_sections", [11, 11, 10, 0])
        w.add_float32(a + "rope.freq_base", 1e7)
        w.add_float32(a + "attention.layer_norm_rms_epsilon", 1e-6)
        t = self.tok
        w.add_tokenizer_model(t["tokenizer.ggml.model"])
        w.add_tokenizer_pre(t["tokenizer.ggml.pre"])
        w.add_token_list(t["tokenizer.ggml.tokens"])
        w.add_token_types(t["tokenizer.ggml.token_type"])
        w.add_token_merges(t["tokenizer.ggml.merges"])
        w.add_eos_token_id(t["tokenizer.ggml.eos_token_id"])
        w.add_pad_token_id(t["tokenizer.ggml.padding_token_id"])
        w.add_add_bos_token(t["tokenizer.ggml.add_bos_token"])
        w.add_chat_template(t["tokenizer.chat_template"])

    def write_gguf(self, path, qtype, file_type):
        tensors = self.gguf_tensors(qtype)
        common.write_gguf(self.gguf, path, "qwen35moe",
                          lambda w: self.gguf_metadata(w, qtype, file_type), tensors)
        return sum(int(np.prod(s)) for _, s, _, _ in tensors)
