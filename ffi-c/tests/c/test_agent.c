/* The console agent from C: started on a table against the fake console
 * (tools/fake-sds-admin.py, run from the repository root), its strategies
 * in force, the return value, the status, the log callback, refused
 * settings, stop (also from the agent's own log callback), and a
 * UINT64_MAX pull interval that pulls once. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static const char *APP =
    "{\"appGroupName\": \"g\", \"appName\": \"a\", \"strategies\": ["
    "{\"point\": \"orders\", \"visitThreshold\": 1, \"returnValueStr\": \"busy\"}]}";

static pid_t fake_pid;
static int fake_stdin = -1;

/* Starts the fake console; returns its port. It exits when our end of its
 * stdin closes (or we die). */
static int start_fake(void) {
    int in[2], out[2];
    char line[32];
    ssize_t got, n = 0;
    CHECK(pipe(in) == 0 && pipe(out) == 0);
    fake_pid = fork();
    if (fake_pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execlp("python3", "python3", "tools/fake-sds-admin.py", "--app", APP, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    fake_stdin = in[1];
    while (n < (ssize_t)sizeof line - 1 && (got = read(out[0], line + n, 1)) == 1 && line[n] != '\n') {
        n++;
    }
    line[n] = 0;
    close(out[0]);
    return atoi(line);
}

static void stop_fake(void) {
    close(fake_stdin);
    kill(fake_pid, SIGTERM);
    waitpid(fake_pid, NULL, 0);
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The agent's status once `version` is held, within 20 s. */
static sds_agent_status status_at_version(const sds_agent *agent, int64_t version) {
    sds_agent_status st;
    int i;
    for (i = 0; i < 2000; i++) {
        CHECK_OK(sds_agent_status_get(agent, &st));
        if (st.version == version) {
            break;
        }
        sleep_ms(10);
    }
    return st;
}

static unsigned long info_lines;

static void on_log(void *context, uint32_t level, const char *message, size_t len) {
    CHECK(context == (void *)&info_lines);
    CHECK(strlen(message) == len);
    if (level == SDS_AGENT_LOG_INFO) {
        info_lines++;
    }
}

static sds_reason visit(const sds_table *t, uint64_t now) {
    sds_entry e;
    CHECK_OK(sds_enter(t, NAME("orders"), now, SDS_FLAG_NONE, &e));
    CHECK_OK(sds_exit(t, &e, now, SDS_OUTCOME_OK));
    return sds_entry_reason(&e);
}

/* The settings of an agent of app "g"/"a" on the fake console at `port`
 * with `more` members (each after a comma), in `buf`. */
static const char *settings(char *buf, size_t len, int port, const char *more) {
    snprintf(buf, len,
             "{\"servers\": \"http://127.0.0.1:%d\", \"app_group\": \"g\", \"app_name\": \"a\", "
             "\"ip\": \"10.0.0.7\"%s}",
             port, more);
    return buf;
}

static sds_result start(const sds_table *t, const char *settings, sds_agent_log_fn log,
                        void *context, sds_agent **agent) {
    return sds_agent_start(t, settings, strlen(settings), log, context, agent);
}

static void test_agent(int port) {
    char json[256], buf[8];
    char *text;
    sds_table *t = NULL, *other = NULL;
    sds_agent *agent = NULL;
    sds_agent_status st;
    size_t value_len = 99;
    bool found = false;
    uint64_t now = sds_now_ms();
    CHECK_OK(sds_table_new(8, &t));
    settings(json, sizeof json, port, ", \"pull_interval_ms\": 100");
    CHECK_OK(start(t, json, on_log, &info_lines, &agent));

    st = status_at_version(agent, 1);
    CHECK(st.version == 1 && st.last_pull_ok && st.pull_failures == 0);
    CHECK(st.is_reporter);
    CHECK(strncmp(st.server, "http://127.0.0.1:", 17) == 0 && atoi(st.server + 17) == port);
    CHECK(strcmp(st.last_error, "") == 0);
    CHECK(info_lines >= 1);
    CHECK(visit(t, now) == SDS_REASON_NONE);
    CHECK(visit(t, now) == SDS_REASON_VISIT);

    CHECK_OK(sds_agent_return_value(agent, NAME("orders"), buf, sizeof buf, &value_len, &found));
    CHECK(found && value_len == 4 && strcmp(buf, "busy") == 0);
    CHECK_OK(sds_agent_return_value(agent, NAME("orders"), buf, 3, &value_len, &found));
    CHECK(found && value_len == 4 && strcmp(buf, "bu") == 0);
    CHECK_OK(sds_agent_return_value(agent, NAME("other"), buf, sizeof buf, &value_len, &found));
    CHECK(!found && value_len == 0 && strcmp(buf, "") == 0);
    CHECK_RESULT(sds_agent_return_value(agent, NAME("orders"), buf, 0, &value_len, &found),
                 SDS_RESULT_INVALID_ARGUMENT);

    /* Its state in the table's metrics; another table's agent is refused. */
    text = sds_check_metrics(t, agent, NULL, SDS_METRICS_PROMETHEUS, now);
    CHECK_LINE(text, "sds_agent_up{table=\"private\"} 1");
    CHECK_LINE(text, "sds_agent_last_pull_success{table=\"private\"} 1");
    CHECK_LINE(text, "sds_agent_strategy_version{table=\"private\"} 1");
    CHECK_LINE(text, "sds_point_downgrades_total{table=\"private\",point=\"orders\",reason=\"VISIT\"} 1");
    free(text);
    CHECK_OK(sds_table_new(8, &other));
    CHECK_RESULT(sds_metrics_text(other, agent, NULL, SDS_METRICS_PROMETHEUS, now, buf, sizeof buf,
                                  &value_len),
                 SDS_RESULT_INVALID_ARGUMENT);
    sds_table_free(other);

    /* The agent holds the table: it may be freed first. */
    sds_table_free(t);
    CHECK_OK(sds_agent_status_get(agent, &st));
    CHECK(st.version == 1);
    sds_agent_stop(agent);
    sds_agent_stop(NULL);
}

/* `settings` are refused with `code` and the last error `message`. */
static void check_refused(const sds_table *t, const char *settings, sds_result code,
                          const char *message) {
    sds_agent *agent = NULL;
    CHECK_RESULT(start(t, settings, NULL, NULL, &agent), code);
    CHECK(agent == NULL);
    CHECK(strcmp(sds_check_last_error(), message) == 0);
}

#define REFUSED "SDS_INVALID_ARGUMENT: cannot start the SDS agent: "

static void test_refused_settings(void) {
    sds_table *t = NULL;
    sds_agent *agent = NULL;
    const char *ok = "{\"servers\": \"http://admin:8887\", \"app_group\": \"g\", \"app_name\": \"a\"}";
    CHECK_OK(sds_table_new(8, &t));
    check_refused(t, "{\"servers\": \"ftp://admin:8887\", \"app_group\": \"g\", \"app_name\": \"a\"}",
                  SDS_RESULT_INVALID_ARGUMENT,
                  REFUSED "server \"ftp://admin:8887\" is not an http:// or https:// URL");
    /* The CA file is read at start (ffi-c/tests/agent_tls.rs: HTTPS itself). */
    check_refused(t,
                  "{\"servers\": \"https://admin:8887\", \"app_group\": \"g\", \"app_name\": \"a\", "
                  "\"tls_ca_file\": \"/nonexistent/sds-ca.pem\"}",
                  SDS_RESULT_INVALID_ARGUMENT,
                  REFUSED "tls_ca_file /nonexistent/sds-ca.pem: No such file or directory "
                          "(os error 2)");
    /* A required setting missing or null is refused as a blank one. */
    check_refused(t, "{\"servers\": \"http://admin:8887\", \"app_group\": \"g\"}",
                  SDS_RESULT_INVALID_ARGUMENT, REFUSED "the app name is blank");
    check_refused(t, "{\"servers\": \"http://admin:8887\", \"app_group\": \"g\", \"app_name\": \" \"}",
                  SDS_RESULT_INVALID_ARGUMENT, REFUSED "the app name is blank");
    check_refused(t, "{\"servers\": \"http://admin:8887\", \"timeout_ms\": \"1s\"}",
                  SDS_RESULT_INVALID_ARGUMENT,
                  REFUSED "timeout_ms must be a whole number of milliseconds from 0 to "
                          "18446744073709551615, not the text \"1s\"");
    check_refused(t, "{\"servers\": ", SDS_RESULT_INVALID_JSON,
                  "SDS_INVALID_JSON: EOF while parsing a value at line 1 column 12");
    CHECK_RESULT(sds_agent_start(t, NULL, 0, NULL, NULL, &agent), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(start(t, ok, NULL, NULL, NULL), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(start(NULL, ok, NULL, NULL, &agent), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_agent_status_get(NULL, &(sds_agent_status){0}), SDS_RESULT_NULL_ARGUMENT);
    sds_table_free(t);
}

/* A console that is down: the failure shows in the status. */
static void test_console_down(void) {
    sds_table *t = NULL;
    sds_agent *agent = NULL;
    sds_agent_status st = {0};
    int i;
    CHECK_OK(sds_table_new(8, &t));
    CHECK_OK(start(t, "{\"servers\": \"http://127.0.0.1:1\", \"appGroup\": \"g\", \"appName\": \"a\"}",
                   NULL, NULL, &agent));
    for (i = 0; i < 2000 && st.pull_failures == 0; i++) {
        CHECK_OK(sds_agent_status_get(agent, &st));
        sleep_ms(10);
    }
    CHECK(st.pull_failures == 1 && !st.last_pull_ok && st.version == 0);
    CHECK(strncmp(st.last_error, "SDS strategy pull failed: http://127.0.0.1:1/", 45) == 0);
    sds_agent_stop(agent);
    sds_table_free(t);
}

/* UINT64_MAX as the pull interval: one pull at start, no busy loop. */
static void test_never_again(int port) {
    char json[256];
    sds_table *t = NULL;
    sds_agent *agent = NULL;
    sds_agent_status st;
    uint64_t first;
    CHECK_OK(sds_table_new(8, &t));
    settings(json, sizeof json, port,
             ", \"pull_interval_ms\": 18446744073709551615, \"timeout_ms\": 18446744073709551615");
    CHECK_OK(start(t, json, NULL, NULL, &agent));
    st = status_at_version(agent, 1);
    CHECK(st.version == 1);
    first = st.last_pull_ms;
    sleep_ms(1000);
    CHECK_OK(sds_agent_status_get(agent, &st));
    CHECK(st.last_pull_ms == first && st.pull_failures == 0);
    CHECK(st.strategies_waiting == 0 && st.points_left_out == 0);
    sds_agent_stop(agent);
    sds_table_free(t);
}
/* sds_agent_stop from the agent's own log callback returns (it does not
 * join its own thread), and no line comes after it. */
static pthread_mutex_t stopping = PTHREAD_MUTEX_INITIALIZER;
static sds_agent *to_stop;
static int stopped_lines;

static void stop_on_log(void *context, uint32_t level, const char *message, size_t len) {
    sds_agent *agent;
    (void)context;
    (void)level;
    (void)message;
    (void)len;
    pthread_mutex_lock(&stopping);
    agent = to_stop;
    to_stop = NULL;
    stopped_lines++;
    pthread_mutex_unlock(&stopping);
    if (agent != NULL) {
        sds_agent_stop(agent);
    }
}

static void test_stop_from_callback(int port) {
    char json[256];
    sds_table *t = NULL;
    sds_agent *agent = NULL;
    int i, lines = 0;
    CHECK_OK(sds_table_new(8, &t));
    settings(json, sizeof json, port, ", \"pull_interval_ms\": 100");
    pthread_mutex_lock(&stopping);
    CHECK_OK(start(t, json, stop_on_log, NULL, &agent));
    to_stop = agent;
    pthread_mutex_unlock(&stopping);
    for (i = 0; i < 2000; i++) {
        pthread_mutex_lock(&stopping);
        lines = stopped_lines;
        pthread_mutex_unlock(&stopping);
        if (lines > 0) {
            break;
        }
        sleep_ms(10);
    }
    sleep_ms(500);
    pthread_mutex_lock(&stopping);
    CHECK(stopped_lines == 1 && to_stop == NULL);
    pthread_mutex_unlock(&stopping);
    sds_table_free(t);
}

int main(void) {
    int port = start_fake();
    CHECK(port > 0);
    test_agent(port);
    test_never_again(port);
    test_stop_from_callback(port);
    test_refused_settings();
    test_console_down();
    stop_fake();
    return sds_check_summary("test_agent");
}
