"""vLLM on CPU: a small KV cache (GiB) so the engine fits beside the test process."""

import os

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
