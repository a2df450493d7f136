"""Performance benchmark (``memory-bot bench``): see :func:`bot.bench.runner.run_bench`."""
