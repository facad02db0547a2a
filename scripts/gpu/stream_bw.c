// A plain memory-bandwidth figure for the host backend's comparison (scripts/gpu/run-host.sh):
// copy (c = a), add (c = a + b) and a 4-input sum (e = a + b + c + d, what a one-shot all-reduce
// of 4 ranks does per element) over float arrays far larger than the caches, on 1 thread and on T
// threads (each thread touches its own part first, so its pages sit on its node). GB/s counts the
// bytes the kernel names (reads + writes, as STREAM does; a write's read-for-ownership is not
// counted). Best of REPS repetitions.
//   cc -O2 -pthread stream_bw.c -o stream_bw && ./stream_bw [threads] [MiB per array]
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { REPS = 5, KERNELS = 3 };
static const char* kNames[KERNELS] = {"copy", "add", "sum4"};
static const int kStreams[KERNELS] = {2, 3, 5};  // arrays touched per element

static size_t n_total;
static int n_threads;
static float *a, *b, *c, *d, *e;
static pthread_barrier_t start_line, finish_line;
static int kernel_now;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void* worker(void* arg) {
  const size_t id = (size_t)arg;
  const size_t lo = n_total * id / n_threads, hi = n_total * (id + 1) / n_threads;
  for (size_t i = lo; i < hi; ++i) {  // first touch by the thread that uses it
    a[i] = 1.0f; b[i] = 2.0f; c[i] = 3.0f; d[i] = 4.0f; e[i] = 0.0f;
  }
  for (;;) {
    pthread_barrier_wait(&start_line);
    const int k = kernel_now;
    if (k < 0) return NULL;
    if (k == 0) memcpy(e + lo, a + lo, (hi - lo) * sizeof(float));
    else if (k == 1) for (size_t i = lo; i < hi; ++i) e[i] = a[i] + b[i];
    else for (size_t i = lo; i < hi; ++i) e[i] = a[i] + b[i] + c[i] + d[i];
    pthread_barrier_wait(&finish_line);
  }
}

static void measure(int threads, size_t mib) {
  n_threads = threads;
  n_total = mib * 1024 * 1024 / sizeof(float);
  float** arrays[] = {&a, &b, &c, &d, &e};
  for (int i = 0; i < 5; ++i)
    if (posix_memalign((void**)arrays[i], 4096, n_total * sizeof(float)) != 0) {
      fprintf(stderr, "stream_bw: cannot allocate %zu MiB\n", mib);
      exit(1);
    }
  pthread_barrier_init(&start_line, NULL, threads + 1);
  pthread_barrier_init(&finish_line, NULL, threads + 1);
  pthread_t* tids = calloc(threads, sizeof *tids);
  for (int t = 0; t < threads; ++t) pthread_create(&tids[t], NULL, worker, (void*)(size_t)t);
  for (int k = 0; k < KERNELS; ++k) {
    double best = 1e30;
    for (int r = 0; r < REPS; ++r) {
      kernel_now = k;
      const double t0 = now_s();
      pthread_barrier_wait(&start_line);
      pthread_barrier_wait(&finish_line);
      const double dt = now_s() - t0;
      if (dt < best) best = dt;
    }
    const double bytes = (double)kStreams[k] * n_total * sizeof(float);
    printf("stream %-5s threads %3d  %8.1f GB/s  (%zu MiB per array, best of %d)\n", kNames[k],
           threads, bytes / best / 1e9, mib, REPS);
    fflush(stdout);
  }
  kernel_now = -1;
  pthread_barrier_wait(&start_line);
  for (int t = 0; t < threads; ++t) pthread_join(tids[t], NULL);
  free(tids);
  pthread_barrier_destroy(&start_line);
  pthread_barrier_destroy(&finish_line);
  for (int i = 0; i < 5; ++i) free(*arrays[i]);
}

int main(int argc, char** argv) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const int threads = argc > 1 ? atoi(argv[1]) : (int)cpus;
  const size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 256;
  if (threads < 1 || mib < 1) {
    fprintf(stderr, "usage: stream_bw [threads >= 1] [MiB per array >= 1]\n");
    return 2;
  }
  measure(1, mib);
  if (threads > 1) measure(threads, mib);
  return 0;
}
