"""Offline evaluation harness: replay public conversation data and measure memory recall.

Modules:
    target:    the ``ReplayTarget`` protocol the harness drives and the ``EvalItem`` it reads back.
    metrics:   budget packing, evidence credit, evidence normalisation, sampling, percentiles.
    baselines: BM25 and dense retrieval over raw turns (the reference systems).
    report:    the ``memory-bot-eval/1`` JSON report and its Markdown table.
    locomo:    LoCoMo loader and runner (Maharana et al., ACL 2024).
    runner:    the dataset-neutral runner (histories of dated sessions) behind the next two.
    longmemeval: LongMemEval loader (Wu et al., ICLR 2025), one haystack per question.
    memdaily:  MemDaily loader (MemSim, Zhang et al. 2024), all trajectories as one history.
    cache:     ``CachingEmbedder``, an on-disk embedding cache keyed by embedder, side and text.
    answer:    ``--answer`` / ``--judge``: answers from recalled memory and a model as judge.
    pipeline:  ``EngineTarget``, the production pipeline as the system under test.
"""
