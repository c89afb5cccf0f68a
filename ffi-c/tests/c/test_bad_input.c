/* Every bad input of issue 4 returns its own code, writes no output and
 * changes no state. Outputs are pre-filled with a pattern that must survive. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"

#define FILL 0xA5

/* What a bad call must not change: the number of points and point p's stats. */
typedef struct {
    size_t len;
    sds_stats p;
} snapshot;

static snapshot take(const sds_table *t) {
    snapshot s;
    memset(&s, 0, sizeof s);
    s.len = sds_table_len(t);
    CHECK_OK(sds_stats_get(t, NAME("p"), 1000, &s.p));
    return s;
}

static void check_unchanged(const sds_table *t, const snapshot *before, int line) {
    snapshot now = take(t);
    if (now.len != before->len || memcmp(&now.p, &before->p, sizeof now.p) != 0) {
        sds_checks_failed++;
        fprintf(stderr, "%s:%d: state changed by a rejected call\n", __FILE__, line);
    } else {
        sds_checks_passed++;
    }
}
#define UNCHANGED(t, before) check_unchanged((t), (before), __LINE__)

static int untouched(const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; i++) {
        if (b[i] != FILL) return 0;
    }
    return 1;
}

static void test_table_new(void) {
    sds_table *t;
    memset(&t, FILL, sizeof t);
    CHECK_RESULT(sds_table_new(0, &t), SDS_RESULT_INVALID_CAPACITY);
    CHECK(strcmp(sds_check_last_error(),
                 "SDS_INVALID_CAPACITY: table capacity must be within 1..=1048576") == 0);
    CHECK_RESULT(sds_table_new((size_t)SDS_MAX_CAPACITY + 1, &t), SDS_RESULT_INVALID_CAPACITY);
    CHECK_RESULT(sds_table_new(SIZE_MAX, &t), SDS_RESULT_INVALID_CAPACITY);
    /* -1 is SIZE_MAX in a size_t: the same verdict and message. */
    CHECK_RESULT(sds_table_new((size_t)-1, &t), SDS_RESULT_INVALID_CAPACITY);
    CHECK(strcmp(sds_check_last_error(),
                 "SDS_INVALID_CAPACITY: table capacity must be within 1..=1048576") == 0);
    CHECK(untouched(&t, sizeof t));
    CHECK_RESULT(sds_table_new(4, NULL), SDS_RESULT_NULL_ARGUMENT);
    sds_table_free(NULL); /* a no-op */
    CHECK(sds_table_capacity(NULL) == 0 && sds_table_len(NULL) == 0);
}

static void test_enter_exit(sds_table *t) {
    char too_long[SDS_MAX_NAME_LEN + 1];
    sds_entry e;
    snapshot before;
    memset(too_long, 'x', sizeof too_long);
    memset(&e, FILL, sizeof e);
    before = take(t);

    CHECK_RESULT(sds_enter(NULL, NAME("p"), 1000, 0, &e), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_enter(t, NULL, 1, 1000, 0, &e), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_enter(t, NULL, 0, 1000, 0, &e), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_enter(t, "p", 0, 1000, 0, &e), SDS_RESULT_EMPTY_NAME);
    CHECK_RESULT(sds_enter(t, too_long, sizeof too_long, 1000, 0, &e), SDS_RESULT_NAME_TOO_LONG);
    CHECK_RESULT(sds_enter(t, too_long, SIZE_MAX, 1000, 0, &e), SDS_RESULT_NAME_TOO_LONG);
    CHECK_RESULT(sds_enter(t, NAME("p"), 1000, 2, &e), SDS_RESULT_INVALID_ARGUMENT);
    CHECK_RESULT(sds_enter(t, NAME("p"), 1000, 0xffffffffu, &e), SDS_RESULT_INVALID_ARGUMENT);
    CHECK(untouched(&e, sizeof e));
    /* A NULL output is checked before anything is counted. */
    CHECK_RESULT(sds_enter(t, NAME("p"), 1000, 0, NULL), SDS_RESULT_NULL_ARGUMENT);
    UNCHANGED(t, &before);

    /* Exit: the permit of a held entry survives every rejected exit. */
    CHECK_OK(sds_enter(t, NAME("p"), 1000, 0, &e));
    before = take(t);
    CHECK(before.p.concurrent == 1);
    CHECK_RESULT(sds_exit(NULL, &e, 1000, SDS_OUTCOME_OK), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_exit(t, NULL, 1000, SDS_OUTCOME_OK), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_exit(t, &e, 1000, 3), SDS_RESULT_INVALID_ARGUMENT);
    {
        sds_entry foreign = e;
        foreign.point = 1000000; /* beyond this table */
        CHECK_RESULT(sds_exit(t, &foreign, 1000, SDS_OUTCOME_ERROR), SDS_RESULT_INVALID_ENTRY);
    }
    UNCHANGED(t, &before);
    CHECK_OK(sds_exit(t, &e, 1000, SDS_OUTCOME_OK));

    /* Point handles: checked like names; an index that is no point is refused. */
    {
        uint32_t id;
        memset(&id, FILL, sizeof id);
        before = take(t);
        CHECK_RESULT(sds_table_point(NULL, NAME("p"), &id), SDS_RESULT_NULL_ARGUMENT);
        CHECK_RESULT(sds_table_point(t, "p", 0, &id), SDS_RESULT_EMPTY_NAME);
        CHECK_RESULT(sds_table_point(t, too_long, sizeof too_long, &id), SDS_RESULT_NAME_TOO_LONG);
        CHECK_RESULT(sds_table_point(t, NAME("new"), NULL), SDS_RESULT_NULL_ARGUMENT);
        CHECK(untouched(&id, sizeof id));
        memset(&e, FILL, sizeof e);
        CHECK_OK(sds_table_point(t, NAME("p"), &id)); /* the table's only point */
        CHECK_RESULT(sds_enter_point(t, (id + 1) % 8, 1000, 0, &e), SDS_RESULT_INVALID_ENTRY);
        CHECK_RESULT(sds_enter_point(t, 8, 1000, 0, &e), SDS_RESULT_INVALID_ENTRY);
        CHECK_RESULT(sds_enter_point(t, UINT32_MAX, 1000, 0, &e), SDS_RESULT_INVALID_ENTRY);
        CHECK_RESULT(sds_enter_point(NULL, 0, 1000, 0, &e), SDS_RESULT_NULL_ARGUMENT);
        CHECK(untouched(&e, sizeof e));
        CHECK_RESULT(sds_enter_point(t, id, 1000, 4, &e), SDS_RESULT_INVALID_ARGUMENT);
        CHECK_RESULT(sds_enter_point(t, id, 1000, 0, NULL), SDS_RESULT_NULL_ARGUMENT);
        CHECK(untouched(&e, sizeof e));
        UNCHANGED(t, &before);
    }

    CHECK(!sds_entry_downgraded(NULL));
    CHECK(sds_entry_reason(NULL) == SDS_REASON_NONE);
}

static void test_strategies(sds_table *t) {
    sds_strategy s = sds_strategy_default();
    sds_strategy out;
    snapshot before;
    sds_entry e;

    /* An old strategy that downgrades everything: it must stay in force. */
    s.visit_threshold = 0;
    CHECK_OK(sds_table_set_strategy(t, NAME("p"), &s));
    before = take(t);

    s = sds_strategy_default();
    s.delay_time = 5; /* below 10000 */
    CHECK_RESULT(sds_table_set_strategy(t, NAME("p"), &s), SDS_RESULT_INVALID_STRATEGY);
    CHECK(strstr(sds_check_last_error(), "delayTime") != NULL);
    s = sds_strategy_default();
    s.downgrade_rate = 101;
    CHECK_RESULT(sds_table_set_strategy(t, NAME("p"), &s), SDS_RESULT_INVALID_STRATEGY);
    CHECK(strstr(sds_check_last_error(), "downgradeRate") != NULL);
    s = sds_strategy_default();
    s.retry_interval = 2000; /* needs a delayTime */
    CHECK_RESULT(sds_table_set_strategy(t, NAME("p"), &s), SDS_RESULT_INVALID_STRATEGY);
    CHECK_RESULT(sds_table_set_strategy(t, NAME("p"), NULL), SDS_RESULT_NULL_ARGUMENT);
    s = sds_strategy_default();
    CHECK_RESULT(sds_table_set_strategy(NULL, NAME("p"), &s), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_table_set_strategy(t, "p", 0, &s), SDS_RESULT_EMPTY_NAME);

#define JSON(t, text) sds_table_set_strategy_json((t), NAME("p"), text, sizeof(text) - 1)
    CHECK_RESULT(JSON(t, "{\"visitThreshold\": }"), SDS_RESULT_INVALID_JSON);
    CHECK_RESULT(JSON(t, "{\"visitThreshold\": 1"), SDS_RESULT_INVALID_JSON);
    CHECK_RESULT(JSON(t, ""), SDS_RESULT_INVALID_JSON);
    CHECK_RESULT(JSON(t, "[1]"), SDS_RESULT_INVALID_JSON);
    CHECK_RESULT(JSON(t, "{\"visitThreshold\": 1} x"), SDS_RESULT_INVALID_JSON);
    CHECK_RESULT(JSON(t, "{\"visitThresold\": 1}"), SDS_RESULT_UNKNOWN_FIELD);
    CHECK(strstr(sds_check_last_error(), "visitThresold") != NULL);
    CHECK_RESULT(JSON(t, "{\"delayTime\": 5}"), SDS_RESULT_INVALID_STRATEGY);
    CHECK_RESULT(JSON(t, "{\"visitThreshold\": 1.5}"), SDS_RESULT_INVALID_STRATEGY);
    CHECK_RESULT(JSON(t, "{\"visitThreshold\": \"1\"}"), SDS_RESULT_INVALID_STRATEGY);
    CHECK_RESULT(JSON(t, "{\"visitThreshold\": 99999999999999999999}"), SDS_RESULT_INVALID_STRATEGY);
    CHECK_RESULT(JSON(t, "{\"point\": \"p\", \"visitThreshold\": 1, \"x\": 2}"), SDS_RESULT_UNKNOWN_FIELD);
#undef JSON
    {
        static const char not_utf8[] = "{\"visitThreshold\": 1, \"\xff\": 2}";
        CHECK_RESULT(sds_table_set_strategy_json(t, NAME("p"), not_utf8, sizeof not_utf8 - 1),
                     SDS_RESULT_INVALID_JSON);
        CHECK_RESULT(sds_table_set_strategy_json(t, NAME("p"), NULL, 3), SDS_RESULT_NULL_ARGUMENT);
        memset(&out, FILL, sizeof out);
        CHECK_RESULT(sds_strategy_from_json(not_utf8, sizeof not_utf8 - 1, &out), SDS_RESULT_INVALID_JSON);
        CHECK_RESULT(sds_strategy_from_json(NAME("{\"visitThreshold\": 1}"), NULL), SDS_RESULT_NULL_ARGUMENT);
        CHECK(untouched(&out, sizeof out));
    }
    UNCHANGED(t, &before);
    /* The old strategy still downgrades. */
    CHECK_OK(sds_enter(t, NAME("p"), 1000, 0, &e));
    CHECK(e.reason == SDS_REASON_VISIT);
    CHECK_OK(sds_exit(t, &e, 1000, SDS_OUTCOME_OK));

    CHECK_RESULT(sds_table_remove_strategy(t, NULL, 1), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_table_remove_strategy(t, "p", 0), SDS_RESULT_EMPTY_NAME);
    CHECK_RESULT(sds_table_remove_strategy(NULL, NAME("p")), SDS_RESULT_NULL_ARGUMENT);
    /* Removing the strategy of a point that does not exist creates nothing. */
    before = take(t);
    CHECK_OK(sds_table_remove_strategy(t, NAME("nobody")));
    UNCHANGED(t, &before);
    CHECK_OK(sds_table_remove_strategy(t, NAME("p")));
}

static void test_full_table(void) {
    sds_table *t = NULL;
    sds_entry e;
    sds_strategy s = sds_strategy_default();
    CHECK_OK(sds_table_new(1, &t));
    CHECK_OK(sds_enter(t, NAME("p"), 1000, 0, &e));
    CHECK_OK(sds_exit(t, &e, 1000, SDS_OUTCOME_OK));
    {
        snapshot before = take(t);
        memset(&e, FILL, sizeof e);
        CHECK_RESULT(sds_enter(t, NAME("q"), 1000, 0, &e), SDS_RESULT_TABLE_FULL);
        CHECK(strcmp(sds_check_last_error(), "SDS_TABLE_FULL: point table is full (capacity 1)") == 0);
        CHECK(untouched(&e, sizeof e));
        CHECK_RESULT(sds_table_set_strategy(t, NAME("q"), &s), SDS_RESULT_TABLE_FULL);
        CHECK_RESULT(sds_table_set_strategy_json(t, NAME("q"), NAME("{}")), SDS_RESULT_TABLE_FULL);
        UNCHANGED(t, &before);
    }
    /* The existing point still works, and stats of an unknown point are zero. */
    CHECK_OK(sds_enter(t, NAME("p"), 1000, 0, &e));
    CHECK_OK(sds_exit(t, &e, 1000, SDS_OUTCOME_OK));
    {
        sds_stats st;
        CHECK_OK(sds_stats_get(t, NAME("q"), 1000, &st));
        CHECK(st.visit == 0 && sds_table_len(t) == 1);
    }
    sds_table_free(t);
}

static void test_stats(sds_table *t) {
    char too_long[SDS_MAX_NAME_LEN + 1];
    sds_stats st;
    memset(too_long, 'x', sizeof too_long);
    memset(&st, FILL, sizeof st);
    CHECK_RESULT(sds_stats_get(NULL, NAME("p"), 1000, &st), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_stats_get(t, NULL, 1, 1000, &st), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_stats_get(t, "p", 0, 1000, &st), SDS_RESULT_EMPTY_NAME);
    CHECK_RESULT(sds_stats_get(t, too_long, sizeof too_long, 1000, &st), SDS_RESULT_NAME_TOO_LONG);
    CHECK(untouched(&st, sizeof st));
    CHECK_RESULT(sds_stats_get(t, NAME("p"), 1000, NULL), SDS_RESULT_NULL_ARGUMENT);
}

static void test_text(void) {
    char buf[16];
    size_t len;
    memset(buf, FILL, sizeof buf);
    memset(&len, FILL, sizeof len);
    CHECK_RESULT(sds_result_message(999, buf, sizeof buf, &len), SDS_RESULT_INVALID_ARGUMENT);
    CHECK_RESULT(sds_result_message(SDS_RESULT_OK, buf, 0, &len), SDS_RESULT_INVALID_ARGUMENT);
    CHECK_RESULT(sds_result_message(SDS_RESULT_OK, NULL, sizeof buf, &len), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_result_message(SDS_RESULT_OK, buf, sizeof buf, NULL), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_reason_name(10, buf, sizeof buf, &len), SDS_RESULT_INVALID_ARGUMENT);
    CHECK_RESULT(sds_reason_name(256 + SDS_REASON_VISIT, buf, sizeof buf, &len), SDS_RESULT_INVALID_ARGUMENT);
    CHECK_RESULT(sds_last_error_message(buf, 0, &len), SDS_RESULT_INVALID_ARGUMENT);
    CHECK_RESULT(sds_last_error_message(NULL, 1, &len), SDS_RESULT_NULL_ARGUMENT);
    CHECK(untouched(buf, sizeof buf) && untouched(&len, sizeof len));
    /* A bad call to read the last error keeps it for a good one. */
    CHECK(strstr(sds_check_last_error(), "10 is no sds_reason") == NULL);
    CHECK_RESULT(sds_reason_name(42, buf, sizeof buf, &len), SDS_RESULT_INVALID_ARGUMENT);
    CHECK_RESULT(sds_last_error_message(buf, 0, &len), SDS_RESULT_INVALID_ARGUMENT);
    CHECK_RESULT(sds_last_error_message(buf, sizeof buf, NULL), SDS_RESULT_NULL_ARGUMENT);
    CHECK(strcmp(sds_check_last_error(), "SDS_INVALID_ARGUMENT: 42 is no sds_reason") == 0);
}

static void test_window(void) {
    sds_window *w;
    uint64_t v;
    memset(&w, FILL, sizeof w);
    CHECK_RESULT(sds_window_new(0, 10, 30, &w), SDS_RESULT_INVALID_WINDOW);
    CHECK_RESULT(sds_window_new(1000, 0, 30, &w), SDS_RESULT_INVALID_WINDOW);
    CHECK_RESULT(sds_window_new(1000, 10, 19, &w), SDS_RESULT_INVALID_WINDOW);
    CHECK_RESULT(sds_window_new(1000, 10, 65537, &w), SDS_RESULT_INVALID_WINDOW);
    CHECK_RESULT(sds_window_new(1000, 10, SIZE_MAX, &w), SDS_RESULT_INVALID_WINDOW);
    CHECK_RESULT(sds_window_new(1000, SIZE_MAX, 30, &w), SDS_RESULT_INVALID_WINDOW);
    CHECK(untouched(&w, sizeof w));
    CHECK_RESULT(sds_window_new(1000, 10, 30, NULL), SDS_RESULT_NULL_ARGUMENT);
    CHECK(strstr(sds_check_last_error(), "out") != NULL);
    CHECK_RESULT(sds_window_add(NULL, 0, 1, NULL), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_window_sum(NULL, 0, &v), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_window_bucket(NULL, 0, &v), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_window_last_whole_cycle(NULL, 0, &v), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_window_add_at(NULL, 0, 0, 1, &v), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_window_set(NULL, 0, 1), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_window_fetch_max(NULL, 0, 1, &v), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_window_clear_next_cycle(NULL, 0), SDS_RESULT_NULL_ARGUMENT);
    CHECK_OK(sds_window_new(1000, 10, 30, &w));
    CHECK_RESULT(sds_window_sum(w, 0, NULL), SDS_RESULT_NULL_ARGUMENT);
    sds_window_free(w);
    sds_window_free(NULL); /* a no-op */
}

static void test_metrics(sds_table *t) {
    char buf[64];
    size_t needed;
    sds_keys *keys;
    memset(buf, FILL, sizeof buf);
    memset(&needed, FILL, sizeof needed);
    memset(&keys, FILL, sizeof keys);
    CHECK_RESULT(sds_metrics_text(t, NULL, NULL, SDS_METRICS_PROMETHEUS, 0, NULL, 64, &needed),
                 SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_metrics_text(t, NULL, NULL, SDS_METRICS_PROMETHEUS, 0, buf, 64, NULL),
                 SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_metrics_text(t, NULL, NULL, SDS_METRICS_PROMETHEUS, 0, buf, 0, &needed),
                 SDS_RESULT_INVALID_ARGUMENT);
    CHECK_RESULT(sds_metrics_text(t, NULL, NULL, 2, 0, buf, sizeof buf, &needed),
                 SDS_RESULT_INVALID_ARGUMENT);
    CHECK(strcmp(sds_check_last_error(), "SDS_INVALID_ARGUMENT: 2 is not a metrics format "
                                         "(SDS_METRICS_PROMETHEUS or SDS_METRICS_OPENMETRICS)") == 0);
    /* A key table's metrics name: 1 to SDS_MAX_NAME_LEN bytes of UTF-8. */
    CHECK_RESULT(sds_keys_new_named(NAME("{\"kind\": \"rate\", \"limit\": 1, \"periodMs\": 1000}"),
                                    8, "", 0, &keys),
                 SDS_RESULT_EMPTY_NAME);
    CHECK_RESULT(sds_keys_new_named(NAME("{\"kind\": \"rate\", \"limit\": 1, \"periodMs\": 1000}"),
                                    8, "\xff", 1, &keys),
                 SDS_RESULT_INVALID_ARGUMENT);
    CHECK_RESULT(sds_keys_new_named(NAME("{\"kind\": \"rate\", \"limit\": 1, \"periodMs\": 1000}"),
                                    8, buf, SDS_MAX_NAME_LEN + 1, &keys),
                 SDS_RESULT_NAME_TOO_LONG);
    CHECK(untouched(buf, sizeof buf) && untouched(&needed, sizeof needed));
    CHECK(untouched(&keys, sizeof keys));
}

int main(void) {
    sds_table *t = NULL;
    test_table_new();
    CHECK_OK(sds_table_new(8, &t));
    test_enter_exit(t);
    test_strategies(t);
    test_stats(t);
    test_metrics(t);
    sds_table_free(t);
    test_full_table();
    test_text();
    test_window();
    return sds_check_summary("test_bad_input");
}
