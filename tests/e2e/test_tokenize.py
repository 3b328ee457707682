"""`tandem tokenize`: golden ids from a SentencePiece GGUF (stories260K, no BOS), from the Qwen3
tokenizer.json folder and the tiny-qwen3 GGUF (byte-level BPE), from stdin and arguments, and
clear failures for a bad path or conflicting flags."""
import json
import os
import subprocess

from harness import BIN, MODELS, STORIES_GGUF, STORIES_GOLDEN, check, golden_cases, run

QWEN3_DIR = os.path.join(MODELS, "qwen3-tokenizer")
TINY_QWEN3_GGUF = os.path.join(MODELS, "tiny-qwen3/tiny-qwen3-f16.gguf")
PHI3_VOCAB_GGUF = os.path.join(MODELS, "llamacpp-vocab-tests/ggml-vocab-phi-3.gguf")


def tokenize(*args, stdin=None):
    p = subprocess.run([BIN, "tokenize", *args], input=stdin, capture_output=True, text=True,
                       timeout=120)
    check(p.returncode == 0, f"tandem tokenize {args}: exit {p.returncode}: {p.stderr[-400:]}")
    return json.loads(p.stdout)


def qwen3_golden_strings():
    return golden_cases(os.path.join(QWEN3_DIR, "qwen3_token_goldens.json"), "strings")


def test_stories_gguf_matches_golden_ids_without_bos():
    cases = golden_cases(STORIES_GOLDEN, "tokenize_no_bos", kind=dict)
    check(len(cases) >= 6, "golden has too few tokenize_no_bos cases")
    for text, ids in cases.items():
        out = tokenize("--tokenizer", STORIES_GGUF, "--no-add-special-tokens", "--ids", text)
        check(out == {"ids": ids}, f"{text!r}: {out} != {ids}")


def test_stories_gguf_adds_bos_by_default_and_prints_pieces():
    out = tokenize("--tokenizer", STORIES_GGUF, "Once upon a time")
    check(out["ids"][0] == 1 and out["pieces"][0] == "<s>", f"no BOS: {out}")
    check(out["pieces"][1:] == ["\u2581Once", "\u2581upon", "\u2581a", "\u2581time"], f"{out}")


def test_qwen3_folder_and_gguf_match_golden_ids():
    strings = qwen3_golden_strings()
    check(len(strings) >= 5, f"qwen3_token_goldens.json has {len(strings)} strings; this test "
                             "checks the 3rd to 5th")
    for golden in strings[2:5]:
        for path in (QWEN3_DIR, TINY_QWEN3_GGUF):
            out = tokenize("--tokenizer", path, "--ids", golden["text"])
            check(out["ids"] == golden["ids_parse_special"],
                  f"{path}: {golden['text']!r}: {out['ids']} != {golden['ids_parse_special']}")


def test_qwen3_reads_stdin_and_prints_byte_level_pieces():
    out = tokenize("--tokenizer", QWEN3_DIR, stdin="Hello world")
    check(out == {"ids": [9707, 1879], "pieces": ["Hello", "\u0120world"]}, f"{out}")


def test_vocab_only_gguf_tokenizes():
    out = tokenize("--tokenizer", PHI3_VOCAB_GGUF, "--no-add-special-tokens", "--ids",
                   "Hello world")
    check(out == {"ids": [15043, 3186]}, f"phi-3: {out}")


def test_bad_path_and_conflicting_flags_fail_clearly():
    p = subprocess.run([BIN, "tokenize", "--tokenizer", "/nonexistent/dir", "x"],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 1 and "/nonexistent/dir" in p.stderr, f"bad path: {p.stderr}")
    p = subprocess.run([BIN, "tokenize", "--tokenizer", QWEN3_DIR, "--ids", "--pieces", "x"],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "--pieces" in p.stderr, f"conflicting flags: {p.stderr}")


if __name__ == "__main__":
    run([test_stories_gguf_matches_golden_ids_without_bos,
         test_stories_gguf_adds_bos_by_default_and_prints_pieces,
         test_qwen3_folder_and_gguf_match_golden_ids,
         test_qwen3_reads_stdin_and_prints_byte_level_pieces, test_vocab_only_gguf_tokenizes,
         test_bad_path_and_conflicting_flags_fail_clearly])
