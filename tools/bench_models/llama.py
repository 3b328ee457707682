"""A Llama with random weights and stories260K's tokenizer (512 ids): wider and deeper than
stories260K so that an engine step costs more than the HTTP path around it (what the former
tools/make_bench_model.py wrote; vLLM's `--load-format dummy` serves the same purpose).

GGUF as llama.cpp's converter writes `llama` (conversion/llama.py): q_proj / k_proj rows
permuted from HF's rotate-half order to interleaved pairs, norms as stored; the tokenizer
metadata copied from ../shared/models/stories260k/stories260K.gguf. Output rows of the control
and byte tokens are zero, so greedy text is valid UTF-8.
"""
import json
import os

import numpy as np

from . import common

CONFIGS = {"llama": dict(hidden=256, layers=4, intermediate=768, heads=8, kv_heads=4)}


def permute_rope(w, heads):
    """HF rotate-half rows → llama.cpp's interleaved pairs, per head."""
    rows, cols = w.shape
    return w.reshape(heads, 2, rows // heads // 2, cols).swapaxes(1, 2).reshape(rows, cols)


class Model:
    def __init__(self, name, seed, shared_models, gguf, overrides=None):
        self.c = dict(CONFIGS[name], **(overrides or {}))
        self.name, self.seed, self.gguf = name, seed, gguf
        self.hf_source = os.path.join(shared_models, "stories260k-hf")
        self.gguf_source = os.path.join(shared_models, "stories260k", "stories260K.gguf")
        with open(os.path.join(self.hf_source, "config.json")) as f:
            self.source_config = json.load(f)
        self.vocab = self.source_config["vocab_size"]
        c = self.c
        if c["hidden"] % c["heads"] or c["heads"] % c["kv_heads"]:
            raise SystemExit("hidden must be a multiple of heads, and heads of kv_heads")

    def hf_specs(self):
        c, out = self.c, []
        h, f, hd = c["hidden"], c["intermediate"], c["hidden"] // c["heads"]
        kv = c["kv_heads"] * hd

        def mat(name, shape, fan_in):
            out.append((name, "F32", shape,
                        lambda: common.normal(self.seed, name, shape, fan_in ** -0.5)))

        def norm(name):
            out.append((name, "F32", (h,), lambda: np.ones(h, dtype=np.float32)))

        mat("model.embed_tokens.weight", (self.vocab, h), 1)
        for layer in range(c["layers"]):
            p = f"model.layers.{layer}."
            mat(p + "self_attn.q_proj.weight", (h, h), h)
            mat(p + "self_attn.k_proj.weight", (kv, h), h)
            mat(p + "self_attn.v_proj.weight", (kv, h), h)
            mat(p + "self_attn.o_proj.weight", (h, h), h)
            norm(p + "input_layernorm.weight")
            norm(p + "post_attention_layernorm.weight")
            mat(p + "mlp.gate_proj.weight", (f, h), h)
            mat(p + "mlp.up_proj.weight", (f, h), h)
            mat(p + "mlp.down_proj.weight", (h, f), f)
        norm("model.norm.weight")
        out.append(("lm_head.weight", "F32", (self.vocab, h), self._lm_head))
        return out

    def _valid_ids(self):
        src = self.gguf.GGUFReader(self.gguf_source)
        return np.array([t == 1 for t in src.fields["tokenizer.ggml.token_type"].contents()])

    def _lm_head(self):
        """The embedding table (or, with lm_head_std, a head of its own) with the rows of control
        and byte ids zeroed (greedy text stays valid UTF-8): an untied head, the same in the HF
        folder and the GGUF."""
        shape = (self.vocab, self.c["hidden"])
        if self.c.get("lm_head_std") is not None:
            w = common.normal(self.seed, "lm_head.weight", shape, self.c["lm_head_std"])
        else:
            w = common.normal(self.seed, "model.embed_tokens.weight", shape, 1)
        w[~self._valid_ids()] = 0
        return w

    def write_hf(self, folder):
        c = self.c
        config = dict(self.source_config)
        config.update({
            "hidden_size": c["hidden"], "num_hidden_layers": c["layers"],
            "num_attention_heads": c["heads"], "num_key_value_heads": c["kv_heads"],
            "head_dim": c["hidden"] // c["heads"], "intermediate_size": c["intermediate"],
            "max_position_embeddings": 2048, "tie_word_embeddings": False,
        })
        return common.write_hf_folder(folder, self.hf_specs(), config, self.hf_source)

    def write_gguf(self, path, qtype, file_type):
        c, q, gguf = self.c, self.gguf.GGMLQuantizationType, self.gguf
        hf = {name: (shape, make) for name, _, shape, make in self.hf_specs()}
        src = gguf.GGUFReader(self.gguf_source)
        tok = {k: src.fields[k].contents() for k in src.fields if k.startswith("tokenizer.")}
        tensors = []

        def add(name, hf_name, kind=None, transform=None):
            shape, make = hf[hf_name]
            kind = kind or (q.F32 if len(shape) == 1 else qtype)
            tensors.append((name, shape, kind,
                            (lambda: transform(make())) if transform else make))

        add("token_embd.weight", "model.embed_tokens.weight")
        for layer in range(c["layers"]):
            p, g = f"model.layers.{layer}.", f"blk.{layer}."
            add(g + "attn_norm.weight", p + "input_layernorm.weight")
            add(g + "attn_q.weight", p + "self_attn.q_proj.weight",
                transform=lambda w: permute_rope(w, c["heads"]))
            add(g + "attn_k.weight", p + "self_attn.k_proj.weight",
                transform=lambda w: permute_rope(w, c["kv_heads"]))
            add(g + "attn_v.weight", p + "self_attn.v_proj.weight")
            add(g + "attn_output.weight", p + "self_attn.o_proj.weight")
            add(g + "ffn_norm.weight", p + "post_attention_layernorm.weight")
            add(g + "ffn_gate.weight", p + "mlp.gate_proj.weight")
            add(g + "ffn_up.weight", p + "mlp.up_proj.weight")
            add(g + "ffn_down.weight", p + "mlp.down_proj.weight")
        add("output_norm.weight", "model.norm.weight")
        add("output.weight", "lm_head.weight")

        def metadata(w):
            hd = c["hidden"] // c["heads"]
            w.add_name(self.name)
            w.add_file_type(file_type)
            w.add_context_length(2048)
            w.add_embedding_length(c["hidden"])
            w.add_feed_forward_length(c["intermediate"])
            w.add_block_count(c["layers"])
            w.add_head_count(c["heads"])
            w.add_head_count_kv(c["kv_heads"])
            w.add_rope_dimension_count(hd)
            w.add_layer_norm_rms_eps(self.source_config.get("rms_norm_eps", 1e-5))
            w.add_tokenizer_model(tok["tokenizer.ggml.model"])
            w.add_token_list(tok["tokenizer.ggml.tokens"])
            w.add_token_scores(tok["tokenizer.ggml.scores"])
            w.add_token_types(tok["tokenizer.ggml.token_type"])
            for key, fn in (("bos", w.add_bos_token_id), ("eos", w.add_eos_token_id),
                            ("unknown", w.add_unk_token_id)):
                if f"tokenizer.ggml.{key}_token_id" in tok:
                    fn(tok[f"tokenizer.ggml.{key}_token_id"])
        common.write_gguf(gguf, path, "llama", metadata, tensors)
        return sum(int(np.prod(s)) for _, s, _, _ in tensors)
