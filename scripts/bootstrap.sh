#!/usr/bin/env bash
# Installs the Debian 12 packages lockbench needs, and only those that are missing: when all are
# present it only asks dpkg (well under a second) and never touches the network.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config clang-format
  redis-server redis-tools libhiredis-dev nlohmann-json3-dev libcli11-dev stunnel4
  zookeeper libzookeeper-mt-dev default-jre-headless openjdk-17-jdk-headless libcurator-recipes-java
  python3-redis python3-kazoo python3-tooz
  googletest libgtest-dev libbenchmark-dev clang libfuzzer-14-dev
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev libgl-dev
  faketime iptables iproute2 procps openssh-client openssh-server
  chromium fonts-dejavu-core
  etcd-server
)
# Node.js and npm run the npm adapters (strategies/adapters/node). A Node.js from elsewhere is
# used as it is: NodeSource's bundles npm and conflicts with Debian's npm package.
command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

echo "bootstrap: installing ${missing[*]}" >&2
sudo=()
if ((EUID != 0)); then
  command -v sudo >/dev/null || { echo "bootstrap: not root and no sudo; install: ${missing[*]}" >&2; exit 4; }
  sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian's package starts a redis-server service where an init system runs; lockbench starts its
# own servers on free ports and never uses that one. Nor does it use the system's sshd: the tests
# of the remote-host path start their own inside a network namespace. Debian's zookeeper package starts no service:
# lockbench runs its own server from /usr/share/java/zookeeper.jar (engine/servers/zookeeper_server.hpp).
