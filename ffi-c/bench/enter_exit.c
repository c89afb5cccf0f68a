/* libsds benchmark: the sds_enter + sds_exit pair on one thread, in ns per
 * pair, median of several runs. Usage: enter_exit [runs] [pairs per run]. */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sds.h"

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static unsigned long failures;

/* One run: ns per pair. `clock` reads sds_now_ms() per call instead of an
 * injected time that advances 1 ms every 1024 pairs. */
static double run(const sds_table *t, const char *point, unsigned long pairs, int clock) {
    uint64_t base = sds_now_ms();
    unsigned long i;
    double start = now_ns();
    for (i = 0; i < pairs; i++) {
        sds_entry e;
        uint64_t now = clock ? sds_now_ms() : base + (i >> 10);
        failures += sds_enter(t, point, strlen(point), now, SDS_FLAG_NONE, &e) != SDS_RESULT_OK;
        failures += sds_exit(t, &e, now, SDS_OUTCOME_OK) != SDS_RESULT_OK;
    }
    return (now_ns() - start) / (double)pairs;
}

static double median(const sds_table *t, const char *point, int runs, unsigned long pairs, int clock) {
    double results[64];
    int r;
    if (runs > 64) runs = 64;
    for (r = 0; r < runs; r++) results[r] = run(t, point, pairs, clock);
    qsort(results, (size_t)runs, sizeof results[0], by_value);
    return results[runs / 2];
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 7;
    unsigned long pairs = argc > 2 ? strtoul(argv[2], NULL, 10) : 2000000;
    static const char guarded[] =
        "{\"visitThreshold\": 1000000000, \"concurrentThreshold\": 1000, "
        "\"exceptionThreshold\": 1000000, \"timeoutThreshold\": 500, "
        "\"timeoutCountThreshold\": 1000000}";
    sds_table *t = NULL;
    if (runs < 1) runs = 1;
    if (sds_table_new(1024, &t) != SDS_RESULT_OK) return 1;
    if (sds_table_set_strategy_json(t, "guarded", 7, guarded, strlen(guarded)) != SDS_RESULT_OK) return 1;
    run(t, "plain", pairs / 4, 0); /* warm-up */

    printf("sds_enter + sds_exit, median of %d runs of %lu pairs:\n", runs, pairs);
    printf("  no strategy,      injected now_ms: %6.1f ns/op\n", median(t, "plain", runs, pairs, 0));
    printf("  5 rules enabled,  injected now_ms: %6.1f ns/op\n", median(t, "guarded", runs, pairs, 0));
    printf("  5 rules enabled,  sds_now_ms()x2:  %6.1f ns/op\n", median(t, "guarded", runs, pairs, 1));
    sds_table_free(t);
    if (failures != 0) {
        fprintf(stderr, "%lu calls failed\n", failures);
        return 1;
    }
    return 0;
}
