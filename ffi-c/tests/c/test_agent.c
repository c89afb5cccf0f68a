/* The console agent from C: started on a table against the fake console
 * (tools/fake-sds-admin.py, run from the repository root), its strategies
 * in force, the return value, the status, the log callback, a refused
 * config, stop (also from the agent's own log callback), and a
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

static void test_agent(int port) {
    char servers[64], buf[8];
    sds_table *t = NULL;
    sds_agent *agent = NULL;
    sds_agent_config config = {0};
    sds_agent_status st;
    size_t value_len = 99;
    bool found = false;
    uint64_t now = sds_now_ms();
    snprintf(servers, sizeof servers, "http://127.0.0.1:%d", port);
    config.servers = servers;
    config.app_group = "g";
    config.app_name = "a";
    config.ip = "10.0.0.7";
    config.pull_interval_ms = 100;
    config.log = on_log;
    config.log_context = &info_lines;
    CHECK_OK(sds_table_new(8, &t));
    CHECK_OK(sds_agent_start(t, &config, &agent));

    st = status_at_version(agent, 1);
    CHECK(st.version == 1 && st.last_pull_ok && st.pull_failures == 0);
    CHECK(st.is_reporter);
    CHECK(strcmp(st.server, servers) == 0);
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

    /* The agent holds the table: it may be freed first. */
    sds_table_free(t);
    CHECK_OK(sds_agent_status_get(agent, &st));
    CHECK(st.version == 1);
    sds_agent_stop(agent);
    sds_agent_stop(NULL);
}

static void test_refused_configs(void) {
    char message[SDS_MESSAGE_MAX + 1];
    size_t len;
    sds_table *t = NULL;
    sds_agent *agent = NULL;
    sds_agent_config config = {0};
    CHECK_OK(sds_table_new(8, &t));
    config.servers = "ftp://admin:8887";
    config.app_group = "g";
    config.app_name = "a";
    CHECK_RESULT(sds_agent_start(t, &config, &agent), SDS_RESULT_INVALID_ARGUMENT);
    CHECK(agent == NULL);
    CHECK_OK(sds_last_error_message(message, sizeof message, &len));
    CHECK(strcmp(message, "SDS_INVALID_ARGUMENT: cannot start the SDS agent: "
                          "server \"ftp://admin:8887\" is not an http:// or https:// URL") == 0);
    /* The CA file is read at start (ffi-c/tests/agent_tls.rs: HTTPS itself). */
    config.servers = "https://admin:8887";
    config.tls_ca_file = "/nonexistent/sds-ca.pem";
    CHECK_RESULT(sds_agent_start(t, &config, &agent), SDS_RESULT_INVALID_ARGUMENT);
    CHECK(agent == NULL);
    CHECK_OK(sds_last_error_message(message, sizeof message, &len));
    CHECK(strcmp(message, "SDS_INVALID_ARGUMENT: cannot start the SDS agent: "
                          "tls_ca_file /nonexistent/sds-ca.pem: No such file or directory "
                          "(os error 2)") == 0);
    config.tls_ca_file = NULL;
    config.servers = "http://admin:8887";
    /* NULL is the agent's default for every string: none for the three
     * required ones, which the agent refuses as it refuses blank ones. */
    config.app_name = NULL;
    CHECK_RESULT(sds_agent_start(t, &config, &agent), SDS_RESULT_INVALID_ARGUMENT);
    CHECK_OK(sds_last_error_message(message, sizeof message, &len));
    CHECK(strcmp(message, "SDS_INVALID_ARGUMENT: cannot start the SDS agent: "
                          "the app name is blank") == 0);
    config.app_name = " ";
    CHECK_RESULT(sds_agent_start(t, &config, &agent), SDS_RESULT_INVALID_ARGUMENT);
    config.app_name = "a";
    CHECK_RESULT(sds_agent_start(t, NULL, &agent), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_agent_start(t, &config, NULL), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_agent_start(NULL, &config, &agent), SDS_RESULT_NULL_ARGUMENT);
    CHECK_RESULT(sds_agent_status_get(NULL, &(sds_agent_status){0}), SDS_RESULT_NULL_ARGUMENT);
    sds_table_free(t);
}

/* A console that is down: the failure shows in the status. */
static void test_console_down(void) {
    sds_table *t = NULL;
    sds_agent *agent = NULL;
    sds_agent_config config = {0};
    sds_agent_status st = {0};
    int i;
    CHECK_OK(sds_table_new(8, &t));
    config.servers = "http://127.0.0.1:1";
    config.app_group = "g";
    config.app_name = "a";
    CHECK_OK(sds_agent_start(t, &config, &agent));
    for (i = 0; i < 2000 && st.pull_failures == 0; i++) {
        CHECK_OK(sds_agent_status_get(agent, &st));
        sleep_ms(10);
    }
    CHECK(st.pull_failures == 1 && !st.last_pull_ok && st.version == 0);
    CHECK(strncmp(st.last_error, "SDS strategy pull failed: http://127.0.0.1:1/", 45) == 0);
    sds_agent_stop(agent);
    sds_table_free(t);
}

static void start_agent(int port, sds_table **t, sds_agent **agent, sds_agent_config *config,
                        char *servers, size_t servers_len) {
    snprintf(servers, servers_len, "http://127.0.0.1:%d", port);
    config->servers = servers;
    config->app_group = "g";
    config->app_name = "a";
    config->ip = "10.0.0.7";
    CHECK_OK(sds_table_new(8, t));
    CHECK_OK(sds_agent_start(*t, config, agent));
}

/* UINT64_MAX as the pull interval: one pull at start, no busy loop. */
static void test_never_again(int port) {
    char servers[64];
    sds_table *t = NULL;
    sds_agent *agent = NULL;
    sds_agent_config config = {0};
    sds_agent_status st;
    uint64_t first;
    config.pull_interval_ms = UINT64_MAX;
    config.timeout_ms = UINT64_MAX;
    start_agent(port, &t, &agent, &config, servers, sizeof servers);
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
    char servers[64];
    sds_table *t = NULL;
    sds_agent *agent = NULL;
    sds_agent_config config = {0};
    int i, lines = 0;
    config.pull_interval_ms = 100;
    config.log = stop_on_log;
    pthread_mutex_lock(&stopping);
    start_agent(port, &t, &agent, &config, servers, sizeof servers);
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
    test_refused_configs();
    test_console_down();
    stop_fake();
    return sds_check_summary("test_agent");
}
