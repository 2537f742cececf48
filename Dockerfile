# The ortkit serving image: Debian 12 (bookworm), the Debian libraries ortkit loads, and ortkit with ONNX
# Runtime as `cmake --install --component runtime --strip` lays them out (no debug information; the ONNX
# 1.23.2 library that scripts/setup.sh builds is linked in, so Debian's libonnx1 is not needed).
# scripts/container.sh builds it with podman: the context is the install tree of the project's build, the
# base (BASE) is made from Debian's packages with debootstrap, since no registry is reachable here.
ARG BASE=docker.io/library/debian:bookworm-slim
FROM ${BASE}
# The Debian libraries ortkit loads (ldd), installed unless the base has them already: scripts/container.sh's
# base includes them, so that building it needs no network.
ARG RUNTIME_PACKAGES="libprotobuf32 libfmt9 libzip4 libgrpc++1.51 libjemalloc2"
RUN dpkg -s ${RUNTIME_PACKAGES} >/dev/null 2>&1 \
    || { apt-get update && apt-get install -y --no-install-recommends ${RUNTIME_PACKAGES} \
         && rm -rf /var/lib/apt/lists/*; }
COPY ortkit/ /opt/ortkit/
ENV PATH=/opt/ortkit/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Models: a repository of NAME/model.onnx or NAME/VERSION/model.onnx (+ NAME/config.json) mounted
# read-only at /models (podman run -v DIR:/models:ro), or COPY'd there by an image built FROM this one.
EXPOSE 8000 8001 8002
USER 65532:65532
ENTRYPOINT ["ortkit", "serve", "--model-repository", "/models", "--host", "0.0.0.0", \
            "--http-port", "8000", "--grpc-port", "8001", "--metrics-port", "8002"]
