"""Vocabulary: exact token bytes on the real SmolLM2 (byte-level BPE) and a trained SentencePiece tokenizer."""

from __future__ import annotations

import json

import numpy as np
import pytest

import fsm
from fsm.vocabulary import TokenTrie, byte_level_token_bytes, sentencepiece_token_bytes

TEXTS = [
    "Hello, world!",
    "café 日本語 🎉 naïve",
    '{"name": "Ada", "age": 36}\n\t  ',
    "  leading spaces and trailing  ",
    "emoji 👩‍👩‍👧 and math ∑∫ and \u00a0nbsp",
]


def test_smollm2_size_and_eos(vocab, tokenizer):
    assert vocab.size == 49152 == len(tokenizer)
    assert tokenizer.eos_token_id in vocab.eos_token_ids
    assert vocab.token_bytes(tokenizer.eos_token_id) is None  # EOS is never text


def test_special_tokens_are_never_text(vocab, tokenizer):
    for i in tokenizer.all_special_ids:
        assert vocab.token_bytes(i) is None
    for i, tok in tokenizer.added_tokens_decoder.items():
        if tok.special:
            assert vocab.token_bytes(i) is None


def test_every_token_matches_byte_level_decoding(vocab, tokenizer):
    # Byte-level: decoding token i alone gives its bytes (as text when valid UTF-8).
    pieces = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
    specials = set(tokenizer.all_special_ids)
    specials |= {i for i, t in tokenizer.added_tokens_decoder.items() if t.special}
    mismatches = []
    for i, piece in enumerate(pieces):
        b = vocab.token_bytes(i)
        if i in specials:
            continue
        assert b == byte_level_token_bytes(piece)
        try:
            text = b.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if tokenizer.decode([i], clean_up_tokenization_spaces=False) != text:
            mismatches.append(i)
    assert mismatches == []


@pytest.mark.parametrize("text", TEXTS)
def test_concatenated_bytes_roundtrip(vocab, tokenizer, text):
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert vocab.decode(ids) == text.encode("utf-8")


def test_fingerprint_stable_and_sensitive(vocab, tokenizer):
    again = fsm.Vocabulary.from_tokenizer(tokenizer)
    assert again.fingerprint == vocab.fingerprint
    padded = fsm.Vocabulary.from_tokenizer(tokenizer, size=vocab.size + 64)
    assert padded.fingerprint != vocab.fingerprint
    assert padded.size == vocab.size + 64 and padded.token_bytes(vocab.size + 3) is None


def test_trie_lists_every_text_token_once(vocab):
    trie = vocab.trie
    n_text = sum(1 for t in vocab.tokens if t)
    assert len(trie.tok_ids) == n_text
    # Walk the trie to each token's node and check the token is listed there.
    rng = np.random.default_rng(0)
    for i in rng.choice(np.nonzero([bool(t) for t in vocab.tokens])[0], 300):
        node = 0
        for b in vocab.token_bytes(int(i)):
            a, n = trie.child_start[node], trie.child_count[node]
            kids = np.arange(a, a + n)
            node = int(kids[trie.node_byte[kids] == b][0])
        listed = trie.tok_ids[trie.tok_start[node] : trie.tok_start[node] + trie.tok_count[node]]
        assert int(i) in listed.tolist()


def test_duplicate_and_empty_tokens():
    v = fsm.Vocabulary([b"a", b"a", b"", b"ab", None], eos_token_ids=[4])
    trie = v.trie
    assert sorted(trie.tok_ids.tolist()) == [0, 1, 3]  # the empty token is never in the trie
    m = fsm.compile(fsm.Regex("ab?"), v).matcher()
    assert m.allowed_token_ids().tolist() == [0, 1, 3]


def test_piece_decoders():
    assert byte_level_token_bytes("Ġhello") == b" hello"
    assert byte_level_token_bytes("Ċ") == b"\n"
    assert sentencepiece_token_bytes("▁hello") == b" hello"
    assert sentencepiece_token_bytes("<0x0A>") == b"\n"
    assert sentencepiece_token_bytes("<0xE6>") == b"\xe6"


def test_bad_vocabularies_raise_clear_errors():
    with pytest.raises(fsm.VocabularyError, match="EOS"):
        fsm.Vocabulary([b"a"], eos_token_ids=[])
    with pytest.raises(fsm.VocabularyError, match="outside"):
        fsm.Vocabulary([b"a"], eos_token_ids=[5])
    with pytest.raises(fsm.VocabularyError, match="smaller"):
        fsm.Vocabulary([b"a", None], eos_token_ids=[1], size=1)


@pytest.fixture(scope="module")
def sentencepiece_tokenizer(tmp_path_factory):
    """A real SentencePiece BPE model with byte fallback, trained here, loaded through transformers."""
    import sentencepiece as spm

    d = tmp_path_factory.mktemp("spm")
    corpus = ["Hello world, this is a test of sentencepiece with café and 日本語 text."] * 40
    corpus += [f"The quick brown fox jumps over the lazy dog {i} times." for i in range(300)]
    (d / "c.txt").write_text("\n".join(corpus))
    spm.SentencePieceTrainer.train(
        input=str(d / "c.txt"),
        model_prefix=str(d / "tokenizer"),
        vocab_size=400,
        byte_fallback=True,
        model_type="bpe",
        character_coverage=1.0,
        minloglevel=2,
    )
    (d / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "LlamaTokenizer",
                "bos_token": "<s>",
                "eos_token": "</s>",
                "unk_token": "<unk>",
            }
        )
    )
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(d))


def test_sentencepiece_vocabulary(sentencepiece_tokenizer):
    tok = sentencepiece_tokenizer
    v = fsm.Vocabulary.from_tokenizer(tok)
    assert v.size == len(tok)
    byte_ids = [
        i for i, p in enumerate(tok.convert_ids_to_tokens(list(range(len(tok))))) if p.startswith("<0x")
    ]
    assert len(byte_ids) == 256
    assert sorted(v.token_bytes(i)[0] for i in byte_ids) == list(range(256))
    for text in ["Hello café", "zebra 日本語 ÿ ok!", "The quick brown fox"]:
        ids = tok.encode(text, add_special_tokens=False)
        got = v.decode(ids).decode("utf-8")
        # SentencePiece adds a dummy prefix space; the text otherwise round-trips exactly.
        assert got in (text, " " + text)
    # byte-fallback tokens make any UTF-8 text expressible: a regex over unseen chars compiles and walks
    by_byte = {v.token_bytes(i)[0]: i for i in byte_ids}
    m = fsm.compile(fsm.Regex("ж+"), v).matcher()
    for b in "жж".encode():
        m.advance(by_byte[b])
    assert m.is_accepting()


def test_trie_build_small():
    trie = TokenTrie.build([b"ab", b"a", b"b", None, b"abc"])
    assert trie.n_nodes == 5  # root, a, b, ab, abc
    assert trie.child_count[0] == 2


def _trained_byte_level_tokenizer(tmp_path):
    """A byte-level BPE trained here with the `tokenizers` library, plus added and special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=["<eos>", "<pad>", "<end_of_turn>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tk.train_from_iterator(
        ['hello world café 日本語 {"a": 1}'] * 50 + [f"line {i}" for i in range(200)], trainer
    )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, eos_token="<eos>", pad_token="<pad>", additional_special_tokens=["<end_of_turn>"]
    )
    tok.add_tokens(["<custom_text>"])  # an added, non-special token: literal text
    return tok


def test_trained_tokenizer_with_added_and_several_eos(tmp_path):
    tok = _trained_byte_level_tokenizer(tmp_path)
    eot = tok.convert_tokens_to_ids("<end_of_turn>")
    v = fsm.Vocabulary.from_tokenizer(tok, size=len(tok) + 7, eos_token_ids=[eot])
    assert set(v.eos_token_ids) == {tok.eos_token_id, eot}
    assert v.token_bytes(tok.pad_token_id) is None and v.token_bytes(eot) is None
    custom = tok.convert_tokens_to_ids("<custom_text>")
    assert v.token_bytes(custom) == b"<custom_text>"
    for text in ["hello world", "café 日本語", '{"a": 1}']:
        assert v.decode(tok.encode(text, add_special_tokens=False)) == text.encode()
    m = fsm.compile(fsm.Regex(r"hello( world)?"), v, cache=False).matcher()
    for t in tok.encode("hello", add_special_tokens=False):
        m.advance(t)
    allowed = set(m.allowed_token_ids().tolist())
    assert {tok.eos_token_id, eot} <= allowed  # every EOS id ends an accepting sequence
    assert max(allowed) < len(tok)  # padded ids never offered


def test_tokens_invalid_utf8_alone_compose(tokenizer, vocab):
    # Tokens that are half a character are allowed exactly when the rest can follow.
    halves = [i for i in range(vocab.n_tokens) if (b := vocab.token_bytes(i)) and b == "é".encode()[:1]]
    assert halves, "SmolLM2 has byte tokens for UTF-8 lead bytes"
    m = fsm.compile(fsm.Regex("é+"), vocab, cache=False).matcher()
    assert halves[0] in m.allowed_token_ids()
    m.advance(halves[0])
    tails = {vocab.token_bytes(t) for t in m.allowed_token_ids().tolist()}
    assert tails and all(b.startswith(b"\xa9") for b in tails)
