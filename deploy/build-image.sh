#!/usr/bin/env bash
# Builds the symmem image with podman and no registry: a Debian bookworm base from Debian's packages
# (mmdebstrap, made once: localhost/symmem-base:bookworm), a Java runtime jlink'ed from the newest JDK
# here (bin/java-select; JDK 25 gives the image an AOT cache), the packaged application.
#   deploy/build-image.sh                 # mvn package, then localhost/symmem:<version> and :latest
#   deploy/build-image.sh --no-build      # target/quarkus-app as it is (the build's pre-integration-test)
#   deploy/build-image.sh --if-possible   # without podman or mmdebstrap: says so and exits 0
# Prints the image's size last. Needs root (or a podman set up for the user), podman, runc, mmdebstrap.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
build=yes if_possible=""
for arg in "$@"; do
  case "$arg" in
    --no-build) build="" ;;
    --if-possible) if_possible=yes ;;
    *) echo "build-image: unknown option $arg (known: --no-build, --if-possible)" >&2; exit 2 ;;
  esac
done
[ -z "${SKIP_BUILD:-}" ] || build=""
export CONTAINERS_CONF=${SYMMEM_CONTAINERS_CONF:-$root/deploy/containers.conf}
for tool in podman runc mmdebstrap; do
  if ! command -v "$tool" >/dev/null; then
    echo "build-image: $tool is missing (Debian: apt-get install podman runc mmdebstrap); no image built" >&2
    [ -n "$if_possible" ] && exit 0 || exit 1
  fi
done
if ! podman info >/dev/null 2>&1; then
  echo "build-image: podman cannot run here: $(podman info 2>&1 | tail -1); no image built" >&2
  [ -n "$if_possible" ] && exit 0 || exit 1
fi
if [ -n "$build" ]; then
  ./mvnw -B -q -DskipTests package
fi
[ -f target/quarkus-app/quarkus-run.jar ] || { echo "build-image: target/quarkus-app is missing (run mvn package)" >&2; exit 1; }
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
rm -f "$work/app/app.aot" "$work/app/app.aot.java" "$work/app/app.aot.cmd" "$work/app/app.aot.log"
rm -rf "$work/app/app/.javacpp-cache"  # unpacked by local runs (io.symmem.nativ.NativeCache)
version=$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' pom.xml | head -1)
podman build --pull=never -f deploy/Containerfile -t "localhost/symmem:$version" -t localhost/symmem:latest "$work"
echo "build-image: localhost/symmem:$version on Java $SYMMEM_JAVA_VERSION, $(podman image inspect localhost/symmem:latest --format '{{.Size}}' | awk '{printf "%.0f MB", $1/1e6}')"
