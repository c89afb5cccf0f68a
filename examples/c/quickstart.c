/* libsds quickstart: protect an operation with a visit threshold.
 *
 *   cc quickstart.c $(pkg-config --cflags --libs sds) -o quickstart
 *   ./quickstart        (LD_LIBRARY_PATH=<prefix>/lib if not a system prefix)
 */
#include <stdio.h>
#include <string.h>

#include <sds.h>

/* Prints why a call failed: this thread's last error names the code and
 * the detail (which field, which rule). */
static void print_last_error(FILE *to, const char *what) {
    char detail[SDS_MESSAGE_MAX + 1];
    size_t len;
    if (sds_last_error_message(detail, sizeof detail, &len) != SDS_RESULT_OK) detail[0] = 0;
    fprintf(to, "%s: %s\n", what, detail);
}

static int fail(const char *what) {
    print_last_error(stderr, what);
    return 1;
}

int main(void) {
    static const char point[] = "orders.create";
    static const char strategy[] = "{\"visitThreshold\": 3}"; /* 3 per 10 s */
    sds_table *table = NULL;
    sds_result r;
    int i, passed = 0, downgraded = 0;

    printf("libsds %s\n", sds_version());
    r = sds_table_new(64, &table);
    if (r != SDS_RESULT_OK) return fail("sds_table_new");
    r = sds_table_set_strategy_json(table, point, strlen(point), strategy, strlen(strategy));
    if (r != SDS_RESULT_OK) return fail("sds_table_set_strategy_json");

    for (i = 1; i <= 5; i++) {
        sds_entry entry; /* yours: on the stack, no allocation */
        char reason[32];
        size_t len;
        r = sds_enter(table, point, strlen(point), sds_now_ms(), SDS_FLAG_NONE, &entry);
        if (r != SDS_RESULT_OK) return fail("sds_enter");
        if (sds_entry_downgraded(&entry)) {
            if (sds_reason_name(entry.reason, reason, sizeof reason, &len) != SDS_RESULT_OK) return 1;
            printf("request %d: downgraded (%s), serving the fallback\n", i, reason);
            downgraded++;
        } else {
            printf("request %d: passed, doing the real work\n", i);
            passed++;
        }
        /* Always exit, downgraded or not: it returns permits and counts errors. */
        r = sds_exit(table, &entry, sds_now_ms(), SDS_OUTCOME_OK);
        if (r != SDS_RESULT_OK) return fail("sds_exit");
    }

    {
        sds_stats stats;
        r = sds_stats_get(table, point, strlen(point), sds_now_ms(), &stats);
        if (r != SDS_RESULT_OK) return fail("sds_stats_get");
        printf("last 10 s: %llu visits, %llu downgraded\n", (unsigned long long)stats.visit,
               (unsigned long long)stats.downgrade);
    }

    /* A rejected strategy names its field and leaves the old one in force. */
    r = sds_table_set_strategy_json(table, point, strlen(point), "{\"delayTime\": 5}", 16);
    if (r == SDS_RESULT_INVALID_STRATEGY) print_last_error(stdout, "delayTime 5 rejected, as expected");

    sds_table_free(table);
    return passed == 3 && downgraded == 2 ? 0 : 1;
}
