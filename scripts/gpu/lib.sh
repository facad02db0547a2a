# Shared by the GPU-machine scripts (source it from the repository root).
# The machine has no Java: the runtime and the app come packed by scripts/gpu/pack.sh as
# .gpu/symmem-gpu.tar.xz (carried by the device run), unpacked once into $PKG. Sets PKG, JAVA and
# SYMMEM (the command array that runs the app).
symmem_runtime() {
  PKG=${PKG:-/tmp/symmem-gpu}
  if [[ -x .gpu/jre/bin/java ]]; then
    PKG=$PWD/.gpu
  elif [[ ! -x $PKG/jre/bin/java ]]; then
    mkdir -p "$PKG" && tar -C "$PKG" -xJf .gpu/symmem-gpu.tar.xz || { echo "no .gpu/symmem-gpu.tar.xz: run scripts/gpu/pack.sh"; exit 2; }
  fi
  JAVA=$PKG/jre/bin/java
  SYMMEM=("$JAVA" -jar "$PKG/app/quarkus-run.jar")
}

# gpu_count: the GPUs nvidia-smi lists, 0 where there is none or no nvidia-smi (grep -c prints
# the 0 itself; an added `|| echo 0` would make it "0 0", which arithmetic tests then reject).
gpu_count() {
  local n
  n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  echo "$n"  # and status 0, also under set -e
}

# machine_txt [EXTRA]: the date, NGPU and EXTRA on one line, then the GPUs (index, name, driver), into
# $OUT/machine.txt, and printed.
machine_txt() {
  {
    echo "date: $(date -u +%FT%TZ)  gpus: $NGPU${1:+  $1}"
    nvidia-smi --query-gpu=index,name,driver_version --format=csv 2>&1
  } > "$OUT/machine.txt" 2>&1
  cat "$OUT/machine.txt"
}

# wait_port PORT: until something listens on 127.0.0.1:PORT, for at most 20 s.
wait_port() { for _ in $(seq 1 200); do (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }

# native_build_cmd DIR [TARGET...]: the shell command that configures src/native-cuda into DIR
# (Release, SYMMEM_CUDA=ON; with Ninja where there is one and DIR is not configured yet: it compiles
# the tests beside libsymmem, make only after libsymmem is linked) and builds TARGETs, or everything,
# with -j16. NATIVE_JOBS overrides the 16 (two builds at once); NATIVE_CMAKE_ARGS adds configure
# arguments (e.g. -DCMAKE_CUDA_ARCHITECTURES=80-virtual). A string for bash -c, so that callers can put
# timeout, nice or a step around it.
native_build_cmd() {
  local dir=$1; shift
  local gen="" targets=""
  if [[ ! -f $dir/CMakeCache.txt ]] && command -v ninja >/dev/null; then gen="-G Ninja "; fi
  (( $# > 0 )) && targets=" --target $*"
  echo "cmake ${gen}-S src/native-cuda -B '$dir' -DCMAKE_BUILD_TYPE=Release -DSYMMEM_CUDA=ON${NATIVE_CMAKE_ARGS:+ $NATIVE_CMAKE_ARGS} && cmake --build '$dir' -j${NATIVE_JOBS:-16}$targets"
}

# use_prebuilt DIR FILE...: native binaries built elsewhere for this machine's CUDA and carried with
# the run (a script's PREBUILT=DIR), instead of a build here. Sets B to DIR's absolute path and
# BENCH_ENV to the prefix the native benches run under (DIR as their library path, for them alone:
# the app loads its own copy of libsymmem); prints what it found, or which FILE is missing (*.so:
# present, anything else: executable) with status 1.
use_prebuilt() {
  local dir=$1 f
  shift
  B=$(cd "$dir" && pwd) || { echo "PREBUILT=$dir: no such folder"; return 1; }
  BENCH_ENV=(env "LD_LIBRARY_PATH=$B")
  for f in "$@"; do
    if [[ $f == *.so ]]; then [[ -f $B/$f ]]; else [[ -x $B/$f ]]; fi || { echo "PREBUILT=$dir has no $f"; return 1; }
  done
  echo "prebuilt binaries from $B: $*"
}

# The steps table every run-*.sh prints last. note NAME RESULT adds a row (names padded to
# STEP_WIDTH, default 62); step NAME TIMEOUT LOG cmd... runs cmd with a deadline, appends its output
# to $OUT/LOG and records PASS or FAIL with the exit status. Needs OUT, and T0 (the script's start).
# qstep NAME CAP LOG cmd... is step under a whole-script budget (BUDGET, seconds since T0), below.
declare -a SUMMARY
elapsed() { echo $(( $(date +%s) - T0 )); }
note() { SUMMARY+=("$(printf "%-${STEP_WIDTH:-62}s %s" "$1" "$2")"); }
step() {
  local name=$1 t=$2 log=$3; shift 3
  echo "=== $name ($(elapsed) s)" | tee -a "$OUT/$log"
  timeout "$t" "$@" >>"$OUT/$log" 2>&1; local rc=$?
  note "$name" "$([[ $rc == 0 ]] && echo PASS || echo "FAIL (rc $rc, $log)")"
  return $rc
}


# qstep NAME CAP LOG cmd...: runs cmd with a deadline of CAP s or what is left of the budget (BUDGET s
# since T0), whichever is less; records PASS, SKIPPED (exit 77), TIMEOUT (124/137: the deadline, not a
# verdict) or FAIL, with the seconds it took. Not started with under 5 s left, so the table always
# comes in time.
qstep() {
  local name=$1 cap=$2 log=$3; shift 3
  local left=$(( BUDGET - $(elapsed) ))
  local t=$(( cap < left ? cap : left ))
  if (( t < 5 )); then note "$name" "NOT RUN (budget spent)"; return 125; fi
  echo "=== $name (at $(elapsed) s, deadline $t s)" | tee -a "$OUT/$log"
  local t1 lines; t1=$(date +%s); lines=$(wc -l < "$OUT/$log")
  timeout -k 2 "$t" "$@" >>"$OUT/$log" 2>&1; local rc=$?
  local took=$(( $(date +%s) - t1 ))
  local res
  case $rc in
    0) res=PASS ;;
    77) res="SKIPPED ($(tail -n +$(( lines + 1 )) "$OUT/$log" | grep -m1 -o 'SKIPPED: .*' | cut -c10-70))" ;;
    124|137) res="TIMEOUT after $took s (rc $rc, $log)" ;;
    *) res="FAIL (rc $rc, $log)" ;;
  esac
  note "$name" "$res  [${took} s]"
  return $rc
}
