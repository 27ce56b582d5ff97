"""A tiny randomly initialised Llama and a word-level tokenizer, built offline (nothing downloaded), to try a trainer's
route end to end on CPU in seconds a step, as the project's own tests do::

    from ludus.trainers.tiny import tiny_model

    model, tokenizer = tiny_model()

It learns nothing worth keeping: it is for checking that rollouts, rewards and the trainer's update run, before a real
model takes its place. The vocabulary holds the chat template's markers, Kuhn poker's four moves in the form its text
asks for (``"[bet]"``) and a few words of its observations (every other word reads as ``<unk>``), so that a random
model's replies are sometimes legal moves and often not. Needs ``torch``, ``transformers`` and ``tokenizers`` (the
``trl`` extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

NAME = "ludus-tiny-llama"
"""The model's and the tokenizer's ``name_or_path``: what a rollout's seat record names as its model."""

KUHN_WORDS = ("[check]", "[bet]", "[call]", "[fold]", "Kuhn", "poker", "hand", "card", "J", "Q", "K", "Legal", "now:",
              "or")
"""The words of Kuhn poker's text the tokenizer knows by default."""

_MARKERS = ("<pad>", "<unk>", "<|im_start|>", "<|im_end|>", "system", "user", "assistant")


def tiny_model(words: Sequence[str] = KUHN_WORDS, seed: int = 0) -> tuple[LlamaForCausalLM, PreTrainedTokenizerFast]:
    """The model and its tokenizer: 2 layers of width 32, a vocabulary of the chat markers and ``words``, a chat
    template in the ChatML shape (``<|im_start|> role content <|im_end|>``), weights drawn from ``seed``."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocabulary = {word: i for i, word in enumerate(dict.fromkeys([*_MARKERS, *words]))}
    level = Tokenizer(models.WordLevel(vocab=vocabulary, unk_token="<unk>"))
    level.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    level.decoder = decoders.WordPiece()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=level, pad_token="<pad>", unk_token="<unk>", bos_token="<|im_start|>",
        eos_token="<|im_end|>", padding_side="left", name_or_path=NAME,
        chat_template="{% for m in messages %}<|im_start|> {{ m['role'] }} {{ m['content'] }} <|im_end|> {% endfor %}"
                      "{% if add_generation_prompt %}<|im_start|> assistant {% endif %}",
    )
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(vocabulary), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=8192, pad_token_id=vocabulary["<pad>"],
        bos_token_id=vocabulary["<|im_start|>"], eos_token_id=vocabulary["<|im_end|>"],
    )
    config.name_or_path = NAME
    return LlamaForCausalLM(config), tokenizer
