# metrics-adapter on Debian 12: built with the packages scripts/install-deps.sh installs, shipped
# in debian:12-slim with only the shared libraries the binary links (ldd + dpkg -S;
# tests/integration/test_deploy.py checks the list), run as an unprivileged user.
#   docker build -t metrics-adapter:0.1.0 .

FROM debian:12 AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      cmake g++ make pkg-config \
      libcpprest-dev libboost-dev libboost-system-dev libssl-dev \
      nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev libre2-dev libgtest-dev libgmock-dev \
      prometheus-cpp-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY include include
COPY src src
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release \
 && cmake --build build --target metrics-adapter -j"$(nproc)" \
 && strip build/metrics-adapter

FROM debian:12-slim
# ca-certificates: the system roots for an https --prometheus-url.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates \
      libbrotli1 libc6 libcpprest2.10 libfmt9 libgcc-s1 libprometheus-cpp-core1.0 libre2-9 \
      libspdlog1.10 libssl3 libstdc++6 libyaml-cpp0.7 zlib1g \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/metrics-adapter /usr/local/bin/metrics-adapter
# The numeric user the Deployment's securityContext names (runAsUser: 65532).
USER 65532:65532
EXPOSE 6443
ENTRYPOINT ["/usr/local/bin/metrics-adapter"]
