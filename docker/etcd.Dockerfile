# SPDX-License-Identifier: MIT
# etcd for docker/compose-cluster.yaml: Debian's etcd-server (3.4), the
# version the cluster suite runs against.
FROM debian:bookworm-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      etcd-server \
 && rm -rf /var/lib/apt/lists/*
EXPOSE 2379 2380
ENTRYPOINT ["etcd"]
