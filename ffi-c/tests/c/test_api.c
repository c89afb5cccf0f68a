/* The C API's happy paths, with injected time: tables, strategies (struct
 * and JSON), enter/exit and its decisions, stats, text, the raw window,
 * metrics. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static sds_table *new_table(size_t capacity) {
    sds_table *t = NULL;
    CHECK_OK(sds_table_new(capacity, &t));
    CHECK(t != NULL);
    return t;
}

/* A table of `capacity` points, the point `point` with the strategy in
 * the JSON text `json`. */
static sds_table *table_with(size_t capacity, const char *point, const char *json) {
    sds_table *t = new_table(capacity);
    CHECK_OK(sds_table_set_strategy_json(t, point, strlen(point), json, strlen(json)));
    return t;
}

/* Enters and exits at once; the reason (SDS_REASON_NONE when it passed). */
static sds_reason visit(const sds_table *t, const char *name, size_t len, uint64_t now) {
    sds_entry e;
    CHECK_OK(sds_enter(t, name, len, now, SDS_FLAG_NONE, &e));
    CHECK_OK(sds_exit(t, &e, now, SDS_OUTCOME_OK));
    return sds_entry_reason(&e);
}

static void test_table(void) {
    sds_table *t = new_table(4);
    CHECK(sds_table_capacity(t) == 4);
    CHECK(sds_table_len(t) == 0);
    CHECK(visit(t, NAME("a"), 1000) == SDS_REASON_NONE);
    CHECK(visit(t, NAME("a"), 1000) == SDS_REASON_NONE);
    CHECK(sds_table_len(t) == 1);
    CHECK(visit(t, NAME("b"), 1000) == SDS_REASON_NONE);
    CHECK(sds_table_len(t) == 2);
    sds_table_free(t);
}

static void test_point_handles(void) {
    sds_table *t = new_table(4);
    uint32_t id = 0, again = 1;
    sds_entry e;
    sds_stats st;
    CHECK_OK(sds_table_point(t, NAME("fast"), &id));
    CHECK_OK(sds_table_point(t, NAME("fast"), &again));
    CHECK(id == again && sds_table_len(t) == 1);
    CHECK_OK(sds_enter_point(t, id, 1000, SDS_FLAG_NONE, &e));
    CHECK(e.point == id && !sds_entry_downgraded(&e));
    CHECK_OK(sds_exit(t, &e, 1000, SDS_OUTCOME_OK));
    CHECK_OK(sds_enter(t, NAME("fast"), 1000, SDS_FLAG_NONE, &e));
    CHECK(e.point == id);
    CHECK_OK(sds_exit(t, &e, 1000, SDS_OUTCOME_OK));
    CHECK_OK(sds_stats_get(t, NAME("fast"), 1000, &st));
    CHECK(st.visit == 2);
    sds_table_free(t);
}

static void test_visit_threshold_struct(void) {
    sds_table *t = new_table(8);
    sds_strategy s = sds_strategy_default();
    CHECK(s.visit_threshold == -1 && s.downgrade_rate == 100 && s.exception_rate_start == 0);
    s.visit_threshold = 2;
    CHECK_OK(sds_table_set_strategy(t, NAME("orders"), &s));
    CHECK(visit(t, NAME("orders"), 1000) == SDS_REASON_NONE);
    CHECK(visit(t, NAME("orders"), 1500) == SDS_REASON_NONE);
    CHECK(visit(t, NAME("orders"), 1999) == SDS_REASON_VISIT);
    /* 10 s later the first visits have left the window. */
    CHECK(visit(t, NAME("orders"), 11000) == SDS_REASON_NONE);

    sds_stats st;
    CHECK_OK(sds_stats_get(t, NAME("orders"), 11000, &st));
    CHECK(st.visit == 1); /* the window is seconds 2..=11: only 11000 */
    CHECK(st.downgrade == 0);
    CHECK(st.concurrent == 0);
    CHECK(st.last_cycle.visit_num == 3); /* seconds 0..=9 */
    CHECK(st.last_cycle.downgrade_num == 1);

    CHECK_OK(sds_table_remove_strategy(t, NAME("orders")));
    CHECK(visit(t, NAME("orders"), 11000) == SDS_REASON_NONE);
    CHECK(visit(t, NAME("orders"), 11000) == SDS_REASON_NONE);
    sds_table_free(t);
}

static void test_json_and_entry(void) {
    sds_table *t = table_with(8, "pay", "{\"point\": \"pay\", \"concurrentThreshold\": 1, \"timeoutThreshold\": 50}");

    sds_entry first, second;
    CHECK_OK(sds_enter(t, NAME("pay"), 5000, SDS_FLAG_NONE, &first));
    CHECK(!sds_entry_downgraded(&first));
    CHECK(first.start_ms == 5000 && (first.state & 1u) == 1u);
    CHECK_OK(sds_enter(t, NAME("pay"), 5001, SDS_FLAG_NONE, &second));
    CHECK(sds_entry_downgraded(&second));
    CHECK(second.reason == SDS_REASON_CONCURRENT);

    sds_stats st;
    CHECK_OK(sds_stats_get(t, NAME("pay"), 5001, &st));
    CHECK(st.concurrent == 1);
    /* The entry is plain data: a copy exits just as well, from anywhere. */
    sds_entry copy = first;
    CHECK_OK(sds_exit(t, &second, 5002, SDS_OUTCOME_OK));
    CHECK_OK(sds_exit(t, &copy, 5100, SDS_OUTCOME_ERROR)); /* 100 ms > 50: a timeout */
    CHECK_OK(sds_stats_get(t, NAME("pay"), 5100, &st));
    CHECK(st.concurrent == 0);
    CHECK(st.exception == 1);
    CHECK(st.timeout == 1);
    CHECK(st.downgrade == 1);

    sds_strategy parsed;
    static const char rate[] = "{\"downgradeRate\": 50, \"delayTime\": 20000, \"retryInterval\": 1000}";
    CHECK_OK(sds_strategy_from_json(rate, sizeof rate - 1, &parsed));
    CHECK(parsed.downgrade_rate == 50 && parsed.delay_time == 20000 && parsed.retry_interval == 1000);
    CHECK(parsed.visit_threshold == -1);
    sds_table_free(t);
}

static void test_pressure_flag(void) {
    sds_table *t = table_with(2, "p", "{\"pressureTestDowngrade\": 1}");
    sds_entry e;
    CHECK_OK(sds_enter(t, NAME("p"), 1000, SDS_FLAG_PRESSURE_TEST, &e));
    CHECK(sds_entry_reason(&e) == SDS_REASON_PRESSURE_TEST);
    CHECK_OK(sds_exit(t, &e, 1000, SDS_OUTCOME_OK));
    CHECK_OK(sds_enter(t, NAME("p"), 1000, SDS_FLAG_NONE, &e));
    CHECK(sds_entry_reason(&e) == SDS_REASON_NONE);
    CHECK_OK(sds_exit(t, &e, 1000, SDS_OUTCOME_OK));
    sds_table_free(t);
}

static void test_names_are_bytes(void) {
    sds_table *t = new_table(8);
    static const char latin1[] = {'c', (char)0xe9, 'l', 'e'}; /* not UTF-8 */
    static const char with_nul[] = {'a', 0, 'b'};
    char longest[SDS_MAX_NAME_LEN];
    memset(longest, 'x', sizeof longest);
    CHECK(visit(t, latin1, sizeof latin1, 1000) == SDS_REASON_NONE);
    CHECK(visit(t, with_nul, sizeof with_nul, 1000) == SDS_REASON_NONE);
    CHECK(visit(t, with_nul, 1, 1000) == SDS_REASON_NONE); /* "a": another point */
    CHECK(visit(t, longest, sizeof longest, 1000) == SDS_REASON_NONE);
    CHECK(sds_table_len(t) == 4);
    sds_stats st;
    CHECK_OK(sds_stats_get(t, with_nul, sizeof with_nul, 1000, &st));
    CHECK(st.visit == 1);
    sds_table_free(t);
}

static void test_text(void) {
    char buf[SDS_MESSAGE_MAX + 1];
    size_t len = 0;
    CHECK_OK(sds_result_message(SDS_RESULT_TABLE_FULL, buf, sizeof buf, &len));
    CHECK(strcmp(buf, "SDS_TABLE_FULL: point table is full") == 0);
    CHECK(len == strlen(buf));
    CHECK_OK(sds_result_message(SDS_RESULT_OK, buf, sizeof buf, &len));
    CHECK(strcmp(buf, "SDS_OK: success") == 0);
    /* Truncated to fit, always NUL-terminated. */
    CHECK_OK(sds_result_message(SDS_RESULT_TABLE_FULL, buf, 5, &len));
    CHECK(len == 4 && strcmp(buf, "SDS_") == 0);
    CHECK_OK(sds_reason_name(SDS_REASON_TOKEN_BUCKET, buf, sizeof buf, &len));
    CHECK(strcmp(buf, "TOKEN_BUCKET") == 0 && len == 12);
    CHECK_OK(sds_reason_name(SDS_REASON_NONE, buf, sizeof buf, &len));
    CHECK(strcmp(buf, "NONE") == 0);
    CHECK(strlen(sds_version()) > 0 && strchr(sds_version(), '.') != NULL);
}

static void test_clock(void) {
    /* One real-clock smoke test: after 2020-01-01, and not going backwards. */
    uint64_t a = sds_now_ms();
    uint64_t b = sds_now_ms();
    CHECK(a > UINT64_C(1577836800000));
    CHECK(b >= a && b - a < 1000);
}

static void test_window(void) {
    sds_window *w = NULL;
    /* Sentinel's second view: 2 buckets of 500 ms over a ring of 4. */
    CHECK_OK(sds_window_new(500, 2, 4, &w));
    sds_tally tally;
    CHECK_OK(sds_window_add(w, 100, 1, &tally));
    CHECK(tally.bucket == 1 && tally.total == 1);
    CHECK_OK(sds_window_add(w, 600, 3, &tally));
    CHECK(tally.bucket == 3 && tally.total == 4);
    CHECK_OK(sds_window_add(w, 700, 1, NULL));
    uint64_t v = 0;
    CHECK_OK(sds_window_sum(w, 999, &v));
    CHECK(v == 5);
    CHECK_OK(sds_window_bucket(w, 999, &v));
    CHECK(v == 4);
    CHECK_OK(sds_window_sum(w, 1000, &v)); /* bucket 0 left the window */
    CHECK(v == 4);
    CHECK_OK(sds_window_last_whole_cycle(w, 1000, &v));
    CHECK(v == 5);
    CHECK_OK(sds_window_sum(w, 60000, &v)); /* a long idle gap reads exactly 0 */
    CHECK(v == 0);
    CHECK_OK(sds_window_set(w, 60000, 7));
    CHECK_OK(sds_window_fetch_max(w, 60000, 9, &v));
    CHECK(v == 9);
    CHECK_OK(sds_window_fetch_max(w, 60000, 2, &v));
    CHECK(v == 9);
    CHECK_OK(sds_window_clear_next_cycle(w, 60000));
    CHECK_OK(sds_window_bucket(w, 60000, &v));
    CHECK(v == 9);
    /* A clock stepped back two seconds lands on the slot of 60 000 (a ring
     * of 4 x 500 ms): the slot restarts at the writer's time. */
    CHECK_OK(sds_window_add(w, 58000, 1, &tally));
    CHECK(tally.bucket == 1 && tally.total == 1);
    /* Adding any amount saturates the bucket, never wraps. */
    CHECK_OK(sds_window_add(w, 58000, 9, NULL));
    CHECK_OK(sds_window_add(w, 58000, UINT64_MAX, &tally));
    CHECK(tally.bucket == UINT32_MAX);
    sds_window_free(w);
}

/* sds_window_add_at: a late event lands in its own bucket while the ring
 * holds it, else at the present; it never restarts a newer bucket. */
static void test_window_add_at(void) {
    sds_window *w = NULL;
    uint64_t v = 0;
    CHECK_OK(sds_window_new(1000, 10, 30, &w));
    CHECK_OK(sds_window_add(w, 5000, 2, NULL));
    /* An event of 3 s recorded at 12 s: into the bucket of 3 s. */
    CHECK_OK(sds_window_add_at(w, 3000, 12000, 4, &v));
    CHECK(v == 4);
    CHECK_OK(sds_window_bucket(w, 3500, &v));
    CHECK(v == 4);
    CHECK_OK(sds_window_sum(w, 12000, &v)); /* seconds 3..=12 */
    CHECK(v == 6);
    /* Recorded at 40 s the ring (30 s) no longer holds 3 s: counted at 40 s. */
    CHECK_OK(sds_window_add_at(w, 3000, 40000, 1, &v));
    CHECK(v == 1);
    CHECK_OK(sds_window_bucket(w, 40000, &v));
    CHECK(v == 1);
    /* A start after the present (the clock went back): at the present. */
    CHECK_OK(sds_window_add_at(w, 41000, 40000, 2, NULL));
    CHECK_OK(sds_window_bucket(w, 40000, &v));
    CHECK(v == 3);
    /* Any n saturates at 2^32 - 1. */
    CHECK_OK(sds_window_add_at(w, 39000, 40000, UINT64_MAX, &v));
    CHECK(v == UINT32_MAX);
    sds_window_free(w);
}

static void test_metrics(void) {
    sds_table *t = new_table(4);
    char small[16];
    size_t needed = 0;
    char *text;
    CHECK_OK(sds_table_set_strategy_json(t, NAME("pay"), NAME("{\"visitThreshold\": 1}")));
    CHECK(visit(t, NAME("pay"), 5000) == SDS_REASON_NONE);
    CHECK(visit(t, NAME("pay"), 5000) == SDS_REASON_VISIT);

    text = sds_check_metrics(t, NULL, NULL, SDS_METRICS_PROMETHEUS, 5000);
    CHECK_LINE(text, "# TYPE sds_point_requests_total counter");
    CHECK_LINE(text, "sds_point_requests_total{table=\"private\",point=\"pay\"} 2");
    CHECK_LINE(text, "sds_point_downgrades_total{table=\"private\",point=\"pay\",reason=\"VISIT\"} 1");
    CHECK_LINE(text, "sds_point_downgrades_total{table=\"private\",point=\"pay\",reason=\"DELAY\"} 0");
    CHECK_LINE(text, "sds_point_in_flight{table=\"private\",point=\"pay\"} 0");
    CHECK_LINE(text, "sds_table_points{table=\"private\"} 1");
    CHECK_LINE(text, "sds_table_points_capacity{table=\"private\"} 4");
    free(text);

    /* Too small: an empty string and the length it needs, then it fits. */
    memset(small, 'x', sizeof small);
    CHECK_OK(sds_metrics_text(t, NULL, NULL, SDS_METRICS_OPENMETRICS, 5000, small, sizeof small,
                              &needed));
    CHECK(needed >= sizeof small && small[0] == '\0' && small[1] == 'x');
    text = sds_check_metrics(t, NULL, NULL, SDS_METRICS_OPENMETRICS, 5000);
    CHECK(text != NULL && strlen(text) == needed);
    CHECK(text != NULL && strcmp(text + needed - 6, "# EOF\n") == 0);
    CHECK_LINE(text, "# TYPE sds_point_requests counter");
    free(text);

    CHECK(strcmp(sds_metrics_content_type(SDS_METRICS_PROMETHEUS),
                 "text/plain; version=0.0.4; charset=utf-8") == 0);
    CHECK(strcmp(sds_metrics_content_type(SDS_METRICS_OPENMETRICS),
                 "application/openmetrics-text; version=1.0.0; charset=utf-8") == 0);
    CHECK(sds_metrics_content_type(2) == NULL);
    sds_table_free(t);
}

/* An entry its caller lost (a garbage-collected handle in a binding): the
 * permit comes back, it counts as an exception, never as a timeout. */
static void test_abandoned_entry(void) {
    sds_table *t = table_with(8, "pay", "{\"point\": \"pay\", \"concurrentThreshold\": 1, \"timeoutThreshold\": 50}");
    sds_entry e;
    CHECK_OK(sds_enter(t, NAME("pay"), 5000, SDS_FLAG_NONE, &e));
    CHECK(!sds_entry_downgraded(&e));
    CHECK_OK(sds_exit(t, &e, 9000, SDS_OUTCOME_ABANDONED));
    sds_stats st;
    CHECK_OK(sds_stats_get(t, NAME("pay"), 9000, &st));
    CHECK(st.concurrent == 0);
    CHECK(st.exception == 1);
    CHECK(st.timeout == 0);
    sds_table_free(t);
}

int main(void) {
    test_table();
    test_point_handles();
    test_visit_threshold_struct();
    test_json_and_entry();
    test_abandoned_entry();
    test_pressure_flag();
    test_names_are_bytes();
    test_text();
    test_clock();
    test_window();
    test_window_add_at();
    test_metrics();
    return sds_check_summary("test_api");
}
