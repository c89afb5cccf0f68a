/* libsds benchmark: the sds_enter + sds_exit pair on one thread, in ns per
 * pair, median of several runs. Usage: enter_exit [runs] [pairs per run].
 * The same pairs on a shared table (sds_table_open_shared, a file in
 * /dev/shm removed at the end) in the same run, and their ratio.
 *
 * Two clocks: the thread's CPU time (what the pair costs while it runs: on a
 * shared machine the wall clock also counts the time other processes held
 * the core) and the wall clock. */
#define _POSIX_C_SOURCE 200112L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sds.h"

static double ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

typedef struct {
    double cpu;
    double wall;
} timing;

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static unsigned long failures;

/* One run: ns per pair. `clock` reads sds_now_ms() per call instead of an
 * injected time that advances 1 ms every 1024 pairs. */
/* `clock` 2: sds_enter_point with a handle from sds_table_point (no name
 * lookup), injected time. */
static timing run(const sds_table *t, const char *point, unsigned long pairs, int clock) {
    uint64_t base = sds_now_ms();
    unsigned long i;
    uint32_t id = 0;
    timing start, took;
    failures += sds_table_point(t, point, strlen(point), &id) != SDS_RESULT_OK;
    start.cpu = ns(CLOCK_THREAD_CPUTIME_ID);
    start.wall = ns(CLOCK_MONOTONIC);
    for (i = 0; i < pairs; i++) {
        sds_entry e;
        uint64_t now = clock == 1 ? sds_now_ms() : base + (i >> 10);
        if (clock == 2) {
            failures += sds_enter_point(t, id, now, SDS_FLAG_NONE, &e) != SDS_RESULT_OK;
        } else {
            failures += sds_enter(t, point, strlen(point), now, SDS_FLAG_NONE, &e) != SDS_RESULT_OK;
        }
        failures += sds_exit(t, &e, now, SDS_OUTCOME_OK) != SDS_RESULT_OK;
    }
    took.cpu = (ns(CLOCK_THREAD_CPUTIME_ID) - start.cpu) / (double)pairs;
    took.wall = (ns(CLOCK_MONOTONIC) - start.wall) / (double)pairs;
    return took;
}

static timing median(const sds_table *t, const char *point, int runs, unsigned long pairs, int clock) {
    double cpu[64], wall[64];
    timing m;
    int r;
    if (runs > 64) runs = 64;
    for (r = 0; r < runs; r++) {
        timing one = run(t, point, pairs, clock);
        cpu[r] = one.cpu;
        wall[r] = one.wall;
    }
    qsort(cpu, (size_t)runs, sizeof cpu[0], by_value);
    qsort(wall, (size_t)runs, sizeof wall[0], by_value);
    m.cpu = cpu[runs / 2];
    m.wall = wall[runs / 2];
    return m;
}

static void report(const char *what, timing m) {
    printf("  %-34s %6.1f ns/op CPU  %6.1f ns/op wall\n", what, m.cpu, m.wall);
}

static double median_of(double *values, int n) {
    qsort(values, (size_t)n, sizeof values[0], by_value);
    return values[n / 2];
}

/* Private and shared runs alternate, so that each pair of runs sees the
 * same machine load; the ratio is the median of the pairs' ratios. */
static void compare(const char *what, const sds_table *p, const sds_table *s, int runs,
                    unsigned long pairs, int clock) {
    double pc[64], sc[64], ratio[64];
    int r;
    if (runs > 64) runs = 64;
    for (r = 0; r < runs; r++) {
        timing one = run(p, "guarded", pairs, clock);
        timing other = run(s, "guarded", pairs, clock);
        pc[r] = one.cpu;
        sc[r] = other.cpu;
        ratio[r] = other.cpu / one.cpu;
    }
    printf("  %-34s %6.1f ns/op CPU shared, %6.1f private: %.2fx\n", what, median_of(sc, runs),
           median_of(pc, runs), median_of(ratio, runs));
}

static const char guarded[] =
    "{\"visitThreshold\": 1000000000, \"concurrentThreshold\": 1000, "
    "\"exceptionThreshold\": 1000000, \"timeoutThreshold\": 500, "
    "\"timeoutCountThreshold\": 1000000}";

/* The same pairs on a shared table, against the private table `t`. */
static int shared_against_private(const sds_table *t, int runs, unsigned long pairs) {
    char path[64];
    sds_table *s = NULL;
    int clock;
    snprintf(path, sizeof path, "/dev/shm/sds-bench-%ld.sds", (long)getpid());
    if (sds_table_open_shared(path, strlen(path), 1024, 0, &s) != SDS_RESULT_OK) return 1;
    if (sds_table_set_strategy_json(s, "guarded", 7, guarded, strlen(guarded)) != SDS_RESULT_OK) {
        sds_table_free(s);
        unlink(path);
        return 1;
    }
    run(s, "plain", pairs / 4, 0); /* warm-up */
    printf("shared table (%s) against the private one, runs in turns:\n", path);
    for (clock = 0; clock <= 2; clock += 2) {
        const char *what = clock == 0 ? "5 rules on, injected now_ms:" : "5 rules on, by handle:";
        compare(what, t, s, 3 * runs, pairs / 4, clock);
    }
    sds_table_free(s);
    unlink(path);
    return 0;
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 7;
    unsigned long pairs = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000000;
    sds_table *t = NULL;
    if (runs < 1) runs = 1;
    if (sds_table_new(1024, &t) != SDS_RESULT_OK) return 1;
    if (sds_table_set_strategy_json(t, "guarded", 7, guarded, strlen(guarded)) != SDS_RESULT_OK) return 1;
    run(t, "plain", pairs / 4, 0); /* warm-up */

    printf("sds_enter + sds_exit, median of %d runs of %lu pairs:\n", runs, pairs);
    report("no strategy, injected now_ms:", median(t, "plain", runs, pairs, 0));
    report("no strategy, by handle:", median(t, "plain", runs, pairs, 2));
    report("5 rules on, injected now_ms:", median(t, "guarded", runs, pairs, 0));
    report("5 rules on, by handle:", median(t, "guarded", runs, pairs, 2));
    report("5 rules on, sds_now_ms() twice:", median(t, "guarded", runs, pairs, 1));
    if (shared_against_private(t, runs, pairs) != 0) {
        fprintf(stderr, "the shared table could not be opened\n");
        failures++;
    }
    sds_table_free(t);
    if (failures != 0) {
        fprintf(stderr, "%lu calls failed\n", failures);
        return 1;
    }
    return 0;
}
