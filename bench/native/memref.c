// The machine's own cost of what `neardup spans` asks of memory and files, for telling a slow run
// of spans from a slow minute of the machine (bench/RESULTS.md, "`neardup spans` at 1M, one build in
// two phases of the machine"). Written for this benchmark; not part of neardup.
//
// Three steps, each timed in CPU seconds (user + sys): 600 MB of fresh pages touched once, 4·10^7
// random read-modify-writes in them, and the input file read and written to OUT_DIR/memref.out in
// 1 MiB blocks (the file removed after).
//
// Build: gcc -O2 -o /tmp/memref bench/native/memref.c
// Run:   /tmp/memref sp2-1000000.jsonl [/dev/shm]
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

static double cpu_seconds(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: memref INPUT [OUT_DIR]\n");
    return 2;
  }
  char out_path[4096];
  snprintf(out_path, sizeof out_path, "%s/memref.out", argc > 2 ? argv[2] : "/dev/shm");
  const size_t n = (size_t)150 << 20; // 150M int32: 600 MB
  double t0 = cpu_seconds();
  int32_t *a = malloc(n * sizeof *a);
  if (!a) return 1;
  for (size_t i = 0; i < n; i += 1024) a[i] = (int32_t)i; // one write per 4 KiB page
  double t1 = cpu_seconds();
  uint32_t x = 12345;
  uint64_t sum = 0;
  for (long r = 0; r < 40000000; r++) {
    x = x * 1103515245u + 12345u;
    size_t j = (x >> 3) % n;
    a[j] += (int32_t)r;
    sum += (uint32_t)a[(j * 7) % n];
  }
  double t2 = cpu_seconds();
  char *buf = malloc(1 << 20);
  int in = open(argv[1], O_RDONLY);
  int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!buf || in < 0 || out < 0) {
    perror("memref");
    return 1;
  }
  ssize_t k;
  while ((k = read(in, buf, 1 << 20)) > 0) {
    if (write(out, buf, (size_t)k) != k) return 1;
  }
  close(in);
  close(out);
  unlink(out_path);
  double t3 = cpu_seconds();
  printf("memref: fresh pages %.2f s, random updates %.2f s, read and write %.2f s, all %.2f s (%u)\n", t1 - t0, t2 - t1, t3 - t2, t3 - t0, (unsigned)(sum & 1));
  return 0;
}
