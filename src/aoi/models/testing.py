"""Test helpers that ship with the package: a tiny random causal LM built offline in seconds (`local` extra)."""

from __future__ import annotations

CORPUS = ["the pod geo is crashing", "check the service port", "kubectl get pods -n test", "submit the answer",
          "user assistant system"]
TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }} {{ m['content'] }}<|im_end|>{% endfor %}"
            "{% if add_generation_prompt %}<|im_start|>assistant{% endif %}")


def tiny_tokenizer(chat_template: str | None = TEMPLATE):
    """Train a word-level tokenizer in-process on a few sentences: no files are fetched."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.WordLevel(unk_token="<unk>"))
    raw.pre_tokenizer, raw.decoder = pre_tokenizers.Whitespace(), decoders.WordPiece()
    raw.train_from_iterator(CORPUS, trainers.WordLevelTrainer(special_tokens=["<unk>", "<pad>", "<|im_start|>",
                                                                              "<|im_end|>"]))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="<unk>", pad_token="<pad>",
                                        bos_token="<|im_start|>", eos_token="<|im_end|>")
    tokenizer.chat_template = chat_template
    return tokenizer


def save_tiny_model(folder, chat_template: str | None = TEMPLATE):
    """Save a random 2-layer Llama (hidden 32) with the tiny tokenizer; return the folder."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = tiny_tokenizer(chat_template)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def vllm_python() -> tuple[str | None, str]:
    """Return (the python that runs vLLM, "") or (None, why none was found): for tests that skip without vLLM."""
    from aoi.models.vllm_launch import VllmError, find_python

    try:
        return find_python(), ""
    except VllmError as err:
        return None, str(err)


def save_tiny_for_vllm(folder):
    """Save the `tiny` base's weights and tokenizer as a model folder vLLM's CPU backend can serve; return it.

    tiny's 4 heads of 16 dimensions become 2 of 32 (1 key-value head): the same tensors, another split of them, as
    vLLM's CPU attention needs heads of at least 32 dimensions. A test base for the vLLM path (`local:FOLDER`).
    """
    from aoi.models.bases import load_base

    model, tokenizer = load_base("tiny")
    model.config.num_attention_heads, model.config.num_key_value_heads, model.config.head_dim = 2, 1, 32
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
