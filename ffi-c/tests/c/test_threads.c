/* Enter/exit from many pthreads at once on one table: every count is exact.
 * Usage: test_threads [iterations per thread] (fewer under valgrind). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"

#define THREADS 8
#define LIMIT 2       /* concurrentThreshold of point "limited" */
#define OWN_POINTS 16 /* points each thread creates for itself */
#define RACE_POINTS 32 /* points every thread creates at once */
#define NOW 1000

static sds_table *table;
static unsigned long iterations = 20000;

/* Written by the workers with GCC's atomic builtins (C99 has no atomics). */
static unsigned long in_flight;   /* admitted "limited" requests not exited yet */
static unsigned long over_limit;  /* times in_flight was seen above LIMIT */
static unsigned long call_errors; /* any call that did not return OK */
static int started;               /* the gate all workers wait at */

typedef struct {
    int index;
    unsigned long passed;
    unsigned long downgraded;
    unsigned long wrong_reason;
} worker;

static void count_error(sds_result r) {
    if (r != SDS_RESULT_OK) __atomic_add_fetch(&call_errors, 1, __ATOMIC_RELAXED);
}

/* Holds an admitted request a little, so that threads overlap inside it. */
static void hold(void) {
    volatile int spin = 0;
    while (spin < 200) spin++;
}

static void *run(void *arg) {
    worker *w = (worker *)arg;
    unsigned long i;
    char name[32];
    while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE)) {
    }
    for (i = 0; i < iterations; i++) {
        sds_entry shared, limited;
        count_error(sds_enter(table, NAME("shared"), NOW, SDS_FLAG_NONE, &shared));
        count_error(sds_enter(table, NAME("limited"), NOW, SDS_FLAG_NONE, &limited));
        if (sds_entry_downgraded(&limited)) {
            w->downgraded++;
            if (limited.reason != SDS_REASON_CONCURRENT) w->wrong_reason++;
        } else {
            w->passed++;
            if (__atomic_add_fetch(&in_flight, 1, __ATOMIC_SEQ_CST) > LIMIT) {
                __atomic_add_fetch(&over_limit, 1, __ATOMIC_RELAXED);
            }
            hold();
            __atomic_sub_fetch(&in_flight, 1, __ATOMIC_SEQ_CST);
        }
        /* Exits from this thread, in the other order: entries are plain data. */
        count_error(sds_exit(table, &limited, NOW, SDS_OUTCOME_OK));
        count_error(sds_exit(table, &shared, NOW, i % 4 == 0 ? SDS_OUTCOME_ERROR : SDS_OUTCOME_OK));
    }
    for (i = 0; i < OWN_POINTS; i++) {
        sds_entry e;
        int n = snprintf(name, sizeof name, "own-%d-%lu", w->index, i);
        count_error(sds_enter(table, name, (size_t)n, NOW, SDS_FLAG_NONE, &e));
        count_error(sds_exit(table, &e, NOW, SDS_OUTCOME_OK));
    }
    for (i = 0; i < RACE_POINTS; i++) {
        sds_entry e;
        int n = snprintf(name, sizeof name, "race-%lu", i);
        count_error(sds_enter(table, name, (size_t)n, NOW, SDS_FLAG_NONE, &e));
        count_error(sds_exit(table, &e, NOW, SDS_OUTCOME_OK));
    }
    return NULL;
}

int main(int argc, char **argv) {
    pthread_t threads[THREADS];
    worker workers[THREADS];
    unsigned long passed = 0, downgraded = 0, wrong_reason = 0;
    unsigned long total, k;
    int i;
    sds_stats st;
    sds_strategy s = sds_strategy_default();

    if (argc > 1) iterations = strtoul(argv[1], NULL, 10);
    total = iterations * THREADS;
    CHECK_OK(sds_table_new(1024, &table));
    s.concurrent_threshold = LIMIT;
    CHECK_OK(sds_table_set_strategy(table, NAME("limited"), &s));

    for (i = 0; i < THREADS; i++) {
        memset(&workers[i], 0, sizeof workers[i]);
        workers[i].index = i;
        CHECK(pthread_create(&threads[i], NULL, run, &workers[i]) == 0);
    }
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    for (i = 0; i < THREADS; i++) {
        CHECK(pthread_join(threads[i], NULL) == 0);
        passed += workers[i].passed;
        downgraded += workers[i].downgraded;
        wrong_reason += workers[i].wrong_reason;
    }

    CHECK(call_errors == 0);
    CHECK(over_limit == 0);
    CHECK(wrong_reason == 0);
    CHECK(passed + downgraded == total);
    CHECK(passed >= iterations); /* one thread alone would never be refused */

    CHECK_OK(sds_stats_get(table, NAME("shared"), NOW, &st));
    CHECK(st.visit == total);
    CHECK(st.exception == THREADS * ((iterations + 3) / 4));
    CHECK(st.downgrade == 0);
    CHECK(st.concurrent == 0);

    CHECK_OK(sds_stats_get(table, NAME("limited"), NOW, &st));
    CHECK(st.visit == total);
    CHECK(st.downgrade == downgraded);
    CHECK(st.concurrent == 0);

    /* shared, limited, every thread's own points, and each race point once. */
    CHECK(sds_table_len(table) == 2 + THREADS * OWN_POINTS + RACE_POINTS);
    for (k = 0; k < RACE_POINTS; k++) {
        char name[32];
        int n = snprintf(name, sizeof name, "race-%lu", k);
        CHECK_OK(sds_stats_get(table, name, (size_t)n, NOW, &st));
        CHECK(st.visit == THREADS);
    }
    sds_table_free(table);
    printf("threads: %d x %lu enter/exit pairs, %lu downgraded by the limit of %d\n", THREADS,
           iterations, downgraded, LIMIT);
    return sds_check_summary("test_threads");
}
