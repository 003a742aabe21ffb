# Crisp server: one process, one uvicorn worker (rooms live in its memory), SQLite in /data by default.
#   docker build -t crisp .
#   docker run -p 8000:8000 -v crisp-data:/data crisp

FROM python:3.11-slim AS build
# Podman keeps this stage's images (~800 MB, unnamed) after a build: podman image prune --filter label=crisp.stage=build
LABEL crisp.stage=build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
# Dependencies first: this layer is rebuilt only when pyproject.toml changes.
COPY pyproject.toml README.md ./
RUN mkdir crisp_server && touch crisp_server/__init__.py \
    && python -m venv /venv \
    && /venv/bin/pip install --no-cache-dir . \
    && /venv/bin/pip uninstall --yes crisp-server
COPY crisp_server ./crisp_server
RUN rm -rf build ./*.egg-info && /venv/bin/pip install --no-cache-dir --no-deps .
# The engine and rooms compiled to C with mypyc (crisp_server/native.py; docs/development.md, "Compiled modules"): a C
# compiler and Python's headers, and mypy in a venv of its own (the native extra), only in this stage. The
# extensions are built from the sources in /src and copied next to the same sources in /venv.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && { python -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
         || apt-get install -y --no-install-recommends python3-dev; } \
    && rm -rf /var/lib/apt/lists/*
COPY scripts/build_native.py ./scripts/
RUN python -m venv /mypyc \
    && python -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["native"]))' > /tmp/native.txt \
    && /mypyc/bin/pip install --no-cache-dir -r /tmp/native.txt \
    && /mypyc/bin/python scripts/build_native.py --python-executable /venv/bin/python \
         --copy-to "$(/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"

FROM python:3.11-slim
ENV PATH=/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PORT=8000 \
    CRISP_HOST=0.0.0.0 \
    CRISP_DATA_DIR=/data \
    CRISP_STATIC_DIR=/app/static \
    CRISP_MIGRATIONS_DIR=/app/migrations \
    CRISP_NATIVE=require
RUN groupadd --system --gid 10001 crisp && useradd --system --uid 10001 --gid 10001 --home-dir /app --shell /usr/sbin/nologin crisp \
    && mkdir -p /data && chown 10001:10001 /data
COPY --from=build /venv /venv
WORKDIR /app
COPY alembic.ini ./
COPY migrations ./migrations
COPY static ./static
USER 10001:10001
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '8000'), timeout=4)"]
# crisp-server applies the migrations, then serves on $PORT; SIGTERM shuts it down gracefully.
CMD ["crisp-server"]
