/* Per-key limits (sds_keys_*): a rate key refused after its burst with a
 * retry_after_ms, a fixed window, a store's counts, in-flight units taken
 * and given back, stats, a rule refused with the core's message, a key
 * table file shared with a forked child, and the metrics of named tables. Files live in a fresh directory under /tmp,
 * removed at the end. */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* Rules are JSON text: a string literal and its length, as NAME does. */
#define RULE NAME

static sds_keys *new_keys(const char *rule, size_t rule_len, size_t capacity) {
    sds_keys *keys = NULL;
    CHECK_OK(sds_keys_new(rule, rule_len, capacity, &keys));
    CHECK(keys != NULL);
    return keys;
}

static sds_key_decision decide(const sds_keys *keys, const char *key, uint64_t now_ms,
                               uint32_t cost) {
    sds_key_decision d;
    memset(&d, 0xab, sizeof d);
    CHECK_OK(sds_keys_decide(keys, key, strlen(key), now_ms, cost, &d));
    return d;
}

static void rate_refuses_after_its_burst(void) {
    /* 10 a second (a unit every 100 ms), 3 at once. */
    sds_keys *keys = new_keys(RULE("{\"kind\": \"rate\", \"limit\": 10, \"periodMs\": 1000, "
                                   "\"burst\": 3}"), 1000);
    sds_key_decision d = decide(keys, "user:42", 1000, 1);
    CHECK(d.admitted && d.limit == 3 && d.remaining == 2 && d.reset_ms == 100);
    CHECK(d.retry_after_ms == 0 && d.window_ms == 300);
    CHECK(decide(keys, "user:42", 1000, 2).admitted);
    d = decide(keys, "user:42", 1000, 1);
    CHECK(!d.admitted && d.remaining == 0 && d.retry_after_ms == 100 && d.reset_ms == 300);
    CHECK(decide(keys, "user:42", 1100, 1).admitted);
    CHECK(!decide(keys, "user:42", 1100, 1).admitted);
    CHECK(decide(keys, "user:7", 1100, 1).admitted); /* another key */
    CHECK(decide(keys, "user:7", 1100, 4).retry_after_ms == SDS_KEY_NEVER);

    /* Keys are bytes: a binary key, NUL included. */
    {
        const uint8_t ip[4] = {10, 0, 0, 1};
        sds_key_decision peeked;
        bool held = false;
        CHECK_OK(sds_keys_decide(keys, ip, sizeof ip, 1000, 3, &d));
        CHECK(d.admitted && d.remaining == 0);
        CHECK_OK(sds_keys_peek(keys, ip, 3, 1000, &peeked));
        CHECK(peeked.remaining == 3); /* a prefix is another key */
        CHECK_OK(sds_keys_reset(keys, ip, sizeof ip, &held));
        CHECK(held);
        CHECK_OK(sds_keys_peek(keys, ip, sizeof ip, 1000, &peeked));
        CHECK(peeked.remaining == 3);
    }
    CHECK_RESULT(sds_keys_decide(keys, NAME("user:42"), 1000, 0, &d), SDS_RESULT_INVALID_ARGUMENT);
    CHECK(strcmp(sds_check_last_error(), "SDS_INVALID_ARGUMENT: cost must be >= 1") == 0);
    sds_keys_free(keys);
}

static void fixed_window(void) {
    sds_keys *keys = new_keys(RULE("{\"kind\": \"fixedWindow\", \"limit\": 2, \"periodMs\": 1000}"),
                              100);
    sds_key_decision d;
    CHECK(decide(keys, "k", 1500, 1).admitted);
    CHECK(decide(keys, "k", 1700, 1).admitted);
    d = decide(keys, "k", 1800, 1);
    CHECK(!d.admitted && d.retry_after_ms == 200 && d.window_ms == 1000);
    d = decide(keys, "k", 2000, 1); /* the next window */
    CHECK(d.admitted && d.remaining == 1 && d.reset_ms == 1000);
    sds_keys_free(keys);
}

/* The counts a store keeps (express-rate-limit's MemoryStore): a window
 * from the first hit, counted whatever the limit. */
static void store_counts(void) {
    sds_keys *keys = new_keys(RULE("{\"kind\": \"fixedWindow\", \"limit\": 2, \"periodMs\": 1000, "
                                   "\"windowFromFirstHit\": 1}"), 100);
    sds_key_count c;
    uint64_t held = 0;
    memset(&c, 0xab, sizeof c);
    CHECK_OK(sds_keys_count_add(keys, NAME("ip"), 1500, 0, &c));
    CHECK(c.count == 0 && c.reset_ms == 0 && c.previous == 0);
    CHECK_OK(sds_keys_count_add(keys, NAME("ip"), 1500, 3, &c));
    CHECK(c.count == 3 && c.reset_ms == 1000);
    CHECK_OK(sds_keys_count_add(keys, NAME("ip"), 1600, -1, &c));
    CHECK(c.count == 2 && c.reset_ms == 900);
    CHECK(!decide(keys, "ip", 1600, 1).admitted);
    CHECK_OK(sds_keys_reset_all(keys, &held));
    CHECK(held == 1);
    CHECK(decide(keys, "ip", 1600, 1).admitted);
    sds_keys_free(keys);
}

static void in_flight_take_and_release(void) {
    sds_keys *keys = new_keys(RULE("{\"kind\": \"inFlight\", \"limit\": 2}"), 100);
    sds_key_decision d;
    bool held = false;
    CHECK(decide(keys, "conn", 0, 1).admitted);
    CHECK(decide(keys, "conn", 0, 1).admitted);
    d = decide(keys, "conn", 0, 1);
    CHECK(!d.admitted && d.remaining == 0 && d.retry_after_ms == 0);
    CHECK_OK(sds_keys_release(keys, NAME("conn"), 1, &held));
    CHECK(held);
    CHECK(decide(keys, "conn", 0, 1).admitted);
    CHECK_OK(sds_keys_release(keys, NAME("conn"), 2, NULL));
    CHECK_OK(sds_keys_release(keys, NAME("conn"), 1, &held));
    CHECK(!held);
    sds_keys_free(keys);
}

static void stats(void) {
    /* One bucket of 4 cells: a fifth key must give up a live state. */
    sds_keys *keys = new_keys(RULE("{\"kind\": \"rate\", \"limit\": 1, \"periodMs\": 1000}"), 4);
    const char *names[] = {"a", "b", "c", "d", "e"};
    sds_key_stats st;
    int i;
    memset(&st, 0xab, sizeof st);
    CHECK_OK(sds_keys_stats_get(keys, &st));
    CHECK(st.capacity == 4 && st.resident == 0 && st.evictions == 0 && st.lossy_evictions == 0);
    for (i = 0; i < 5; i++) CHECK(decide(keys, names[i], 0, 1).admitted);
    CHECK(!decide(keys, "e", 0, 1).admitted);
    CHECK_OK(sds_keys_stats_get(keys, &st));
    CHECK(st.resident == 4 && st.evictions == 1 && st.lossy_evictions == 1);
    CHECK(st.admitted == 5 && st.refused == 1);
    CHECK_RESULT(sds_keys_stats_get(keys, NULL), SDS_RESULT_NULL_ARGUMENT);
    sds_keys_free(keys);
    sds_keys_free(NULL);
}

static void bad_rules(void) {
    sds_keys *keys = NULL;
    CHECK_RESULT(sds_keys_new(RULE("{\"kind\": \"rate\", \"limit\": 1.5, \"periodMs\": 1000}"), 10,
                              &keys),
                 SDS_RESULT_INVALID_STRATEGY);
    CHECK(strcmp(sds_check_last_error(),
                 "SDS_INVALID_STRATEGY: invalid key rule: limit must be an integer") == 0);
    CHECK_RESULT(sds_keys_new(RULE("{\"kind\": \"rate\", \"limt\": 1}"), 10, &keys),
                 SDS_RESULT_UNKNOWN_FIELD);
    CHECK(strcmp(sds_check_last_error(), "SDS_UNKNOWN_FIELD: unknown key rule field \"limt\"") == 0);
    CHECK_RESULT(sds_keys_new(RULE("{\"kind\": "), 10, &keys), SDS_RESULT_INVALID_JSON);
    CHECK_RESULT(sds_keys_new(RULE("{\"kind\": \"rate\", \"limit\": 1, \"periodMs\": 10}"), 0, &keys),
                 SDS_RESULT_INVALID_CAPACITY);
    CHECK_RESULT(sds_keys_new(NULL, 0, 10, &keys), SDS_RESULT_NULL_ARGUMENT);
    CHECK(keys == NULL);
}

static char dir[] = "/tmp/sds-c-test-keyed-XXXXXX";

static void shared_with_a_child(void) {
    char path[128];
    sds_keys *keys = NULL, *again = NULL;
    sds_key_decision d;
    pid_t pid;
    int status = 0;
    snprintf(path, sizeof path, "%s/limits.keys", dir);
    CHECK_OK(sds_keys_open_shared(path, strlen(path),
                                  RULE("{\"kind\": \"fixedWindow\", \"limit\": 5, \"periodMs\": 1000}"),
                                  64, 0, &keys));
    CHECK(decide(keys, "tenant", 1000, 2).admitted);
    fflush(NULL);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        /* The parent's handle works as it is in the child. */
        alarm(60);
        CHECK(decide(keys, "tenant", 1000, 3).admitted);
        sds_keys_free(keys);
        exit(sds_checks_failed == 0 ? 0 : 1);
    }
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    d = decide(keys, "tenant", 1000, 1);
    CHECK(!d.admitted && d.remaining == 0);

    /* Attached again, with the same rule; another rule is refused. */
    CHECK_OK(sds_keys_open_shared(path, strlen(path),
                                  RULE("{\"kind\": \"fixedWindow\", \"limit\": 5, \"periodMs\": 1000}"),
                                  64, 0, &again));
    CHECK_OK(sds_keys_peek(again, NAME("tenant"), 1000, &d));
    CHECK(d.remaining == 0);
    sds_keys_free(again);
    again = NULL;
    CHECK_RESULT(sds_keys_open_shared(path, strlen(path),
                                      RULE("{\"kind\": \"fixedWindow\", \"limit\": 6, "
                                           "\"periodMs\": 1000}"),
                                      64, 0, &again),
                 SDS_RESULT_LAYOUT_MISMATCH);
    CHECK(strstr(sds_check_last_error(), "limit") != NULL);
    CHECK(again == NULL);
    sds_keys_free(keys);
    CHECK(unlink(path) == 0);
}

static void metrics_by_name(void) {
    char path[128];
    sds_keys *login = NULL, *shared = NULL;
    char *text;
    int i;
    CHECK_OK(sds_keys_new_named(RULE("{\"kind\": \"rate\", \"limit\": 10, \"periodMs\": 1000, "
                                     "\"burst\": 3}"),
                                100, NAME("login"), &login));
    for (i = 0; i < 4; i++) decide(login, "user:1", 1000, 1);
    snprintf(path, sizeof path, "%s/api.keys", dir);
    CHECK_OK(sds_keys_open_shared_named(path, strlen(path),
                                        RULE("{\"kind\": \"fixedWindow\", \"limit\": 5, "
                                             "\"periodMs\": 1000}"),
                                        64, 0, NAME("api"), &shared));
    CHECK(decide(shared, "tenant", 1000, 2).admitted);

    /* No table: the keyed limits alone. */
    text = sds_check_metrics(NULL, NULL, NULL, SDS_METRICS_PROMETHEUS, 1000);
    CHECK_LINE(text, "sds_keyed_decisions_total{limit=\"login\",outcome=\"admitted\"} 3");
    CHECK_LINE(text, "sds_keyed_decisions_total{limit=\"login\",outcome=\"refused\"} 1");
    CHECK_LINE(text, "sds_keyed_keys{limit=\"login\"} 1");
    CHECK_LINE(text, "sds_keyed_decisions_total{limit=\"api\",outcome=\"admitted\"} 1");
    CHECK(text != NULL && strstr(text, "sds_point_") == NULL);
    free(text);

    /* A freed table leaves. */
    sds_keys_free(login);
    text = sds_check_metrics(NULL, NULL, NULL, SDS_METRICS_PROMETHEUS, 1000);
    CHECK(text != NULL && strstr(text, "login") == NULL);
    CHECK_LINE(text, "sds_keyed_keys{limit=\"api\"} 1");
    free(text);
    sds_keys_free(shared);
    CHECK(unlink(path) == 0);
}

int main(void) {
    CHECK(mkdtemp(dir) != NULL);
    rate_refuses_after_its_burst();
    fixed_window();
    store_counts();
    in_flight_take_and_release();
    stats();
    bad_rules();
    shared_with_a_child();
    metrics_by_name();
    CHECK(rmdir(dir) == 0);
    return sds_check_summary("test_keyed");
}
