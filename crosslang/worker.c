/* The C side of the cross-language test: one process on the shared table,
 * driven line by line by run.py (protocol in crosslang/README.md). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sds.h"

#define MAX_HELD 64

/* The keyed limit every worker opens beside the table (README's `decide`). */
#define KEY_RULE "{\"kind\":\"fixedWindow\",\"limit\":5,\"periodMs\":60000}"
#define KEY_CAPACITY 64

static sds_entry held[MAX_HELD];
static sds_keys *keys;
static int held_count;

static void fail(const char *what) {
    char detail[SDS_MESSAGE_MAX + 1];
    size_t len;
    if (sds_last_error_message(detail, sizeof detail, &len) != SDS_RESULT_OK) detail[0] = 0;
    fprintf(stderr, "worker.c: %s: %s\n", what, detail);
    exit(1);
}

static sds_entry enter(const sds_table *table, const char *point, unsigned long long now) {
    sds_entry entry;
    if (sds_enter(table, point, strlen(point), now, SDS_FLAG_NONE, &entry) != SDS_RESULT_OK) {
        fail("sds_enter");
    }
    return entry;
}

static void leave(const sds_table *table, const sds_entry *entry, unsigned long long now,
                  sds_outcome outcome) {
    if (sds_exit(table, entry, now, outcome) != SDS_RESULT_OK) fail("sds_exit");
}

static unsigned long long monotonic_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)t.tv_sec * 1000000000ull + (unsigned long long)t.tv_nsec;
}

/* Runs one command line; writes its reply to stdout. */
/* The table's Prometheus text at `now`, as one JSON string on one line. */
static void print_metrics(const sds_table *table, unsigned long long now) {
    size_t len = 4096, needed = 0;
    char *text = NULL;
    const char *p;
    for (;;) {
        text = realloc(text, len);
        if (text == NULL) fail("realloc");
        if (sds_metrics_text(table, NULL, NULL, SDS_METRICS_PROMETHEUS, now, text, len, &needed) !=
            SDS_RESULT_OK) {
            fail("sds_metrics_text");
        }
        if (needed < len) break;
        len = needed + 1;
    }
    putchar('"');
    for (p = text; *p; p++) {
        if (*p == '\\' || *p == '"') printf("\\%c", *p);
        else if (*p == '\n') fputs("\\n", stdout);
        else putchar(*p);
    }
    puts("\"");
    free(text);
}

static void run(const sds_table *table, char *line) {
    char command[16], point[SDS_MAX_NAME_LEN + 1];
    unsigned long long a = 0, b = 0, c = 0, i;
    int rest = 0;
    if (sscanf(line, "%15s %256s %n", command, point, &rest) < 2) {
        fprintf(stderr, "worker.c: bad line %s", line);
        exit(1);
    }
    if (strcmp(command, "strategy") == 0) {
        const char *json = line + rest;
        if (sds_table_set_strategy_json(table, point, strlen(point), json, strcspn(json, "\n")) !=
            SDS_RESULT_OK) {
            fail("sds_table_set_strategy_json");
        }
        puts("ok");
    } else if (strcmp(command, "add") == 0 &&
               sscanf(line + rest, "%llu %llu %llu", &a, &b, &c) == 3) {
        for (i = 0; i < a; i++) {
            sds_entry entry = enter(table, point, c);
            leave(table, &entry, c, i < b ? SDS_OUTCOME_ERROR : SDS_OUTCOME_OK);
        }
        puts("ok");
    } else if ((strcmp(command, "try") == 0 || strcmp(command, "hold") == 0) &&
               sscanf(line + rest, "%llu %llu %llu", &a, &b, &c) >= 2) {
        unsigned long long admitted = 0;
        int hold = strcmp(command, "hold") == 0;
        while (monotonic_ns() < c) continue; /* the start time, if given */
        for (i = 0; i < a; i++) {
            sds_entry entry = enter(table, point, b);
            if (!sds_entry_downgraded(&entry)) admitted++;
            if (hold && !sds_entry_downgraded(&entry) && held_count < MAX_HELD) {
                held[held_count++] = entry;
            } else {
                leave(table, &entry, b, SDS_OUTCOME_OK);
            }
        }
        printf("%llu\n", admitted);
    } else if (strcmp(command, "release") == 0) {
        /* The "point" word is the time here. */
        unsigned long long now = strtoull(point, NULL, 10);
        int released = held_count;
        while (held_count > 0) leave(table, &held[--held_count], now, SDS_OUTCOME_OK);
        printf("%d\n", released);
    } else if (strcmp(command, "decide") == 0 && sscanf(line + rest, "%llu %llu", &a, &b) == 2) {
        unsigned long long admitted = 0;
        sds_key_decision d;
        for (i = 0; i < a; i++) {
            if (sds_keys_decide(keys, point, strlen(point), b, 1, &d) != SDS_RESULT_OK) {
                fail("sds_keys_decide");
            }
            if (d.admitted) admitted++;
        }
        printf("%llu\n", admitted);
    } else if (strcmp(command, "metrics") == 0) {
        /* The "point" word is the time here. */
        print_metrics(table, strtoull(point, NULL, 10));
    } else if (strcmp(command, "stats") == 0 && sscanf(line + rest, "%llu", &a) == 1) {
        sds_stats s;
        if (sds_stats_get(table, point, strlen(point), a, &s) != SDS_RESULT_OK) fail("sds_stats_get");
        printf("[%llu, %llu, %llu, %llu, %llu]\n", (unsigned long long)s.visit,
               (unsigned long long)s.exception, (unsigned long long)s.timeout,
               (unsigned long long)s.downgrade, (unsigned long long)s.concurrent);
    } else {
        fprintf(stderr, "worker.c: unknown command %s", line);
        exit(1);
    }
    fflush(stdout);
}

int main(int argc, char **argv) {
    sds_table *table = NULL;
    char line[1024];
    if (argc != 3) {
        fprintf(stderr, "usage: worker TABLE_FILE CAPACITY\n");
        return 2;
    }
    if (sds_table_open_shared(argv[1], strlen(argv[1]), strtoul(argv[2], NULL, 10), 0, &table) !=
        SDS_RESULT_OK) {
        fail("sds_table_open_shared");
    }
    {
        char path[4096];
        int n = snprintf(path, sizeof path, "%s.keys", argv[1]);
        if (n < 0 || (size_t)n >= sizeof path ||
            sds_keys_open_shared(path, (size_t)n, KEY_RULE, strlen(KEY_RULE), KEY_CAPACITY, 0, &keys) !=
                SDS_RESULT_OK) {
            fail("sds_keys_open_shared");
        }
    }
    puts("ready");
    fflush(stdout);
    while (fgets(line, sizeof line, stdin) != NULL) run(table, line);
    sds_keys_free(keys);
    sds_table_free(table);
    return 0;
}
