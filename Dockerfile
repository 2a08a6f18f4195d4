# metrics-adapter on Debian 12: built with the packages scripts/install-deps.sh installs, shipped
# as a FROM-scratch image holding only the stripped binary, the shared libraries it links (ldd),
# the dynamic loader, CA roots and /etc/passwd naming user 65532 (scripts/image-root.sh; no shell,
# no package manager). tests/integration/test_deploy.py checks this file and that tree.
#   docker build -t metrics-adapter:0.1.0 .
#   scripts/build-image.sh     (podman, with a Debian base made by debootstrap: no registry needed)

# Any Debian 12 image: debian:12 from a registry, or the local one scripts/build-image.sh makes.
ARG BASE_IMAGE=debian:12

FROM ${BASE_IMAGE} AS build
# JOBS: parallel compile jobs (default: every CPU).
ARG JOBS
# upgrade: the final image carries this stage's libraries (libssl3, libc6, ...), so they are the
# current Debian 12 security updates whatever the age of the base image.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get upgrade -y \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      cmake g++ make pkg-config ca-certificates \
      libcpprest-dev libboost-dev libboost-system-dev libssl-dev \
      nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev libre2-dev libdeflate-dev libgtest-dev libgmock-dev \
      prometheus-cpp-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY include include
COPY src src
# Each module compiled as one batch (MA_UNITY_ALL), as the test gate builds the server it tests:
# a fifth less CPU than batches of 8 from nothing (docs/performance.md, "Build times").
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMA_UNITY_ALL=ON \
 && cmake --build build --target metrics-adapter -j"${JOBS:-$(nproc)}" \
 && strip build/metrics-adapter
COPY scripts/image-root.sh /usr/local/bin/image-root.sh
RUN image-root.sh build/metrics-adapter /image-root

FROM scratch
COPY --from=build /image-root /
# The numeric user the Deployment's securityContext names (runAsUser: 65532).
USER 65532:65532
EXPOSE 6443
ENTRYPOINT ["/usr/local/bin/metrics-adapter"]
