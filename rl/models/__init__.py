"""Model code: the transformer, value heads, KV cache and Hugging Face checkpoint interop."""
