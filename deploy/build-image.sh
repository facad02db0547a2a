#!/usr/bin/env bash
# Builds the symmem image with podman and no registry: a Debian bookworm base from Debian's packages
# (mmdebstrap, made once: localhost/symmem-base:bookworm), a Java runtime jlink'ed from the newest JDK
# here (bin/java-select; JDK 25 gives the image an AOT cache), the packaged application.
#   deploy/build-image.sh                # localhost/symmem:<version>, and :latest
#   SKIP_BUILD=1 deploy/build-image.sh   # target/quarkus-app as it is
# Prints the image's size last. Needs root (or a podman set up for the user) and: podman, mmdebstrap.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export CONTAINERS_CONF=${SYMMEM_CONTAINERS_CONF:-$root/deploy/containers.conf}
for tool in podman mmdebstrap; do
  command -v "$tool" >/dev/null || { echo "build-image: $tool is missing (Debian: apt-get install podman mmdebstrap runc)" >&2; exit 1; }
done
if [ -z "${SKIP_BUILD:-}" ]; then
  mvn -B -q -DskipTests package
fi
work=$root/target/image
rm -rf "$work" && mkdir -p "$work"
if ! podman image exists localhost/symmem-base:bookworm; then
  echo "build-image: making the base image from Debian's packages (about a minute, once)" >&2
  # libstdc++ for libsymmem; ca-certificates for TLS to a remote store or etcd. Docs, man pages and
  # locales are left out.
  mmdebstrap --variant=minbase --include=ca-certificates,libstdc++6 \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
    bookworm "$work/base.tar"
  podman import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$work/base.tar" localhost/symmem-base:bookworm >/dev/null
  rm -f "$work/base.tar"
fi
. "$root/bin/java-select"
select_java
jdk=$(dirname "$(dirname "$(readlink -f "$SYMMEM_JAVA_BIN")")")
[ -x "$jdk/bin/jlink" ] || { echo "build-image: $jdk has no jlink (a JDK, not a JRE, is needed)" >&2; exit 1; }
# The modules the application needs (found by elimination for scripts/gpu/pack.sh), and the options for
# a clean start baked in.
add_options=()
if [ "$SYMMEM_JAVA_MAJOR" -ge 24 ]; then
  add_options=(--add-options="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow")
fi
"$jdk/bin/jlink" --add-modules java.base,java.logging,java.naming,java.net.http,java.management,jdk.management,jdk.unsupported,jdk.zipfs \
  --strip-debug --no-header-files --no-man-pages "${add_options[@]}" --output "$work/jre"
cp -r target/quarkus-app "$work/app"
rm -f "$work/app/app.aot" "$work/app/app.aot.java" "$work/app/app.aot.log"
version=$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' pom.xml | head -1)
podman build --pull=never -f deploy/Containerfile -t "localhost/symmem:$version" -t localhost/symmem:latest "$work"
echo "build-image: localhost/symmem:$version on Java $SYMMEM_JAVA_VERSION, $(podman image inspect localhost/symmem:latest --format '{{.Size}}' | awk '{printf "%.0f MB", $1/1e6}')"
