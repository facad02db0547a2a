#!/usr/bin/env bash
# Packs what the GPU machine needs to run symmem, which has no Java there: the application
# (target/quarkus-app), a jlink'ed Java runtime and the anchor script, all under .gpu/ (ignored by
# git; name it in the device run's `carry`). Prints the size; it must stay well under 64 MiB.
#
# The anchor script (PyTorch's figures to compare with) is not part of this repository: it lives in
# the sibling checkout `shared` beside it, ../shared/bench/torch_anchor.py from the repository root,
# wherever the repository (or a worktree of it) is; ANCHOR=path overrides that.
#
#   scripts/gpu/pack.sh            # build + jlink + copy
#   SKIP_BUILD=1 scripts/gpu/pack.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
repo_root=$PWD
JDK=${JDK:-/usr/lib/jvm/temurin-25-jdk-amd64}
# Found by elimination (jdeps cannot resolve Quarkus's multi-release jars): starting from a broad set,
# each module was dropped unless `java -jar quarkus-run.jar config` stopped working without it.
# Without jdk.management, jdk.zipfs or java.naming the app exits at start-up without a word.
MODULES=${MODULES:-java.base,java.logging,java.naming,java.net.http,jdk.management,jdk.unsupported,jdk.zipfs}
# Checked before anything is built: a tarball without the anchor would only show up on the GPU
# machine, as a skipped comparison.
if [[ -n "${ANCHOR:-}" ]]; then
  [[ -f "$ANCHOR" ]] || { echo "pack.sh: ANCHOR=$ANCHOR: no such file" >&2; exit 1; }
else
  ANCHOR=$(cd "$repo_root/.." && pwd)/shared/bench/torch_anchor.py
  if [[ ! -f "$ANCHOR" ]]; then
    echo "pack.sh: anchor script not found at $ANCHOR (looked in the sibling checkout ../shared of $repo_root;" \
      "check it out there or set ANCHOR=/path/to/torch_anchor.py)" >&2
    exit 1
  fi
fi

if [[ -z "${SKIP_BUILD:-}" ]]; then
  ./mvnw -B -q -DskipTests package
fi
rm -rf .gpu
mkdir -p .gpu
# --add-options bakes defaults into the runtime: Netty (epoll library, Unsafe allocation) and JavaCPP
# load native code and use sun.misc.Unsafe, which Java 24+ warns about on every start otherwise.
"$JDK/bin/jlink" --add-modules "$MODULES" --strip-debug --no-header-files --no-man-pages \
  --add-options="--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow" \
  --compress=zip-9 --output .gpu/jre
# jlink's --strip-native-debug-symbols leaves Temurin's libjvm.so (30 MB) unstripped: strip it here.
find .gpu/jre -name '*.so' -exec strip --strip-unneeded {} +
cp -r target/quarkus-app .gpu/app
# The AOT cache (app.aot*, ~50 MB) serves only the runtime that made it (the build machine's JDK),
# not the jlink'ed one: shipped, it would only push the tarball past what a device run carries.
rm -f .gpu/app/app.aot .gpu/app/app.aot.*
# What a local run unpacked beside the jar (io.symmem.nativ.NativeCache): the GPU machine unpacks its own.
rm -rf .gpu/app/app/.javacpp-cache
cp "$ANCHOR" .gpu/torch_anchor.py
# The unpacked runtime + app are about 65 MiB, over what a device run carries: ship one xz tarball
# (carry `.gpu/symmem-gpu.tar.xz`); run-store.sh and run-cuda.sh unpack it on the device.
tar -C .gpu -cJf .gpu/symmem-gpu.tar.xz jre app torch_anchor.py
echo "modules: $MODULES"
du -sh .gpu/jre .gpu/app .gpu/symmem-gpu.tar.xz
size_kib=$(du -sk .gpu/symmem-gpu.tar.xz | cut -f1)
echo "carry .gpu/symmem-gpu.tar.xz: ${size_kib} KiB"
# A device run carries the working tree (tracked + untracked-not-ignored files) plus the tarball:
# 64 MiB in all. Keep the tarball under 60 MiB and the sum under 63 MiB.
tree_kib=$(( ( $(git ls-files -co --exclude-standard -z | xargs -0 du -cb 2>/dev/null | tail -1 | cut -f1) + 1023 ) / 1024 ))
echo "working tree that travels: ${tree_kib} KiB; with the tarball: $(( tree_kib + size_kib )) KiB"
if (( size_kib > 60 * 1024 || tree_kib + size_kib > 63 * 1024 )); then
  echo "pack.sh: the tarball (${size_kib} KiB) + the working tree (${tree_kib} KiB) are too close to the 64 MiB a device run carries" >&2
  exit 1
fi
