"""Offline evaluation harness: replay public conversation data and measure memory recall.

Modules:
    target:    the ``ReplayTarget`` protocol the harness drives and the ``EvalItem`` it reads back.
    metrics:   budget packing, evidence credit, evidence normalisation, sampling, percentiles.
    baselines: BM25 and dense retrieval over raw turns (the reference systems).
    report:    the ``memory-bot-eval/1`` JSON report and its Markdown table.
    locomo:    LoCoMo loader and runner (Maharana et al., ACL 2024).
"""
