"""Random-weight models with real shapes, written as GGUF (llama.cpp's layout) and as a Hugging
Face folder holding the same weights: see tools/make_bench_models.py."""
