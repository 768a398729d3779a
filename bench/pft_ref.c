/* Minimal page-fault reference for vmscale's pft benchmark.
 *
 * N threads, released together, each mmap an anonymous private region,
 * write one byte per 4 KiB page, and stop their clock before munmap.
 * Prints faults per wall-second, where faults are the threads' own
 * RUSAGE_THREAD minor-fault deltas.
 *
 * usage: pft_ref TASKS BYTES_PER_TASK
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

static pthread_barrier_t barrier;
static size_t bytes;

struct result { double start, end, user, sys; long minflt; };

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double tv(struct timeval t) { return t.tv_sec + t.tv_usec / 1e6; }

static void *task(void *arg) {
	struct result *r = arg;
	struct rusage a, b;
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) { perror("mmap"); exit(1); }
	madvise(p, bytes, MADV_NOHUGEPAGE);
	pthread_barrier_wait(&barrier);
	getrusage(RUSAGE_THREAD, &a);
	r->start = now();
	for (size_t off = 0; off < bytes; off += 4096)
		((volatile char *)p)[off] = 1;
	r->end = now();
	getrusage(RUSAGE_THREAD, &b);
	r->user = tv(b.ru_utime) - tv(a.ru_utime);
	r->sys = tv(b.ru_stime) - tv(a.ru_stime);
	r->minflt = b.ru_minflt - a.ru_minflt;
	munmap(p, bytes);
	return NULL;
}

int main(int argc, char **argv) {
	if (argc != 3) { fprintf(stderr, "usage: %s TASKS BYTES_PER_TASK\n", argv[0]); return 2; }
	int n = atoi(argv[1]);
	bytes = strtoull(argv[2], NULL, 0);
	pthread_t th[n];
	struct result r[n];
	pthread_barrier_init(&barrier, NULL, n);
	for (int i = 0; i < n; i++) pthread_create(&th[i], NULL, task, &r[i]);
	for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
	double start = r[0].start, end = r[0].end, user = 0, sys = 0;
	long faults = 0;
	for (int i = 0; i < n; i++) {
		if (r[i].start < start) start = r[i].start;
		if (r[i].end > end) end = r[i].end;
		user += r[i].user; sys += r[i].sys; faults += r[i].minflt;
	}
	printf("%.3f %.6f %.6f %ld\n", faults / (end - start), user, sys, faults);
	return 0;
}
